"""False claims from the graph (kgsynth.pressure.claims), checked against the demo graph read
independently by rdflib: every claim is false there, of the true value's kind, moved by its
confusability level; the same seed gives the same claims."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
import rdflib
from conftest import DEMO

from kgsynth.kg import KnowledgeGraph
from kgsynth.pressure import Confusability, false_claims
from kgsynth.pressure.claims import DATE_SHIFTS, NUMBER_OFFSETS
from kgsynth.queries import sample_subgraphs


@pytest.fixture(scope="module")
def facts(demo_kg):
    return [f for s in sample_subgraphs(demo_kg, "simple", limit=300, seed=0) for f in s.facts]


@pytest.fixture(scope="module")
def demo_rdflib() -> rdflib.Graph:
    graph = rdflib.Graph()
    for path in sorted(DEMO.glob("*.ttl")):
        graph.parse(path, format="turtle")
    return graph


def _objects(graph: rdflib.Graph, subject: str, relation: str) -> list:
    return list(graph.objects(rdflib.URIRef(subject), rdflib.URIRef(relation)))


@pytest.mark.parametrize("level", list(Confusability))
def test_every_claim_is_false_in_the_graph_and_of_the_true_values_kind(demo_kg, facts, demo_rdflib, level):
    claims = false_claims(demo_kg, facts, level, seed=0)
    kinds = {c.kind for c in claims}
    assert kinds == ({"number", "date"} if level is Confusability.low else {"entity", "number", "date"})
    for claim in claims:
        fact, false = claim.fact, claim.false_value
        stated = _objects(demo_rdflib, fact.subject.value, fact.relation.value)
        if claim.kind == "entity":
            assert rdflib.URIRef(false.value) not in stated
            classes = set(demo_rdflib.objects(rdflib.URIRef(false.value), rdflib.RDF.type))
            assert classes & set(demo_rdflib.objects(rdflib.URIRef(fact.object.value), rdflib.RDF.type))
            if level is Confusability.high:  # another object of the same relation
                assert any(True for _ in demo_rdflib.subjects(rdflib.URIRef(fact.relation.value), rdflib.URIRef(false.value)))
        else:
            assert false.datatype == fact.object.datatype
            value = rdflib.Literal(false.value, datatype=rdflib.URIRef(false.datatype)).toPython()
            assert all(o.toPython() != value for o in stated if isinstance(o, rdflib.Literal))


def test_numbers_and_dates_move_by_their_level(demo_kg, facts):
    for level in Confusability:
        for claim in false_claims(demo_kg, facts, level, seed=1):
            true, false = claim.fact.object.value, claim.false_value.value
            if claim.kind == "number":
                share = abs(Decimal(false) - Decimal(true)) / abs(Decimal(true))
                step = Decimal(1).scaleb(Decimal(true).as_tuple().exponent) / abs(Decimal(true))  # the rounding
                assert abs(share - NUMBER_OFFSETS[level]) <= step, (true, false)
                assert Decimal(false) > 0
            elif claim.kind == "date":
                years = dt.date.fromisoformat(false[:10]).year - dt.date.fromisoformat(true[:10]).year
                assert abs(years) == DATE_SHIFTS[level]


def test_the_same_seed_gives_the_same_claims_and_another_seed_others(demo_kg, facts):
    first = false_claims(demo_kg, facts, seed=3)
    assert first == false_claims(demo_kg, facts, seed=3)
    assert [c.false_value for c in first] != [c.false_value for c in false_claims(demo_kg, facts, seed=4)]


def test_a_graph_with_no_other_candidate_gives_no_entity_claim(tmp_path):
    path = tmp_path / "g.ttl"
    path.write_text("@prefix ex: <http://x/> .\nex:anna a ex:Person ; ex:employer ex:bank .\nex:bank a ex:Bank .\n", encoding="utf-8")
    kg = KnowledgeGraph.load(path)
    facts = [f for s in sample_subgraphs(kg, "simple", limit=10, seed=0) for f in s.facts]
    assert facts and false_claims(kg, facts, Confusability.high) == [] == false_claims(kg, facts, Confusability.medium)
