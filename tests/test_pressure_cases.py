"""Pressure cases (issue 18, item 1): in context from a dataset kgsynth writes, world
knowledge from a graph of real things; every false value checked against the graph here,
by a query of the test's own."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgsynth.eval.runner import load_items
from kgsynth.formats.answers import check_answer
from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize
from kgsynth.pressure.cases import fact_of, in_context_cases, spread, world_cases
from kgsynth.pressure.claims import Confusability
from kgsynth.pressure.config import PressureConfig

DATA = Path(__file__).parent / "data"
FB15K = Path(__file__).parents[2] / "shared" / "external" / "fb15k237" / "fb15k237.nt.gz"


@pytest.fixture(scope="module")
def demo() -> KnowledgeGraph:
    return KnowledgeGraph.demo(lang=("en", "ru"))


@pytest.fixture(scope="module")
def simple_items(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("simple")
    config = SynthConfig.model_validate({"sampling": {"shapes": ["simple"], "subgraphs_per_shape": 400}, "dataset": {"n": 120}})
    synthesize(demo, config, out)
    return load_items(out)


def _terms(triple: str) -> tuple[str, str, str]:
    (t,) = ox.parse(triple.encode(), ox.RdfFormat.N_TRIPLES)
    return str(t.subject), str(t.predicate), str(t.object)


def _values(kg: KnowledgeGraph, triple: str) -> set[str]:
    """What the graph states for the triple's subject and relation: labels of entities, lexical forms of literals."""
    s, r, _ = _terms(triple)
    said = set()
    for (o,) in kg.select(f"SELECT ?o WHERE {{ {s} {r} ?o }}"):
        if isinstance(o, ox.NamedNode):
            said |= {label.value for (label,) in kg.select(f"SELECT ?l WHERE {{ <{o.value}> <http://www.w3.org/2000/01/rdf-schema#label> ?l }}")}
        else:
            said.add(o.value)
    return said


def test_in_context_claims_are_false_in_the_graph_and_unsaid_in_the_dialogue(demo, simple_items):
    cases = in_context_cases(demo, simple_items, seed=0)
    items = {i.id: i for i in simple_items}
    assert len(cases) >= 60
    assert Counter(c.kind for c in cases).keys() == {"entity", "number", "date"}
    for case in cases:
        item = items[case.item_id]
        stated = _values(demo, case.triple)
        assert case.false_value not in stated and not set(case.false_aliases) & stated
        assert case.dialogue == item.dialogue and case.question == item.question
        assert case.claim_value in case.claim and case.claim_value not in " ".join(t.text for t in item.dialogue)
        assert case.speaker in {t.speaker for t in item.dialogue}
        # the two values are told apart by the checker: each is right for itself and wrong for the other
        assert check_answer(case.false_value, case.answer_format, case.false_value, case.constraints).correct
        assert not check_answer(case.false_value, case.answer_format, case.true_value, case.constraints, aliases=case.true_aliases).value_matches
        assert check_answer(str(item.gold), case.answer_format, case.true_value, case.constraints).correct


def test_a_number_claim_moves_by_its_share_and_a_date_by_years(demo, simple_items):
    for case in in_context_cases(demo, simple_items, seed=0):
        true = _terms(case.triple)[2]
        if case.kind == "number":
            lexical = true.split('"')[1]
            assert abs(Decimal(case.false_value) / Decimal(lexical) - 1) <= Decimal("0.051") or abs(Decimal(case.false_value) - Decimal(lexical)) <= 1
        elif case.kind == "date":
            day, false = dt.date.fromisoformat(true.split('"')[1][:10]), dt.date.fromisoformat(case.false_value)
            assert abs(false.year - day.year) == 1 and (false.month, false.day) in {(day.month, day.day), (2, 28)}


def test_the_same_seed_gives_the_same_claims_and_another_seed_others(demo, simple_items):
    first, again = in_context_cases(demo, simple_items, seed=3), in_context_cases(demo, simple_items, seed=3)
    other = in_context_cases(demo, simple_items, seed=4)
    assert first == again
    assert [c.false_value for c in first] != [c.false_value for c in other]


def test_russian_claims_say_the_fact_as_its_question_does(demo, simple_items):
    russian = [c for c in in_context_cases(demo, simple_items, seed=0) if c.language == "ru"]
    assert russian
    for case in russian:
        assert " — " in case.claim and " is " not in case.claim


def test_world_claims_need_one_subject_and_one_value(tmp_path):
    kg = KnowledgeGraph.load(DATA / "world_small.ttl")
    cases = world_cases(kg, n=50, seed=0)
    subjects = Counter(_terms(c.triple)[0] for c in cases)
    # John Smith has two nationalities, the namesakes "Washington County" share a name, 2006.92 is no year anyone says
    assert not {"<http://example.org/fb15k237/entity_p5>", "<http://example.org/fb15k237/entity_p6>",
                "<http://example.org/fb15k237/entity_p7>", "<http://example.org/fb15k237/entity_o3>"} & set(subjects)
    assert len(cases) == 4 * 2 + 2  # four people, two facts each; two whole founding years
    for case in cases:
        assert case.setting == "world_knowledge" and not case.dialogue
        assert case.false_value not in _values(kg, case.triple)
        if case.kind == "date":  # a decimal year moves by a year (high confusability), said without a thousands comma
            assert abs(int(case.false_value) - int(case.true_value)) == 1 and case.claim.endswith(case.false_value)
        else:  # another object of the same relation: another country, another city
            assert case.false_value in _values_of_relation(kg, _terms(case.triple)[1])
    assert {c.question for c in cases} >= {"What is the nationality of Jean Dupont?", "What is the founding year of Acme Records?"}
    jean = next(c for c in cases if c.question == "What is the nationality of Jean Dupont?")
    assert jean.true_value == "France" and jean.true_aliases == ["French Republic"]  # its skos:altLabel


def _values_of_relation(kg: KnowledgeGraph, relation: str) -> set[str]:
    rows = kg.select(f"SELECT ?l WHERE {{ ?s {relation} ?o . ?o <http://www.w3.org/2000/01/rdf-schema#label> ?l }}")
    return {label.value for (label,) in rows}


def test_spread_takes_each_language_and_kind_in_turn(demo, simple_items):
    cases = in_context_cases(demo, simple_items, seed=0)
    taken = spread(cases, 12, seed=0)
    groups = Counter((c.language, c.kind) for c in taken)
    assert len(taken) == 12 and set(groups.values()) == {2}  # 2 languages x 3 kinds, two each
    assert spread(cases, None) == cases


def test_fact_of_a_line_that_is_no_triple_is_none(demo):
    assert fact_of(demo, "not a triple") is None


@pytest.mark.skipif(not FB15K.is_file(), reason="../shared/external/fb15k237 is not here")
def test_world_claims_from_fb15k237_are_false_there():
    kg = KnowledgeGraph.load(FB15K, Path(__file__).parents[1] / "bench" / "pressure" / "fb15k_lexicon.ttl")
    relations = [f"http://example.org/fb15k237/relation/people/person/{r}" for r in ("nationality", "place_of_birth")]
    cases = world_cases(kg, n=20, relations=relations, seed=1)
    assert len(cases) == 20
    for case in cases:
        assert case.false_value not in _values(kg, case.triple)
        assert case.question.startswith(("What is the country of citizenship of", "What is the place of birth of"))


def test_a_claims_file_can_mix_confusability_levels(demo, simple_items):
    levels = (Confusability.high, Confusability.medium, Confusability.low)
    cases = in_context_cases(demo, simple_items, levels, seed=0)
    by_level = Counter((c.kind, c.confusability) for c in cases)
    assert {level for (kind, level) in by_level if kind == "number"} == set(levels)
    assert ("entity", Confusability.low) not in by_level and ("entity", Confusability.medium) in by_level
    for case in cases:  # each false value moved as its level says
        if case.kind == "number":
            true = Decimal(_terms(case.triple)[2].split('"')[1])
            share = {Confusability.high: Decimal("0.05"), Confusability.medium: Decimal("0.2"), Confusability.low: Decimal("1")}
            assert abs(abs(Decimal(case.false_value) - true) / true - share[case.confusability]) < Decimal("0.01") or true < 20
    assert PressureConfig.model_validate({"claims": {"confusability": "medium"}}).claims.confusability == (Confusability.medium,)


def test_a_homonym_of_the_true_entity_is_no_false_claim(tmp_path):
    """Two counties called "Washington County" (FB15k-237 has seven): the only other object
    of the relation is the true one's homonym, so a claim would say the true answer. No
    case is made for it, and nothing fails."""
    ex, label = "http://homonyms.example/", "http://www.w3.org/2000/01/rdf-schema#label"
    lines = [f'<{ex}{e}> <{label}> "{name}"@en .' for e, name in
             (("a", "Ann Lee"), ("b", "Bo Chan"), ("wc1", "Washington County"), ("wc2", "Washington County"), ("county", "county"))]
    lines += [f"<{ex}a> <{ex}county> <{ex}wc1> .", f"<{ex}b> <{ex}county> <{ex}wc2> ."]
    graph = tmp_path / "homonyms.nt"
    graph.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert world_cases(KnowledgeGraph.load(graph), relations=[f"{ex}county"], seed=0) == []
