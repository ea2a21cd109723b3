"""A synthesis run from start to cleanup: where it may write, what ``n`` it can honour, a
finished run recognised, and a real SIGKILL at each point of the finish resumed to the
same files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells, synthesize

CONFIG = SynthConfig.model_validate({"dataset": {"n": 122}})  # one item per cell and language on the demo graph


@pytest.fixture(scope="module")
def reference(demo_kg, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "out"
    return out, synthesize(demo_kg, CONFIG, out)


def _files(out) -> dict[str, bytes]:
    """Every file of the dataset folder but the run report (it holds timings)."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != "filter_report.json"}


# ---------------------------------------------------------------------------- where it writes
@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_output_path_through_a_file_is_one_line(demo_kg, tmp_path, where):
    file = tmp_path / "existing.txt"
    file.write_text("not a folder")
    out = file if where == "a file" else file / "sub"
    with pytest.raises(KgsynthError, match=f"cannot write the dataset to {out}: {file} is a file, so nothing can be written under it"):
        synthesize(demo_kg, CONFIG, out)
    assert file.read_text() == "not a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder_is_one_line(demo_kg, tmp_path):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(KgsynthError, match="cannot write the dataset to .*: cannot create the folder .* \\(Permission denied\\)"):
            synthesize(demo_kg, CONFIG, tmp_path / "out")
    finally:
        tmp_path.chmod(0o700)


def test_an_output_folder_the_system_refuses_is_one_line(demo_kg):
    with pytest.raises(KgsynthError, match="cannot write the dataset to /proc/kgsynth-out: cannot create the folder /proc/kgsynth-out \\("):
        synthesize(demo_kg, CONFIG, Path("/proc/kgsynth-out"))


# ---------------------------------------------------------------------------- what n it honours
def test_an_n_no_cell_can_hold_is_refused_before_any_wording(demo_kg, tmp_path):
    config = SynthConfig.model_validate({"dataset": {"n": 100_000}})
    plans = plan_cells(demo_kg, config, load_rules(demo_kg))
    most, cells = max(len(p.scenarios) for p in plans), len(plans)
    per_cell = 100_000 // (2 * cells)
    expected = (f"n = 100,000 asks {per_cell:,} items per cell and language ({cells} cells x 2 languages), "
                f"but the fullest cell has {most:,} scenarios: ask for at most {most * cells * 2:,}")
    with pytest.raises(KgsynthError) as info:
        synthesize(demo_kg, config, tmp_path / "out")
    assert str(info.value) == expected
    assert list((tmp_path / "out").iterdir()) == []  # refused before any wording: no work folder


def test_an_n_below_one_item_per_cell_is_noted(demo_kg, tmp_path):
    config = SynthConfig.model_validate({"dataset": {"n": 20}})
    result = synthesize(demo_kg, config, tmp_path / "out")
    cells = sum(1 for cell in result.manifest["cells"].values() if cell["scenarios"])  # the grid's cells without any are unfillable
    assert result.per_cell == 1 and result.items == 2 * len(result.filled_cells) > 20
    note = f"n = 20 is below one item per cell and language ({cells} cells x 2 languages): wrote {result.items:,} items, 1 per cell and language"
    assert result.notes[0] == note and result.manifest["notes"] == result.notes
    assert not any(n.startswith("wrote ") for n in result.notes)  # more than n: no shortfall


# ---------------------------------------------------------------------------- a finished run
def test_a_finished_run_is_recognised_and_left_as_it_is(demo_kg, reference, tmp_path):
    out, first = reference
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    again = synthesize(demo_kg, CONFIG, out)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before
    assert again.items == first.items and again.manifest == first.manifest
    assert again.notes == [*first.notes, f"{out} already held this run, finished: nothing was redone"]


def test_a_finished_run_with_a_damaged_file_is_made_again(demo_kg, reference, tmp_path):
    out, _ = reference
    copy = tmp_path / "copy"
    copy.mkdir()
    for relative, data in _files(out).items():
        (copy / relative).parent.mkdir(parents=True, exist_ok=True)
        (copy / relative).write_bytes(data)
    (copy / "items.jsonl").write_bytes(b"")
    result = synthesize(demo_kg, CONFIG, copy)
    assert _files(copy) == _files(out) and not any("already held" in note for note in result.notes)


# ---------------------------------------------------------------------------- killed while finishing
# Each script runs the reference config in a fresh process and SIGKILLs itself at one point
# of the finish; the same run again must end with the reference's files and no work folder.
_KILL_AT = {
    "manifest": """
        from kgsynth.pipeline import run as pipeline
        write = pipeline.write_json_atomic
        def killing(path, data):
            if path.name == "manifest.json":
                os.kill(os.getpid(), signal.SIGKILL)
            write(path, data)
        pipeline.write_json_atomic = killing
    """,
    "cleanup": """
        from kgsynth.pipeline import run as pipeline
        pipeline.remove_work_folder = lambda out: os.kill(os.getpid(), signal.SIGKILL)
    """,
    "mid-removal": """
        import shutil
        def half_then_kill(path, ignore_errors=False):
            if not path.exists():  # the start of the run: nothing left to finish removing
                return
            files = sorted(p for p in path.rglob("*") if p.is_file())
            for p in files[: len(files) // 2 + 1]:
                p.unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        shutil.rmtree = half_then_kill
    """,
}


@pytest.mark.parametrize("point", sorted(_KILL_AT))
def test_a_kill_while_finishing_resumes_to_the_same_files(demo_kg, reference, tmp_path, point):
    out, _ = reference
    killed = tmp_path / "killed"
    script = "import os, signal\n" + textwrap.dedent(_KILL_AT[point]) + textwrap.dedent(f"""
        from kgsynth.kg import KnowledgeGraph
        from kgsynth.pipeline.config import SynthConfig
        pipeline_config = SynthConfig.model_validate({CONFIG.model_dump(mode="json")!r})
        from kgsynth.pipeline.run import synthesize
        synthesize(KnowledgeGraph.load({str(ROOT / "data" / "demo")!r}), pipeline_config, __import__("pathlib").Path({str(killed)!r}))
    """)
    process = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert process.returncode == -9, process.stderr  # killed at the point, not finished nor failed
    assert any(killed.glob(".work*")), "the kill left no work folder: the point was not reached mid-finish"
    result = synthesize(demo_kg, CONFIG, killed)
    assert _files(killed) == _files(out)
    assert not any(killed.glob(".work*"))
    assert json.loads((killed / "manifest.json").read_text(encoding="utf-8"))["items"] == result.items


# ---------------------------------------------------------------------------- a graph with no scenario
_PREFIXES = """@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix ex: <http://v.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
"""


def _graph(tmp_path, body: str) -> KnowledgeGraph:
    path = tmp_path / "graph.ttl"
    path.write_text(_PREFIXES + body, encoding="utf-8")
    return KnowledgeGraph.load(path)


def test_a_rule_reading_a_relation_no_triple_has_is_named(tmp_path):
    kg = _graph(tmp_path, """
        ex:tax a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:rate 0.13 ; kgs:input [ kgs:role "amount" ; kgs:relation ex:salary ] .
        ex:anna rdfs:label "Anna"@en , "Анна"@ru ; ex:pay 1000 .
    """)
    with pytest.raises(KgsynthError) as info:
        synthesize(kg, CONFIG, tmp_path / "out")
    assert str(info.value) == "rule <http://v.example/tax>: its 'amount' relation <http://v.example/salary> is in no triple of the graph"


def test_a_graph_of_homonyms_says_so(tmp_path):
    people = "\n".join(f'ex:p{i} rdfs:label "Alex"@en , "Саша"@ru ; ex:city ex:c{i} . ex:c{i} rdfs:label "Town"@en , "Город"@ru .'
                       for i in range(3))
    kg = _graph(tmp_path, people)
    config = SynthConfig.model_validate({"dataset": {"n": 10}, "sampling": {"shapes": ["simple"]}})
    with pytest.raises(KgsynthError, match="simple: no subgraph \\(every label is shared by another entity"):
        synthesize(kg, config, tmp_path / "out")


def test_a_graph_edited_to_the_same_size_is_not_taken_for_the_finished_run(reference, tmp_path):
    """The run key holds the graph files' contents, not only their triple count: a changed
    rate (same triples) is a new run with new golds."""
    out, first = reference
    graph = tmp_path / "demo"
    shutil.copytree(ROOT / "data" / "demo", graph)
    rules = graph / "rules.ttl"
    assert b"rule-agent-commission" in (out / "items.jsonl").read_bytes()  # a rule the reference run asks
    rules.write_text(rules.read_text(encoding="utf-8").replace("kgs:rate 0.15 ;", "kgs:rate 0.17 ;", 1), encoding="utf-8")
    edited = KnowledgeGraph.load(graph, lang=CONFIG.graph.label_languages)
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    result = synthesize(edited, CONFIG, copy)
    assert not any("already held" in note for note in result.notes)
    assert result.manifest["graph"]["triples"] == first.manifest["graph"]["triples"]
    assert (copy / "items.jsonl").read_bytes() != (out / "items.jsonl").read_bytes()
