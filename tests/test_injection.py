"""Values enter queries only as escaped VALUES terms: hostile labels and IRIs change nothing."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from kgsynth.errors import QueryError
from kgsynth.kg import KnowledgeGraph, OxigraphBackend
from kgsynth.kg._terms import bind_values
from kgsynth.queries import enumerate_subgraphs, sample_subgraphs

HOSTILE = [
    'Robert"); DROP ALL; #',
    "}} UNION { ?s ?p ?o } #",
    'quote " and \\ backslash',
    "line one\nline two\r\n} LIMIT 0",
    "SELECT * WHERE { ?s ?p ?o } FILTER(false)",
    "'''triple single'''",
    "<http://evil.example/> .",
]
LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
P = ox.NamedNode("http://inj.example/p")


def _kg() -> KnowledgeGraph:
    store = ox.Store()
    for i, text in enumerate(HOSTILE):
        entity = ox.NamedNode(f"http://inj.example/e{i}?q=%7B%7D&x=(1)")  # odd but valid IRI characters
        store.add(ox.Quad(entity, LABEL, ox.Literal(text, language="en")))
        store.add(ox.Quad(entity, P, ox.Literal(text)))
        store.add(ox.Quad(entity, ox.NamedNode("http://inj.example/q"), ox.NamedNode(f"http://inj.example/t{i}")))
    return KnowledgeGraph(OxigraphBackend(store))


@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_find_by_hostile_label_returns_exactly_that_entity(index):
    kg = _kg()
    found = kg.find(HOSTILE[index], lang="en")
    assert [e.value for e in found] == [f"http://inj.example/e{index}?q=%7B%7D&x=(1)"]
    assert kg.label(found[0]) == HOSTILE[index]


def test_binding_hostile_literals_keeps_the_query_shape():
    kg = _kg()
    query = "SELECT ?s WHERE { #VALUES\n ?s <http://inj.example/p> ?v . }"
    rows = list(kg.select(query, (("v",), [(ox.Literal(t),) for t in HOSTILE])))
    assert len(rows) == len(HOSTILE)  # each literal matched its own entity, nothing more
    bound = bind_values(query, ("v",), [(ox.Literal(HOSTILE[1]),)])
    assert bound.count("{") - bound.count("\\{") >= 2 and "DROP" not in bind_values(query, ("v",), [(ox.Literal("x"),)])


def test_subgraphs_with_hostile_labels_are_found_and_labelled():
    kg = _kg()
    simple = list(enumerate_subgraphs(kg, "simple"))
    assert {sg.mention[0].label for sg in simple} == set(HOSTILE)
    sampled = list(sample_subgraphs(kg, "simple", limit=100, seed=1, per_anchor=100))
    assert {sg.id for sg in sampled} == {sg.id for sg in simple}


def test_blank_nodes_and_missing_placeholder_are_refused():
    with pytest.raises(QueryError, match="blank node"):
        bind_values("SELECT * WHERE { #VALUES\n }", ("x",), [(ox.BlankNode(),)])
    with pytest.raises(QueryError, match="#VALUES"):
        bind_values("SELECT * WHERE { }", ("x",), [(ox.NamedNode("http://a"),)])
