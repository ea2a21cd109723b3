"""Subgraphs of tests/data/handmade.ttl, worked out by hand (see the comments there)."""

from __future__ import annotations

import pytest

from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import enumerate_subgraphs


def _labels(subgraphs) -> set[tuple]:
    return {
        (tuple((f.subject.label, f.relation.label, f.object.label) for f in sg.facts), tuple(a.label for a in sg.answer))
        for sg in subgraphs
    }


def _run(kg, shape, **kwargs) -> list:
    found = list(enumerate_subgraphs(kg, shape, **kwargs))
    assert len({sg.id for sg in found}) == len(found), "duplicate subgraphs"
    return found


def test_simple(handmade_kg):
    # alice/knows and acme's two workers are not one-to-one; the Daves are homonyms.
    assert _labels(_run(handmade_kg, "simple")) == {
        ((("Alice", "salary", "5000"),), ("5000",)),
        ((("Bob", "salary", "4000"),), ("4000",)),
        ((("Carol", "worksFor", "Globex"),), ("Globex",)),
        ((("Acme", "locatedIn", "Paris"),), ("Paris",)),
        ((("Globex", "locatedIn", "Berlin"),), ("Berlin",)),
        ((("Paris", "country", "France"),), ("France",)),
        ((("Berlin", "country", "Germany"),), ("Germany",)),
    }


def test_set(handmade_kg):
    found = _run(handmade_kg, "set")
    assert _labels(found) == {
        ((("Alice", "knows", "Bob"), ("Alice", "knows", "Carol")), ("Bob", "Carol")),
        ((("Alice", "worksFor", "Acme"), ("Bob", "worksFor", "Acme")), ("Alice", "Bob")),
    }
    assert {sg.variant for sg in found} == {"forward", "inverse"}


def test_conditional_shared_subject(handmade_kg):
    # Alice: any two of knows Bob, knows Carol, salary 5000, worksFor Acme (6 pairs); Bob: 1.
    found = _run(handmade_kg, "conditional", variant="shared_subject")
    assert len(found) == 7
    assert sorted(sg.answer[0].label for sg in found) == ["Alice"] * 6 + ["Bob"]
    assert ((("Alice", "knows", "Bob"), ("Alice", "knows", "Carol")), ("Alice",)) in _labels(found)


def test_conditional_shared_object(handmade_kg):
    assert _labels(_run(handmade_kg, "conditional", variant="shared_object")) == {
        ((("Alice", "worksFor", "Acme"), ("Bob", "worksFor", "Acme")), ("Acme",)),
    }


def test_conditional_chain(handmade_kg):
    assert _labels(_run(handmade_kg, "conditional", variant="chain")) == {
        ((("Alice", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Acme",)),
        ((("Bob", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Acme",)),
        ((("Carol", "worksFor", "Globex"), ("Globex", "locatedIn", "Berlin")), ("Globex",)),
        ((("Acme", "locatedIn", "Paris"), ("Paris", "country", "France")), ("Paris",)),
        ((("Globex", "locatedIn", "Berlin"), ("Berlin", "country", "Germany")), ("Berlin",)),
        ((("Alice", "knows", "Bob"), ("Bob", "worksFor", "Acme")), ("Bob",)),
        ((("Alice", "knows", "Bob"), ("Bob", "salary", "4000")), ("Bob",)),
        ((("Alice", "knows", "Carol"), ("Carol", "worksFor", "Globex")), ("Carol",)),
    }


def test_multihop_two_hops(handmade_kg):
    found = _run(handmade_kg, "multihop", hops=2)
    assert _labels(found) == {
        # forward first hop: the named entity has exactly one value for r1
        ((("Alice", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Paris",)),
        ((("Bob", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Paris",)),
        ((("Carol", "worksFor", "Globex"), ("Globex", "locatedIn", "Berlin")), ("Berlin",)),
        ((("Acme", "locatedIn", "Paris"), ("Paris", "country", "France")), ("France",)),
        ((("Globex", "locatedIn", "Berlin"), ("Berlin", "country", "Germany")), ("Germany",)),
        # inverse first hop: "the one who earns 5000 / knows Bob" is unique (seed 003's FAW example)
        ((("Alice", "salary", "5000"), ("Alice", "worksFor", "Acme")), ("Acme",)),
        ((("Alice", "knows", "Bob"), ("Alice", "worksFor", "Acme")), ("Acme",)),
        ((("Alice", "knows", "Bob"), ("Alice", "salary", "5000")), ("5000",)),
        ((("Alice", "knows", "Carol"), ("Alice", "worksFor", "Acme")), ("Acme",)),
        ((("Alice", "knows", "Carol"), ("Alice", "salary", "5000")), ("5000",)),
        ((("Bob", "salary", "4000"), ("Bob", "worksFor", "Acme")), ("Acme",)),
    }
    sg = next(s for s in found if s.facts[0].object.label == "Acme" and s.facts[0].subject.label == "Alice")
    assert [n.label for n in sg.hidden] == ["Acme"] and [n.label for n in sg.mention] == ["Alice"]


def test_multihop_three_hops(handmade_kg):
    assert _labels(_run(handmade_kg, "multihop", hops=3)) == {
        ((("Alice", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris"), ("Paris", "country", "France")), ("France",)),
        ((("Bob", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris"), ("Paris", "country", "France")), ("France",)),
        ((("Carol", "worksFor", "Globex"), ("Globex", "locatedIn", "Berlin"), ("Berlin", "country", "Germany")), ("Germany",)),
        ((("Alice", "salary", "5000"), ("Alice", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Paris",)),
        ((("Alice", "knows", "Bob"), ("Alice", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Paris",)),
        ((("Alice", "knows", "Carol"), ("Alice", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Paris",)),
        ((("Bob", "salary", "4000"), ("Bob", "worksFor", "Acme"), ("Acme", "locatedIn", "Paris")), ("Paris",)),
    }


def test_comparison(handmade_kg):
    # Dave (3000) is a homonym, so only Alice (5000) vs Bob (4000).
    found = _run(handmade_kg, "comparison")
    assert _labels(found) == {((("Alice", "salary", "5000"), ("Bob", "salary", "4000")), ("Alice",))}
    assert sorted(n.label for n in found[0].hidden) == ["4000", "5000"]


def test_comparison_orders_by_the_engine_and_skips_what_it_cannot_order(tmp_path):
    # A dateTime with a time zone beside one without compares (no Python TypeError);
    # an ill-typed integer cannot be ordered, so its pairs are left out.
    path = tmp_path / "dates.ttl"
    path.write_text(
        "@prefix ex: <http://ex.org/> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        'ex:a ex:when "2020-01-01T10:00:00Z"^^xsd:dateTime ; ex:n "5"^^xsd:integer .\n'
        'ex:b ex:when "2020-01-02T10:00:00"^^xsd:dateTime ; ex:n "abc"^^xsd:integer .\n'
        'ex:c ex:n "7"^^xsd:integer .\n',
        encoding="utf-8",
    )
    found = _run(KnowledgeGraph.load(path), "comparison")
    assert _labels(found) == {
        ((("a", "when", "2020-01-01T10:00:00Z"), ("b", "when", "2020-01-02T10:00:00")), ("b",)),
        ((("a", "n", "5"), ("c", "n", "7")), ("c",)),
    }


def test_rule_application(handmade_kg):
    found = _run(handmade_kg, "rule_application")
    got = {(sg.rule.value.rsplit("/", 1)[1], sg.mention[0].label, sg.facts[0].object.label, sg.facts[0].role) for sg in found}
    assert got == {
        ("bonus", "Alice", "5000", "amount"),
        ("bonus", "Bob", "4000", "amount"),
        ("managerBonus", "Alice", "5000", "amount"),  # only Alice is an ex:Manager
    }
    assert {sg.variant for sg in found} == {"arithmetic"} and all(sg.answer == () for sg in found)


@pytest.mark.parametrize("shape", ["simple", "set", "conditional", "multihop", "comparison", "rule_application"])
def test_sampling_is_deterministic_and_within_enumeration(handmade_kg, shape):
    from kgsynth.queries import sample_subgraphs

    everything = {sg.id for sg in enumerate_subgraphs(handmade_kg, shape)}
    first = [sg.id for sg in sample_subgraphs(handmade_kg, shape, limit=5, seed=11, batch_size=3)]
    again = [sg.id for sg in sample_subgraphs(handmade_kg, shape, limit=5, seed=11, batch_size=3)]
    assert first == again and set(first) <= everything and len(first) == min(5, len(everything))


def test_sampling_sees_facts_added_after_an_earlier_call(tmp_path):
    """Anchor populations are kept with the graph between calls; ``add`` must drop them."""
    from kgsynth.queries import sample_subgraphs

    first, later = tmp_path / "first.ttl", tmp_path / "later.ttl"
    first.write_text('@prefix ex: <http://ex.org/> .\nex:a ex:knows ex:b .\nex:a <http://www.w3.org/2000/01/rdf-schema#label> "A" .\n')
    later.write_text('@prefix ex: <http://ex.org/> .\nex:c ex:owns ex:d .\nex:c <http://www.w3.org/2000/01/rdf-schema#label> "C" .\n')
    kg = KnowledgeGraph.load(first)
    assert {sg.mention[0].label for sg in sample_subgraphs(kg, "simple", limit=10)} == {"A"}
    kg.add(later)
    assert {sg.mention[0].label for sg in sample_subgraphs(kg, "simple", limit=10)} == {"A", "C"}
