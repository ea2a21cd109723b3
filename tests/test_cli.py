"""The `kgsynth` command through its real entry point, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import DATA, _free_port

HANDMADE = str(DATA / "handmade.ttl")


def run(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from kgsynth.cli import main; sys.argv[0] = 'kgsynth'; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_stats_json():
    result = run("graph", "stats", HANDMADE, "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["triples"] > 30 and stats["rules_by_kind"] == {"arithmetic": 2}


def test_stats_table():
    result = run("graph", "stats", HANDMADE)
    assert result.returncode == 0 and "triples" in result.stdout and "degree" in result.stdout


@pytest.mark.parametrize("shape", ["simple", "set", "conditional", "multihop", "comparison", "rule_application"])
def test_subgraphs_writes_jsonl(tmp_path, shape):
    out = tmp_path / "out" / f"{shape}.jsonl"
    result = run("graph", "subgraphs", HANDMADE, "--shape", shape, "--limit", "3", "--seed", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert 1 <= len(lines) <= 3 and all(line["shape"] == shape for line in lines)
    assert not list(out.parent.glob("*.partial"))


def test_subgraphs_to_stdout_is_deterministic():
    first = run("graph", "subgraphs", HANDMADE, "--shape", "multihop", "--hops", "3", "--limit", "5", "--seed", "4")
    second = run("graph", "subgraphs", HANDMADE, "--shape", "multihop", "--hops", "3", "--limit", "5", "--seed", "4")
    assert first.returncode == 0 and first.stdout == second.stdout and first.stdout.count("\n") >= 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["graph", "subgraphs", HANDMADE, "--shape", "triangle"], "unknown shape 'triangle'"),
        (["graph", "subgraphs", HANDMADE, "--shape", "multihop", "--hops", "7"], "multihop needs 2, 3 or 4 hops"),
        (["graph", "stats", "/nonexistent/graph.ttl"], "no such file or folder"),
        (["graph", "stats"], "give one or more graph files"),
        (["graph", "stats", "--endpoint", f"http://127.0.0.1:{_free_port()}/query"], "cannot reach SPARQL endpoint"),
    ],
)
def test_errors_are_one_line_without_traceback(args, message):
    result = run(*args)
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr and "Traceback" not in result.stderr


def test_syntax_error_reports_line_and_column(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix ex: <http://x/> .\nex:a ex:b ex:c .\nex:a ex:b "open .\n')
    result = run("graph", "stats", str(bad))
    assert result.returncode == 1 and f"syntax error in {bad} at line 3" in result.stderr


def test_rule_application_without_rules_says_what_to_do(tmp_path):
    plain = tmp_path / "plain.nt"
    plain.write_text("<http://x/a> <http://x/p> <http://x/b> .\n")
    result = run("graph", "subgraphs", str(plain), "--shape", "rule_application")
    assert result.returncode == 1 and "no kgs:Rule" in result.stderr


def test_debug_shows_the_traceback():
    result = run("--debug", "graph", "stats", "/nonexistent/graph.ttl")
    assert result.returncode != 0 and "Traceback" in result.stderr and "GraphLoadError" in result.stderr
