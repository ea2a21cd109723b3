"""Scoring benchmark: 100,000 stored answers read, re-scored and turned into every metric.

    .venv/bin/python bench/score.py              # 100,000 answers, each path 3 times
    .venv/bin/python bench/score.py --rows 20000 --repeat 1 --json

Items come from the demo graph the way a user makes them (``synthesize`` with
``configs/all_shapes.toml``, dataset seeds 0 and 1 joined, so every shape and format is
there). A simulated model answers them: main, closed-book and oracle answers, a length
sweep (5 targets) and a position sweep (5 depths) per item, and fact probes for every wrong
main answer, until 100,000 rows: correct answers are the gold, wrong ones a changed value
(flipped yes/no, a number off by ~10%, a date 3 days off, another item's text, a set with a
member dropped) or the gold in a sentence (wrong format). Its odds of a right answer fall
with length and reasoning links and depend on the rule kind; every row is scored by the
real checker. Sweep rows carry their turn count and fact positions as ``render`` would make
them (padding turns of a calibrated mean size at random places or depths), without writing
out 80,000 long dialogues.

Timed on the same results.jsonl:

- kgsynth: ``read_results(folder)``, each answer re-checked (``scoring.score`` and
  ``item_token_f1``; probes with ``value_recalled``), then ``compute_metrics`` (bootstrap
  intervals, slices, curves, error sources, item variance, and ``test_hypotheses``, also
  timed alone);
- the alternative a user would write: ``pandas.read_json(lines=True)`` with the metadata
  flattened by ``json_normalize``, the same checker calls, ``groupby`` for the same groups
  with a Python-loop bootstrap (``rng.choice`` per resample) for the same intervals, and
  the same four logits through statsmodels' formula API;
- ``read_results`` again with the cyclic collector paused, once: what the collector costs.

Each path runs ``--repeat`` times, each time in a fresh forked child (the run with the median
total is shown).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import math
import multiprocessing as mp
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels
import statsmodels.formula.api as smf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from extract import machine, source_state

from kgsynth.dataset.splits import read_items
from kgsynth.eval import render
from kgsynth.eval.hypotheses import test_hypotheses
from kgsynth.eval.metrics import DEFAULT_SLICES, Metrics, compute_metrics, length_bucket
from kgsynth.eval.results import RESULTS_FILE, AnswerRecord, read_results
from kgsynth.eval.scoring import blanked, error_source, item_token_f1, score, value_recalled
from kgsynth.formats.answers import NUMERIC_FORMATS, AnswerFormat
from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline.config import SynthConfig, load_config
from kgsynth.pipeline.run import synthesize
from kgsynth.synth.dialogues.item import Item

TARGETS = (1000, 2000, 4000, 8000, 16000)
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
POSITION_TOKENS = 1000
BOOTSTRAP = 1000
KIND_SHIFT = {"arithmetic": 0.4, "threshold": 0.2, "interval": -0.2, "conditional": -0.4, "classification": 0.0}
PROSE = ("The answer is {}.", "I think it is {}, as far as I can tell.", "{} - that is what the conversation says.")


# ------------------------------------------------------------------ items and simulated answers


def make_items(work: Path) -> list[Item]:
    kg = KnowledgeGraph.load(ROOT / "data" / "demo", lang=("en", "ru"))
    base = load_config(ROOT / "configs" / "all_shapes.toml")
    items: dict[str, Item] = {}
    for seed in (0, 1):
        config = SynthConfig.model_validate(base.model_dump() | {"dataset": base.dataset.model_dump() | {"n": 6000, "seed": seed}})
        synthesize(kg, config, work / f"items-{seed}")
        items |= {i.id: i for i in read_items(work / f"items-{seed}" / "items.jsonl")}
    return list(items.values())


def gold_text(item: Item) -> str:
    return ", ".join(item.gold) if isinstance(item.gold, list) else item.gold


def wrong_value(item: Item, rng: random.Random, others: list[Item]) -> str:
    fmt, gold = item.answer_format, item.gold
    if fmt is AnswerFormat.yes_no:
        return "no" if gold == "yes" else "yes"
    if fmt in NUMERIC_FORMATS:
        value = Decimal(gold)
        changed = value * Decimal("1.1") + 1
        return f"{changed:.{max(-value.as_tuple().exponent, 0)}f}"
    if fmt is AnswerFormat.date:
        return (dt.date.fromisoformat(gold) + dt.timedelta(days=3)).isoformat()
    if fmt is AnswerFormat.set and len(gold) > 1:
        return ", ".join(gold[1:])
    same = [o for o in others if o.answer_format is fmt and o.language == item.language and o.gold != gold]
    return gold_text(rng.choice(same)) if same else gold_text(item) + " x"


def simulated_answer(item: Item, p_correct: float, tokens: int, rng: random.Random, others: list[Item]) -> str:
    if rng.random() < p_correct:
        return gold_text(item)
    if rng.random() < 0.15 + 0.03 * math.log2(max(tokens, 64) / 64):  # format slips grow with length
        return rng.choice(PROSE).format(gold_text(item))
    return wrong_value(item, rng, others)


def p_correct(item: Item, tokens: int, depth: float | None = None) -> float:
    logit = 2.0 - 0.35 * (math.log2(max(tokens, 32)) - 7) - 0.3 * (item.metadata.links - 1)
    logit += KIND_SHIFT.get(item.metadata.rule_kind, 0.3)
    if depth is not None:
        logit += 0.6 * ((2 * depth - 1) ** 2 - 0.5)  # lost in the middle
    return 1 / (1 + math.exp(-logit))


class Simulation:
    """Rows of one simulated run: what ``kgsynth eval`` would write for these answers."""

    def __init__(self, items: list[Item], seed: int = 0):
        self.items, self.rng = items, random.Random(seed)
        self.distractor_tokens = self._calibrate(items[:20])

    @staticmethod
    def _calibrate(sample: list[Item]) -> float:
        """Mean tokens of one padding turn, from real renderings."""
        added = [(render.stretched(i, 4000, 0), render.main(i)) for i in sample]
        return statistics.mean((s.context_tokens - m.context_tokens) / (len(s.turns) - len(m.turns)) for s, m in added)

    def rows(self, limit: int):
        count = 0
        for item in self.items:
            for row in self.item_rows(item):
                yield row
                count += 1
                if count == limit:
                    return

    def item_rows(self, item: Item):
        main = render.main(item)
        main_row = self.answer(item, "main", None, main.context_tokens, len(main.turns), main.fact_turn_indices)
        oracle_variant = render.oracle(item)
        oracle_row = self.answer(item, "oracle", None, oracle_variant.context_tokens, len(oracle_variant.turns),
                                 oracle_variant.fact_turn_indices, chance=0.9)
        probes = [] if main_row.correct or main_row.failure else self.probes(item, main)
        if probes or not (main_row.correct or main_row.failure):
            recalled = {int(p.param): p.correct for p in probes}
            oracle_value_right = None if oracle_row.failure else oracle_row.value_matches
            source = error_source(score(item, main_row.answer), item, recalled, oracle_value_right)
            main_row = main_row.model_copy(update={"error_source": source})
        yield main_row
        yield self.answer(item, "closed_book", None, 0, 0, (), chance=0.05)
        yield oracle_row
        yield from probes
        facts = main.fact_turn_indices
        for target in TARGETS:
            pad = max(0, round((target - main.context_tokens) / self.distractor_tokens))
            slots = sorted(self.rng.randint(0, len(main.turns)) for _ in range(pad))
            shifted = tuple(i + sum(s <= i for s in slots) for i in facts)
            yield self.answer(item, "length", float(target), main.context_tokens + round(pad * self.distractor_tokens),
                              len(main.turns) + pad, shifted)
        pad = max(0, round((POSITION_TOKENS - main.context_tokens) / self.distractor_tokens))
        for depth in DEPTHS:
            before = round(depth * pad)
            yield self.answer(item, "position", depth, main.context_tokens + round(pad * self.distractor_tokens),
                              len(main.turns) + pad, tuple(i + before for i in facts), depth=depth)

    def answer(self, item, condition, param, tokens, turns, facts, chance=None, depth=None) -> AnswerRecord:
        common = self.common(item, condition, param, tokens, turns, facts)
        if self.rng.random() < 0.005:  # a request that failed after every retry
            return AnswerRecord(**common, answer=None, value=None, syntactic_ok=False, value_matches=False,
                                correct=False, failure="timeout")
        p = chance if chance is not None else p_correct(item, tokens, depth)
        answer = simulated_answer(item, p, tokens, self.rng, self.items[:400])
        check = score(item, answer)
        return AnswerRecord(**common, answer=answer, value=check.value, syntactic_ok=check.syntactic_ok,
                            value_matches=check.value_matches, correct=check.correct,
                            token_f1=item_token_f1(item, answer))

    def probes(self, item: Item, main: render.Variant) -> list[AnswerRecord]:
        found = []
        for fact, value in enumerate(item.metadata.fact_values):
            if blanked(item, fact) is None:
                continue
            answer = value if self.rng.random() < 0.8 else "I do not remember"
            found.append(AnswerRecord(
                **self.common(item, "fact_probe", float(fact), main.context_tokens, len(main.turns), main.fact_turn_indices),
                answer=answer, value=value, syntactic_ok=True, value_matches=value_recalled(answer, value),
                correct=value_recalled(answer, value)))
        return found

    @staticmethod
    def common(item, condition, param, tokens, turns, facts) -> dict:
        depth = sum(facts) / len(facts) / max(turns - 1, 1) if facts else None
        key = f"{item.id}/{condition}" + ("" if param is None else f"/{param:g}")
        return {"key": key, "item_id": item.id, "condition": condition, "param": param, "model": "simulated",
                "rendering": "transcript", "context_tokens": tokens, "turns": turns, "fact_turn_indices": facts,
                "fact_depth": depth, "metadata": item.metadata}


def write_results(path: Path, rows) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(row.model_dump_json() + "\n")
            count += 1
    return count


# ------------------------------------------------------------------ kgsynth's path


def rescored(record: AnswerRecord, item: Item) -> AnswerRecord:
    """The record with its answer checked again; a new record only where the verdict changed."""
    if record.failure is not None:
        return record
    if record.condition == "fact_probe":
        recalled = value_recalled(record.answer, record.value)
        verdict = {"correct": recalled, "value_matches": recalled}
    else:
        check = score(item, record.answer)
        verdict = {"syntactic_ok": check.syntactic_ok, "value_matches": check.value_matches, "correct": check.correct,
                   "value": check.value, "token_f1": item_token_f1(item, record.answer)}
    if all(getattr(record, name) == value for name, value in verdict.items()):
        return record
    return record.model_copy(update=verdict)


def kgsynth_path(path: Path, items: dict[str, Item]) -> tuple[dict, Metrics, list[AnswerRecord]]:
    times = {}
    start = time.perf_counter()
    records = read_results(path.parent)
    times["read"] = time.perf_counter() - start
    start = time.perf_counter()
    checked = [rescored(r, items[r.item_id]) for r in records]
    times["rescore"] = time.perf_counter() - start
    times["changed_by_rescoring"] = sum(new is not old for new, old in zip(checked, records))
    records = checked
    start = time.perf_counter()
    metrics = compute_metrics(records, model="simulated", rendering="transcript", bootstrap=BOOTSTRAP, seed=0)
    times["compute_metrics"] = time.perf_counter() - start
    start = time.perf_counter()
    test_hypotheses(records)
    times["hypotheses"] = time.perf_counter() - start  # alone: with its own pass over the records
    times["total"] = times["read"] + times["rescore"] + times["compute_metrics"]
    return times, metrics, records


# ------------------------------------------------------------------ the alternative: pandas and a loop bootstrap


def loop_ci(values, rng: np.random.Generator) -> tuple[float, float, float] | None:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return None
    means = [rng.choice(values, size=values.size).mean() for _ in range(BOOTSTRAP)]
    low, high = np.quantile(means, [0.025, 0.975])
    return float(values.mean()), float(low), float(high)


def loop_group(frame: pd.DataFrame, rng: np.random.Generator) -> dict:
    return {"n": len(frame), "accuracy": loop_ci(frame["correct"], rng), "syntactic_ok": loop_ci(frame["syntactic_ok"], rng),
            "token_f1": loop_ci(frame["token_f1"].dropna(), rng)}


def alternative_check(item: Item, condition: str, answer, value, failure) -> tuple[bool, bool, float | None]:
    if pd.notna(failure):
        return False, False, None
    if condition == "fact_probe":
        return value_recalled(answer, value), True, None
    check = score(item, answer)
    return check.correct, check.syntactic_ok, item_token_f1(item, answer)


def alternative_path(path: Path, items: dict[str, Item]) -> tuple[dict, dict]:
    times, rng, out = {}, np.random.default_rng(0), {}
    start = time.perf_counter()
    df = pd.read_json(path, lines=True, dtype=False)
    meta = pd.json_normalize(df.pop("metadata").tolist())
    df = df.join(meta.add_prefix("m_"))
    times["read"] = time.perf_counter() - start

    start = time.perf_counter()
    checked = [alternative_check(items[i], c, a, v, f) for i, c, a, v, f in
               zip(df.item_id, df.condition, df.answer, df.value, df.failure)]
    df["correct"], df["syntactic_ok"], df["token_f1"] = zip(*checked)
    times["rescore"] = time.perf_counter() - start

    start = time.perf_counter()
    ok = df[df.failure.isna()].copy()
    ok["correct"] = ok["correct"].astype(float)
    ok["syntactic_ok"] = ok["syntactic_ok"].astype(float)
    ok["token_f1"] = pd.to_numeric(ok["token_f1"])
    main = ok[ok.condition == "main"].copy()
    out["overall"] = loop_group(main, rng)
    present = [c for c in ("main", "closed_book", "oracle") if (ok.condition == c).any()]
    common = set.intersection(*(set(ok.item_id[ok.condition == c]) for c in present))
    out["baselines"] = {c: loop_group(ok[(ok.condition == c) & ok.item_id.isin(common)], rng) for c in present}
    main["length_bucket"] = main.context_tokens.map(length_bucket)
    out["slices"] = {}
    for by in DEFAULT_SLICES:
        column = by if by == "length_bucket" else f"m_{by}"
        out["slices"][by] = {str(k): loop_group(g, rng) for k, g in main.groupby(column)}
    length = ok[ok.condition == "length"]
    points = {x: loop_group(g, rng) for x, g in length.groupby("param")}
    reference = points[min(points)]["accuracy"][0]
    out["break_point"] = next((x for x in sorted(points) if points[x]["accuracy"][0] < 0.8 * reference), None)
    out["by_depth"] = {x: loop_group(g, rng) for x, g in ok[ok.condition == "position"].groupby("param")}
    turned = ok[ok.condition.isin(["main", "position"])].copy()
    turned["turn"] = turned.fact_turn_indices.map(lambda t: np.mean(t) if len(t) else np.nan)
    turned = turned.dropna(subset=["turn"])
    turned["turn_bin"] = np.where(turned.turn < 1, 0, 2 ** np.floor(np.log2(turned.turn.clip(lower=1))))
    out["by_turn"] = {b: loop_group(g, rng) for b, g in turned.groupby("turn_bin")}
    wrong = main[main.correct == 0]
    out["error_sources"] = wrong.error_source.fillna("unprobed").value_counts().to_dict()
    out["by_difficulty"] = wrong.groupby("m_difficulty").error_source.value_counts().to_dict()
    out["fact_probe"] = loop_ci(ok.correct[ok.condition == "fact_probe"], rng)
    sweeps = ok[ok.condition.isin(["length", "position"])].groupby("item_id").correct
    sizes = sweeps.size()
    out["item_variance"] = float(sweeps.var(ddof=0)[sizes >= 2].mean())
    times["metrics"] = time.perf_counter() - start

    start = time.perf_counter()
    fitted = ok[ok.condition.isin(["main", "length"]) & (ok.context_tokens > 0)].copy()
    fitted["log2_tokens"] = np.log2(fitted.context_tokens)
    fitted["cluster"] = fitted.item_id.astype("category").cat.codes
    cluster = {"cov_type": "cluster", "cov_kwds": {"groups": fitted.cluster}}
    h1 = smf.logit("correct ~ log2_tokens + m_links", fitted).fit(disp=0, **cluster)
    smf.logit("syntactic_ok ~ log2_tokens + m_links", fitted).fit(disp=0, **cluster)
    ruled = fitted[fitted.m_rule_kind != "none"]
    h4 = smf.logit("correct ~ C(m_rule_kind) + log2_tokens + m_links", ruled).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": ruled.cluster})
    terms = [i for i, name in enumerate(h4.params.index) if name.startswith("C(")]
    h4.wald_test(np.eye(len(h4.params))[terms], scalar=True)
    out["h1_links"] = float(h1.params["m_links"])
    times["hypotheses"] = time.perf_counter() - start
    times["compute_metrics"] = times["metrics"] + times["hypotheses"]
    times["total"] = times["read"] + times["rescore"] + times["compute_metrics"]
    return times, out


# ------------------------------------------------------------------ running and reporting


def agreement(metrics, alternative: dict) -> dict:
    """The two paths' figures side by side (means exact, intervals within bootstrap noise)."""
    ours = metrics.overall.accuracy
    theirs = alternative["overall"]["accuracy"]
    return {
        "overall_accuracy": (ours.mean, theirs[0]),
        "overall_interval": ((round(ours.low, 4), round(ours.high, 4)), (round(theirs[1], 4), round(theirs[2], 4))),
        "break_point": (metrics.length.break_point, alternative["break_point"]),
        "error_sources_equal": {k: v for k, v in metrics.error_sources.overall.items() if v}
        == alternative["error_sources"],
        "item_variance": (metrics.item_variance, alternative["item_variance"]),
    }


def in_child(function, *args):
    """``function(*args)`` in a fresh forked child: each path starts from the same heap, caches and collector state."""
    parent, child = mp.Pipe()

    def run() -> None:
        child.send(function(*args))

    process = mp.get_context("fork").Process(target=run)
    process.start()
    result = parent.recv()
    process.join()
    return result


def kgsynth_run(path: Path, items: dict[str, Item]) -> tuple[dict, Metrics, dict]:
    times, metrics, records = kgsynth_path(path, items)
    return times, metrics, {"items": len({r.item_id for r in records}), "conditions": dict(Counter(r.condition for r in records))}


def time_read_paused(folder: Path) -> float:
    """``list(read_results(folder))`` with the cyclic collector paused: each collection
    re-scans every record kept so far, which the rows (no cycles) do not need."""
    gc.disable()
    start = time.perf_counter()
    list(read_results(folder))
    seconds = time.perf_counter() - start
    gc.enable()
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each path (the median by total is reported)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kgsynth-score-"))
    try:
        start = time.perf_counter()
        item_list = make_items(work)
        items = {i.id: i for i in item_list}
        path = work / RESULTS_FILE
        rows = write_results(path, Simulation(item_list).rows(args.rows))
        prepare_s = time.perf_counter() - start
        load_before = os.getloadavg()[0]
        runs = [in_child(kgsynth_run, path, items) for _ in range(args.repeat)]
        times, metrics, counts = sorted(runs, key=lambda r: r[0]["total"])[(len(runs) - 1) // 2]
        alt_runs = [in_child(alternative_path, path, items) for _ in range(args.repeat)]
        alt_times, alternative = sorted(alt_runs, key=lambda r: r[0]["total"])[(len(alt_runs) - 1) // 2]
        read_paused_s = in_child(time_read_paused, work)
        report = {
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine(), "source": source_state(),
            "versions": {"python": platform.python_version(), "numpy": np.__version__, "pandas": pd.__version__,
                         "statsmodels": statsmodels.__version__},
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "rows": rows, "file_mb": path.stat().st_size / 2**20, "prepare_s": prepare_s, **counts,
            "kgsynth": times, "kgsynth_totals": [r[0]["total"] for r in runs], "alternative": alt_times,
            "alternative_totals": [r[0]["total"] for r in alt_runs],
            "read_paused_s": read_paused_s, "agreement": agreement(metrics, alternative),
            "hypotheses": [{"id": h.id, "supported": h.supported, "p": h.p_value, "effect": h.effect} for h in metrics.hypotheses],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2, default=str) if args.json else render_table(report))


def render_table(r: dict) -> str:
    k, a = r["kgsynth"], r["alternative"]
    lines = [
        f"{r['rows']:,} answers on {r['items']:,} items ({r['file_mb']:.0f} MB results.jsonl; "
        + ", ".join(f"{c} {n:,}" for c, n in r["conditions"].items()) + f"); prepared in {r['prepare_s']:.0f} s",
        f"{'stage':<34}{'kgsynth s':>10}{'pandas + loop s':>17}{'ratio':>8}",
    ]
    stages = [("read results.jsonl", "read"), ("re-score every answer", "rescore"),
              ("all metrics and H1-H4", "compute_metrics"), ("H1-H4 alone, a separate call (not in total)", "hypotheses"), ("total", "total")]
    for label, stage in stages:
        lines.append(f"{label:<34}{k[stage]:>10.2f}{a[stage]:>17.2f}{a[stage] / k[stage]:>7.1f}x")
    lines.append(f"totals of each run: kgsynth {', '.join(f'{t:.2f}' for t in r['kgsynth_totals'])} s, "
                 f"alternative {', '.join(f'{t:.2f}' for t in r['alternative_totals'])} s; "
                 f"rows whose verdict changed on re-scoring: {k['changed_by_rescoring']}")
    lines.append(f"read_results with the cyclic collector paused: {r['read_paused_s']:.2f} s")
    lines.append(f"load average before / after: {r['load_average']}")
    lines.append(f"agreement: {r['agreement']}")
    lines += [f"{h['id']}: supported={h['supported']} p={h['p']} {h['effect']}" for h in r["hypotheses"]]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
