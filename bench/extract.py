"""Subgraph extraction benchmark: load time, sampling and enumeration per shape, rdflib side by side.

    python bench/extract.py --triples 100000              # power-law graph, rdflib beside it
    python bench/extract.py --triples 1000000             # rdflib skipped (over --rdflib-max)
    python bench/extract.py --fb15k /work/shared/external/fb15k237/fb15k237.nt.gz --json

For a power-law graph of ``--triples`` triples (``bench/powerlaw.py``, written as N-Triples
to a temporary file) and/or FB15k-237 it measures:

- ``KnowledgeGraph.load(file)``, what a user does;
- per shape, the wall time of ``sample_subgraphs(kg, shape, limit=--subgraphs, seed=0)``
  and of ``enumerate_subgraphs(kg, shape, limit=10000)``, with how many came back;
- up to ``--rdflib-max`` triples, each template's first anchored batch queries, recorded
  as ``sample_subgraphs(seed=0)`` sends them (its anchor population and VALUES rows, bound
  with ``bind_values``), replayed on Oxigraph and on rdflib's own SPARQL engine with
  identical texts; and rdflib's load time.

Sampling, enumeration and each rdflib-compared batch run ``--repeat`` times (the median is
reported; an rdflib batch over 10 s runs once). Every
measurement runs in a child process under ``--timeout`` seconds: one that runs out
is reported as a timeout with what it had done by then, never waited for. Oxigraph
children are forked after the load (the store is shared copy-on-write); rdflib children
are spawned fresh and parse the file themselves.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

import pyoxigraph
import rdflib

from kgsynth.kg import KnowledgeGraph, Term
from kgsynth.kg._backends import Rows
from kgsynth.kg._terms import bind_values
from kgsynth.queries import enumerate_subgraphs, load_template, sample_subgraphs, templates_for
from kgsynth.queries._rule_queries import RULE_QUERY_MARK

sys.path.insert(0, str(Path(__file__).resolve().parent))
from powerlaw import write_ntriples

ROOT = Path(__file__).resolve().parent.parent
FB15K_RULES = ROOT / "data" / "rules" / "fb15k237_rules.ttl"
SHAPES: tuple[tuple[str, str, int], ...] = (  # (row name, shape, hops)
    ("simple", "simple", 2),
    ("set", "set", 2),
    ("conditional", "conditional", 2),
    ("multihop-2", "multihop", 2),
    ("multihop-3", "multihop", 3),
    ("multihop-4", "multihop", 4),
    ("comparison", "comparison", 2),
    ("rule_application", "rule_application", 2),
    ("multihop_set", "multihop_set", 2),  # every chain length and fan position in turn (hops unused)
)
# measured when named in --shapes: tests/test_bench.py counts the eight rows of the default run
DEFAULT_SHAPES = [row[0] for row in SHAPES if row[0] != "multihop_set"]
ENUMERATE_LIMIT = 10_000
RDFLIB_BATCHES = 3  # anchored batches timed per template on both engines
REPEAT_CAP_S = 10.0  # a batch slower than this is timed once
PROGRESS_EVERY = 250  # subgraphs between progress reports from a child
# Targets (stated for 1,000,000 triples on 2 cores; the rdflib ratio for 100,000 triples).
LOAD_TARGET_S = 30.0
SAMPLE_TARGET_S = 5.0
RDFLIB_TARGET_RATIO = 50.0


# --------------------------------------------------------------------------- time-limited children
@dataclass
class Limited:
    """What a child process did: the items it reported, and how it ended."""

    status: str  # "ok", "timeout" or "error: ..."
    items: list = field(default_factory=list)
    peak_rss_mb: float | None = None


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(conn: Connection, work: Callable[..., Iterator], args: tuple) -> None:
    try:
        for item in work(*args):
            conn.send(("item", item, _rss_mb()))
        conn.send(("ok", None, _rss_mb()))
    except Exception as e:  # reported to the parent, which prints it in the table
        conn.send((f"error: {type(e).__name__}: {e}", None, _rss_mb()))


def run_limited(
    method: Literal["fork", "spawn"], work: Callable[..., Iterator], args: tuple, timeout: float, setup: float = 0
) -> Limited:
    """Run ``work(*args)`` in a child (``fork`` or ``spawn``) and collect what it yields.

    The first item marks the end of untimed setup (up to ``setup`` seconds, e.g. rdflib
    parsing the graph); the child is killed ``timeout`` seconds after that.
    """
    ctx = mp.get_context("fork") if method == "fork" else mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(child, work, args), daemon=True)
    process.start()
    child.close()
    result = Limited("timeout")
    deadline = time.monotonic() + setup + timeout
    try:
        while parent.poll(max(0.0, deadline - time.monotonic())):
            kind, item, result.peak_rss_mb = parent.recv()
            if kind != "item":
                result.status = kind
                break
            if not result.items:
                deadline = time.monotonic() + timeout
            result.items.append(item)
    except EOFError:
        result.status = f"error: child exited with code {process.exitcode}"
    process.kill()
    process.join()
    return result


# --------------------------------------------------------------------------- work run in children
def _extract_work(kg: KnowledgeGraph, mode: str, shape: str, hops: int, limit: int) -> Iterator[tuple[int, float]]:
    """Yields (subgraphs so far, seconds) at the start, every PROGRESS_EVERY subgraphs and at the end."""
    yield 0, 0.0
    start = time.perf_counter()
    if mode == "sample":
        subgraphs = sample_subgraphs(kg, shape, limit=limit, seed=0, hops=hops)
    else:
        subgraphs = enumerate_subgraphs(kg, shape, limit=limit, hops=hops)
    count = 0
    for count, _ in enumerate(subgraphs, 1):
        if count % PROGRESS_EVERY == 0:
            yield count, time.perf_counter() - start
    yield count, time.perf_counter() - start


def _median_run(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    """(median seconds, rows) of ``repeat`` runs; one run when the first takes over REPEAT_CAP_S."""
    times, rows = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - start)
        if times[0] > REPEAT_CAP_S:
            break
    return sorted(times)[(len(times) - 1) // 2], rows


def _oxigraph_batches(kg: KnowledgeGraph, batches: list[list[str]], repeat: int) -> Iterator[tuple[float, int]]:
    """Yields a start marker, then (median seconds, rows) per batch of queries."""
    yield 0.0, 0
    for batch in batches:
        yield _median_run(lambda b=batch: sum(1 for q in b for _ in kg.select(q)), repeat)


def _rdflib_batches(path: str, batches: list[list[str]], repeat: int) -> Iterator[tuple[float, int]]:
    """Yields (load seconds, triples), then (median seconds, rows) per batch of queries, on rdflib's own engine."""
    start = time.perf_counter()
    graph = rdflib.Graph().parse(path, format="nt")
    yield time.perf_counter() - start, len(graph)
    for batch in batches:
        yield _median_run(lambda b=batch: sum(len(list(graph.query(q))) for q in b), repeat)


# --------------------------------------------------------------------------- measurements
def measure_extraction(
    kg: KnowledgeGraph, name: str, shape: str, hops: int, mode: str, limit: int, args: argparse.Namespace
) -> dict:
    """Sampling or enumeration, ``--repeat`` times: the median run (by seconds), all run times beside it."""
    runs: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        run = run_limited("fork", _extract_work, (kg, mode, shape, hops, limit), args.timeout)
        count, seconds = run.items[-1] if run.items else (0, 0.0)
        seconds = args.timeout if run.status == "timeout" else seconds
        runs.append({"status": run.status, "subgraphs": count, "seconds": seconds, "peak_rss_mb": run.peak_rss_mb})
        if run.status != "ok":
            break
    median = sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]
    return {
        "shape": name,
        "mode": mode,
        "limit": limit,
        **median,
        "per_s": median["subgraphs"] / median["seconds"] if median["seconds"] else None,
        "seconds_all": [r["seconds"] for r in runs],
    }


class _RecordingGraph(KnowledgeGraph):
    """The same store; remembers each anchored query (query text, bound text, VALUES rows)."""

    def __init__(self, kg: KnowledgeGraph):
        super().__init__(kg.backend, lang=kg.lang)
        self.calls: list[tuple[str, str, list]] = []

    def select(self, query: str, values: tuple[Sequence[str], Iterable[Sequence[Term]]] | None = None) -> Rows:
        if values is not None:
            variables, rows = values[0], list(values[1])
            self.calls.append((query, bind_values(query, variables, rows), rows))
            values = (variables, rows)
        return super().select(query, values)


def _capture_work(kg: KnowledgeGraph, shape: str, hops: int) -> Iterator[tuple[str, list[str], int]]:
    """Yields a start marker, then (template, queries, VALUES rows) for the first RDFLIB_BATCHES
    anchored batches of each template that ``sample_subgraphs(kg, shape, seed=0)`` runs.

    A rule_application batch is one query per rule (``RULE_QUERY_MARK``), all with the same
    VALUES rows; every query of a batch is sent before its first subgraph comes back."""
    yield "", [], 0
    texts = {load_template(name).text: name for name in templates_for(shape, hops)}
    wanted = dict.fromkeys(texts.values(), RDFLIB_BATCHES)
    recorder, seen = _RecordingGraph(kg), 0
    for _ in sample_subgraphs(recorder, shape, limit=sys.maxsize, seed=0, hops=hops):
        calls = [
            (texts.get(text) or ("rule_application" if text.startswith(RULE_QUERY_MARK) else None), query, rows)
            for text, query, rows in recorder.calls[seen:]
        ]
        seen = len(recorder.calls)
        for (name, rows), batch in itertools.groupby(calls, key=lambda call: (call[0], call[2])):
            if name is not None and wanted[name] > 0:
                wanted[name] -= 1
                yield name, [query for _, query, _ in batch], len(rows)
        if not any(wanted.values()):
            return


def compare_rdflib(kg: KnowledgeGraph, path: Path, shapes: Sequence[str], timeout: float, repeat: int = 1) -> dict:
    """Per template: seconds per anchored batch on Oxigraph and rdflib, same texts; and rdflib's load time."""
    rows = []
    rdflib_loads: list[float] = []
    rdflib_rss: list[float] = []
    for name, shape, hops in (s for s in SHAPES if s[0] in shapes):
        capture = run_limited("fork", _capture_work, (kg, shape, hops), timeout)
        captured = capture.items[1:]
        for template in templates_for(shape, hops):
            batches = [queries for t, queries, _ in captured if t == template]
            bound = [rows for t, _, rows in captured if t == template]
            ox = run_limited("fork", _oxigraph_batches, (kg, batches, repeat), timeout)
            rd = run_limited("spawn", _rdflib_batches, (str(path), batches, repeat), timeout, setup=600)
            if rd.items:
                rdflib_loads.append(rd.items[0][0])
            if rd.peak_rss_mb:
                rdflib_rss.append(rd.peak_rss_mb)
            rows.append(_ratio_row(name, template, bound, ox, rd, timeout) | {"capture_status": capture.status})
            _progress(f"rdflib {template}: {_rdflib_cells(rows[-1])}")
    return {
        "batches": RDFLIB_BATCHES,
        "runs_per_batch": repeat,
        "templates": rows,
        "rdflib_load_s": min(rdflib_loads, default=None),
        "rdflib_peak_rss_mb": max(rdflib_rss, default=None),
    }


def _ratio_row(shape: str, template: str, bound: list[int], ox: Limited, rd: Limited, timeout: float) -> dict:
    """Seconds per batch on each engine over the batches both finished; a bound when one timed out."""
    ox_batches, rd_batches = ox.items[1:], rd.items[1:]
    both = min(len(ox_batches), len(rd_batches))
    row: dict[str, Any] = {
        "shape": shape,
        "template": template,
        "values_rows": bound,
        "oxigraph_status": ox.status,
        "rdflib_status": rd.status,
        "batches_compared": both,
        "rows_oxigraph": [r for _, r in ox_batches],
        "rows_rdflib": [r for _, r in rd_batches],
    }
    if both:
        row["oxigraph_s_per_batch"] = sum(s for s, _ in ox_batches[:both]) / both
        row["rdflib_s_per_batch"] = sum(s for s, _ in rd_batches[:both]) / both
        row["ratio"] = row["rdflib_s_per_batch"] / row["oxigraph_s_per_batch"]
        row["ratio_bound"] = "="
    elif ox_batches and rd.status == "timeout":  # rdflib did not finish its first batch
        row["oxigraph_s_per_batch"] = ox_batches[0][0]
        row["rdflib_s_per_batch"] = None
        row["ratio"] = timeout / ox_batches[0][0]
        row["ratio_bound"] = ">="
    return row


def measure_graph(kg: KnowledgeGraph, name: str, args: argparse.Namespace, skip: dict[str, str]) -> dict:
    """Sampling and enumeration of every shape on one loaded graph."""
    shapes = []
    for row_name, shape, hops in (s for s in SHAPES if s[0] in args.shapes):
        for mode, limit in (("sample", args.subgraphs), ("enumerate", ENUMERATE_LIMIT)):
            if row_name in skip:
                shapes.append({"shape": row_name, "mode": mode, "limit": limit, "status": f"skipped: {skip[row_name]}"})
                continue
            shapes.append(measure_extraction(kg, row_name, shape, hops, mode, limit, args))
            _progress(f"{name} {row_name} {mode}: {_extraction_cell(shapes[-1])}")
    return {"shapes": shapes}


def _progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _timed_load(*paths: Path) -> tuple[KnowledgeGraph, float]:
    start = time.perf_counter()
    kg = KnowledgeGraph.load(paths[0])
    seconds = time.perf_counter() - start
    for extra in paths[1:]:
        kg.add(extra)
    return kg, seconds


def bench_powerlaw(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"powerlaw-{args.triples}.nt"
        start = time.perf_counter()
        generator = mp.get_context("fork").Process(target=write_ntriples, args=(path, args.triples, args.seed))
        generator.start()  # in a child, so this process's peak RSS is the store's, not the generator's
        generator.join()
        if generator.exitcode:
            raise SystemExit(f"generating the power-law graph failed (exit code {generator.exitcode})")
        generated = time.perf_counter() - start
        kg, load_s = _timed_load(path)
        result = {
            "graph": f"powerlaw-{args.triples}",
            "seed": args.seed,
            "triples": len(kg),
            "file_mb": path.stat().st_size / 2**20,
            "generate_s": generated,
            "load_s": load_s,
            "rss_after_load_mb": _rss_mb(),
        }
        _progress(f"generated {args.triples:,} triples in {generated:.1f} s, loaded in {load_s:.2f} s")
        result |= measure_graph(kg, result["graph"], args, {})
        if args.triples <= args.rdflib_max:
            result["rdflib"] = compare_rdflib(kg, path, args.shapes, args.timeout, args.repeat)
            result["rdflib"]["load_ratio"] = (result["rdflib"]["rdflib_load_s"] or 0) / load_s
        else:
            result["rdflib"] = {"skipped": f"{args.triples:,} triples > --rdflib-max {args.rdflib_max:,}"}
    return result


def bench_fb15k(args: argparse.Namespace) -> dict:
    rules = [FB15K_RULES] if FB15K_RULES.exists() else []
    kg, load_s = _timed_load(Path(args.fb15k), *rules)
    skip = {} if rules else {"rule_application": f"no rules file at {FB15K_RULES.relative_to(ROOT)}"}
    result = {
        "graph": "fb15k237",
        "path": str(args.fb15k),
        "rules": [str(r.relative_to(ROOT)) for r in rules],
        "triples": len(kg),
        "load_s": load_s,
        "rss_after_load_mb": _rss_mb(),
    }
    _progress(f"loaded FB15k-237 ({result['triples']:,} triples with rules) in {load_s:.2f} s")
    return result | measure_graph(kg, "fb15k237", args, skip)


# --------------------------------------------------------------------------- facts and output
def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    meminfo = Path("/proc/meminfo").read_text()
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "?")
    mem_kb = next(int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal"))
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "ram_gb": round(mem_kb / 2**20, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "pyoxigraph": pyoxigraph.__version__,
        "rdflib": rdflib.__version__,
    }


def source_state() -> dict:
    """The last commit that changed src/ and, when src/ differs from it, a hash of the difference."""

    def git(*cmd: str) -> str:
        return subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True).stdout

    changes = git("status", "--porcelain", "src") and git("diff", "HEAD", "--", "src") + git(
        "ls-files", "-o", "--exclude-standard", "src"
    )
    return {
        "commit": git("log", "-1", "--format=%h", "--", "src").strip(),
        "src_changes_sha1": hashlib.sha1(changes.encode()).hexdigest()[:10] if changes else None,
    }


def _extraction_cell(row: dict) -> str:
    if row["status"].startswith(("skipped", "error")):
        return row["status"]
    if row["status"] == "timeout":
        return f"timeout: {row['subgraphs']:,} in {row['seconds']:.0f} s"
    return f"{row['subgraphs']:,} in {row['seconds']:.2f} s"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in [headers, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rate(row: dict) -> str:
    return f"{row['per_s']:,.0f}" if row.get("per_s") else "-"


def render(result: dict) -> str:
    """The result as readable tables."""
    m, src = result["machine"], result["source"]
    measured = f"kgsynth src at {src['commit']}"
    if src["src_changes_sha1"]:
        measured += f" + uncommitted src changes {src['src_changes_sha1']}"
    if src["changed_during_run"]:
        measured += " (WARNING: src/ changed during the run)"
    out = [
        f"kgsynth extraction benchmark, {result['date']}",
        f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM; Python {m['python']}, "
        f"pyoxigraph {m['pyoxigraph']}, rdflib {m['rdflib']}; {measured}",
    ]
    for graph in result["graphs"]:
        out += [
            "",
            f"== {graph['graph']}: {graph['triples']:,} triples; KnowledgeGraph.load {graph['load_s']:.2f} s; "
            f"RSS after load {graph['rss_after_load_mb']:,.0f} MB",
            _shape_table(graph),
            *_rdflib_section(graph),
            "",
            "targets:",
            *(f"  {line}" for line in target_lines(graph)),
        ]
    return "\n".join(out)


def _shape_table(graph: dict) -> str:
    by_shape: dict[str, dict[str, dict]] = {}
    for row in graph["shapes"]:
        by_shape.setdefault(row["shape"], {})[row["mode"]] = row
    rows = []
    for shape, modes in by_shape.items():
        sample, enum = modes["sample"], modes["enumerate"]
        rss = max((r.get("peak_rss_mb") or 0) for r in (sample, enum))
        rows.append(
            [shape, _extraction_cell(sample), _rate(sample), _extraction_cell(enum), _rate(enum), f"{rss:,.0f}"]
        )
    sample_header = f"sample_subgraphs (limit {graph['shapes'][0]['limit']:,})"
    enum_header = f"enumerate (limit {ENUMERATE_LIMIT:,})"
    return _table(["shape", sample_header, "per s", enum_header, "per s", "peak RSS MB"], rows)


def _rdflib_section(graph: dict) -> list[str]:
    rd = graph.get("rdflib")
    if not rd:
        return []
    if "skipped" in rd:
        return [f"rdflib: skipped ({rd['skipped']})"]
    headers = ["template", "VALUES rows", "rows oxigraph", "rows rdflib", "oxigraph s/batch", "rdflib s/batch", "ratio"]
    return [
        "",
        f"rdflib side by side: first {rd['batches']} anchored batches per template, identical query texts, "
        f"median of {rd.get('runs_per_batch', 1)} runs per batch on each engine",
        f"load: rdflib {rd['rdflib_load_s']:.2f} s vs Oxigraph {graph['load_s']:.2f} s ({rd['load_ratio']:.0f}x); "
        f"rdflib peak RSS {rd['rdflib_peak_rss_mb'] or 0:,.0f} MB",
        _table(headers, [_rdflib_cells(r) for r in rd["templates"]]),
    ]


def target_lines(graph: dict) -> list[str]:
    """The graph's numbers against the targets: met, or missed by which shapes/templates."""
    load = graph["load_s"]
    lines = [f"load <= {LOAD_TARGET_S:.0f} s: {'met' if load <= LOAD_TARGET_S else 'MISSED'} ({load:.2f} s)"]
    sampled = [r for r in graph["shapes"] if r["mode"] == "sample" and not r["status"].startswith("skipped")]
    slow = [
        f"{r['shape']} ({_extraction_cell(r)})"
        for r in sampled
        if r["status"] != "ok" or r["seconds"] > SAMPLE_TARGET_S
    ]
    verdict = f"MISSED by {'; '.join(slow)}" if slow else "met by every shape"
    lines.append(
        f"{sampled[0]['limit']:,} subgraphs per shape <= {SAMPLE_TARGET_S:.0f} s: {verdict}" if sampled else ""
    )
    rd = graph.get("rdflib", {})
    if "templates" in rd:
        below = [r for r in rd["templates"] if r.get("ratio", 0) < RDFLIB_TARGET_RATIO]
        missed = [f"{r['template']} ({_rdflib_cells(r)[-1]})" for r in below if r.get("ratio_bound") != ">="]
        unsettled = [f"{r['template']} ({_rdflib_cells(r)[-1]})" for r in below if r.get("ratio_bound") == ">="]
        verdict = f"MISSED by {'; '.join(missed)}" if missed else "met by every template"
        if unsettled:
            verdict += f"; not settled (rdflib timed out, only a lower bound): {'; '.join(unsettled)}"
        lines.append(f"Oxigraph >= {RDFLIB_TARGET_RATIO:.0f}x faster than rdflib per anchored batch: {verdict}")
    return [line for line in lines if line]


def _rdflib_cells(row: dict) -> list[str]:
    def seconds(key: str, status: str) -> str:
        value = row.get(key)
        return f"{value:.3f}" if value is not None else status

    ratio = f"{row['ratio_bound'].replace('=', '')}{row['ratio']:,.0f}x" if "ratio" in row else "-"
    return [
        row["template"],
        ",".join(map(str, row["values_rows"])) or "-",
        ",".join(map(str, row["rows_oxigraph"])) or "-",
        ",".join(map(str, row["rows_rdflib"])) or "-",
        seconds("oxigraph_s_per_batch", row["oxigraph_status"]),
        seconds("rdflib_s_per_batch", row["rdflib_status"]),
        ratio,
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=int, help="size of the generated power-law graph")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--fb15k", type=Path, help="FB15k-237 N-Triples (.nt.gz) to measure as well")
    parser.add_argument("--rdflib-max", type=int, default=100_000, help="largest graph to run rdflib on")
    parser.add_argument("--subgraphs", type=int, default=10_000, help="subgraphs to sample per shape")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per measurement")
    parser.add_argument("--repeat", type=int, default=1, help="runs per sampling/enumeration measurement (median)")
    parser.add_argument(
        "--shapes", type=lambda text: text.split(","), default=DEFAULT_SHAPES,
        help=f"comma-separated rows to measure (default: {','.join(DEFAULT_SHAPES)}; also: multihop_set)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--out", type=Path, help="append the result to this JSON file (a list)")
    args = parser.parse_args(argv)
    if args.triples is None and args.fb15k is None:
        parser.error("give --triples N and/or --fb15k PATH")
    if unknown := set(args.shapes) - {row[0] for row in SHAPES}:
        parser.error(f"unknown --shapes {', '.join(sorted(unknown))}")
    result: dict[str, Any] = {
        "benchmark": "extract",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python bench/extract.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": machine(),
        "source": source_state(),
        "graphs": [],
    }
    if args.triples is not None:
        result["graphs"].append(bench_powerlaw(args))
    if args.fb15k is not None:
        result["graphs"].append(bench_fb15k(args))
    result["source"]["changed_during_run"] = source_state() != result["source"]
    result["peak_rss_mb"] = _rss_mb()
    result["peak_rss_children_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if args.out:
        previous = json.loads(args.out.read_text()) if args.out.exists() else []
        args.out.write_text(json.dumps([*previous, result], indent=1, default=str) + "\n")
    print(json.dumps(result, indent=1, default=str) if args.json else render(result))


if __name__ == "__main__":
    main()
