"""Anchors restricted to a class or a query (issue 16): paged, and no query over the whole graph."""

from __future__ import annotations

import json

import pytest
from conftest import DEMO
from typer.testing import CliRunner

from kgsynth.cli import app
from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.kg._backends import Rows
from kgsynth.queries import Anchors, load_template, sample_subgraphs
from kgsynth.queries._anchors import anchor_population
from kgsynth.synth.config import SynthConfig
from kgsynth.synth.pipeline import synthesize

EMPLOYEE = "https://kgsynth.example/demo/Employee"
CITY = "https://kgsynth.example/demo/City"
_MEMBERS = "SELECT ?e WHERE {{ ?e a <{cls}> }}"


class _RecordingBackend:
    """The same store; keeps every query text it is sent (VALUES bound in)."""

    def __init__(self, kg: KnowledgeGraph):
        self.inner, self.description, self.sent = kg.backend, kg.backend.description, []

    def select(self, query: str) -> Rows:
        self.sent.append(query)
        return self.inner.select(query)


def _recording(kg: KnowledgeGraph) -> KnowledgeGraph:
    return KnowledgeGraph(_RecordingBackend(kg), lang=kg.lang)


@pytest.fixture
def demo() -> KnowledgeGraph:
    return KnowledgeGraph.load(DEMO, lang=("en", "ru"))


def _said(result) -> str:
    """What a command said: its output, or the one-line error ``kgsynth``'s main prints."""
    return result.output + str(result.exception or "")


def _members(kg: KnowledgeGraph, cls: str) -> set[str]:
    return {row[0].value for row in kg.select(_MEMBERS.format(cls=cls))}


@pytest.mark.parametrize("shape", ["simple", "conditional", "multihop", "rule_application"])
def test_class_anchors_only_start_at_members(demo, shape):
    employees = _members(demo, EMPLOYEE)
    found = list(sample_subgraphs(demo, shape, limit=40, seed=3, anchors=Anchors(anchor_class=EMPLOYEE)))
    assert found
    # each subgraph holds an employee: the anchor a sample drew it around
    assert all(any(node.value in employees for f in sg.facts for node in (f.subject, f.object)) for sg in found)


def test_pages_of_any_size_give_the_same_population(demo):
    query = _MEMBERS.format(cls=EMPLOYEE)
    whole = anchor_population(demo, "", Anchors(anchors_query=query, page_size=100_000))
    paged = anchor_population(KnowledgeGraph.load(DEMO), "", Anchors(anchors_query=query, page_size=7))
    assert paged == whole and {t.value for t in whole} == _members(demo, EMPLOYEE)
    by_class = anchor_population(KnowledgeGraph.load(DEMO), "", Anchors(anchor_class=EMPLOYEE, page_size=7))
    assert by_class == whole


def test_a_query_with_its_own_limit_is_read_once(demo):
    recording = _recording(demo)
    found = anchor_population(recording, "", Anchors(anchors_query=_MEMBERS.format(cls=CITY) + " ORDER BY ?e LIMIT 3"))
    assert len(found) == 3 and len(recording.backend.sent) == 1


def test_restricted_anchors_send_no_query_over_the_whole_graph(demo, tmp_path):
    """A synth run with class anchors never asks for an anchor population or a full count:
    each query either binds terms (VALUES), names a relation or class, or reads the rules."""
    recording = _recording(demo)
    config = SynthConfig.model_validate({"sampling": {"anchor_class": EMPLOYEE, "shapes": ["rule_application", "simple"]},
                                         "dataset": {"n": 20}})
    assert synthesize(recording, config, tmp_path / "out").items > 0
    populations = [load_template(name).text for name in ("anchors_subjects", "anchors_nodes", "anchors_numeric", "anchors_rule_inputs")]
    assert not [q for q in recording.backend.sent if q in populations]
    assert not [q for q in recording.backend.sent if "COUNT(*)" in q and "VALUES" not in q and "<" not in q.split("WHERE", 1)[1]]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["graph"]["triples"] is None and manifest["config"]["sampling"]["anchor_class"] == EMPLOYEE


def test_anchor_errors_are_one_line(demo, tmp_path):
    with pytest.raises(KgsynthError, match="lists no entity"):
        anchor_population(demo, "", Anchors(anchor_class="https://kgsynth.example/demo/NoSuchClass"))
    with pytest.raises(ValueError, match="not both"):
        Anchors(anchor_class=EMPLOYEE, anchors_query="SELECT ?e WHERE { ?e a ?c }")
    runner = CliRunner()
    result = runner.invoke(app, ["synth", "--anchor-class", EMPLOYEE, "--anchors-query", str(tmp_path / "q.rq"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "not both" in _said(result)
    result = runner.invoke(app, ["synth", "--anchors-query", str(tmp_path / "missing.rq"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "cannot read --anchors-query" in _said(result)


def test_synth_from_an_endpoint_matches_the_files(oxigraph_server, tmp_path):
    """``kgsynth synth --endpoint`` on the Oxigraph server writes the items the files give."""
    oxigraph_server.clear()
    for path in sorted(DEMO.glob("*.ttl")):
        oxigraph_server.load(path)
    runner = CliRunner()
    common = ["synth", "--n", "40", "--anchor-class", EMPLOYEE]
    local = runner.invoke(app, [*common, "--graph", str(DEMO), "--out", str(tmp_path / "files")])
    remote = runner.invoke(app, [*common, "--endpoint", oxigraph_server.query_url, "--out", str(tmp_path / "server")])
    assert local.exit_code == 0, local.output
    assert remote.exit_code == 0, remote.output
    items = (tmp_path / "files" / "items.jsonl").read_bytes()
    assert items and (tmp_path / "server" / "items.jsonl").read_bytes() == items
    both = runner.invoke(app, [*common, "--graph", str(DEMO), "--endpoint", oxigraph_server.query_url, "--out", str(tmp_path / "x")])
    assert both.exit_code == 1 and "not both" in _said(both)
