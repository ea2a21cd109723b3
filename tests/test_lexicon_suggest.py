"""``kgsynth lexicon suggest``: words for relations and classes from the graph's labels, the
rules over labels and IRIs, the glossary, and a model (a fault injector here, for the
error cases only: its replies are canned)."""

from __future__ import annotations

import json
import sys

import pyoxigraph as ox
import pytest
from conftest import FB15K, ROOT
from llm_fault_injector import FaultInjectingServer

from kgsynth.cli._app import run
from kgsynth.formats import morph
from kgsynth.kg import KnowledgeGraph, demo_graph_path, readable_name
from kgsynth.kg.vocab import KGS, XSD
from kgsynth.lexicon import suggest_words
from kgsynth.lexicon._checks import refusal
from kgsynth.llm import LLMGateway, ModelConfig
from kgsynth.queries import Node
from kgsynth.synth.naming.lexicon import Lexicon
from kgsynth.synth.naming.words import relation_words, russian_of, singular

FB = "http://example.org/fb15k237/"
WEBNLG = ROOT.parent / "shared" / "external" / "webnlg2020"  # bench/webnlg_graph.py reads it
_FORM_TERMS = {"noun": "nounForm", "inverse_noun": "inverseNounForm"}


# ------------------------------------------------------------------ reading names
@pytest.mark.parametrize(("iri", "label", "name", "subject", "outer"), [
    (FB + "relation/film/film/genre", "film film genre", "genre", "film", None),
    (FB + "relation/people/person/nationality", "people person nationality", "nationality", "person", None),
    (FB + "relation/award/award_nominee/award_nominations/award/award_nomination/award", None,
     "award", "award nominee", "award nominations"),
    (FB + "relation/base/popstra/celebrity/dated/base/popstra/dated/participant", None, "participant", "celebrity", "dated"),
    (FB + "attribute/people.person.date_of_birth", None, "date of birth", "person", None),
    (FB + "relation/people/person/spouse_s/people/marriage/spouse", None, "spouse", "person", "spouse"),
    ("http://dbpedia.org/ontology/birthPlace", None, "birth place", None, None),
    ("https://kgsynth.example/demo/worksIn", "works in", "works in", None, None),  # a label that names, kept
])
def test_relation_words_read_paths_camel_case_and_labels(iri, label, name, subject, outer):
    words = relation_words(iri, label)
    assert (words.name, words.subject, words.outer) == (name, subject, outer)


def test_nouns_from_names_that_are_not_nouns():
    assert relation_words(FB + "relation/film/film/produced_by", None).noun == "producer"
    assert relation_words(FB + "relation/location/location/time_zones", None).noun == "time zone"
    budget = FB + "relation/film/film/estimated_budget/measurement_unit/dated_money_value/currency"
    assert relation_words(budget, None).noun == "currency of the budget"
    assert russian_of("currency of the budget") == "валюта бюджета"  # composed: the dependent in the genitive
    assert russian_of("film release region") == "регион выпуска"
    assert russian_of("quasar luminosity") is None


# DBpedia's unlabelled camelCase relations, as synthesis sees them (the IRI's name made
# readable stands in for a label): the glossary's noun, a unit said after it, percent escapes read
DBO = "http://dbpedia.org/ontology/"


@pytest.mark.parametrize(("name", "english", "russian"), [
    ("birthPlace", "place of birth", "место рождения"),
    ("leaderName", "leader", "руководитель"),
    ("isPartOf", "administrative area", "вышестоящая административная единица"),
    ("hasToItsNorth", "northern neighbour", "северный сосед"),
    ("1stRunwayLengthFeet", "length of the first runway in feet", "длина первой ВПП в футах"),
    ("1stRunwayLengthMetre", "length of the first runway in metres", "длина первой ВПП в метрах"),
    ("elevationAboveTheSeaLevelInFeet", "elevation above sea level in feet", "высота над уровнем моря в футах"),
    ("elevationAboveTheSeaLevel_(in_metres)", "elevation above sea level in metres",
     "высота над уровнем моря в метрах"),
    ("added%20to%20the%20National%20Register%20of%20Historic%20Places", "NRHP listing date",
     "дата включения в Национальный реестр исторических мест"),
    ("backup%20pilot", "backup pilot", "запасной пилот"),
])
def test_dbpedia_names_in_words(name, english, russian):
    words = relation_words(DBO + name, readable_name(DBO + name))
    assert (words.noun, russian_of(words.noun)) == (english, russian)


@pytest.mark.parametrize(("plural", "one"), [("production companies", "production company"), ("campuses", "campus"),
                                             ("number of episodes", "number of episodes"), ("covalent radius", "covalent radius"),
                                             ("fraternities and sororities", "fraternities and sororities")])
def test_singular_by_the_head(plural, one):
    assert singular(plural) == one


@pytest.mark.parametrize(("text", "lang", "form", "refused"), [
    ("genre", "en", "noun", False), ("date_of_birth", "en", "noun", True), ("birthPlace", "en", "noun", True),
    ("“located in” value", "en", "noun", True), ("entry", "en", "inverse_noun", True),
    ("жанр", "ru", "noun", False), ("ИНН", "ru", "noun", False), ("мощность двигателя в л. с.", "ru", "noun", False),
    ("genre", "ru", "noun", True), ("значение «genre»", "ru", "noun", True), ("быстро бегает", "ru", "noun", True),
    ("объект", "ru", "inverse_noun", True),
])
def test_refusal_of_forms_that_cannot_stand_in_a_question(text, lang, form, refused):
    assert (refusal(text, lang, form) is not None) == refused


# ------------------------------------------------------------------ the demo
def _demo_without_forms() -> tuple[KnowledgeGraph, dict[tuple[str, str, str], str]]:
    kg = KnowledgeGraph.load(demo_graph_path())
    store = kg.backend.store
    written = {}
    for term in _FORM_TERMS.values():
        for quad in list(store.quads_for_pattern(None, ox.NamedNode(KGS + term), None)):
            written[quad.subject.value, term, quad.object.language] = quad.object.value
            store.remove(quad)
    return kg, written


def test_demo_hand_written_words_reproduced_where_the_graph_holds_them():
    kg, written = _demo_without_forms()
    suggestion = suggest_words(kg)
    proposed = {(t.iri, _FORM_TERMS[form], lang): f.text for t in suggestion.terms for (form, lang), f in t.forms.items()
                if form in _FORM_TERMS}
    same = [key for key, text in written.items() if proposed.get(key) == text]
    # 51 of the 106 hand-written forms come back word for word; most others are the class's
    # full label ("hotel booking" for "booking"), which reads as well
    assert len(same) >= 0.45 * len(written), sorted(set(written) - set(same))
    for term in suggestion.terms:
        for (form, lang), said in term.forms.items():
            assert refusal(said.text, lang, form) is None, (term.iri, form, lang, said)


def test_demo_words_the_graph_gives_are_left_alone():
    suggestion = suggest_words(KnowledgeGraph.load(demo_graph_path()))
    assert suggestion.given == 22
    assert all(t.iri != "https://kgsynth.example/demo/worksIn" for t in suggestion.terms)


# ------------------------------------------------------------------ FB15k-237, without a model
@pytest.fixture(scope="module")
def fb15k_words():
    if not FB15K.exists():
        pytest.skip("../shared/external/fb15k237 is not present")
    return suggest_words(KnowledgeGraph.load(FB15K))


def test_fb15k_every_relation_worded_in_both_languages(fb15k_words):
    assert len(fb15k_words.terms) == 352  # every fact relation of the graph
    assert not fb15k_words.unworded, [(t.iri, t.missing) for t in fb15k_words.unworded][:5]
    for term in fb15k_words.terms:
        for lang in ("en", "ru"):
            assert ("noun", lang) in term.forms, term.iri


@pytest.mark.skipif(not (WEBNLG / "train_en.jsonl.gz").exists(), reason="../shared/external/webnlg2020 is not present")
def test_webnlg_every_relation_has_a_noun_in_both_languages(tmp_path):
    """WebNLG's DBpedia graph (bench/webnlg_graph.py): 379 unlabelled camelCase relations, each
    worded by the rules and the glossary; what its subjects are (kgs:inverseNounForm) needs
    their class, which the graph does not give."""
    sys.path.insert(0, str(ROOT / "bench"))
    from webnlg_graph import build, write

    graph = tmp_path / "webnlg.nt.gz"
    write(build(), graph)
    words = suggest_words(KnowledgeGraph.load(graph))
    relations = [t for t in words.terms if t.kind == "relation"]
    assert len(relations) == 379
    unworded = [(t.iri, lang, t.missing[key]) for t in relations for lang in ("en", "ru")
                if (key := ("noun", lang)) in t.missing]
    assert not unworded, unworded[:5]


def test_fb15k_russian_forms_decline(fb15k_words):
    for term in fb15k_words.terms:
        for (form, lang), said in term.forms.items():
            if lang != "ru":
                continue
            first = said.text.split()[0]
            assert first.isupper() or morph.nominative_head(first) is not None, said.text
            assert morph.agree("какой", said.text) in {"какой", "какая", "какое", "какие"}, said.text


def test_fb15k_words_read_back_by_synthesis(fb15k_words, tmp_path):
    lexicon_file = tmp_path / "lexicon.ttl"
    lexicon_file.write_text(fb15k_words.turtle("FB15k-237"), encoding="utf-8")
    lexicon = Lexicon(KnowledgeGraph.load(lexicon_file))
    genre = next(t for t in fb15k_words.terms if t.iri.endswith("/film/film/genre"))
    relation = type("R", (), {"value": genre.iri})()
    assert lexicon.form(relation, "noun", "en") == "genre" and lexicon.form(relation, "noun", "ru") == "жанр"
    assert lexicon.form(relation, "inverse_noun", "ru") == "фильм"


def test_fb15k_a_date_that_is_only_a_year_is_named_by_the_year(fb15k_words, tmp_path):
    """FB15k-237 stores its dates as years: "the date of death is 1969" is said "the year of
    death is 1969", «год смерти — 1969», the Russian noun agreeing as a masculine one."""
    lexicon_file = tmp_path / "lexicon.ttl"
    lexicon_file.write_text(fb15k_words.turtle("FB15k-237"), encoding="utf-8")
    lexicon = Lexicon(KnowledgeGraph.load(lexicon_file))
    year = Node(kind="literal", value="1969", datatype=XSD + "gYear", lang=None, label="1969", labels={})
    dated = [t for t in fb15k_words.terms if ("noun", "en") in t.forms and "date" in t.forms["noun", "en"].text.split()]
    assert len(dated) >= 10
    for term in dated:
        relation = Node(kind="iri", value=term.iri, datatype=None, lang=None, label=term.iri, labels={})
        english, russian = (lexicon.stating_noun(relation, lang, year) for lang in ("en", "ru"))
        assert "year" in english.split() and "date" not in english.split(), english
        if term.forms["noun", "ru"].text.startswith("дата"):
            assert russian.startswith("год") and morph.agree("какой", russian) == "какой", russian


# ------------------------------------------------------------------ with a model (fault injector)
_TINY = """@prefix ex: <http://example.org/> .
ex:a ex:xq7 ex:b . ex:b <http://www.w3.org/2000/01/rdf-schema#label> "Bee"@en .
"""


def _gateway(server: FaultInjectingServer) -> LLMGateway:
    return LLMGateway(ModelConfig(base_url=server.base_url, model="fake", max_retries=1, backoff_s=0, timeout_s=5))


def _tiny(tmp_path) -> KnowledgeGraph:
    path = tmp_path / "tiny.ttl"
    path.write_text(_TINY, encoding="utf-8")
    return KnowledgeGraph.load(path)


def test_model_words_fill_what_the_rules_cannot(tmp_path):
    reply = {"noun_en": "partner", "noun_ru": "партнёр", "inverse_noun_en": "person", "inverse_noun_ru": "человек"}
    with FaultInjectingServer(reply=lambda request: json.dumps(reply)) as server:
        suggestion = suggest_words(_tiny(tmp_path), _gateway(server))
    term = suggestion.terms[0]
    assert term.forms["noun", "ru"].text == "партнёр" and term.forms["noun", "ru"].source == "the model"
    assert term.forms["noun", "en"].source.startswith("a rule")  # the rules' English stays: only missing forms are asked


def test_model_words_that_break_russian_are_refused_with_why(tmp_path):
    reply = {"noun_en": "partner", "noun_ru": "partner", "inverse_noun_en": None, "inverse_noun_ru": None}
    with FaultInjectingServer(reply=lambda request: json.dumps(reply)) as server:
        term = suggest_words(_tiny(tmp_path), _gateway(server)).terms[0]
    assert ("noun", "ru") not in term.forms
    assert "the model's “partner” is refused" in term.missing["noun", "ru"]


def test_a_model_that_answers_garbage_leaves_the_relation_unworded_with_the_reason(tmp_path):
    with FaultInjectingServer(reply=lambda request: "{}", script=["not_json"] * 4) as server:
        term = suggest_words(_tiny(tmp_path), _gateway(server)).terms[0]
    assert ("noun", "ru") in term.missing and "the model:" in term.missing["noun", "ru"]


def test_cli_writes_a_reviewable_file_and_says_what_it_could_not_word(tmp_path, capsys):
    out = tmp_path / "words.ttl"
    graph = tmp_path / "tiny.ttl"
    graph.write_text(_TINY, encoding="utf-8")
    assert run(["lexicon", "suggest", str(graph), "--out", str(out)]) in (None, 0)
    err = capsys.readouterr().err
    assert "wrote 1 form for 1 relation or class" in err
    assert "forms missing for 1" in err and "--llm-base-url" in err
    text = out.read_text(encoding="utf-8")
    assert "# Not worded (1)" in text and "<http://example.org/xq7> noun @ru" in text
    KnowledgeGraph.load(out)  # parses


def test_a_form_copied_from_the_prompts_examples_is_refused(tmp_path):
    # a small model answers with the prompt's own example whatever the relation
    reply = {"noun_en": "genre", "noun_ru": "жанр", "inverse_noun_en": None, "inverse_noun_ru": None}
    with FaultInjectingServer(reply=lambda request: json.dumps(reply)) as server:
        term = suggest_words(_tiny(tmp_path), _gateway(server)).terms[0]
    assert term.forms["noun", "en"].text == "xq7"  # the rules' English, which the model does not replace
    assert term.missing["noun", "ru"] == "the model's “жанр” is refused: the prompt's example, copied"


@pytest.mark.parametrize("label", ["sales area in square metres", "engine power in hp"])
def test_a_name_that_says_its_unit_keeps_it_where_it_is(label):
    # the unit is moved after the noun only when the name has none before it ("length metre")
    assert relation_words("https://kgsynth.example/demo/salesArea", label).noun == label
