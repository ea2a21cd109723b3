"""Property: the per-rule queries that anchored sampling runs return exactly what the
generic rule_application template returns, also for rule descriptions the rule engine
would reject (an input with several roles, relations or kgs:via bridges, or with none; a
rule without a kind or a class; IRI and literal roles; bridges that are the entity itself,
a blank node or a literal); and that terms a query cannot hold (blank nodes,
the VALUES marker) make sampling fall back to the generic template."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgsynth.kg import KnowledgeGraph, OxigraphBackend
from kgsynth.kg.vocab import KGS, RDF
from kgsynth.queries import enumerate_subgraphs, load_template, sample_subgraphs
from kgsynth.queries._rule_queries import rule_application_queries

ENTITIES = [ox.NamedNode(f"http://t.example/e{i}") for i in range(5)]
RELATIONS = [ox.NamedNode(f"http://t.example/r{i}") for i in range(3)]
CLASS = ox.NamedNode("http://t.example/C")
VALUES = [ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")), ox.Literal("x"),
          ENTITIES[0], ENTITIES[1], ox.BlankNode("b")]
ROLES = [ox.Literal("amount"), ox.Literal("limit", language="en"), ox.NamedNode("http://t.example/role")]
TYPE = ox.NamedNode(RDF + "type")
SUBJECTS = [*ENTITIES, ox.BlankNode("b")]  # a blank node with facts: a bridge no query may take


def _kgs(name: str) -> ox.NamedNode:
    return ox.NamedNode(KGS + name)


@st.composite
def rule_graphs(draw):
    triples = [
        (draw(st.sampled_from(SUBJECTS)), draw(st.sampled_from(RELATIONS)), draw(st.sampled_from(VALUES)))
        for _ in range(draw(st.integers(0, 20)))
    ]
    triples += [(e, TYPE, CLASS) for e in draw(st.lists(st.sampled_from(ENTITIES), max_size=3))]
    for i in range(draw(st.integers(1, 2))):
        rule = ox.NamedNode(f"http://t.example/rule{i}")
        triples.append((rule, TYPE, _kgs("Rule")))
        if draw(st.booleans()) or i == 0:
            triples.append((rule, _kgs("kind"), _kgs("Arithmetic")))
        if draw(st.booleans()):
            triples.append((rule, _kgs("appliesToClass"), CLASS))
        for j in range(draw(st.integers(1, 2))):
            node = ox.BlankNode(f"rule{i}in{j}")
            triples.append((rule, _kgs("input"), node))
            triples += [(node, _kgs("role"), role) for role in draw(st.lists(st.sampled_from(ROLES), max_size=2, unique=True))]
            triples += [(node, _kgs("relation"), r) for r in draw(st.lists(st.sampled_from(RELATIONS), max_size=2, unique=True))]
            if draw(st.booleans()):
                triples.append((node, _kgs("aggregate"), _kgs("Sum")))
            # read on a bridge: usually one via, sometimes two (a description the engine rejects)
            triples += [(node, _kgs("via"), r) for r in draw(st.lists(st.sampled_from(RELATIONS), max_size=2, unique=True))]
    return triples


def _counts(subgraphs) -> Counter:
    return Counter(sg.model_dump_json() for sg in subgraphs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule_graphs())
def test_per_rule_queries_return_the_generic_templates_subgraphs(triples):
    store = ox.Store()
    store.extend(ox.Quad(s, p, o) for s, p, o in triples)
    kg = KnowledgeGraph(OxigraphBackend(store))
    enumerated = _counts(enumerate_subgraphs(kg, "rule_application"))  # the generic template
    sampled = _counts(sample_subgraphs(kg, "rule_application", limit=10**6, seed=3, per_anchor=10**6, batch_size=2))
    assert sampled == enumerated


def test_terms_that_cannot_be_written_into_a_query_fall_back_to_the_generic_template(tmp_path):
    generic = load_template("rule_application").text
    cases = {
        "blank-node class": "kgs:appliesToClass [ a kgs:Anything ] ; kgs:input [ kgs:role \"a\" ; kgs:relation ex:r ]",
        "blank-node role": "kgs:input [ kgs:role [ a kgs:Anything ] ; kgs:relation ex:r ]",
        "a role holding the VALUES marker": 'kgs:input [ kgs:role "x #VALUES y" ; kgs:relation ex:r ]',
    }
    for name, description in cases.items():
        path = tmp_path / "rule.ttl"
        path.write_text(
            f"@prefix kgs: <{KGS}> . @prefix ex: <http://t.example/> .\n"
            f"ex:rule a kgs:Rule ; kgs:kind kgs:Arithmetic ; {description} .\nex:e ex:r 1 .\n",
            encoding="utf-8",
        )
        assert rule_application_queries(KnowledgeGraph.load(path)) == (generic,), name


def test_a_blank_node_bridge_is_never_read(tmp_path):
    """A bridge the dialogue could not name (a blank node) gives no rows on either path,
    though it has the value the input reads."""
    path = tmp_path / "rule.ttl"
    path.write_text(
        f"@prefix kgs: <{KGS}> . @prefix ex: <http://t.example/> .\n"
        "ex:rule a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:input [ kgs:role \"amount\" ; kgs:relation ex:r0 ; kgs:via ex:r1 ] .\n"
        "ex:e0 ex:r1 _:b . _:b ex:r0 1 .\nex:e1 ex:r1 ex:b1 . ex:b1 ex:r0 2 .\n",
        encoding="utf-8",
    )
    kg = KnowledgeGraph.load(path)
    for subgraphs in (enumerate_subgraphs(kg, "rule_application"), sample_subgraphs(kg, "rule_application", limit=100, seed=0)):
        assert [sg.mention[0].value for sg in subgraphs] == ["http://t.example/e1"]
