"""A graph may store a measured value to ten decimals (FB15k-237's areas); an item says it as a
person writes it, and its gold is the value said, not the one stored. Values a comparison
tells apart stay as stored."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kgsynth.formats.answers import check_answer
from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import Shape, sample_subgraphs
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.scenarios.scenario import ScenarioBuilder, numbers_as_written

_GRAPH = """
@prefix ex: <https://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:area rdfs:label "area"@en , "площадь"@ru .
ex:newcastle rdfs:label "New Castle County"@en , "округ Нью-Касл"@ru ; ex:area "1279.45412651"^^xsd:decimal .
ex:gwinnett rdfs:label "Gwinnett County"@en , "округ Гуиннетт"@ru ; ex:area "1131.82480422"^^xsd:decimal .
ex:lee rdfs:label "Lee County"@en , "округ Ли"@ru ; ex:area "1131.82480419"^^xsd:decimal .
"""


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    path = tmp_path_factory.mktemp("areas") / "areas.ttl"
    path.write_text(_GRAPH, encoding="utf-8")
    return KnowledgeGraph.load(str(path))


def _stored(kg: KnowledgeGraph, label: str) -> Decimal:
    (value,) = next(iter(kg.select(f'SELECT ?a WHERE {{ ?e ?l "{label}"@en ; <https://example.org/area> ?a }}')))
    return Decimal(value.value)


def test_a_value_asked_for_is_said_and_scored_as_written(kg):
    builder = ScenarioBuilder(kg, {}, ("en", "ru"))
    subgraphs = [s for s in sample_subgraphs(kg, Shape.simple, limit=50) if s.facts[0].subject.label == "New Castle County"]
    assert subgraphs, "the simple shape asks for New Castle County's area"
    stored = _stored(kg, "New Castle County")
    written = stored.quantize(Decimal("0.01"))  # six significant figures of 1279.45412651
    for scenario in builder.build(subgraphs[0]):
        for lang in ("en", "ru"):
            item = make_item(scenario, lang, DialogueSettings(), seed=0)
            said = "1,279.45" if lang == "en" else "1\u00a0279,45"
            assert said in " ".join(t.text for t in item.dialogue), item.dialogue
            assert str(stored) not in item.model_dump_json()
            if scenario.answer_format.value == "number":
                assert check_answer(str(written), scenario.answer_format, item.gold, item.constraints).value_matches


def test_values_that_would_become_equal_stay_as_stored(kg):
    # Gwinnett and Lee differ only in their eighth decimal: said to six figures they would read as one value
    pair = next(s for s in sample_subgraphs(kg, Shape.comparison, limit=50)
                if {f.subject.label for f in s.facts} == {"Gwinnett County", "Lee County"})
    assert numbers_as_written(pair) is pair
    stored = {f.subject.label: Decimal(f.object.value) for f in pair.facts}
    assert stored == {"Gwinnett County": _stored(kg, "Gwinnett County"), "Lee County": _stored(kg, "Lee County")}
