"""Relations and names in words: every relation of the demo graph and of FB15k-237 gets a
noun form in English and Russian (never a verb-like raw label in a noun slot), and Russian
names and noun phrases are declined right (worked examples checked by a Russian reader)."""

from __future__ import annotations

import re

import pyoxigraph as ox
import pytest
from conftest import FB15K, ROOT

from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import Fact, Node
from kgsynth.synth import morph
from kgsynth.synth.lexicon import Lexicon, english_noun, wording
from kgsynth.synth.questions import _English, _Russian

_PREPOSITIONS = {"in", "at", "by", "of", "for", "on", "to", "from", "with", "into"}
_ONE_FACT_PER_RELATION = """
SELECT ?p (SAMPLE(?s) AS ?s1) (SAMPLE(?o) AS ?o1) WHERE {
  ?s ?p ?o . FILTER(?p NOT IN (<http://www.w3.org/2000/01/rdf-schema#label>, <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>))
  FILTER(!STRSTARTS(STR(?p), "https://w3id.org/kgsynth/vocab#"))
} GROUP BY ?p"""


def _facts(kg: KnowledgeGraph) -> list[Fact]:
    rows = list(kg.select(_ONE_FACT_PER_RELATION))
    terms = [t for row in rows for t in row]
    labels = kg.labels(terms)

    def node(term):
        return Node.from_term(term, kg.pick_label(term, labels.get(term, {})), labels.get(term, {}))

    return [Fact(subject=node(s), relation=node(p), object=node(o)) for p, s, o in rows if s is not None]


def _english_noun_ok(noun: str) -> bool:
    words = noun.split()
    verb_like = words[-1] in _PREPOSITIONS or words[0] in _PREPOSITIONS or (
        len(words) > 1 and words[1] in _PREPOSITIONS and words[0].endswith(("ed", "s"))
    )
    return bool(words) and not verb_like and "." not in noun and "/" not in noun


def _russian_noun_ok(noun: str) -> bool:
    first = noun.split()[0]
    return noun.startswith("значение «") or first.isupper() or morph.nominative_head(first) is not None


def _check_relations(kg: KnowledgeGraph) -> int:
    lexicon = Lexicon(kg)
    facts = _facts(kg)
    for fact in facts:
        for lang, ok in (("en", _english_noun_ok), ("ru", _russian_noun_ok)):
            words = wording(lexicon, fact.subject, None, (fact,), lang).facts[0]
            assert ok(words.noun), (fact.relation.value, lang, words.noun)
            asked = (_English(lexicon) if lang == "en" else _Russian(lexicon)).simple(fact)
            label = fact.relation.labels.get(lang)
            if label and label != words.noun and not isinstance(fact.object.python, bool):
                # the raw label is never put where the noun belongs
                assert f"the {label} of" not in asked and f"«{label}»" not in asked, (asked, label)
            assert asked.endswith("?") and "{" not in asked
    return len(facts)


def test_every_demo_relation_has_noun_forms_in_both_languages(demo_kg):
    assert _check_relations(demo_kg) >= 90


@pytest.mark.skipif(not FB15K.exists(), reason="../shared/external/fb15k237 is not present")
def test_every_fb15k_relation_has_noun_forms_in_both_languages():
    kg = KnowledgeGraph.load(FB15K, ROOT / "data" / "rules" / "fb15k237_rules.ttl")
    assert _check_relations(kg) >= 237


@pytest.mark.parametrize(("label", "iri", "noun"), [
    ("located in", "x:locatedIn", "“located in” value"),
    ("placed at store", "x:store", "store"),
    ("in country", "x:country", "country"),
    ("returned product", "x:returnedProduct", "returned product"),
    ("award award category category of", "http://e.org/relation/award/award_category/category_of", "“category of” value"),
    ("nationality", "http://e.org/relation/people/person/nationality", "nationality"),
])
def test_english_noun_from_a_label(label, iri, noun):
    assert english_noun(label, iri) == noun


# Worked examples, each checked by hand against a grammar (not produced by the code under test).
@pytest.mark.parametrize(("label", "case", "declined"), [
    ("Ксения Воробьёва", "gent", "Ксении Воробьёвой"),
    ("Дмитрий Макаров", "datv", "Дмитрию Макарову"),
    ("Людмила Богданова", "accs", "Людмилу Богданову"),
    ("Заказ ORD-2024-00003", "datv", "Заказу ORD-2024-00003"),
    ("ИТ-отдел «Гранит Строй»", "gent", "ИТ-отдела «Гранит Строй»"),
    ("месячная зарплата", "ablt", "месячной зарплатой"),
    ("ценовой сегмент гостиницы", "accs", "ценовой сегмент гостиницы"),
    ("Казань", "gent", "Казани"),
    ("Сочи", "gent", "Сочи"),
    ("Парус Страхование", "gent", "Парус Страхование"),  # a proper name: the caller adds its class
])
def test_russian_declension(label, case, declined):
    assert morph.decline(label, case) == declined


@pytest.mark.parametrize(("word", "phrase", "case", "agreed"), [
    ("какой", "дата рождения", "nomn", "какая"),
    ("какой", "смещение от UTC в часах", "nomn", "какое"),
    ("какой", "сотрудник", "gent", "какого"),
    ("который", "бронирование гостиницы", "gent", "которого"),
])
def test_agreement(word, phrase, case, agreed):
    assert morph.agree(word, phrase, case) == agreed


def test_a_proper_name_gets_its_declined_class(demo_kg):
    lexicon = Lexicon(demo_kg)
    (insurer,) = [s for (s,) in demo_kg.select('SELECT ?s WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> "Парус Страхование"@ru }')]
    labels = demo_kg.labels([insurer])[insurer]
    node = Node.from_term(insurer, demo_kg.pick_label(insurer, labels), labels)
    assert lexicon.name(node, "ru", "gent") == "страховой компании «Парус Страхование»"
    assert lexicon.name(node, "ru") == "Парус Страхование"


def test_a_common_noun_label_is_lower_case_inside_a_sentence(demo_kg):
    lexicon = Lexicon(demo_kg)
    hotel = ox.NamedNode("https://kgsynth.example/demo/hotel-riviera-sochi")
    labels = demo_kg.labels([hotel])[hotel]
    node = Node.from_term(hotel, demo_kg.pick_label(hotel, labels), labels)
    assert lexicon.name(node, "ru", "gent") == "отеля «Ривьера»"
    assert re.fullmatch(r"Hotel Riviera", lexicon.name(node, "en"))
