"""Evaluation metrics and hypothesis tests on hand-made answer records whose right numbers
are known: worked by hand for the metrics, drawn from a known model for the hypotheses."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from kgsynth.eval import hypotheses
from kgsynth.eval.metrics import (
    baselines,
    bootstrap_means,
    cluster_totals,
    compute_metrics,
    error_sources,
    estimate,
    group_metrics,
    item_variance,
    length_bucket,
    length_curve,
    position_curve,
    slice_metrics,
)
from kgsynth.eval.results import AnswerRecord
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import ItemMetadata, make_item
from kgsynth.synth.scenarios.scenario import Difficulty

TARGETS = (500, 1000, 2000, 4000, 8000)


@pytest.fixture(scope="module")
def metas(demo_kg) -> dict[tuple[str, int], ItemMetadata]:
    """The metadata of one real demo item per (rule kind, reasoning links)."""
    plans = plan_cells(demo_kg, SynthConfig(), load_rules(demo_kg))
    found: dict[tuple[str, int], ItemMetadata] = {}
    for plan in plans:
        meta = make_item(plan.scenarios[0], "en", DialogueSettings(), 0).metadata
        found.setdefault((meta.rule_kind, meta.links), meta)
    assert len({links for _, links in found}) >= 3 and len({kind for kind, _ in found}) >= 4
    return found


@pytest.fixture(scope="module")
def meta(metas) -> ItemMetadata:
    return next(m for m in metas.values() if m.difficulty is Difficulty.easy)


def record(meta: ItemMetadata, item: str = "a", condition: str = "main", correct: bool = True, **fields) -> AnswerRecord:
    """One answer row; ``syntactic_ok`` defaults to ``correct``, the rest to a plain main row.
    Each item is its own scenario unless ``scenario`` names one (twins share theirs)."""
    param = fields.pop("param", None)
    syntactic_ok = fields.pop("syntactic_ok", correct)
    scenario = fields.pop("scenario", item)
    row = {
        "key": f"{item}/{condition}" + ("" if param is None else f"/{param:g}"), "item_id": item,
        "condition": condition, "param": param, "model": "m", "rendering": "transcript", "answer": "x", "value": None,
        "syntactic_ok": syntactic_ok, "value_matches": correct, "correct": correct, "context_tokens": 100, "turns": 6,
        "fact_turn_indices": (1, 3), "fact_depth": 0.4, "metadata": _in_scenario(meta, f"scenario-{scenario}"),
    }
    return AnswerRecord.model_validate(row | fields)


_SCENARIO_METAS: dict[tuple[int, str], tuple[ItemMetadata, ItemMetadata]] = {}


def _in_scenario(meta: ItemMetadata, scenario: str) -> ItemMetadata:
    """``meta`` with its scenario id set (one copy per metadata and scenario; the original
    is kept with it, so its id is not reused)."""
    key = (id(meta), scenario)
    if key not in _SCENARIO_METAS:
        _SCENARIO_METAS[key] = (meta, meta.model_copy(update={"scenario_id": scenario}))
    return _SCENARIO_METAS[key][1]


# ------------------------------------------------------------------ worked by hand


def test_group_metrics_worked_example(meta):
    rows = [
        record(meta, "a", token_f1=1.0, context_tokens=100),
        record(meta, "b", token_f1=0.5, context_tokens=200),
        record(meta, "c", correct=False, syntactic_ok=True, error_source="rule_application", context_tokens=300),
        record(meta, "d", correct=False, syntactic_ok=False, error_source="format", context_tokens=400),
        record(meta, "e", correct=False, failure="timeout", context_tokens=500),
    ]
    g = group_metrics(rows, "main", bootstrap=1000, seed=3)
    assert (g.n, g.failures) == (4, 1)  # the failed request is counted, not scored
    assert g.accuracy.mean == 0.5 and g.accuracy.std == 0.5 and g.accuracy.n == 4
    assert g.syntactic_ok.mean == 0.75
    assert g.token_f1 is not None and g.token_f1.mean == 0.75 and g.token_f1.n == 2
    # resampling 4 answers, 2 right: the mean is 0 or 1 with chance 1/16 each, beyond 2.5 %
    assert (g.accuracy.low, g.accuracy.high) == (0.0, 1.0)
    assert g.mean_context_tokens == 300.0


def test_estimate_interval_matches_the_normal_one_for_a_large_sample():
    values = [1] * 80 + [0] * 20  # p = 0.8, standard error 0.04: normal interval [0.7216, 0.8784]
    e = estimate(values, confidence=0.95, bootstrap=4000, seed=0)
    assert e.mean == 0.8 and e.low <= 0.8 <= e.high
    assert e.low == pytest.approx(0.7216, abs=0.015) and e.high == pytest.approx(0.8784, abs=0.015)
    f1 = np.random.default_rng(1).integers(0, 7, size=500) / 6  # token-F1-like: a few distinct values
    e = estimate(f1, bootstrap=4000, seed=0)
    half = 1.96 * f1.std() / math.sqrt(f1.size)
    assert e.low == pytest.approx(f1.mean() - half, abs=0.01) and e.high == pytest.approx(f1.mean() + half, abs=0.01)


def test_estimate_of_many_distinct_values_over_the_cap_is_the_normal_interval():
    values = np.random.default_rng(2).random(50_000)  # 50,000 distinct values x 1000 resamples > the cap
    e = estimate(values, bootstrap=1000)
    half = 1.959964 * values.std() / math.sqrt(values.size)
    assert e.low == pytest.approx(values.mean() - half, rel=1e-4) and e.high == pytest.approx(values.mean() + half, rel=1e-4)


def test_estimate_of_nothing_and_of_one_value():
    assert estimate([]).model_dump() == {"n": 0, "mean": None, "low": None, "high": None, "std": None, "clusters": None}
    assert estimate([1.0]).model_dump() == {"n": 1, "mean": 1.0, "low": 1.0, "high": 1.0, "std": 0.0, "clusters": None}
    assert estimate([], clusters=[]).clusters == 0 and estimate([1.0, 0.0], clusters=["s", "s"]).clusters == 1


# ------------------------------------------------------------------ intervals clustered by scenario


def _twins(meta, correct: list[bool], condition: str = "main", **fields) -> list[AnswerRecord]:
    """An English item and its Russian twin per scenario, answered alike (perfectly correlated)."""
    return [record(meta, f"{k}-{lang}", condition, correct=c, scenario=f"{k}", **fields)
            for k, c in enumerate(correct) for lang in ("en", "ru")]


def _width(e) -> float:
    return e.high - e.low


def test_a_perfectly_correlated_twin_does_not_narrow_the_interval(meta):
    correct = [bool(c) for c in np.random.default_rng(4).random(60) < 0.6]
    alone = group_metrics([record(meta, f"{k}-en", correct=c, scenario=f"{k}") for k, c in enumerate(correct)], "main")
    twins = group_metrics(_twins(meta, correct), "main")
    assert (twins.n, twins.accuracy.n, twins.accuracy.clusters, alone.accuracy.clusters) == (120, 120, 60, 60)
    assert twins.accuracy.mean == alone.accuracy.mean
    # the same scenarios resampled: the interval is the one of the English items alone, to the bit
    assert (twins.accuracy.low, twins.accuracy.high) == (alone.accuracy.low, alone.accuracy.high)
    # the row bootstrap takes the 120 answers as independent: its interval is about 1/sqrt(2) as wide
    rows = estimate([r.correct for r in _twins(meta, correct)], bootstrap=1000, seed=0)
    assert rows.clusters is None and _width(rows) < 0.85 * _width(twins.accuracy)
    assert _width(rows) == pytest.approx(_width(twins.accuracy) / math.sqrt(2), rel=0.2)


def test_every_interval_of_a_run_resamples_scenarios(metas):
    """Duplicating every row of a run as a twin of the same scenario leaves every interval as
    it was (overall, baselines, slices, the length curve, fact probes); duplicating it as an
    independent item (its own scenario) narrows them: what a row bootstrap would say."""
    rows = _run(metas)
    rows += [record(next(m for m in metas.values()), f"i{k}", "fact_probe", correct=k % 3 > 0, param=float(k % 2))
             for k in range(40)]

    def twin(r: AnswerRecord, same_scenario: bool) -> AnswerRecord:
        scenario = r.metadata.scenario_id if same_scenario else r.metadata.scenario_id + "-ru"
        return r.model_copy(update={"item_id": r.item_id + "-ru", "key": r.key + "-ru",
                                    "metadata": r.metadata.model_copy(update={"scenario_id": scenario})})

    def intervals(m) -> list[tuple]:
        groups = [m.overall, *m.baselines, *(g for s in m.slices for g in s.groups), *(p.metrics for p in m.length.points)]
        return ([(g.group, g.accuracy.low, g.accuracy.high, g.syntactic_ok.low, g.syntactic_ok.high) for g in groups]
                + [(m.error_sources.fact_probe_accuracy.low, m.error_sources.fact_probe_accuracy.high)])

    kwargs = {"model": "m", "rendering": "transcript", "bootstrap": 500, "seed": 7}
    base = compute_metrics(rows, **kwargs)
    twinned = compute_metrics(rows + [twin(r, True) for r in rows], **kwargs)
    independent = compute_metrics(rows + [twin(r, False) for r in rows], **kwargs)
    assert twinned.overall.n == 2 * base.overall.n and twinned.overall.accuracy.clusters == 40
    assert twinned.items == 80 and independent.overall.accuracy.clusters == 80
    assert [b.accuracy.clusters for b in twinned.baselines] == [40, 40, 40]
    assert twinned.error_sources.fact_probe_accuracy.clusters == 40
    assert intervals(twinned) == intervals(base)
    # duplicated as independent items, the intervals narrow (the overall one by about 1/sqrt(2))
    assert _width(independent.overall.accuracy) < 0.85 * _width(base.overall.accuracy)
    assert [g.accuracy.clusters for g in independent.baselines] == [80, 80, 80]


def test_cluster_bootstrap_worked_by_hand():
    """Scenario A: two answers, both right; B: one answer, wrong. A resample draws two
    scenarios: AA (chance 1/4) has accuracy 2/2, BB (1/4) 0/1, AB (1/2) 2/3: the share of
    the answers drawn, not the mean of the scenarios' shares (1/2)."""
    e = estimate([1, 1, 0], clusters=["A", "A", "B"], bootstrap=4000, seed=0)
    assert (e.n, e.clusters, e.mean, e.low, e.high) == (3, 2, 2 / 3, 0.0, 1.0)
    sums, sizes, kinds = cluster_totals(np.array([1.0, 1.0, 0.0]), ["A", "A", "B"])
    assert (sums.tolist(), sizes.tolist(), kinds.tolist()) == ([0.0, 2.0], [1.0, 2.0], [1, 1])
    means = bootstrap_means(sums, kinds, 40_000, np.random.default_rng(0), sizes)
    values, counts = np.unique(np.round(means, 12), return_counts=True)
    assert values.tolist() == [0.0, round(2 / 3, 12), 1.0]
    assert counts / means.size == pytest.approx([0.25, 0.5, 0.25], abs=0.01)


def test_cluster_bootstrap_matches_the_exact_resampling_distribution():
    """Three scenarios of different sizes; every one of the 27 equally likely draws of three
    scenarios enumerated gives the exact distribution of a resample's accuracy, which the
    multinomial draws match, as does the path that draws scenarios one by one (over the cap)."""
    values, clusters = [1, 0, 1, 1, 0, 1], ["a", "b", "c", "c", "c", "b"]  # a: 1/1, b: 1/2, c: 2/3
    totals = {"a": (1, 1), "b": (1, 2), "c": (2, 3)}
    exact: Counter[float] = Counter()
    for draw in np.ndindex(3, 3, 3):
        picked = [totals["abc"[i]] for i in draw]
        exact[round(sum(s for s, _ in picked) / sum(n for _, n in picked), 12)] += 1 / 27
    sums, sizes, kinds = cluster_totals(np.array(values, dtype=float), clusters)
    multinomial = bootstrap_means(sums, kinds, 60_000, np.random.default_rng(1), sizes)
    one_by_one = np.repeat(sums, kinds)[picks := np.random.default_rng(2).integers(0, 3, size=(60_000, 3))].sum(axis=1)
    one_by_one = one_by_one / np.repeat(sizes, kinds)[picks].sum(axis=1)
    for means in (multinomial, one_by_one):
        seen = Counter(np.round(means, 12).tolist())
        assert set(seen) == set(exact)
        for value, chance in exact.items():
            assert seen[value] / means.size == pytest.approx(chance, abs=0.01)
    quantiles = sorted(exact)
    cumulative = np.cumsum([exact[v] for v in quantiles])
    low, high = quantiles[np.searchsorted(cumulative, 0.025)], quantiles[np.searchsorted(cumulative, 0.975)]
    e = estimate(values, clusters=clusters, bootstrap=4000, seed=0)
    assert (e.low, e.high) == pytest.approx((low, high)) and e.mean == pytest.approx(4 / 6)


def test_clustered_estimate_is_order_independent_and_seeded():
    rng = np.random.default_rng(5)
    values = rng.integers(0, 7, size=300) / 6  # token-F1-like, summed per cluster in any order
    clusters = rng.integers(0, 90, size=300)
    first = estimate(values, clusters=clusters, seed=3)
    order = rng.permutation(300)
    assert estimate(values[order], clusters=clusters[order], seed=3) == first
    assert estimate(values, clusters=[f"s{c}" for c in clusters], seed=3) == first  # any labels
    assert estimate(values, clusters=clusters, seed=4) != first
    with pytest.raises(ValueError, match="2 cluster labels for 3 values"):
        estimate([1, 0, 1], clusters=["a", "b"])


def test_clustered_normal_interval_over_the_cap_does_not_narrow_with_twins():
    values = np.random.default_rng(6).random(30_000)  # 30,000 distinct values x 1000 resamples > the cap
    alone = estimate(values, clusters=np.arange(30_000))
    twins = estimate(np.repeat(values, 2), clusters=np.repeat(np.arange(30_000), 2))
    rows = estimate(np.repeat(values, 2))
    half = 1.959964 * values.std() / math.sqrt(values.size)
    assert alone.high - alone.mean == pytest.approx(half, rel=1e-4)
    assert (twins.low, twins.high) == pytest.approx((alone.low, alone.high), rel=1e-12)
    assert rows.high - rows.mean == pytest.approx(half / math.sqrt(2), rel=1e-4)


def test_rows_without_a_scenario_fall_back_to_their_item(meta):
    """KV rows (no metadata) and rows written without a scenario id are their own item's cluster."""
    old = meta.model_copy(update={"scenario_id": ""})
    rows = [AnswerRecord.model_validate(record(meta, f"i{k}", correct=k % 2 == 0).model_dump() | {"metadata": old})
            for k in range(6)]
    assert group_metrics(rows, "main").accuracy.clusters == 6
    twins = _twins(meta, [True, False, True])
    assert group_metrics(twins + rows, "main").accuracy.clusters == 3 + 6


def test_break_point_is_the_first_length_below_the_share_of_the_shortest(meta):
    right = {1000: 9, 2000: 8, 4000: 7, 8000: 2}  # of 10 each; 0.8 * 0.9 = 0.72: 0.8 holds, 0.7 breaks
    rows = [record(meta, f"i{k}", "length", correct=k < n, param=float(t), context_tokens=t)
            for t, n in right.items() for k in range(10)]
    curve = length_curve(rows, break_ratio=0.8, skipped_targets=(16000,))
    assert [p.x for p in curve.points] == [1000, 2000, 4000, 8000]
    assert [p.metrics.accuracy.mean for p in curve.points] == [0.9, 0.8, 0.7, 0.2]
    assert curve.reference_accuracy == 0.9 and curve.break_point == 4000 and curve.skipped_targets == (16000,)
    assert length_curve(rows, break_ratio=0.2).break_point is None  # nothing below 0.18
    assert length_curve([record(meta)]) is None  # no length rows, no curve


def test_error_sources_counted_by_source_and_difficulty(metas, meta):
    hard = next(m for m in metas.values() if m.difficulty is Difficulty.hard)
    rows = [
        record(meta, "a"),
        record(meta, "b", correct=False, syntactic_ok=False, error_source="format"),
        record(meta, "c", correct=False, error_source="rule_application"),
        record(hard, "d", correct=False, error_source="rule_application"),
        record(hard, "e", correct=False),  # no probe result: unprobed
        record(hard, "f", correct=False, error_source="format", failure="timeout"),  # failed: not an answer
        record(meta, "c", "fact_probe", correct=True, param=0.0),
        record(meta, "c", "fact_probe", correct=False, param=1.0),
    ]
    sources = error_sources(rows)
    zero = dict.fromkeys(
        ("format", "fact_extraction", "rule_knowledge", "rule_application", "reasoning", "combination", "unprobed"), 0
    )
    assert sources.overall == zero | {"format": 1, "rule_application": 2, "unprobed": 1}
    assert sources.by_difficulty == {
        "easy": zero | {"format": 1, "rule_application": 1},
        "hard": zero | {"rule_application": 1, "unprobed": 1},
    }
    assert sources.fact_probe_accuracy.mean == 0.5 and sources.fact_probe_accuracy.n == 2


def test_baselines_compare_the_same_items(meta):
    rows = [
        *(record(meta, i) for i in "abc"),
        record(meta, "a", "closed_book", correct=False),
        record(meta, "b", "closed_book", correct=False),
        record(meta, "c", "closed_book", correct=False, failure="timeout"),
        *(record(meta, i, "oracle") for i in "abcd"),
    ]
    main, closed, oracle = baselines(rows)
    assert [g.group for g in (main, closed, oracle)] == ["main", "closed_book", "oracle"]
    assert (main.n, closed.n, oracle.n) == (2, 2, 2)  # c failed closed-book, d has no main row
    assert (closed.failures, closed.accuracy.mean, oracle.accuracy.mean) == (1, 0.0, 1.0)


def test_item_variance_is_the_mean_of_each_items_variance(meta):
    rows = [
        record(meta, "a", "length", correct=True, param=1000.0),
        record(meta, "a", "position", correct=False, param=0.5),
        record(meta, "b", "length", correct=True, param=1000.0),
        record(meta, "b", "length", correct=True, param=2000.0),
        record(meta, "c", "length", correct=False, param=1000.0),  # one rendering only: no variance
        record(meta, "b", "length", correct=False, param=4000.0, failure="timeout"),
    ]
    assert item_variance(rows) == pytest.approx((0.25 + 0.0) / 2)
    assert item_variance([record(meta)]) is None


def test_position_curve_by_depth_and_by_turn(meta):
    rows = [
        record(meta, "a", "position", param=0.0, fact_turn_indices=(0, 1)),  # mean turn 0.5: bin "0"
        record(meta, "a", "position", correct=False, param=1.0, fact_turn_indices=(40, 42)),  # 41: "32-63"
        record(meta, "b", "main", fact_turn_indices=(2, 4)),  # 3: "2-3"
        record(meta, "c", "main", correct=False, fact_turn_indices=(5, 6)),  # 5.5: "4-7"
        record(meta, "d", "main", fact_turn_indices=(4, 4)),  # 4: "4-7"
    ]
    curve = position_curve(rows)
    assert [(p.x, p.metrics.accuracy.mean) for p in curve.by_depth] == [(0.0, 1.0), (1.0, 0.0)]
    # with a position sweep, the by-turn curve is the sweep's alone (main rows are shorter)
    assert [(p.metrics.group, p.x, p.metrics.n) for p in curve.by_turn] == [("turns 0", 0.5, 1), ("turns 32-63", 41.0, 1)]
    without_sweep = position_curve([r for r in rows if r.condition == "main"])
    assert without_sweep.by_depth == ()
    assert [(p.metrics.group, p.x, p.metrics.n) for p in without_sweep.by_turn] == [
        ("turns 2-3", 3.0, 1), ("turns 4-7", 4.75, 2)
    ]


# ------------------------------------------------------------------ slices


def test_slices_by_any_metadata_field_and_derived_buckets(metas, meta):
    hard = next(m for m in metas.values() if m.difficulty is Difficulty.hard)
    rows = [
        record(meta, "a", context_tokens=100),
        record(meta, "b", correct=False, context_tokens=300),
        record(hard, "c", context_tokens=1024),
        record(hard, "d", "closed_book", correct=False),  # not a main row: in no slice
    ]
    by_variant = slice_metrics(rows, "variant")
    assert {g.group: g.n for g in by_variant.groups} == dict(Counter(r.metadata.variant for r in rows[:3]))
    by_links = slice_metrics(rows, "links")
    assert [(g.group, g.n, g.accuracy.mean) for g in by_links.groups] == [
        (str(meta.links), 2, 0.5), (str(hard.links), 1, 1.0)
    ]
    by_length = slice_metrics(rows, "length_bucket")
    assert [g.group for g in by_length.groups] == ["<256", "256-511", "1024-2047"]
    by_difficulty = slice_metrics(rows, "difficulty", condition=None)
    assert [(g.group, g.n) for g in by_difficulty.groups] == [("easy", 2), ("hard", 2)]
    assert [g.group for g in slice_metrics(rows, "rendering").groups] == ["transcript"]  # a record field too
    with pytest.raises(ValueError, match="cannot slice by 'colour'"):
        slice_metrics(rows, "colour")


def test_length_bucket_edges():
    assert [length_bucket(t) for t in (0, 255, 256, 511, 512, 16000)] == [
        "<256", "<256", "256-511", "256-511", "512-1023", "8192-16383"
    ]


# ------------------------------------------------------------------ the whole run


def _run(metas, seed: int = 0) -> list[AnswerRecord]:
    """A small run: main, closed-book, oracle and length rows of 40 items, one failure."""
    rng = np.random.default_rng(seed)
    pool = list(metas.values())
    rows = []
    for k in range(40):
        m = pool[k % len(pool)]
        rows.append(record(m, f"i{k}", correct=bool(rng.random() < 0.7), context_tokens=m.token_length,
                           token_f1=float(rng.integers(0, 3)) / 2))
        rows.append(record(m, f"i{k}", "closed_book", correct=bool(rng.random() < 0.1), context_tokens=0))
        rows.append(record(m, f"i{k}", "oracle", correct=bool(rng.random() < 0.9)))
        rows += [record(m, f"i{k}", "length", correct=bool(rng.random() < 0.9 - t / 10_000), param=float(t),
                        context_tokens=t) for t in TARGETS]
    rows.append(record(pool[0], "i0", "position", failure="timeout", param=0.5))
    return rows


def test_compute_metrics_is_deterministic_and_seeded(metas):
    rows = _run(metas)
    first = compute_metrics(rows, model="m", rendering="transcript", bootstrap=500, seed=7)
    assert compute_metrics(rows, model="m", rendering="transcript", bootstrap=500, seed=7) == first
    shuffled = compute_metrics(list(reversed(rows)), model="m", rendering="transcript", bootstrap=500, seed=7)
    assert shuffled.model_copy(update={"hypotheses": first.hypotheses}) == first  # fits may differ in the last bit
    other = compute_metrics(rows, model="m", rendering="transcript", bootstrap=500, seed=8)
    assert other.overall.accuracy.mean == first.overall.accuracy.mean
    assert other.overall.accuracy.model_dump() != first.overall.accuracy.model_dump()
    assert first.items == 40 and [s.by for s in first.slices][:3] == ["difficulty", "category", "answer_format"]
    assert first.position.by_depth[0].metrics.failures == 1 and first.position.by_depth[0].metrics.n == 0
    assert [h.id for h in first.hypotheses] == ["H1", "H2", "H3", "H4"]


def test_compute_metrics_refuses_rows_of_another_model(metas, meta):
    with pytest.raises(ValueError, match="other runs"):
        compute_metrics([record(meta), record(meta, model="other")], model="m", rendering="transcript")


# ------------------------------------------------------------------ hypotheses on known truth


def _drawn(metas, *, length: float, links: float, kinds: dict[str, float] | None = None, items: int = 300,
           seed: int = 0) -> list[AnswerRecord]:
    """Main and length rows whose correctness follows a logit with the given slopes per
    doubling of the context and per reasoning link (and log-odds shifts per rule kind)."""
    rng = np.random.default_rng(seed)
    pool = [m for m in metas.values() if kinds is None or m.rule_kind in kinds]
    rows = []
    for k in range(items):
        m = pool[k % len(pool)]
        for condition, tokens in [("main", m.token_length), *(("length", t) for t in TARGETS)]:
            logit = 2.0 + length * (math.log2(tokens) - 7) + links * (m.links - 1) + (kinds or {}).get(m.rule_kind, 0.0)
            correct = bool(rng.random() < 1 / (1 + math.exp(-logit)))
            rows.append(record(m, f"i{k}", condition, correct=correct, syntactic_ok=True, context_tokens=tokens,
                               param=None if condition == "main" else float(tokens)))
    return rows


def _by_id(results) -> dict:
    return {h.id: h for h in results}


def test_strong_length_and_structure_effects_support_h1_and_h2(metas):
    found = _by_id(hypotheses.test_hypotheses(_drawn(metas, length=-0.8, links=-0.8)))
    h1, h2 = found["H1"], found["H2"]
    assert h1.supported is True and h1.p_value < 0.01 and h1.n == 300 * 6
    assert "per doubling of length" in h1.effect
    assert h2.supported is True and h2.p_value < 0.01
    assert found["H3"].supported is None  # every answer was in the format: nothing to explain
    assert found["H3"].verdict.startswith("Not testable")


def test_no_effect_supports_nothing(metas):
    found = _by_id(hypotheses.test_hypotheses(_drawn(metas, length=0.0, links=0.0, seed=1)))
    assert found["H1"].supported is False and found["H2"].supported is False and found["H4"].supported is False
    assert all(0 <= found[h].p_value <= 1 for h in ("H1", "H2", "H4"))


def test_length_alone_is_not_h1_nor_h2(metas):
    """Length hurts, structure does not: H1 asks for both, and a link costs no more than noise."""
    found = _by_id(hypotheses.test_hypotheses(_drawn(metas, length=-0.8, links=0.0, seed=2)))
    h1 = found["H1"]
    assert h1.supported is False and h1.verdict.startswith("Not supported") and "0.4" in h1.effect.split(",")[0]
    assert found["H2"].supported is False


def test_rule_kinds_that_differ_support_h4(metas):
    kinds = {"arithmetic": 1.5, "conditional": 0.0, "interval": -1.5}
    found = _by_id(hypotheses.test_hypotheses(_drawn(metas, length=-0.3, links=-0.3, kinds=kinds)))
    h4 = found["H4"]
    assert h4.supported is True and h4.p_value < 0.01 and "arithmetic over interval" in h4.effect


def test_format_compliance_falling_with_length_supports_h3(metas):
    rows = _drawn(metas, length=-0.8, links=-0.8, seed=3)
    rows = [r.model_copy(update={"syntactic_ok": r.correct}) for r in rows]  # every wrong answer off-format
    assert _by_id(hypotheses.test_hypotheses(rows))["H3"].supported is True


def test_insufficient_data_is_untestable_not_an_error(metas, meta):
    few = [record(meta, f"i{k}", correct=k % 2 == 0) for k in range(5)]
    assert all(h.supported is None and h.p_value is None for h in hypotheses.test_hypotheses(few))
    assert all(h.supported is None for h in hypotheses.test_hypotheses([]))
    empty = compute_metrics([], model="m", rendering="transcript")
    assert empty.overall.n == 0 and empty.length is None and empty.position is None and empty.item_variance is None
    right = [r.model_copy(update={"correct": True, "syntactic_ok": True}) for r in _drawn(metas, length=0, links=0)]
    assert all(h.supported is None for h in hypotheses.test_hypotheses(right))


def test_perfect_separation_is_untestable(metas):
    rows = [r.model_copy(update={"correct": r.context_tokens < 1000}) for r in _drawn(metas, length=0, links=0)]
    found = _by_id(hypotheses.test_hypotheses(rows))
    assert found["H1"].supported is None and "separat" in found["H1"].verdict.lower()


def test_a_rule_kind_always_wrong_falls_back_to_a_chi_square_test_without_controls(metas):
    """A kind whose answers are all wrong separates the logit; H4 is then tested without
    controls, on one row per scenario (here each item's own), and the figures are scipy's on the same table."""
    rows = _drawn(metas, length=-0.3, links=-0.3, seed=5)
    rows = [r.model_copy(update={"correct": False}) if r.metadata.rule_kind == "arithmetic" else r for r in rows]
    h4 = _by_id(hypotheses.test_hypotheses(rows))["H4"]
    assert "chi-square" in h4.test and "could not be fitted" in h4.test and h4.supported is not None
    first: dict[str, AnswerRecord] = {}
    for r in rows:
        if r.condition in ("main", "length") and r.metadata.rule_kind != "none":
            first.setdefault(r.item_id, r)
    kinds = sorted({r.metadata.rule_kind for r in first.values()})
    table = [[sum(1 for r in first.values() if r.metadata.rule_kind == k and r.correct == c) for c in (False, True)]
             for k in kinds]
    statistic, p = stats.chi2_contingency(table, correction=False)[:2]
    assert h4.n == len(first) and h4.p_value == pytest.approx(p) and h4.statistic == pytest.approx(statistic)
    assert "accuracy" in h4.effect and "arithmetic 0%" in h4.effect


def test_hypotheses_cluster_standard_errors_by_scenario(metas):
    """Every row doubled as a twin of its scenario: the fit is the same, and so, clustered by
    scenario, is its z (up to the small-sample factor of the rows' count); doubled as items
    of their own scenarios, z grows by about sqrt(2), the false certainty clustering avoids."""
    rows = _drawn(metas, length=-0.3, links=-0.2, seed=7)

    def twin(r: AnswerRecord, scenario: str) -> AnswerRecord:
        return r.model_copy(update={"item_id": r.item_id + "-ru", "key": r.key + "-ru",
                                    "metadata": r.metadata.model_copy(update={"scenario_id": scenario})})

    def standard_errors(records: list[AnswerRecord]) -> np.ndarray:
        found = hypotheses.Rows.of(records)
        fit = hypotheses.fit_logit(found.correct, {"log2_tokens": found.log2_tokens, "links": found.links}, found.cluster)
        return np.sqrt(np.diag(fit.cov))

    twins = rows + [twin(r, r.metadata.scenario_id) for r in rows]
    apart = rows + [twin(r, r.metadata.scenario_id + "-ru") for r in rows]
    alone_se = standard_errors(rows)
    assert standard_errors(twins) == pytest.approx(alone_se, rel=0.01)
    assert standard_errors(apart) == pytest.approx(alone_se / math.sqrt(2), rel=0.02)
    h1 = {name: _by_id(hypotheses.test_hypotheses(r))["H1"] for name, r in (("alone", rows), ("twins", twins))}
    assert "clustered by scenario" in h1["alone"].test and h1["twins"].n == 2 * h1["alone"].n
    assert h1["twins"].statistic == pytest.approx(h1["alone"].statistic, rel=0.01)
    too_few = [record(next(iter(metas.values())), f"i{k}-{lang}", correct=k % 3 == 0, scenario=str(k % 6),
                      context_tokens=100 * (1 + k % 5)) for k in range(40) for lang in ("en", "ru")]
    assert "only 6 scenarios" in _by_id(hypotheses.test_hypotheses(too_few))["H1"].verdict
