"""Questions and fact turns read as a person would write them, for every shape in both
languages, checked over one synthesis run of the demo graph: a shared value is asked "in
common", never "What is both X and Y"; a condition never restates what the rest of the
question already says; a name is never said to equal itself; no chain of nouns runs
longer than two links; a further value of a relation says it is another one; and an age
is asked as an age, no method spelt out."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import pyoxigraph as ox
import pytest
from conftest import ROOT

from kgsynth.dataset.splits import read_items
from kgsynth.formats import morph
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.pipeline.config import load_config
from kgsynth.pipeline.run import synthesize
from kgsynth.queries import Fact, Node, Shape, Subgraph, sample_subgraphs
from kgsynth.rulebook import load_library
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.naming.lexicon import Lexicon
from kgsynth.synth.naming.questions import _RULE_QUESTIONS, _year_of_a_date, retrieval_question
from kgsynth.synth.scenarios.scenario import ScenarioBuilder, said_by_name, several_valued

SHAPES = {"rule_application", "simple", "set", "conditional", "multihop", "multihop_set", "comparison"}
# This run before the question forms changed: its items per (language, shape), and a digest of the
# (scenario, language, gold) of its shapes whose scenarios all stayed. The other shapes lost the
# scenarios whose question asks for, or names a node by, what a name says: their cells draw anew.
COUNTS = {"rule_application": 70, "multihop": 15, "conditional": 6, "simple": 4, "set": 3, "multihop_set": 2,
          "comparison": 2}
KEPT_GOLDS = "a06ddee9d0afcff9"
_TRIPLE = re.compile(r"^<([^>]*)> <([^>]*)> (.*) \.$")
_LITERAL = re.compile(r'^"(.*)"(?:\^\^<([^>]*)>|@[\w-]+)?$')


@pytest.fixture(scope="module")
def items(tmp_path_factory, demo_kg):
    config = load_config(ROOT / "configs" / "all_shapes.toml")
    config = config.model_copy(update={"dataset": config.dataset.model_copy(update={"n": 300, "seed": 3})})
    out = tmp_path_factory.mktemp("forms") / "out"
    synthesize(demo_kg, config, out)
    return list(read_items(out / "items.jsonl"))


@pytest.fixture(scope="module")
def lexicon(demo_kg):
    return Lexicon(demo_kg)


class _Facts:
    """An item's source triples as facts with their labels, read from the demo graph."""

    def __init__(self, kg: KnowledgeGraph):
        self.kg = kg
        self.nodes: dict[str, Node] = {}

    def of(self, item) -> list[Fact]:
        return [self.of_triple(triple) for triple in item.metadata.source_triples]

    def of_triple(self, triple: str) -> Fact:
        subject, relation, obj = _TRIPLE.match(triple).groups()
        return Fact(subject=self._iri(subject), relation=self._iri(relation), object=self._object(obj))

    def _iri(self, iri: str) -> Node:
        if iri not in self.nodes:
            term = ox.NamedNode(iri)
            labels = self.kg.labels([term])[term]
            self.nodes[iri] = Node.from_term(term, self.kg.pick_label(term, labels), labels)
        return self.nodes[iri]

    def _object(self, written: str) -> Node:
        if written.startswith("<"):
            return self._iri(written[1:-1])
        value, datatype = _LITERAL.match(written).groups()
        term = ox.Literal(value, datatype=ox.NamedNode(datatype)) if datatype else ox.Literal(value)
        return Node.from_term(term, value, {})


@pytest.fixture(scope="module")
def facts(demo_kg):
    return _Facts(demo_kg)


def test_the_run_has_every_shape_in_both_languages_and_the_golds_it_had(items):
    counts = Counter((i.language, i.metadata.shape) for i in items)
    assert counts == Counter({(lang, shape): n for shape, n in COUNTS.items() for lang in ("en", "ru")})
    assert {shape for _, shape in counts} == SHAPES
    kept = sorted(f"{i.metadata.scenario_id} {i.language} {i.gold if isinstance(i.gold, str) else sorted(i.gold)}"
                  for i in items if i.metadata.shape in ("rule_application", "comparison"))
    assert hashlib.sha256("\n".join(kept).encode()).hexdigest()[:16] == KEPT_GOLDS


def test_a_shared_value_is_asked_in_common_not_as_both(items):
    both = [i.question for i in items if re.search(r"\b(?:What|Who) is both\b|одновременно", i.question)]
    assert both == []
    shared = [i for i in items if i.metadata.variant == "shared_object"]
    assert shared, "the run has no shared-object question to read"
    for item in shared:
        asked_in_common = r" have in common\?$| is also |общ(?:ий|ая|ее|ие)\?$|является также"
        assert re.search(asked_in_common, item.question), item.question


def test_a_condition_is_asked_only_where_the_rest_leaves_several(items, facts, demo_kg):
    """"Which city whose UTC offset is 3 is the city of Sapphire Hotel?" names its answer
    twice over: Sapphire Hotel has one city. The condition ("whose UTC offset is 3") is
    asked only where the named node has several values of the relation, as a clause of
    its own ("Which item of Order X is the one whose price is 5,990?")."""
    chains = [i for i in items if i.metadata.variant == "chain"]
    assert chains, "the run has no conditional chain to read"
    for item in chains:
        first, second = facts.of(item)
        values = demo_kg.select("SELECT ?o WHERE {\n#VALUES\n?s ?p ?o }",
                                values=(("s", "p"), [[first.subject.term(), first.relation.term()]]))
        condition = item.metadata.fact_values[1]
        assert not re.search(r"^Which [^?]+ whose [^?]+ is the |, является ", item.question), item.question
        alone = len(list(values)) == 1  # the named node's one value: the rest of the question picks it out
        assert (condition in item.question) is not alone, item.question


def _names(lexicon: Lexicon, node: Node, lang: str) -> set[str]:
    cases = morph.CASES if lang == "ru" else ("nomn",)
    return {said for case in cases for said in (lexicon.name(node, lang, case), lexicon.referent(node, lang, case))}


def _said_again(item, chain: list[Fact], lexicon: Lexicon) -> list[str]:
    """The question and fact turns of ``item`` that say a value its subject's name already
    says ("The policy number of Policy KS-1 is KS-1"): once the subject's names are taken
    out of a turn, the value is still in it; a question that has the value asks for it or
    names a node by it."""
    said = []
    for index, fact in enumerate(chain):
        value = item.metadata.fact_values[index]
        if not value or value not in fact.subject.label_in(item.language):
            continue
        said += [item.question] if value in item.question else []
        for turn in item.dialogue:
            if turn.kind == "fact" and index in turn.facts:
                rest = turn.text
                for name in sorted(_names(lexicon, fact.subject, item.language), key=len, reverse=True):
                    rest = rest.replace(name, "")
                said += [turn.text] if value in rest else []
    return said


def test_no_turn_says_a_name_equals_itself_and_no_question_asks_what_a_name_says(items, facts, lexicon):
    assert [text for item in items for text in _said_again(item, facts.of(item), lexicon)] == []


def test_a_value_a_name_says_is_carried_by_the_name(demo_kg, lexicon):
    """A chain through a fact a name says ("the Yantar Bank card *1" is issued by Yantar
    Bank) keeps its hop: the turn that names the subject carries it, and no turn states it."""
    builder = ScenarioBuilder(demo_kg, load_rules(demo_kg))
    scenarios = [s for hops in (3, 4) for subgraph in sample_subgraphs(demo_kg, "multihop", limit=100, hops=hops)
                 for s in builder.build(subgraph) if any(said_by_name(f) for f in s.facts)]
    assert scenarios
    for scenario in scenarios[:40]:
        for lang in ("en", "ru"):
            item = make_item(scenario, lang, DialogueSettings(), 0)
            assert _said_again(item, list(scenario.facts), lexicon) == []
            carried = [i for i, f in enumerate(scenario.facts) if said_by_name(f)]
            assert all(item.metadata.fact_values[i] in item.dialogue[item.metadata.fact_to_turn[i]].text
                       for i in carried), item.dialogue


_STRETCH_END = re.compile(r"[,.;:?!]|\b(?:whose|that|who|which|is|are|was|were|has|have|had|does|do|did)\b", re.I)


def _ofs_in_a_row(text: str) -> int:
    """The most "of"s in one stretch of ``text``: a stretch ends at punctuation and at the
    words that open a clause or carry the verb, so "the date of birth of the policyholder of
    Policy P-1" holds three and "the city of the store that Order X has" two."""
    return max(stretch.lower().split().count("of") for stretch in _STRETCH_END.split(text))


def test_no_english_question_or_turn_chains_three_ofs(items):
    english = [i for i in items if i.language == "en"]
    assert max(_ofs_in_a_row(i.question) for i in english) == 2  # two are fine: "the head of the department of X"
    for item in english:
        for text in (item.question, *(t.text for t in item.dialogue)):
            assert _ofs_in_a_row(text) <= 2, text


def _genitive_links(question: str, nouns: set[str], names: set[str]) -> int:
    """The most links one clause of a Russian question chains in the genitive: the places
    where one of the item's relation and class nouns or one of its nodes' names starts in
    the genitive, once the nouns in the nominative (the one asked for: «код страны ISO») are
    taken out, and so is the head an opening «Возьмём» takes in the accusative (an animate one
    reads as a genitive). «…у страхователя полиса страхового случая»: 3; «у держателя карты
    «Сокол Банк» *1»: 2 (the card's name takes the place of the noun's «карты»); «Возьмём
    руководителя отдела Глеба Цветкова»: 2."""
    said = {morph.decline(n, "gent", number) for n in nouns for number in ("sing", "plur")} | names
    links = 0
    for clause in re.split(r"[.?!,;:—]", question):
        for noun in sorted(nouns, key=len, reverse=True):
            clause = re.sub(rf"(?<!\w){re.escape(noun)}(?!\w)", " ", clause)
            for head in (morph.decline(noun, "accs"), morph.decline(noun, "gent")):  # an animate accusative is a genitive
                clause = re.sub(rf"^\s*Возьмём {re.escape(head)}(?!\w)", " ", clause)
        spans = {m.span() for s in said for m in re.finditer(rf"(?<!\w){re.escape(s)}(?!\w)", clause)}
        # a noun inside a longer one («магазина» of «основного магазина») is no link of its own
        outer = {(a, b) for a, b in spans if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in spans)}
        links = max(links, len({a for a, _ in outer}))
    return links


def test_no_russian_question_chains_three_genitives(items, facts, lexicon):
    checked = 0
    for item in items:
        if item.language != "ru" or item.metadata.shape not in ("multihop", "multihop_set", "conditional"):
            continue
        chain = facts.of(item)
        nouns = {lexicon.noun(f.relation, "ru", f.object) for f in chain}
        nouns |= {lexicon.inverse_noun(f.relation, "ru", f.subject) for f in chain}
        nodes = {node for f in chain for node in (f.subject, f.object) if node.kind == "iri"}
        names = {lexicon.name(node, "ru", "gent") for node in nodes}
        checked += 1
        assert _genitive_links(item.question, nouns, names) <= 2, item.question
    assert checked


_ANOTHER = {"en": re.compile(r"\banother\b", re.I), "ru": re.compile(r"\bещё\b", re.I)}


def test_every_further_value_of_a_relation_is_introduced_as_another(items, facts):
    """"The tariff is A" ... "the tariff is B" reads as if B replaced A: the sentence that
    states a second value of a subject's relation says it is another one."""
    further = 0
    for item in items:
        chain = facts.of(item)
        stated: dict[tuple[str, str], str] = {}
        for turn in item.dialogue:
            if turn.kind != "fact":
                continue
            for index in turn.facts:
                fact = chain[index]
                key = (fact.subject.value, fact.relation.value)
                if stated.setdefault(key, fact.object.value) == fact.object.value:
                    continue
                further += 1
                value = item.metadata.fact_values[index]
                sentence = next(s for s in re.split(r"(?<=[.?!])\s+", turn.text) if value in s)
                assert _ANOTHER[item.language].search(sentence), turn.text
    assert further


def test_a_further_value_of_another_entity_is_introduced_as_another(demo_kg):
    """A confusable turn states another entity's fact; a second value of that entity's
    relation ("the monthly purchase of card *2 is 8,664" after "... is 4,542") says it is another one."""
    builder = ScenarioBuilder(demo_kg, load_rules(demo_kg))
    cards = [s for subgraph in sample_subgraphs(demo_kg, "set", limit=60, seed=1) for s in builder.build(subgraph)
             if several_valued(s.facts)]
    busy = DialogueSettings(confusables=1.0)
    further = 0
    for scenario in cards[:20]:
        others = [s for s in cards if s.entity != scenario.entity and s.facts[0].relation == scenario.facts[0].relation][:2]
        for lang in ("en", "ru"):
            item = make_item(scenario, lang, busy, 0, others)
            for noun_of in {words.noun_of for other in others for words in other.wording[lang].facts}:
                said = [t.text for t in item.dialogue if t.kind == "confusable" and noun_of in t.text]
                further += len(said[1:])
                assert all(_ANOTHER[lang].search(text) for text in said[1:]), said
    assert further


_METHOD = re.compile(r"\b(?:Subtract|minus)\b|[Вв]ычт|[Вв]ычесть")


def test_an_interval_is_asked_without_its_method_and_an_age_as_an_age(items, facts):
    intervals = [i for i in items if i.metadata.rule_kind == "interval"]
    assert intervals
    ages = 0
    for item in intervals:
        assert not _METHOD.search(item.question), item.question
        if any("birth" in f.relation.value.casefold() for f in facts.of(item)):
            ages += 1
            assert re.match(r"How old was |Сколько полных лет было ", item.question), item.question
    assert ages, "the run has no age to read"


def test_no_library_or_fallback_question_spells_out_a_method():
    library = load_library()
    entries = [*library.years_between, *library.one_hop]
    questions = [q for entry in entries for wording in (entry.day, entry.year)
                 for q in (wording.question.en, wording.question.ru)]
    questions += [q for pair in _RULE_QUESTIONS.values() for q in pair]
    assert questions and [q for q in questions if _METHOD.search(q)] == []


# a bridge's slots and a person's, in Russian: the words a library question over a bridge is filled with
_BRIDGE_SLOTS = {"{bridge:gent}": "супруга", "{bridge:datv}": "супругу", "{bridge}": "супруг", "{entity:gent}": "Анны Петровой",
                 "{entity:datv}": "Анне Петровой", "{entity}": "Анна Петрова", "{event}": "смерти"}


def test_no_library_question_over_a_bridge_chains_three_russian_genitives():
    """«от года рождения композитора фильма «Alien»» chains four genitives; a question over a
    bridge says whose date it reads with at most two («в год смерти супруга»)."""
    library = load_library()
    questions = [wording.question.ru for entry in library.one_hop for wording in (entry.day, entry.year)]
    for question in questions:
        filled = re.sub(r"\{[a-z:]+\}", lambda m: _BRIDGE_SLOTS[m[0]], question)
        assert morph.genitive_run(filled) <= 2, filled
    assert len(questions) >= 6


_EN_ONLY = """
@prefix ex: <http://x.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:anna rdfs:label "Anna Berg"@en . ex:acme rdfs:label "Acme"@en . ex:oslo rdfs:label "Oslo"@en .
ex:norway rdfs:label "Norway"@en . ex:patron rdfs:label "patron"@en .
ex:lair rdfs:label "lair"@en . ex:realm rdfs:label "realm"@en .
ex:headcount rdfs:label "headcount"@en .
ex:anna ex:patron ex:acme . ex:acme ex:lair ex:oslo . ex:oslo ex:realm ex:norway .
ex:norway ex:headcount "5500000"^^xsd:integer .
"""
# words the glossary has no Russian for, so each relation is named as a field («значение «lair»»)
_HOPS = (("anna", "patron", "acme"), ("acme", "lair", "oslo"), ("oslo", "realm", "norway"))
_CHAIN = [*(f"<http://x.example/{s}> <http://x.example/{p}> <http://x.example/{o}> ." for s, p, o in _HOPS),
          '<http://x.example/norway> <http://x.example/headcount> "5500000"^^<http://www.w3.org/2001/XMLSchema#integer> .']


def test_relations_named_only_in_english_chain_at_most_two_genitive_values(tmp_path):
    """A graph without Russian labels (FB15k-237) names a relation the glossary lacks «значение «patron»»: a
    four-hop chain said in one go chains «у значения «realm» значения «lair» значения
    «patron» …»; at most two «значения» follow one another."""
    (tmp_path / "g.ttl").write_text(_EN_ONLY, encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path / "g.ttl", lang=("en", "ru"))
    reader = _Facts(kg)
    chain = [reader.of_triple(t) for t in _CHAIN]
    subgraph = Subgraph(id="chain", shape=Shape.multihop, variant="4-hop", template="multihop_4", facts=tuple(chain),
                        answer=(chain[-1].object,), mention=(chain[0].subject,), hidden=())
    question = retrieval_question(subgraph, "ru", Lexicon(kg))
    assert "значени" in question
    for clause in re.split(r"[.?!,;:—]", question):
        assert len(re.findall(r"\bзначения\b", clause)) <= 2, question
    assert _ofs_in_a_row(retrieval_question(subgraph, "en", Lexicon(kg))) <= 2


_DECIMAL_DATES = """@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:acme rdfs:label "Acme"@en ; ex:founded "1987.58333333"^^xsd:decimal ; ex:area "1569.53"^^xsd:decimal ;
    ex:staff "1987.5"^^xsd:decimal ; ex:opened "1995"^^xsd:integer .
ex:opened rdfs:label "opening year"@en .
ex:founded rdfs:label "founding date"@en .
ex:area rdfs:label "area"@en .
ex:staff rdfs:label "staff count"@en .
"""


@pytest.mark.parametrize(("relation", "built"), [("founded", False), ("opened", False), ("area", True), ("staff", True)])
def test_a_year_written_as_a_number_is_never_asked_or_said(tmp_path, relation, built):
    """FB15k-237 writes dates as numbers, fractions of a year ("1987.58333333"): a question on
    such a value would ask for, or name a node by, a number nobody says ("1,987.58333333",
    "the greater founding date"); the same number under a relation that names no date, and
    any other decimal, is asked as it is."""
    (tmp_path / "g.ttl").write_text(_DECIMAL_DATES, encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path / "g.ttl")
    triple = next(t for t in kg.select("SELECT ?o WHERE { <http://example.org/acme> <http://example.org/%s> ?o }" % relation))
    fact = _Facts(kg).of_triple(f'<http://example.org/acme> <http://example.org/{relation}> {triple[0]} .')
    subgraph = Subgraph(id="s", shape=Shape.simple, variant="simple", template="simple", facts=(fact,),
                        answer=(fact.object,), mention=(fact.subject,), hidden=())
    assert bool(list(ScenarioBuilder(kg, {}).build(subgraph))) is built


@pytest.mark.parametrize(("text", "links"), [
    ("Какая дата рождения у Анны Петровой?", 2),  # a name counted once
    ("Какая страна у города проживания Веры Комаровой?", 3),  # «у» links as "of" does
    ("Какой город проживания страхователя полиса KS-2024-00011?", 3),
    ("Какой код магазина заказа ORD-1?", 2),  # «код» reads as a head, not a genitive of «кода»
    ("Какая категория у дождевика и шерстяного шарфа общая?", 1),  # «и» ends the chain
    ("У полиса KS-1 есть страхователь. Какой город проживания этого страхователя?", 2),
])
def test_russian_chains_of_genitives_are_counted_as_english_counts_of(text, links):
    assert morph.genitive_run(text) == links


# Worked examples: a year is its date's already, so "the year of the date of" says the date once.
@pytest.mark.parametrize(("asked", "lang", "said"), [
    ("How many years passed from the year of the date of birth of Jerry Goldsmith to the year of the career start?", "en",
     "How many years passed from the year of birth of Jerry Goldsmith to the year of the career start?"),
    ("Was the year of the dissolution date of the Kingdom of Hungary a leap year?", "en",
     "Was the year of the dissolution of the Kingdom of Hungary a leap year?"),
    ("Сколько лет прошло от года даты премьеры телепередачи «Twin Peaks» до года даты выхода последней серии?", "ru",
     "Сколько лет прошло от года премьеры телепередачи «Twin Peaks» до года выхода последней серии?"),
])
def test_the_year_of_a_date_is_said_once(asked, lang, said):
    assert _year_of_a_date(asked, lang) == said


_GENRES = """
@prefix ex: <http://genre.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:Genre rdfs:label "genre"@en, "жанр"@ru .
ex:artist rdfs:label "artist"@en, "исполнитель"@ru .
ex:folk a ex:Genre ; rdfs:label "Folk rock"@en ; ex:artist ex:chris, ex:melissa .
ex:pop a ex:Genre ; rdfs:label "Pop music"@en ; ex:artist ex:melissa, ex:jlo .
ex:chris rdfs:label "Chris Seefried"@en . ex:melissa rdfs:label "Melissa Etheridge"@en . ex:jlo rdfs:label "Jennifer Lopez"@en .
"""


def test_two_values_of_one_relation_are_asked_as_members_not_twice_by_name(tmp_path):
    """"Which is the genre whose artist is A and whose artist is B?" says one relation twice:
    the subject with both values is asked for as the one that has both among its values."""
    (tmp_path / "g.ttl").write_text(_GENRES, encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path / "g.ttl")
    builder = ScenarioBuilder(kg, {})
    questions = {s.question["en"]: s.question["ru"] for sg in sample_subgraphs(kg, "conditional", variant="shared_subject", limit=20)
                 for s in builder.build(sg)}
    assert questions
    for english, russian in questions.items():
        assert re.fullmatch(r"Which genre has [\w ]+ and [\w ]+ among its artists\?", english), english
        assert re.fullmatch(r"У какого жанра среди исполнителей есть и [\w ]+, и [\w ]+\?", russian), russian
    assert "Which genre has Chris Seefried and Melissa Etheridge among its artists?" in questions


def test_an_inverse_set_lists_only_what_its_noun_names(demo_kg):
    """"List every hotel whose city is Sochi" may not list the Sunny store: on the demo, the
    store and two hotels are located in Sochi. An inverse set whose members' nouns differ
    (a class each, no noun the graph gives the relation for all) is not asked; "every
    resident", the relation's own noun for employees and customers alike, is."""
    lexicon, builder = Lexicon(demo_kg), ScenarioBuilder(demo_kg, {})
    asked, mixed, residents = 0, 0, 0
    for subgraph in sample_subgraphs(demo_kg, "set", variant="inverse", limit=400, seed=0):
        nouns = {lexicon.inverse_noun(f.relation, "en", f.subject) for f in subgraph.facts}
        classes = {getattr(lexicon.class_of(f.subject), "value", None) for f in subgraph.facts}
        scenarios = list(builder.build(subgraph))
        if len(nouns) > 1:
            mixed += 1
            assert scenarios == [], scenarios[0].question
        asked += bool(scenarios)
        residents += bool(scenarios) and len(classes) > 1
    assert mixed and residents and asked >= 20, (mixed, residents, asked)


_DUBLIN = """
@prefix ex: <http://dublin.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:Person rdfs:label "person"@en, "человек"@ru . ex:Organization rdfs:label "organization"@en, "организация"@ru .
ex:bornIn rdfs:label "place of birth"@en, "место рождения"@ru .
ex:region rdfs:label "headquarters region"@en, "регион штаб-квартиры"@ru .
ex:gibbons a ex:Person ; rdfs:label "Cedric Gibbons"@en ; ex:bornIn ex:dublin .
ex:dublin rdfs:label "Dublin"@en .
ex:ucd a ex:Organization ; rdfs:label "University College Dublin"@en ; ex:region ex:dublin .
ex:tcd a ex:Organization ; rdfs:label "Trinity College, Dublin"@en ; ex:region ex:dublin .
"""


def test_a_member_whose_name_says_its_value_is_still_named(tmp_path):
    """"List every organization whose headquarters region is the place of birth of Cedric
    Gibbons": "University College Dublin" says its region in its name, but nothing else names
    it, so its fact is stated; a dialogue that left it to the name would name no member."""
    (tmp_path / "g.ttl").write_text(_DUBLIN, encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path / "g.ttl")
    builder = ScenarioBuilder(kg, {})
    scenarios = [s for sg in sample_subgraphs(kg, "multihop_set", variant="2-hop-last", limit=5) for s in builder.build(sg)]
    assert scenarios
    for scenario in scenarios:
        assert all(said_by_name(f) for f in scenario.facts[1:])  # the names say Dublin
        for lang in ("en", "ru"):
            item = make_item(scenario, lang, DialogueSettings(), 0)
            text = " ".join(t.text for t in item.dialogue)
            assert "University College Dublin" in text and "Trinity College, Dublin" in text, text


_SPOUSES = """
@prefix ex: <http://spouse.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <http://schema.org/> .
ex:Person rdfs:label "person"@en, "человек"@ru .
ex:spouse rdfs:label "spouse"@en, "супруг"@ru .
ex:guy a ex:Person ; rdfs:label "Guy Ritchie"@en ; ex:spouse ex:madonna .
ex:sean a ex:Person ; rdfs:label "Sean Penn"@en ; ex:spouse ex:madonna .
ex:madonna a ex:Person ; rdfs:label "Madonna"@en ; schema:gender "female" .
"""


def test_a_woman_a_question_names_is_named_by_the_feminine_noun(tmp_path):
    """«Перечислите всех людей, у которых супруга — Madonna»: the question names her, so its
    noun is hers, as the dialogue's «Супруга — Madonna.» is."""
    (tmp_path / "g.ttl").write_text(_SPOUSES, encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path / "g.ttl")
    builder = ScenarioBuilder(kg, {})
    questions = [s.question["ru"] for sg in sample_subgraphs(kg, "set", variant="inverse", limit=5) for s in builder.build(sg)]
    assert questions and all("у которых супруга — Madonna" in q for q in questions), questions
