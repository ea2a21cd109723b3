"""The extraction benchmark still runs (tiny size, rdflib skipped) and its generator is deterministic."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from powerlaw import powerlaw_lines  # noqa: E402


def test_generator_is_deterministic_and_exact():
    first = list(powerlaw_lines(3000, seed=4))
    assert first == list(powerlaw_lines(3000, seed=4)) and len(set(first)) == 3000
    assert first != list(powerlaw_lines(3000, seed=5))


def test_benchmark_runs_every_shape():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "extract.py"), "--triples", "3000", "--subgraphs", "50",
         "--repeat", "1", "--rdflib-max", "0", "--json"],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    (graph,) = json.loads(result.stdout)["graphs"]
    samples = {row["shape"]: row for row in graph["shapes"] if row["mode"] == "sample"}
    assert len(samples) == 8 and all(row["status"] == "ok" and row["subgraphs"] == 50 for row in samples.values())
