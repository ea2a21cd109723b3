"""Metrics of an evaluation run, computed from its ``AnswerRecord`` rows: what the report shows."""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from functools import reduce
from statistics import NormalDist
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from kgsynth._collector import collector_paused
from kgsynth.eval.results import AnswerRecord
from kgsynth.eval.scoring import ERROR_SOURCES
from kgsynth.synth.dialogues.item import ItemMetadata
from kgsynth.synth.scenarios.scenario import Difficulty


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Estimate(_Frozen):
    """A mean over items with its bootstrap confidence interval and the spread across items.

    The interval resamples clusters when the rows have them (``clusters``: how many): an
    item's rows go together with its twin in the other language and its other renderings,
    as one scenario (see ``estimate``); None: every row was resampled on its own.
    """

    n: int
    mean: float | None  # None when n == 0
    low: float | None
    high: float | None
    std: float | None  # standard deviation across items
    clusters: int | None = None  # scenarios (kv: JSON objects) the interval resampled; None: rows


class GroupMetrics(_Frozen):
    """The metrics of one group of answers (a slice value, a condition, a curve point)."""

    group: str
    n: int  # answers scored (failed requests excluded)
    accuracy: Estimate
    syntactic_ok: Estimate  # share of answers in the asked format
    token_f1: Estimate | None  # text and set answers only; None when the group has none
    failures: int  # requests that failed after every retry
    mean_context_tokens: float


class Slice(_Frozen):
    """Main-condition metrics grouped by one metadata field (or a derived bucket)."""

    by: str
    groups: tuple[GroupMetrics, ...]


class CurvePoint(_Frozen):
    x: float  # target tokens, depth 0..1, or turn index
    metrics: GroupMetrics


class LengthCurve(_Frozen):
    points: tuple[CurvePoint, ...]
    reference_accuracy: float | None  # accuracy at the shortest length
    break_ratio: float
    break_point: float | None  # the first length whose accuracy < break_ratio * reference; None: no break
    skipped_targets: tuple[int, ...]  # lengths that would not fit the model's context


class PositionCurve(_Frozen):
    by_depth: tuple[CurvePoint, ...]  # the dialogue moved from start (0) to end (1) of the context
    by_turn: tuple[CurvePoint, ...]  # by the (mean) absolute index of the fact turns


class KVCurve(_Frozen):
    """The key-value probe's accuracy by the queried pair's position, for one key count."""

    keys: int | None  # None: every key count together
    points: tuple[CurvePoint, ...]  # x: the position asked, 0 the first pair, 1 the last
    overall: GroupMetrics  # every position; its interval clustered by JSON object (shown at every position)


class KVRetrieval(_Frozen):
    curves: tuple[KVCurve, ...]  # one per key count, ascending, then every count together
    skipped_counts: tuple[int, ...]  # key counts whose object would not fit the model's context


class ErrorSources(_Frozen):
    """Wrong main-condition answers counted by error source, overall and per difficulty."""

    overall: dict[str, int]
    by_difficulty: dict[str, dict[str, int]]
    fact_probe_accuracy: Estimate | None


class HypothesisResult(_Frozen):
    """One of H1-H4 as a statistical test, with an effect size and a plain-language verdict."""

    id: str  # "H1" .. "H4"
    statement: str
    test: str  # what was fitted or tested, on which rows
    statistic: float | None
    p_value: float | None
    effect: str  # the effect size in words and figures, e.g. "odds ratio 0.62 per doubling of length [0.48, 0.80]"
    n: int
    supported: bool | None  # None: not enough data to test
    verdict: str


class Metrics(_Frozen):
    model: str
    rendering: str
    items: int
    confidence: float
    overall: GroupMetrics  # the main condition
    baselines: tuple[GroupMetrics, ...]  # main, closed_book, oracle on the same items (group = condition)
    slices: tuple[Slice, ...]
    error_sources: ErrorSources
    length: LengthCurve | None
    position: PositionCurve | None
    item_variance: float | None  # mean over items of the variance of correctness across their sweep renderings
    hypotheses: tuple[HypothesisResult, ...]
    kv: KVRetrieval | None = None  # the key-value probe (source 004), when it ran


# --------------------------------------------------------------------------- computing them
#
# Small pieces that compose, as inspect_ai's metrics do: ``estimate`` (one mean with its
# bootstrap interval, resampling scenarios), ``group_metrics`` (accuracy, format validity,
# token-F1 of a group of rows), ``slice_metrics`` (groups by any metadata field or derived bucket), the curves, the
# error sources, and ``compute_metrics`` putting them together. Each takes answer records
# or an ``Answers`` table of them; ``compute_metrics`` builds the table once for all.

METRIC_CONDITION = "main"
DEFAULT_SLICES = ("difficulty", "category", "answer_format", "rule_kind", "rule_origin", "shape", "language", "length_bucket", "position")
BASELINE_CONDITIONS = ("main", "closed_book", "oracle")
SWEEP_CONDITIONS = ("length", "position")
# Bootstrap work cap, in values drawn (resamples x kinds of cluster or x clusters); beyond it
# the interval of a mean over so many clusters is the normal one, which the bootstrap agrees
# with there.
MAX_BOOTSTRAP_DRAWS = 4_000_000
_THIRDS = ("start", "middle", "end")
_ORDERS = {"difficulty": tuple(Difficulty), "position": _THIRDS, "depth": _THIRDS}




@dataclass(frozen=True, eq=False)
class Answers:
    """Answer records as columns, built in one pass: what the metrics select, group and average.

    ``records`` keeps the rows themselves (an object array) for the fields read rarely
    (metadata for slices, error sources). ``cluster`` numbers each row's scenario
    (``metadata.scenario_id``): an English item and its Russian twin, and every rendering of
    either (main, baselines, sweeps, probes), are one cluster, which the intervals resample
    as a whole. A row without a scenario id falls back to its own item: a ``kv`` row (no
    metadata) to its JSON object, a row of results written without the id to its item.
    """

    records: np.ndarray
    condition: np.ndarray
    item: np.ndarray
    cluster: np.ndarray  # the scenario's number (0..k-1, in the scenario ids' sorted order)
    correct: np.ndarray
    syntactic_ok: np.ndarray
    token_f1: np.ndarray  # NaN where the format has no token-F1
    failed: np.ndarray
    context_tokens: np.ndarray
    param: np.ndarray  # NaN where None
    fact_depth: np.ndarray  # NaN where None
    mean_fact_turn: np.ndarray  # mean index of the shown fact turns; NaN without any

    @classmethod
    def of(cls, records: Sequence[AnswerRecord] | Answers) -> Answers:
        if isinstance(records, Answers):
            return records
        nan = float("nan")
        with collector_paused():  # one pass, one tuple per record: the records lie scattered in memory
            rows = [
                (r.condition, r.item_id, _scenario_of(r), r.correct, r.syntactic_ok,
                 nan if r.token_f1 is None else r.token_f1,
                 r.failure is not None, r.context_tokens, nan if r.param is None else r.param,
                 nan if r.fact_depth is None else r.fact_depth,
                 sum(t) / len(t) if (t := r.fact_turn_indices) else nan)
                for r in records
            ]
        columns = list(zip(*rows)) if rows else [()] * 11
        types = (str, str, str, bool, bool, float, bool, float, float, float, float)
        condition, item, scenario, *rest = (np.array(column, dtype=kind) for column, kind in zip(columns, types))
        cluster = np.unique(scenario, return_inverse=True)[1].reshape(-1).astype(np.int64)
        return cls(np.fromiter(records, dtype=object, count=len(records)), condition, item, cluster, *rest)

    def __len__(self) -> int:
        return self.records.size

    def where(self, rows: np.ndarray) -> Answers:
        """The rows selected by a boolean mask or an index array."""
        return Answers(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})

    def of_condition(self, *conditions: str) -> Answers:
        return self.where(np.isin(self.condition, conditions))

    @property
    def scored(self) -> Answers:
        return self.where(~self.failed)


def _scenario_of(r: AnswerRecord) -> str:
    """The cluster of a row: its scenario; a row without one, its own item (or JSON object)."""
    m = r.metadata
    return f"s:{m.scenario_id}" if m is not None and m.scenario_id else f"i:{r.item_id}"


def bootstrap_means(
    distinct: np.ndarray, counts: np.ndarray, resamples: int, rng: np.random.Generator,
    sizes: np.ndarray | None = None,
) -> np.ndarray | None:
    """Means of ``resamples`` cluster resamples: k clusters drawn with replacement from the
    k = ``counts.sum()`` given, each kind of cluster (its values' sum ``distinct``, its row
    count ``sizes``; None: one row each) seen ``counts`` times, and each resample's mean the
    sum of its clusters' sums over the sum of their sizes. None when that would draw more
    than ``MAX_BOOTSTRAP_DRAWS`` values.

    A resample is a multinomial draw of how often each kind of cluster comes up (for 0/1
    outcomes of single rows a Binomial(k, p)), so all resamples are drawn at once and the
    work grows with the number of kinds of cluster (a pair of 0/1 twins is one of three),
    not with the rows. With one row per cluster this is the ordinary bootstrap of the rows.
    """
    k = int(counts.sum())
    sizes = np.ones_like(distinct) if sizes is None else np.asarray(sizes, dtype=float)
    if distinct.size * resamples <= MAX_BOOTSTRAP_DRAWS:
        drawn = rng.multinomial(k, counts / k, size=resamples)
        return (drawn @ distinct) / (drawn @ sizes)
    if k * resamples <= MAX_BOOTSTRAP_DRAWS:
        picks = rng.integers(0, k, size=(resamples, k))
        return np.repeat(distinct, counts)[picks].sum(axis=1) / np.repeat(sizes, counts)[picks].sum(axis=1)
    return None


def cluster_totals(
    values: np.ndarray, clusters: Sequence | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kinds of cluster among ``values``: (each kind's sum, its row count, how many
    clusters are of that kind), sorted. ``clusters`` labels each value's cluster; None: one
    cluster per value. The same rows in any order give the same arrays, to the last bit."""
    if clusters is None:
        distinct, counts = np.unique(values, return_counts=True)
        return distinct, np.ones_like(distinct), counts
    _, code = np.unique(np.asarray(clusters), return_inverse=True)
    code = code.reshape(-1)
    order = np.lexsort((values, code))  # each cluster's values summed in one order, whatever the rows' order
    sums = np.bincount(code[order], weights=values[order])
    sizes = np.bincount(code).astype(float)
    kinds, counts = np.unique(np.column_stack([sums, sizes]), axis=0, return_counts=True)
    return kinds[:, 0], kinds[:, 1], counts


def estimate(
    values: Sequence[float] | np.ndarray, *, clusters: Sequence | np.ndarray | None = None, confidence: float = 0.95,
    bootstrap: int = 1000, seed: int | Sequence[int] = 0,
) -> Estimate:
    """The mean of ``values`` with its percentile-bootstrap interval and their standard deviation.

    ``clusters`` labels each value's cluster (its scenario: an item, its twin in the other
    language and its other renderings are not independent answers); the interval then
    resamples clusters, each with all its values, and the mean of a resample is its values'
    sum over their number (a cluster bootstrap of the ratio). So answers that agree because
    they are one scenario worded twice count once, and duplicating every row does not narrow
    the interval. None: each value its own cluster, the ordinary bootstrap of the values.
    Beyond ``MAX_BOOTSTRAP_DRAWS`` the interval is the normal one with the clusters'
    (linearised) standard error.

    Seeded, and computed from the kinds of cluster and their counts: the same values and
    clusters in any order, with the same confidence, resamples and seed, give the same figures.
    """
    if bootstrap < 1:
        raise ValueError("bootstrap must be at least 1 resample")
    values = np.asarray(values, dtype=float).reshape(-1)
    if clusters is not None and len(clusters) != values.size:
        raise ValueError(f"{len(clusters)} cluster labels for {values.size} values")
    distinct, counts = np.unique(values, return_counts=True)
    n = int(counts.sum())
    if n == 0:
        return Estimate(n=0, mean=None, low=None, high=None, std=None, clusters=None if clusters is None else 0)
    mean = float(counts @ distinct / n)
    std = float(np.sqrt(counts @ (distinct - mean) ** 2 / n))
    sums, sizes, kinds = cluster_totals(values, clusters)
    means = bootstrap_means(sums, kinds, bootstrap, np.random.default_rng(seed), sizes)
    if means is None:  # the ratio's standard error, linearised; std / sqrt(n) with one row per cluster
        half = NormalDist().inv_cdf((1 + confidence) / 2) * float(np.sqrt(kinds @ (sums - mean * sizes) ** 2)) / n
        low, high = mean - half, mean + half
    else:
        low, high = (float(q) for q in np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2]))
    return Estimate(n=n, mean=mean, low=low, high=high, std=std,
                    clusters=None if clusters is None else int(kinds.sum()))


def group_metrics(
    records: Sequence[AnswerRecord] | Answers, group: str, *, confidence: float = 0.95, bootstrap: int = 1000,
    seed: int = 0,
) -> GroupMetrics:
    """Accuracy, format validity and token-F1 of ``records`` (failed requests counted, not
    scored), each interval resampling scenarios (``Answers.cluster``; see ``estimate``)."""
    answers = Answers.of(records)
    scored = answers.scored
    has_f1 = ~np.isnan(scored.token_f1)

    def of(values: np.ndarray, clusters: np.ndarray, metric: str) -> Estimate:
        # each group and metric draws its own stream, so intervals are not all drawn alike
        return estimate(values, clusters=clusters, confidence=confidence, bootstrap=bootstrap,
                        seed=(seed, zlib.crc32(f"{group}|{metric}".encode())))

    return GroupMetrics(
        group=group,
        n=len(scored),
        accuracy=of(scored.correct, scored.cluster, "accuracy"),
        syntactic_ok=of(scored.syntactic_ok, scored.cluster, "syntactic_ok"),
        token_f1=of(scored.token_f1[has_f1], scored.cluster[has_f1], "token_f1") if has_f1.any() else None,
        failures=int(answers.failed.sum()),
        mean_context_tokens=float(answers.context_tokens.mean()) if len(answers) else 0.0,
    )


def length_bucket(tokens: float) -> str:
    """Power-of-two bucket of a context length: "<256", "256-511", "512-1023", ..."""
    floor = _length_floor(tokens)
    return "<256" if floor == 0 else f"{floor}-{2 * floor - 1}"


def _length_floor(tokens: float) -> int:
    return 0 if tokens < 256 else 1 << (int(tokens).bit_length() - 1)


def depth_third(depth: float | None) -> str | None:
    """Where the fact turns sit in the shown context: start, middle or end third (like the metadata's position)."""
    if depth is None or math.isnan(depth):
        return None
    return _THIRDS[min(int(depth * 3), 2)]


def turn_bin(index: float) -> str:
    """Power-of-two bin of a turn index: "0", "1", "2-3", "4-7", ..."""
    floor = _turn_floor(index)
    return str(floor) if floor < 2 else f"{floor}-{2 * floor - 1}"


def _turn_floor(index: float) -> int:
    return 0 if index < 1 else 1 << (int(index).bit_length() - 1)


# derived groupings: each row's sort key (None: the row has no such group) and a key's label
_DERIVED: dict[str, tuple[Callable[[Answers], list], Callable[[Any], str]]] = {
    "length_bucket": (lambda a: [_length_floor(t) for t in a.context_tokens.tolist()], length_bucket),
    "depth": (lambda a: [depth_third(d) for d in a.fact_depth.tolist()], str),
    "turn_bin": (lambda a: [None if math.isnan(t) else _turn_floor(t) for t in a.mean_fact_turn.tolist()], turn_bin),
}


def group_values(answers: Answers, by: str) -> tuple[list, Callable[[Any], str]]:
    """Each row's value of ``by`` (None: no value) and how to label a value. ``by`` is a
    derived field (``length_bucket``, ``depth``, ``turn_bin``), a metadata field or a record
    field, first match first (``turns`` is the item's own dialogue's)."""
    if by in _DERIVED:
        values_of, label = _DERIVED[by]
        return values_of(answers), label
    if by in ItemMetadata.model_fields:
        return [getattr(r.metadata, by) for r in answers.records], _label
    if by in AnswerRecord.model_fields and by != "metadata":
        return [getattr(r, by) for r in answers.records], _label
    known = sorted({*_DERIVED, *ItemMetadata.model_fields, *AnswerRecord.model_fields} - {"metadata"})
    raise ValueError(f"cannot slice by {by!r}: not a metadata field or a derived one ({', '.join(known)})")


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _sort_key(by: str, value: Any) -> tuple:
    if by in _ORDERS and value in _ORDERS[by]:
        return (0, _ORDERS[by].index(value), "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value, "")
    return (2, 0, _label(value))


def grouped(records: Sequence[AnswerRecord] | Answers, by: str) -> list[tuple[str, Answers]]:
    """The rows grouped by ``by`` (see ``group_values``), in the field's natural order; rows
    without a value for it are left out."""
    answers = Answers.of(records)
    values, label = group_values(answers, by)
    rows: dict[Any, list[int]] = {}
    for i, value in enumerate(values):
        if value is not None:
            rows.setdefault(value, []).append(i)
    return [(label(v), answers.where(np.array(rows[v]))) for v in sorted(rows, key=lambda v: _sort_key(by, v))]


def slice_metrics(
    records: Sequence[AnswerRecord] | Answers, by: str, *, condition: str | None = METRIC_CONDITION,
    confidence: float = 0.95, bootstrap: int = 1000, seed: int = 0,
) -> Slice:
    """Metrics of the ``condition`` rows (None: every row) grouped by ``by``."""
    answers = Answers.of(records)
    rows = answers if condition is None else answers.of_condition(condition)
    groups = tuple(
        group_metrics(members, label, confidence=confidence, bootstrap=bootstrap, seed=_derive(seed, f"slice:{by}"))
        for label, members in grouped(rows, by)
    )
    return Slice(by=by, groups=groups)


def baselines(
    records: Sequence[AnswerRecord] | Answers, *, confidence: float = 0.95, bootstrap: int = 1000, seed: int = 0
) -> tuple[GroupMetrics, ...]:
    """main, closed_book and oracle (those present) on the same items: those scored in every one of them.

    A condition's failed requests are counted in its ``failures``; their items drop out of
    every baseline, since they cannot be compared.
    """
    answers = Answers.of(records)
    by_condition = {c: answers.of_condition(c) for c in BASELINE_CONDITIONS}
    present = [c for c in BASELINE_CONDITIONS if len(by_condition[c])]
    common = reduce(np.intersect1d, (by_condition[c].scored.item for c in present)) if present else np.array([])
    return tuple(
        group_metrics(
            by_condition[c].where(np.isin(by_condition[c].item, common) | by_condition[c].failed), c,
            confidence=confidence, bootstrap=bootstrap, seed=_derive(seed, "baseline"),
        )
        for c in present
    )


def curve_points(
    records: Sequence[AnswerRecord] | Answers, xs: Sequence[float] | np.ndarray, *,
    label: Callable[[float], str] = _label, confidence: float = 0.95, bootstrap: int = 1000, seed: int = 0,
) -> tuple[CurvePoint, ...]:
    """One point per distinct x, by ascending x; ``xs`` gives each row's x (NaN: not on the curve)."""
    answers, xs = Answers.of(records), np.asarray(xs, dtype=float)
    return tuple(
        CurvePoint(
            x=float(x),
            metrics=group_metrics(answers.where(xs == x), label(float(x)), confidence=confidence, bootstrap=bootstrap, seed=seed),
        )
        for x in np.unique(xs[~np.isnan(xs)])
    )


def break_point(points: Sequence[CurvePoint], break_ratio: float) -> tuple[float | None, float | None]:
    """(reference accuracy: the shortest length's, the first x whose accuracy < break_ratio * reference)."""
    measured = [p for p in points if p.metrics.accuracy.mean is not None]
    if not measured:
        return None, None
    reference = measured[0].metrics.accuracy.mean
    broken = next((p.x for p in measured if p.metrics.accuracy.mean < break_ratio * reference), None)
    return reference, broken


def length_curve(
    records: Sequence[AnswerRecord] | Answers, *, break_ratio: float = 0.8, skipped_targets: Sequence[int] = (),
    confidence: float = 0.95, bootstrap: int = 1000, seed: int = 0,
) -> LengthCurve | None:
    """Accuracy by target length from the ``length`` rows, with the break point; None without such rows."""
    rows = Answers.of(records).of_condition("length")
    if not len(rows):
        return None
    points = curve_points(
        rows, rows.param, label=lambda x: f"{x:g} tokens", confidence=confidence, bootstrap=bootstrap,
        seed=_derive(seed, "length"),
    )
    reference, broken = break_point(points, break_ratio)
    return LengthCurve(
        points=points, reference_accuracy=reference, break_ratio=break_ratio, break_point=broken,
        skipped_targets=tuple(skipped_targets),
    )


def position_curve(
    records: Sequence[AnswerRecord] | Answers, *, confidence: float = 0.95, bootstrap: int = 1000, seed: int = 0
) -> PositionCurve | None:
    """Accuracy by depth (``position`` rows) and by the fact turns' mean absolute index (the
    ``position`` rows, or the ``main`` rows without a sweep: never both, whose lengths
    differ; power-of-two bins of turns, each point at its rows' mean index); None when
    neither has a point."""
    answers = Answers.of(records)
    depths = answers.of_condition("position")
    by_depth = curve_points(
        depths, depths.param, label=lambda x: f"depth {x:g}", confidence=confidence, bootstrap=bootstrap,
        seed=_derive(seed, "depth"),
    )
    by_turn = tuple(
        CurvePoint(
            x=round(float(members.mean_fact_turn.mean()), 2),
            metrics=group_metrics(members, f"turns {label}", confidence=confidence, bootstrap=bootstrap,
                                  seed=_derive(seed, "turn")),
        )
        for label, members in grouped(depths if len(depths) else answers.of_condition("main"), "turn_bin")
    )
    return PositionCurve(by_depth=by_depth, by_turn=by_turn) if by_depth or by_turn else None


def kv_retrieval(
    records: Sequence[AnswerRecord] | Answers, *, skipped_counts: Sequence[int] = (), confidence: float = 0.95,
    bootstrap: int = 1000, seed: int = 0,
) -> KVRetrieval | None:
    """Accuracy of the ``kv`` rows by position, per key count and for all together; None
    without such rows. A point's rows are answers about different objects; a curve's
    ``overall`` pools an object's positions, so its interval resamples objects."""
    rows = Answers.of(records).of_condition("kv")
    if not len(rows):
        return None
    ci = {"confidence": confidence, "bootstrap": bootstrap}
    keys = np.array([r.kv.keys for r in rows.records])
    curves = [(int(k), rows.where(keys == k)) for k in np.unique(keys)] + [(None, rows)]
    return KVRetrieval(
        curves=tuple(
            KVCurve(
                keys=k,
                points=curve_points(members, members.param, label=lambda x: f"position {x:g}", **ci,
                                    seed=_derive(seed, f"kv:{k}")),
                overall=_clustered(members, "all positions" if k is None else f"{k} keys", **ci,
                                   seed=_derive(seed, "kv")),
            )
            for k, members in curves
        ),
        skipped_counts=tuple(skipped_counts),
    )


def _clustered(answers: Answers, group: str, *, confidence: float, bootstrap: int, seed: int) -> GroupMetrics:
    """``group_metrics`` whose accuracy is the mean over items of each item's accuracy, its
    interval resampling items (``accuracy.n``: the items), for rows that share items (the
    ``kv`` rows, whose item is a JSON object and which have no scenario)."""
    metrics = group_metrics(answers, group, confidence=confidence, bootstrap=bootstrap, seed=seed)
    scored = answers.scored
    _, item = np.unique(scored.item, return_inverse=True)
    shares = np.bincount(item, weights=scored.correct) / np.maximum(np.bincount(item), 1)
    accuracy = estimate(shares, clusters=np.arange(shares.size), confidence=confidence, bootstrap=bootstrap,
                        seed=(seed, zlib.crc32(f"{group}|items".encode())))
    return metrics.model_copy(update={"accuracy": accuracy})


def error_sources(
    records: Sequence[AnswerRecord] | Answers, *, confidence: float = 0.95, bootstrap: int = 1000, seed: int = 0
) -> ErrorSources:
    """Wrong scored main answers counted by source (a missing source counts as ``unprobed``),
    overall and per difficulty, with the fact probes' accuracy."""
    answers = Answers.of(records)
    main = answers.of_condition("main").scored
    wrong = main.where(~main.correct).records
    difficulties = sorted({r.metadata.difficulty for r in main.records}, key=lambda d: _sort_key("difficulty", d))
    probes = answers.of_condition("fact_probe").scored  # an item's probes, and its twin's, resampled together
    return ErrorSources(
        overall=_count_sources(wrong),
        by_difficulty={str(d): _count_sources([r for r in wrong if r.metadata.difficulty == d]) for d in difficulties},
        fact_probe_accuracy=estimate(
            probes.correct, clusters=probes.cluster, confidence=confidence, bootstrap=bootstrap,
            seed=(seed, zlib.crc32(b"fact_probe")),
        ) if len(probes) else None,
    )


def _count_sources(wrong: Sequence[AnswerRecord]) -> dict[str, int]:
    counts = Counter(r.error_source or "unprobed" for r in wrong)
    return {source: counts.pop(source, 0) for source in ERROR_SOURCES} | dict(sorted(counts.items()))


def item_variance(records: Sequence[AnswerRecord] | Answers) -> float | None:
    """Mean over items of the variance of correctness across the item's scored ``length``
    and ``position`` renderings (items with at least two); None when no item has two."""
    sweeps = Answers.of(records).of_condition(*SWEEP_CONDITIONS).scored
    _, item = np.unique(sweeps.item, return_inverse=True)
    renderings = np.bincount(item)
    share = np.bincount(item, weights=sweeps.correct) / np.maximum(renderings, 1)
    variances = (share * (1 - share))[renderings >= 2]  # the variance of 0/1 outcomes with mean p
    return float(variances.mean()) if variances.size else None


def compute_metrics(
    records: Sequence[AnswerRecord], *, model: str, rendering: str, confidence: float = 0.95, bootstrap: int = 1000,
    seed: int = 0, break_ratio: float = 0.8, skipped_targets: Sequence[int] = (), skipped_kv_counts: Sequence[int] = (),
) -> Metrics:
    """Every metric of one model's run in one rendering, hypotheses H1-H4 included.

    Raises ValueError when ``records`` hold rows of another model or rendering (mixing
    them would average unlike things).
    """
    others = {(r.model, r.rendering) for r in records} - {(model, rendering)}
    if others:
        raise ValueError(f"records of other runs among those of {model}/{rendering}: {sorted(others)[:3]}")
    with collector_paused():
        return _metrics(Answers.of(records), model=model, rendering=rendering, confidence=confidence,
                        bootstrap=bootstrap, seed=seed, break_ratio=break_ratio, skipped_targets=skipped_targets,
                        skipped_kv_counts=skipped_kv_counts)


def _metrics(
    answers: Answers, *, model: str, rendering: str, confidence: float, bootstrap: int, seed: int, break_ratio: float,
    skipped_targets: Sequence[int], skipped_kv_counts: Sequence[int],
) -> Metrics:
    # hypotheses.py builds on this module's models, so it is imported here, not at the top
    from kgsynth.eval.hypotheses import test_hypotheses

    ci = {"confidence": confidence, "bootstrap": bootstrap, "seed": seed}
    main = answers.of_condition("main")
    return Metrics(
        model=model,
        rendering=rendering,
        items=int(np.unique(answers.item[answers.condition != "kv"]).size),  # kv rows ask JSON objects, not items
        confidence=confidence,
        overall=group_metrics(main, "main", **ci),
        baselines=baselines(answers, **ci),
        slices=tuple(slice_metrics(main, by, **ci) for by in DEFAULT_SLICES),
        error_sources=error_sources(answers, **ci),
        length=length_curve(answers, break_ratio=break_ratio, skipped_targets=skipped_targets, **ci),
        position=position_curve(answers, **ci),
        item_variance=item_variance(answers),
        hypotheses=test_hypotheses(answers, alpha=1 - confidence),
        kv=kv_retrieval(answers, skipped_counts=skipped_kv_counts, **ci),
    )


def _derive(seed: int, scope: str) -> int:
    """A seed of its own for each part, stable across runs (unlike hash())."""
    return zlib.crc32(f"{seed}:{scope}".encode())
