"""Relations and names in words: every relation of the demo graph and of FB15k-237 gets a
noun form in English and Russian (never a verb-like raw label in a noun slot), and Russian
names and noun phrases are declined right (worked examples checked by a Russian reader)."""

from __future__ import annotations

import random
import re

import pyoxigraph as ox
import pytest
from conftest import FB15K, ROOT

from kgsynth.formats import morph
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells
from kgsynth.queries import Fact, Node
from kgsynth.synth.dialogues.dialogue import _Writer
from kgsynth.synth.naming.lexicon import (
    EntityWording,
    Lexicon,
    class_in_name,
    english_noun,
    naming,
    noun_of,
    shortened,
    wording,
)
from kgsynth.synth.naming.questions import _English, _Russian

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
            if label and label not in (words.noun, words.short) and not isinstance(fact.object.python, bool):
                # the raw label is never put where the noun (or the noun without what the name repeats) belongs
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
    ("award award category category of", "http://e.org/relation/award/award_category/category_of", "award"),  # the glossary: what an award category is a category of
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
    ("Санкт-Петербург", "gent", "Санкт-Петербурга"),  # a hyphenated name declines whole, its parts as written
    ("Ростов-на-Дону", "datv", "Ростову-на-Дону"),
    ("страна-участница", "gent", "страны-участницы"),  # a compound of two nouns declines both
    ("месячная зарплата", "ablt", "месячной зарплатой"),
    ("ценовой сегмент гостиницы", "accs", "ценовой сегмент гостиницы"),
    ("Казань", "gent", "Казани"),
    ("Сочи", "gent", "Сочи"),
    ("Парус Страхование", "gent", "Парус Страхование"),  # a proper name: the caller adds its class
    ("брат или сестра", "gent", "брата или сестры"),  # each of two joined nouns in the case
    ("страна или территория", "ablt", "страной или территорией"),
    ("отдел продаж и маркетинга", "datv", "отделу продаж и маркетинга"),  # "и" inside a dependent: one phrase
    ("пазл, 1000 деталей", "gent", "пазла, 1000 деталей"),
    ("умные часы", "gent", "умных часов"),  # an adjective in the plural before a plural-only noun
    ("новые технологии", "ablt", "новыми технологиями"),
])
def test_russian_declension(label, case, declined):
    assert morph.decline(label, case) == declined


def test_a_singular_phrase_declines_into_the_plural():
    assert morph.decline("страховой случай", "accs", "plur") == "страховые случаи"
    assert morph.decline("месячная зарплата", "gent", "plur") == "месячных зарплат"


# Worked examples: the object of «Возьмём …»; a masculine person is said in the genitive form.
@pytest.mark.parametrize(("phrase", "taken"), [
    ("держатель банковской карты", "держателя банковской карты"),  # a holder of a card is a person
    ("страхователь", "страхователя"),
    ("компания", "компанию"),
    ("сестра", "сестру"),
    ("исходный заказ", "исходный заказ"),
    ("страна гражданства", "страну гражданства"),
    ("город-герой", "город-герой"),  # a compound is what its first part is: a town, not a hero
    ("член-корреспондент", "члена-корреспондента"),
])
def test_the_object_of_a_verb_is_in_the_accusative(phrase, taken):
    assert morph.accusative(phrase) == taken


@pytest.mark.parametrize(("phrase", "listed"), [
    ("знаменитость", "знаменитостей"),  # people: the animate plural, as the genitive
    ("сотрудник", "сотрудников"),
    ("государственная должность", "государственные должности"),
    ("номинированная работа", "номинированные работы"),
    ("страна-участница", "страны-участницы"),  # countries, though «участница» is a person
    ("тип союза", "типы союза"),  # a kind, though «тип» may be a guy
])
def test_a_listed_plural_is_in_the_accusative(phrase, listed):
    assert morph.accusative(phrase, "plur") == listed


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


# ---------------------------------------------------------------------------- issue 12, prose
EX = "https://kgsynth.example/demo/"


def _node(kg: KnowledgeGraph, iri: str) -> Node:
    term = ox.NamedNode(iri)
    labels = kg.labels([term])[term]
    return Node.from_term(term, kg.pick_label(term, labels), labels)


def _fact(kg: KnowledgeGraph, subject: str, relation: str, obj: Node) -> Fact:
    return Fact(subject=_node(kg, EX + subject), relation=_node(kg, EX + relation), object=obj)


@pytest.mark.parametrize(("cls", "names", "lang", "said"), [
    ("hotel booking", ("Booking BK-1",), "en", True),  # the head word, not the whole class
    ("insurance claim", ("Claim CL-0032",), "en", True),
    ("employee", ("Andrei Zakharov",), "en", False),
    ("банковская карта", ("карта «Сокол Банк» *1", "карты «Сокол Банк» *1"), "ru", True),
    ("бронирование гостиницы", ("бронирование BK-1", "бронирования BK-1"), "ru", True),
    ("сотрудник", ("Андрей Захаров", "Андрея Захарова"), "ru", False),
    ("гостиница", ("отель «Аврора»", "отеля «Аврора»"), "ru", True),  # its kind in other words: never «гостиница отель …»
    ("компания", ("Парус Страхование", "Паруса Страхование"), "ru", False),
    ("гостиница", ("новая «Аврора»",), "ru", False),  # an adjective before the quotes says no kind
])
def test_a_name_that_says_its_class(cls, names, lang, said):
    assert class_in_name(cls, names, lang) is said


# Worked examples, each checked by hand: the words the name repeats are dropped, a bare
# "date" or «номер» (one of several) is not left alone.
@pytest.mark.parametrize(("noun", "name", "lang", "short"), [
    ("trip budget", "Trip TR-1", "en", "budget"),
    ("return date of the trip", "Trip TR-1", "en", "return date"),
    ("order date", "Order ORD-1", "en", "order date"),
    ("monthly salary", "Ivan Smirnov", "en", "monthly salary"),
    ("country of use", "that country", "en", "country of use"),  # never "the of use of that country"
    ("city served", "Atlantic City International Airport", "en", "city served"),  # never "the served of …"
    ("бюджет поездки", "поездка TR-1", "ru", "бюджет"),
    ("дата возвращения из поездки", "поездка TR-1", "ru", "дата возвращения"),
    ("расходы на поездку", "поездка TR-1", "ru", "расходы"),
    ("номер заказа", "заказ ORD-1", "ru", "номер заказа"),
    ("месячная зарплата", "Иван Смирнов", "ru", "месячная зарплата"),
])
def test_a_noun_said_of_a_named_subject(noun, name, lang, short):
    assert shortened(noun, name, lang) == short


@pytest.mark.parametrize(("noun", "subject", "said"), [
    ("держатель карты", "карта «Сокол Банк» *1", "держатель карты «Сокол Банк» *1"),
    ("расходы на поездку", "поездка TR-1", "расходы на поездку TR-1"),
    ("дата возвращения из поездки", "поездка TR-1", "дата возвращения из поездки TR-1"),
    ("месячная зарплата", "Иван Смирнов", "месячная зарплата у Ивана Смирнова"),
])
def test_a_russian_noun_with_its_subject(demo_kg, noun, subject, said):
    assert noun_of(noun, naming(subject, "ru", Lexicon(demo_kg)), "ru") == said


def test_a_boolean_is_asked_as_a_yes_no_question(demo_kg):
    """Even at the end of a chain: never "What is the swimming pool of …?" (kgs:questionForm)."""
    lexicon = Lexicon(demo_kg)
    pool = Node.from_term(ox.Literal("true", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#boolean")), "true", {})
    hotel = _node(demo_kg, EX + "hotel-ararat-view")
    chain = (_fact(demo_kg, "booking-001", "hotel", hotel), _fact(demo_kg, "hotel-ararat-view", "hasPool", pool))
    assert _English(lexicon).multihop(chain, inverse_start=False) == "Does the hotel of Booking BK-WLNR6B have a swimming pool?"
    assert _Russian(lexicon).multihop(chain, inverse_start=False) == "Есть ли бассейн в гостинице бронирования BK-WLNR6B?"
    asked = lexicon.yes_no_question(_node(demo_kg, EX + "taxResident"), "сотрудник, у которого месячная зарплата — 408 000", "ru")
    assert asked == "Есть ли статус налогового резидента у сотрудника, у которого месячная зарплата — 408 000?"


def test_english_descriptions_take_the_and_names_do_not(demo_kg):
    lexicon = Lexicon(demo_kg)
    store, = [s for (s,) in demo_kg.select('SELECT ?s WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> "Pine store"@en }')]
    assert lexicon.name(_node(demo_kg, store.value), "en") == "the Pine store"
    bank, = [s for (s,) in demo_kg.select('SELECT ?s WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> "Zarechye Bank"@en }')]
    assert lexicon.name(_node(demo_kg, bank.value), "en") == "Zarechye Bank"
    assert lexicon.name(_node(demo_kg, EX + "booking-001"), "en") == "Booking BK-WLNR6B"


def test_entities_get_the_domain_of_their_class(demo_kg):
    lexicon = Lexicon(demo_kg)
    booking = _node(demo_kg, EX + "booking-001")
    words = wording(lexicon, booking, None, (), "en")
    assert words.entity.domain == "travel"


@pytest.mark.parametrize(("local", "said"), [
    ("product-rain-jacket", "rain jacket"),  # a common noun, capitalised only as a label
    ("city-moscow", "Moscow"),  # a name
    ("hotel-riviera-sochi", "Hotel Riviera"),  # a name that says its class
])
def test_an_english_common_noun_label_is_lower_case_inside_a_sentence(demo_kg, local, said):
    node_iri = ox.NamedNode(f"https://kgsynth.example/demo/{local}")
    labels = demo_kg.labels([node_iri])[node_iri]
    node = Node.from_term(node_iri, demo_kg.pick_label(node_iri, labels), labels)
    assert Lexicon(demo_kg).name(node, "en") == said


@pytest.mark.parametrize(("local", "subject", "value"), [
    ("product-rain-jacket", "the rain jacket", "rain jacket"),  # "the price of the rain jacket"; "the item is rain jacket"
    ("city-moscow", "Moscow", "Moscow"),
    ("store-pine", "the Pine store", "the Pine store"),
])
def test_an_english_common_noun_takes_the_where_a_sentence_speaks_of_it(demo_kg, local, subject, value):
    lexicon = Lexicon(demo_kg)
    node = _node(demo_kg, EX + local)
    assert lexicon.referent(node, "en") == subject
    assert lexicon.name(node, "en") == value
    assert lexicon.referent(node, "ru") == lexicon.name(node, "ru")


def test_a_question_about_a_common_noun_entity_names_it_with_the(demo_kg):
    price = Node.from_term(ox.Literal("5990", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")), "5990", {})
    fact = _fact(demo_kg, "product-rain-jacket", "price", price)
    assert _English(Lexicon(demo_kg)).of(fact, fact.subject) == "the price of the rain jacket"
    words = wording(Lexicon(demo_kg), fact.subject, None, (fact,), "en")
    assert words.entity.name == "the rain jacket" and words.facts[0].noun_of == "price of the rain jacket"


def test_english_subjects_of_comparisons_and_shared_sets_take_the(demo_kg):
    english = _English(Lexicon(demo_kg))
    price = Node.from_term(ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")), "1", {})
    jacket, pan = _fact(demo_kg, "product-rain-jacket", "price", price), _fact(demo_kg, "product-frying-pan", "price", price)
    assert english.comparison(jacket, pan, later=False) == "Which has the greater price: the rain jacket or the frying pan?"


def test_a_class_said_before_a_name_with_the_is_said_once(demo_kg):
    """"the product frying pan", never "the product the frying pan" (nor "the department the Management board ...")."""
    scenario = next(s for plan in plan_cells(demo_kg, SynthConfig(), load_rules(demo_kg)) for s in plan.scenarios
                    if s.entity_class is not None)
    entity = EntityWording(name="the frying pan", cls="product")
    words = scenario.wording["en"].model_copy(update={"entity": entity})
    scenario = scenario.model_copy(update={"wording": {**scenario.wording, "en": words}})
    for seed in range(20):
        said = _Writer(scenario, "en", random.Random(seed), ["x"] * len(scenario.facts))._introduction(True, True)
        assert "the product frying pan" in said and "the the" not in said.casefold()


@pytest.mark.parametrize(("iri", "name"), [
    ("http://dbpedia.org/resource/Kim_Dae-jung", "Kim Dae-jung"),
    ("http://dbpedia.org/resource/the_Netherlands", "the Netherlands"),
    ("http://x.example/S%C3%A3o_Paulo", "São Paulo"),
    ("http://x.example/McDonald", "McDonald"),
    ("http://x.example/iPhone", "iPhone"),
    ("http://x.example/worksFor", "worksFor"),
    ("http://x.example/ids#ORD-2024-00057", "ORD-2024-00057"),
])
def test_an_unlabelled_entity_is_named_as_a_person_writes_it(iri, name, tmp_path):
    graph = tmp_path / "g.nt"
    graph.write_text(f"<{iri}> <http://x.example/p> <http://x.example/o> .\n", encoding="utf-8")
    assert KnowledgeGraph.load(graph).label(ox.NamedNode(iri)) == name


_GENDERS = """
@prefix ex: <http://g.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <http://schema.org/> .
ex:ann schema:gender "female" .
ex:bo ex:people_person_gender ex:m_02zsn . ex:m_02zsn rdfs:label "Female"@en .
ex:cy <http://www.wikidata.org/prop/direct/P21> <http://www.wikidata.org/entity/Q6581072> .
ex:dan schema:gender "male" .
ex:ed ex:occupation "woman's rights activist" .
ex:vera rdfs:label "Вера Комарова"@ru .
"""


@pytest.mark.parametrize(("entity", "woman"), [("ann", True), ("bo", True), ("cy", True), ("dan", False), ("ed", False),
                                               ("vera", True)])
def test_a_person_noun_takes_the_gender_of_the_person_it_names(tmp_path, entity, woman):
    """«Супруг — Barbara Stanwyck» reads wrong: the noun of a woman is «супруга». Her gender
    is read from the graph's gender relation, whatever its vocabulary, or from her Russian name."""
    (tmp_path / "g.ttl").write_text(_GENDERS, encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path / "g.ttl")
    lexicon = Lexicon(kg)
    iri = f"http://g.example/{entity}"
    labels = {"ru": "Вера Комарова"} if entity == "vera" else {}
    node = Node(kind="iri", value=iri, datatype=None, lang=None, label=labels.get("ru", entity), labels=labels)
    said = [lexicon.in_value_gender(noun, node) for noun in ("супруг", "бывший партнёр", "актёр дубляжа", "режиссёр")]
    if woman:
        assert said == ["супруга", "бывшая партнёрша", "актриса дубляжа", "режиссёр"]
    else:
        assert said == ["супруг", "бывший партнёр", "актёр дубляжа", "режиссёр"]


@pytest.mark.parametrize(("label", "kind", "said"), [
    ("University of Portland", "university", "the University of Portland"),
    ("University College Dublin", "university", "University College Dublin"),
    ("Queens College, City University of New York", "college", "Queens College, City University of New York"),
    ("Middle East", "region", "the Middle East"),
    ("Tampa Bay Buccaneers", "sports team", "the Tampa Bay Buccaneers"),
    ("Boston Red Sox", "sports team", "the Boston Red Sox"),
    ("Newell's Old Boys", "sports team", "Newell's Old Boys"),
])
def test_an_english_proper_name_takes_the_as_english_says_it(tmp_path, label, kind, said):
    (tmp_path / "g.ttl").write_text(f"""@prefix ex: <http://n.example/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:k rdfs:label "{kind}"@en . ex:e a ex:k ; rdfs:label "{label}"@en .""", encoding="utf-8")
    node = Node(kind="iri", value="http://n.example/e", datatype=None, lang=None, label=label, labels={"en": label})
    assert Lexicon(KnowledgeGraph.load(tmp_path / "g.ttl")).referent(node, "en") == said
