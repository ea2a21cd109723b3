"""Synthesis benchmark: items per second end to end, and peak memory, on one core or several.

    python bench/synth.py                                   # the demo graph, the README's run
    python bench/synth.py --powerlaw 1000000 --n 100000     # 100,000 items from a generated graph
    python bench/synth.py --config configs/all_shapes.toml  # any config
    python bench/synth.py --powerlaw 1000000 --n 100000 --repeat 3   # three runs, median reported
    python bench/synth.py --powerlaw 1000000 --n 100000 --workers 1 2   # 1 and 2 workers, in turn
    python bench/synth.py --powerlaw 1000000 --n 10000 --pad 8000       # dialogues padded to 8k tokens

Each run happens in a child process pinned to as many CPU cores as it has workers
(``--workers``; one by default): it loads the graph (timed apart), then runs ``synthesize``
(graph loaded -> subgraphs -> scenarios -> items -> filters -> JSONL/Parquet files and
manifest). Reported: items written, seconds in all, items per second, the child's peak RSS
during that run (graph included) and each worker's, and the scenario phase timed again on
its own. With several worker counts the runs alternate (1, 2, 1, 2, ...), each count's
median is compared with the first count's as a ratio, and the files of every run are
compared byte for byte with the first run's (the run report's timings aside).
The naive alternative a user would write, one ``make_item`` plus filters per scenario
with every item kept in a list and dumped at the end, is timed in the same child on the
same scenarios for comparison (in one-worker runs).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import multiprocessing as mp
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from extract import machine, source_state  # noqa: E402
from powerlaw import write_ntriples  # noqa: E402

from kgsynth.filters import apply_filters  # noqa: E402
from kgsynth.kg import KnowledgeGraph, demo_graph_path, load_rules  # noqa: E402
from kgsynth.pipeline.config import SynthConfig, load_config  # noqa: E402
from kgsynth.pipeline.run import make_filters, plan_cells, synthesize  # noqa: E402
from kgsynth.synth.dialogues.item import make_item  # noqa: E402


def _run(paths: list[str], config: SynthConfig, conn) -> None:
    workers = config.run.workers or 1
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < workers:
        raise SystemExit(f"{workers} workers need {workers} cores; this machine lets the benchmark use {len(cores)}")
    os.sched_setaffinity(0, set(cores[:workers]))  # a core per worker
    start = time.perf_counter()
    kg = KnowledgeGraph.load(*paths, lang=config.graph.label_languages)
    load_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = synthesize(kg, config, Path(tmp) / "out")
        synth_s = time.perf_counter() - start
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before anything else runs
        sizes = sum(p.stat().st_size for p in (Path(tmp) / "out").rglob("*") if p.is_file())
        digests = _digests(Path(tmp) / "out")
        start = time.perf_counter()
        rules = load_rules(kg)
        plans = plan_cells(kg, config, rules)
        scenario_s = time.perf_counter() - start
        naive = _naive(plans, config, rules, result.items, Path(tmp) / "naive.json") if workers == 1 else {}
    conn.send({
        "load_s": load_s,
        "scenario_phase_s": scenario_s,
        "scenarios": sum(len(p.scenarios) for p in plans),
        "cells": len(plans),
        "items": result.items,
        "filled_cells": len(result.filled_cells),
        "unfillable_cells": len(result.unfillable_cells),
        "per_cell": result.per_cell,
        "synth_s": synth_s,
        "items_per_s": result.items / synth_s,
        "output_mb": sizes / 2**20,
        "filters": {k: {"in": v["in"], "rejected": v["rejected"]} for k, v in result.manifest["filters"].items()},
        "peak_rss_mb": peak_rss_mb,  # of the synthesize run, graph included
        "workers": workers,
        "load_average_after": os.getloadavg()[0],  # other work on the machine during the run, read at its end
        "worker_peak_rss_mb": sorted(result.workers.peak_mb.values()),
        "digests": digests,
        **naive,
    })


def _digests(out: Path) -> dict[str, str]:
    """sha256 of every file the run wrote; the run report without its timings."""
    digests = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "filter_report.json":
            report = json.loads(data)
            for stage in report["stages"].values():
                stage.pop("seconds")
            data = json.dumps(report, sort_keys=True).encode()
        digests[str(path.relative_to(out))] = hashlib.sha256(data).hexdigest()
    return digests


def _naive(plans, config: SynthConfig, rules, items_wanted: int, path: Path) -> dict:
    """A plain loop over the same scenarios: make, filter, keep in a list, dump once."""
    filters = make_filters(config, rules)
    start = time.perf_counter()
    kept = []
    for plan in plans:
        for scenario in plan.scenarios:
            items = [make_item(scenario, lang, config.dialogue, config.dataset.seed) for lang in config.dataset.languages]
            passed = apply_filters(items, filters).kept
            kept += [i.model_dump(mode="json") for i in passed]
            if len(kept) >= items_wanted:
                break
        if len(kept) >= items_wanted:
            break
    path.write_text(json.dumps(kept, ensure_ascii=False))
    seconds = time.perf_counter() - start
    return {"naive_items": len(kept), "naive_s": seconds, "naive_items_per_s": len(kept) / seconds if seconds else None}


def measure(name: str, paths: list[str], config: SynthConfig) -> dict:
    parent, child = mp.Pipe()
    process = mp.get_context("fork").Process(target=_run, args=(paths, config, child))
    process.start()
    result = parent.recv()
    process.join()
    return {"name": name, "graph": paths, "config": json.loads(config.model_dump_json())} | result


def render(results: list[dict]) -> str:
    lines = []
    for r in results:
        workers = (f"{r['workers']} workers on {r['workers']} cores (worker peak RSS "
                   f"{', '.join(f'{mb:,.0f}' for mb in r['worker_peak_rss_mb'])} MB)") if r["workers"] > 1 else "one core"
        naive = (f"; naive loop (make + filter + keep all + dump): {r['naive_items']:,} items at {r['naive_items_per_s']:,.0f} items/s"
                 if "naive_s" in r else "")
        lines.append(
            f"{r['name']}: {r['items']:,} items ({r['filled_cells']} cells x {r['per_cell']} x languages; "
            f"{r['unfillable_cells']} cells unfillable) in {r['synth_s']:.2f} s = {r['items_per_s']:,.0f} items/s "
            f"on {workers}; scenario phase {r['scenario_phase_s']:.2f} s ({r['scenarios']:,} scenarios); "
            f"load {r['load_s']:.2f} s (not counted); peak RSS {r['peak_rss_mb']:,.0f} MB; files {r['output_mb']:,.1f} MB{naive}; "
            f"load average {r['load_average_after']:.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, help="a synth config (default: the built-in defaults)")
    parser.add_argument("--powerlaw", type=int, help="generate a power-law graph of this many triples and use it")
    parser.add_argument("--n", type=int, help="items wanted (overrides the config)")
    parser.add_argument("--subgraphs", type=int, help="subgraphs per shape (overrides the config)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each in a fresh child (the median run is summarised)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1], help="worker counts to run in turn (each on as many cores)")
    parser.add_argument("--pad", type=int, help="pad every dialogue to this many tokens (dialogue.target_tokens)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, help="append the result to this JSON list")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    config = load_config(args.config) if args.config else SynthConfig()
    dataset = config.dataset.model_copy(update={"n": args.n} if args.n else {})
    sampling = config.sampling.model_copy(update={"subgraphs_per_shape": args.subgraphs} if args.subgraphs else {})
    dialogue = config.dialogue.model_copy(update={"target_tokens": args.pad} if args.pad else {})
    config = SynthConfig.model_validate(config.model_copy(update={"dataset": dataset, "sampling": sampling, "dialogue": dialogue}).model_dump())
    with tempfile.TemporaryDirectory() as tmp:
        if args.powerlaw:
            path = Path(tmp) / f"powerlaw-{args.powerlaw}.nt"
            write_ntriples(path, args.powerlaw)
            paths, name = [str(path)], f"powerlaw-{args.powerlaw}"
        else:
            paths, name = [str(ROOT / p) for p in config.graph.paths], "+".join(config.graph.paths)
            if not paths:  # the config names no graph: the packaged demo graph (data/demo)
                paths, name = [str(demo_graph_path())], "data/demo"
        results = [measure(name, paths, _with_workers(config, workers)) for _ in range(args.repeat) for workers in args.workers]
    report = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine(),
              "source": source_state(), "python": platform.python_version(), "results": results}
    report["median_items_per_s"] = {w: _median([r["items_per_s"] for r in results if r["workers"] == w]) for w in args.workers}
    naive = [r["naive_items_per_s"] for r in results if "naive_items_per_s" in r]
    report["median_naive_items_per_s"] = _median(naive) if naive else None
    first = args.workers[0]
    report["speedup"] = {w: report["median_items_per_s"][w] / report["median_items_per_s"][first] for w in args.workers}
    report["same_files"] = all(r["digests"] == results[0]["digests"] for r in results)
    summary = "; ".join(f"{w} workers: median of {args.repeat} runs {report['median_items_per_s'][w]:,.0f} items/s "
                        f"({report['speedup'][w]:.2f}x {first})" for w in args.workers)
    summary += (f"; naive loop {report['median_naive_items_per_s']:,.0f} items/s" if naive else "")
    summary += f"; files of every run {'byte-identical' if report['same_files'] else 'DIFFER'}"
    print(json.dumps(report, indent=2) if args.json else render(results) + "\n" + summary)
    if args.out:
        existing = json.loads(args.out.read_text()) if args.out.exists() else []
        args.out.write_text(json.dumps([*existing, report], indent=2))


def _with_workers(config: SynthConfig, workers: int) -> SynthConfig:
    return config.model_copy(update={"run": config.run.model_copy(update={"workers": workers})})


def _median(values: list[float]) -> float:
    return sorted(values)[(len(values) - 1) // 2]


if __name__ == "__main__":
    main()
