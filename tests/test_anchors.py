"""Anchors restricted to a class or a query (issue 16): paged, and no query over the whole graph."""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict

import pyoxigraph as ox
import pytest
from conftest import DEMO
from typer.testing import CliRunner

from kgsynth.cli import app
from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.kg._backends import Rows
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize
from kgsynth.queries import Anchors, _extract, load_template, sample_subgraphs
from kgsynth.queries._anchors import anchor_population

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
    subgraphs = ["graph", "subgraphs", str(DEMO), "--shape", "simple"]
    result = runner.invoke(app, [*subgraphs, "--anchor-class", EMPLOYEE, "--all"])
    assert result.exit_code == 1 and "not with --all" in _said(result)
    result = runner.invoke(app, [*subgraphs, "--anchor-class", "not an iri"])
    assert result.exit_code == 1 and "anchor class 'not an iri' is not an IRI" in _said(result)


@pytest.mark.parametrize("option", ["--anchor-class", "--anchors-query"])
def test_graph_subgraphs_samples_around_the_anchors_given(demo, tmp_path, option):
    """`graph subgraphs` restricts its anchors as `synth` does: the library's sample, byte for byte."""
    query = tmp_path / "employees.rq"
    query.write_text(_MEMBERS.format(cls=EMPLOYEE))
    value = EMPLOYEE if option == "--anchor-class" else str(query)
    out = tmp_path / "subgraphs.jsonl"
    result = CliRunner().invoke(app, ["graph", "subgraphs", str(DEMO), "--shape", "conditional", "--limit", "30", "--seed", "4",
                                      option, value, "--out", str(out)])
    assert result.exit_code == 0, _said(result)
    expected = sample_subgraphs(demo, "conditional", limit=30, seed=4, anchors=Anchors(anchor_class=EMPLOYEE))
    assert out.read_text().splitlines() == [sg.model_dump_json() for sg in expected]
    unrestricted = sample_subgraphs(demo, "conditional", limit=30, seed=4)
    assert out.read_text().splitlines() != [sg.model_dump_json() for sg in unrestricted]


def _second_entities(subgraphs) -> dict[str, set[str]]:
    """Per relation, the MD5s of the entities a comparison walked to (its second fact's subject)."""
    seconds = defaultdict(set)
    for subgraph in subgraphs:
        seconds[subgraph.facts[1].relation.value].add(hashlib.md5(subgraph.facts[1].subject.value.encode()).hexdigest())
    return seconds


def test_a_large_relation_is_read_in_the_part_the_seed_draws(demo, monkeypatch):
    """A comparison walks from its anchor to a second entity with the same relation: of a relation
    with more than RELATION_FACTS facts, only to those whose MD5 starts with one prefix, as long
    as 16^k parts need to fall under the bound."""
    sizes = {p.value: int(n.value) for p, n in demo.select("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p")}
    whole = _second_entities(sample_subgraphs(demo, "comparison", limit=100, seed=1))
    large = [r for r in whole if sizes[r] > 20 and len(whole[r]) > 1]
    assert large and all(len({h[0] for h in whole[r]}) > 1 for r in large)  # read whole, no shared prefix

    monkeypatch.setattr(_extract, "RELATION_FACTS", 20)
    parts = {seed: _second_entities(sample_subgraphs(demo, "comparison", limit=100, seed=seed)) for seed in (1, 2)}
    assert sum(map(len, parts[1].values())) >= 50
    for seed, seconds in parts.items():
        for relation, hashes in seconds.items():
            digits = math.ceil(math.log(sizes[relation] / 20, 16)) if sizes[relation] > 20 else 0
            assert len({h[:digits] for h in hashes}) == 1, (seed, relation, digits, hashes)
    assert parts[1] != parts[2]


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


def test_a_comparison_sets_side_by_side_two_numbers_or_one_datatype():
    """The sampler's check (Virtuoso lost date pairs to the template's DATATYPE test): worked examples."""
    date, when, integer, decimal = (ox.NamedNode(f"http://www.w3.org/2001/XMLSchema#{t}") for t in ("date", "dateTime", "integer", "decimal"))
    assert _extract._comparable(ox.Literal("2020-01-01", datatype=date), ox.Literal("1999-12-31", datatype=date))
    assert _extract._comparable(ox.Literal("3", datatype=integer), ox.Literal("7.5", datatype=decimal))
    assert not _extract._comparable(ox.Literal("2020-01-01", datatype=date), ox.Literal("2021-01-01T00:00:00", datatype=when))
    assert not _extract._comparable(ox.Literal("2020-01-01", datatype=date), ox.Literal("5", datatype=integer))
