"""The extraction benchmark still runs (tiny size, rdflib skipped) and its generator is deterministic."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from extract import SHAPES  # noqa: E402
from powerlaw import powerlaw_lines  # noqa: E402


def test_generator_is_deterministic_and_exact():
    first = list(powerlaw_lines(3000, seed=4))
    assert first == list(powerlaw_lines(3000, seed=4)) and len(set(first)) == 3000
    assert first != list(powerlaw_lines(3000, seed=5))


def _bench_graph(*args: str) -> dict:
    """The one graph's result of ``bench/extract.py --subgraphs 50 --repeat 1 --json ARGS``."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "extract.py"), "--subgraphs", "50", "--repeat", "1", "--json", *args],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    (graph,) = json.loads(result.stdout)["graphs"]
    return graph


def test_benchmark_runs_every_shape():
    """Every row the benchmark knows (multihop_set only when named), each with its 50 subgraphs."""
    rows = [row[0] for row in SHAPES]
    graph = _bench_graph("--triples", "3000", "--rdflib-max", "0", "--shapes", ",".join(rows))
    samples = {row["shape"]: row for row in graph["shapes"] if row["mode"] == "sample"}
    assert set(samples) == set(rows) and all(row["status"] == "ok" and row["subgraphs"] == 50 for row in samples.values())


def test_rdflib_replays_the_rule_queries_batch_by_batch():
    """rule_application sends one query per rule; a compared batch is all of them, same rows on both engines."""
    graph = _bench_graph("--triples", "30000", "--shapes", "rule_application")
    assert [row["shape"] for row in graph["shapes"]] == ["rule_application"] * 2
    (row,) = graph["rdflib"]["templates"]
    assert row["batches_compared"] == 3 and row["values_rows"] == [200, 200, 200]
    assert row["rows_oxigraph"] == row["rows_rdflib"] and min(row["rows_oxigraph"]) > 0
