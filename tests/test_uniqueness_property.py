"""Property: on random small graphs, every template returns exactly the subgraphs that an
independent plain-Python checker (tests/checker.py) derives from the triples, and anchored
sampling with no per-anchor cap returns the same set."""

from __future__ import annotations

import pyoxigraph as ox
from checker import Checker, subgraph_key
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgsynth.kg import KnowledgeGraph, OxigraphBackend
from kgsynth.kg.vocab import KGS, RDF, RDFS, XSD
from kgsynth.queries import enumerate_subgraphs, load_template, sample_subgraphs, templates_for

ENTITIES = [ox.NamedNode(f"http://t.example/e{i}") for i in range(6)]
BLANK = ox.BlankNode("b0")
RELATIONS = [ox.NamedNode(f"http://t.example/r{i}") for i in range(3)]
LITERALS = [
    ox.Literal("1", datatype=ox.NamedNode(XSD + "integer")),
    ox.Literal("2", datatype=ox.NamedNode(XSD + "integer")),
    ox.Literal("2", datatype=ox.NamedNode(XSD + "decimal")),  # equal in value to integer 2
    ox.Literal("0.5", datatype=ox.NamedNode(XSD + "decimal")),
    ox.Literal("2024-01-05", datatype=ox.NamedNode(XSD + "date")),
    ox.Literal("plain"),
    ox.Literal("слово", language="ru"),
]
LABELS = [ox.Literal("Ann", language="en"), ox.Literal("Bob", language="en"), ox.Literal('a "q" } ;\nSELECT', language="en")]
CLASS = ox.NamedNode("http://t.example/C")
LABEL = ox.NamedNode(RDFS + "label")
TYPE = ox.NamedNode(RDF + "type")
TEMPLATES = [name for shape in ("simple", "set", "conditional", "comparison", "rule_application") for name in templates_for(shape)]
TEMPLATES += [f"multihop_{h}" for h in (2, 3, 4)]

facts = st.tuples(
    st.sampled_from(ENTITIES + [BLANK]),
    st.sampled_from(RELATIONS),
    st.sampled_from(ENTITIES + LITERALS + [BLANK]),
)
numeric_facts = st.tuples(st.sampled_from(ENTITIES), st.sampled_from(RELATIONS), st.sampled_from(LITERALS[:5]))
# a path e_a -> e_b -> ... over distinct entities, so 3- and 4-hop chains occur often
chains = st.permutations(ENTITIES).flatmap(
    lambda path: st.lists(st.sampled_from(RELATIONS), min_size=4, max_size=4).map(
        lambda rels: [(path[i], rels[i], path[i + 1]) for i in range(4)]
    )
)
labels = st.tuples(st.sampled_from(ENTITIES), st.just(LABEL), st.sampled_from(LABELS))
types = st.tuples(st.sampled_from(ENTITIES), st.just(TYPE), st.just(CLASS))


@st.composite
def rules(draw):
    triples = []
    for i in range(draw(st.integers(0, 2))):
        rule = ox.NamedNode(f"http://t.example/rule{i}")
        triples += [(rule, TYPE, ox.NamedNode(KGS + "Rule")), (rule, ox.NamedNode(KGS + "kind"), ox.NamedNode(KGS + "Arithmetic"))]
        if draw(st.booleans()):
            triples.append((rule, ox.NamedNode(KGS + "appliesToClass"), CLASS))
        roles = draw(st.lists(st.sampled_from(["amount", "limit"]), min_size=1, max_size=2, unique=True))
        for j, role in enumerate(roles):
            node = ox.BlankNode(f"rule{i}in{j}")
            triples += [
                (rule, ox.NamedNode(KGS + "input"), node),
                (node, ox.NamedNode(KGS + "role"), ox.Literal(role)),
                (node, ox.NamedNode(KGS + "relation"), draw(st.sampled_from(RELATIONS))),
            ]
            if draw(st.booleans()):
                triples.append((node, ox.NamedNode(KGS + "aggregate"), ox.NamedNode(KGS + "Sum")))
    return triples


graphs = st.builds(
    lambda f, n, ch, lab, ty, ru: f + n + ch + lab + ty + ru,
    st.lists(facts, max_size=20),
    st.lists(numeric_facts, max_size=6),
    st.one_of(st.just([]), chains),
    st.lists(labels, max_size=6),
    st.lists(types, max_size=3),
    rules(),
)


def _graph(triples) -> KnowledgeGraph:
    store = ox.Store()
    store.extend(ox.Quad(s, p, o) for s, p, o in triples)
    return KnowledgeGraph(OxigraphBackend(store))


def _keys(subgraphs) -> dict:
    found = {}
    for sg in subgraphs:
        key = subgraph_key(sg)
        found[key] = found.get(key, 0) + 1
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs)
def test_every_template_returns_exactly_the_checker_subgraphs(triples):
    kg = _graph(triples)
    checker = Checker(triples)
    for name in TEMPLATES:
        template = load_template(name)
        shape = {"conditional_subject": "conditional", "conditional_object": "conditional", "conditional_chain": "conditional"}.get(
            name, name.split("_")[0] if name.startswith("multihop") else name
        )
        kwargs = {"hops": int(name[-1])} if name.startswith("multihop") else {}
        if shape == "conditional":
            kwargs["variant"] = {"conditional_subject": "shared_subject", "conditional_object": "shared_object", "conditional_chain": "chain"}[name]
        if shape == "rule_application" and not any(p == TYPE and o.value == KGS + "Rule" for _, p, o in triples):
            continue
        expected = dict(checker.expected(template.name))
        assert _keys(enumerate_subgraphs(kg, shape, **kwargs)) == expected, name
        sampled = _keys(sample_subgraphs(kg, shape, limit=10**6, seed=7, per_anchor=10**6, batch_size=2, **kwargs))
        assert sampled == expected, name
