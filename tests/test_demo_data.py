"""The demo graph is big and varied enough to show the method, and feeds every shape."""

from __future__ import annotations

import pytest

from kgsynth.kg import RuleKind, load_rules
from kgsynth.kg.vocab import RuleOrigin
from kgsynth.queries import sample_subgraphs

LABEL_QUERY = """
SELECT ?e (SUM(IF(LANG(?l) = "en", 1, 0)) AS ?en) (SUM(IF(LANG(?l) = "ru", 1, 0)) AS ?ru) WHERE {
  ?e ?p ?o . FILTER(isIRI(?e)) FILTER(?p != <https://w3id.org/kgsynth/vocab#input>)
  OPTIONAL { ?e <http://www.w3.org/2000/01/rdf-schema#label> ?l }
} GROUP BY ?e
"""


def test_size_languages_and_types(demo_kg):
    stats = demo_kg.stats()
    assert stats.triples >= 3000 and stats.entities >= 300
    assert {"xsd:decimal", "xsd:date"} <= set(stats.literal_types)
    assert stats.label_languages.get("en", 0) >= 300 and stats.label_languages.get("ru", 0) >= 300
    missing = [e.value for e, en, ru in demo_kg.select(LABEL_QUERY) if int(en.value) == 0 or int(ru.value) == 0]
    assert missing == []


def test_invented_rules_of_five_kinds_and_library_rules_apply_to_entities(demo_kg):
    rules = load_rules(demo_kg)
    invented = {r.kind for r in rules.values() if r.origin is RuleOrigin.invented}
    library = {r.kind for r in rules.values() if r.origin is RuleOrigin.library}
    assert invented == {RuleKind.arithmetic, RuleKind.threshold, RuleKind.conditional, RuleKind.interval,
                        RuleKind.classification}
    # the demo has no quantity with a unit, so no conversion (FB15k-237's library rules have them)
    assert library == {RuleKind.calendar, RuleKind.interval, RuleKind.aggregate}
    applied = {sg.rule.value for sg in sample_subgraphs(demo_kg, "rule_application", limit=10_000, per_anchor=100)}
    assert applied == set(rules), f"rules that apply to no entity: {set(rules) - applied}"


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [("simple", {}), ("set", {}), ("conditional", {"variant": "shared_subject"}), ("conditional", {"variant": "shared_object"}),
     ("conditional", {"variant": "chain"}), ("multihop", {"hops": 2}), ("multihop", {"hops": 3}), ("multihop", {"hops": 4}),
     ("comparison", {}), ("rule_application", {})],
)
def test_every_shape_yields_fifty_subgraphs(demo_kg, shape, kwargs):
    found = list(sample_subgraphs(demo_kg, shape, limit=50, seed=3, **kwargs))
    assert len(found) == 50 and len({sg.id for sg in found}) == 50


def test_homonyms_exist_and_are_never_named(demo_kg):
    query = """SELECT ?l (COUNT(DISTINCT ?e) AS ?n) WHERE { ?e <http://www.w3.org/2000/01/rdf-schema#label> ?l } GROUP BY ?l HAVING (COUNT(DISTINCT ?e) > 1)"""
    shared = {label.value for label, _ in demo_kg.select(query)}
    assert shared, "the demo graph should contain homonyms, as real graphs do"
    for shape in ("simple", "conditional", "multihop", "comparison"):
        for sg in sample_subgraphs(demo_kg, shape, limit=300, seed=1):
            assert not {n.label for n in sg.mention if n.kind == "iri"} & shared
