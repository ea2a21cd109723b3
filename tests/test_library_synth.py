"""Library rules (dates, quantities, sets) become items: every operation in both languages,
its gold re-derived by the independent checker, its question filled and its answer format
stated so that one answer is right."""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import defaultdict
from decimal import Decimal

import pytest
import rdflib
from gold_checker import expected_item_answer

from kgsynth.cli._app import run
from kgsynth.formats.answers import AnswerFormat, canonical_gold, check_answer
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import Operation
from kgsynth.queries import sample_subgraphs
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.scenarios.scenario import ScenarioBuilder

RULES = """
@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix ex: <http://lib.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:born rdfs:label "date of birth"@en, "дата рождения"@ru .
ex:died rdfs:label "date of death"@en, "дата смерти"@ru .
ex:bornYear rdfs:label "year of birth"@en, "год рождения"@ru .
ex:diedYear rdfs:label "year of death"@en, "год смерти"@ru .
ex:height rdfs:label "height"@en, "рост"@ru .
ex:population rdfs:label "population"@en, "население"@ru .
ex:area rdfs:label "area"@en, "площадь"@ru .
ex:oldPopulation rdfs:label "population in 2000"@en, "население в 2000 году"@ru .
ex:award rdfs:label "award year"@en, "год награды"@ru .
ex:score rdfs:label "score"@en, "оценка"@ru .
ex:language rdfs:label "spoken language"@en, "язык"@ru .
ex:r-dow a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Calendar ; kgs:operation kgs:DayOfWeek ;
  kgs:input [ kgs:role "date" ; kgs:relation ex:born ] .
ex:r-century a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Calendar ; kgs:operation kgs:Century ;
  kgs:input [ kgs:role "date" ; kgs:relation ex:bornYear ] .
ex:r-decade a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Calendar ; kgs:operation kgs:Decade ;
  kgs:input [ kgs:role "date" ; kgs:relation ex:bornYear ] .
ex:r-leap a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Calendar ; kgs:operation kgs:LeapYear ;
  kgs:input [ kgs:role "date" ; kgs:relation ex:born ] .
ex:r-age a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
  kgs:input [ kgs:role "start" ; kgs:relation ex:born ] , [ kgs:role "end" ; kgs:relation ex:died ] .
ex:r-years a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
  kgs:input [ kgs:role "start" ; kgs:relation ex:bornYear ] , [ kgs:role "end" ; kgs:relation ex:diedYear ] .
ex:r-after a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:DateAfter ; kgs:months 6 ;
  kgs:input [ kgs:role "start" ; kgs:relation ex:born ] .
ex:r-feet a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Conversion ;
  kgs:input [ kgs:role "amount" ; kgs:relation ex:height ] ;
  kgs:divisor "0.3048"^^xsd:decimal ; kgs:rounding 2 ; kgs:sourceUnit "m" ; kgs:unit "ft" .
ex:r-density a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:Ratio ;
  kgs:rounding 1 ; kgs:unit "people/km²" ; kgs:sourceUnit "km²" ;
  kgs:input [ kgs:role "numerator" ; kgs:relation ex:population ] , [ kgs:role "denominator" ; kgs:relation ex:area ] .
ex:r-growth a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:Difference ;
  kgs:input [ kgs:role "from" ; kgs:relation ex:oldPopulation ] , [ kgs:role "to" ; kgs:relation ex:population ] .
ex:r-change a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentChange ;
  kgs:rounding 1 ;
  kgs:input [ kgs:role "from" ; kgs:relation ex:oldPopulation ] , [ kgs:role "to" ; kgs:relation ex:population ] .
ex:r-count a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Count ;
  kgs:input [ kgs:role "member" ; kgs:relation ex:language ; kgs:aggregate kgs:All ] .
ex:r-total a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Total ;
  kgs:input [ kgs:role "member" ; kgs:relation ex:score ; kgs:aggregate kgs:All ] .
ex:r-max a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Maximum ;
  kgs:input [ kgs:role "member" ; kgs:relation ex:score ; kgs:aggregate kgs:All ] .
ex:r-earliest a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Earliest ;
  kgs:input [ kgs:role "member" ; kgs:relation ex:award ; kgs:aggregate kgs:All ] .
ex:director rdfs:label "director"@en, "режиссёр"@ru .
ex:spouse rdfs:label "spouse"@en, "супруг"@ru .
ex:released rdfs:label "release date"@en, "дата выхода"@ru .
ex:r-age-at-release a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
  kgs:input [ kgs:role "start" ; kgs:relation ex:born ; kgs:via ex:director ] , [ kgs:role "end" ; kgs:relation ex:released ] .
ex:r-older a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
  kgs:question "How many full years older is {entity} than the {bridge}?"@en,
               "На сколько полных лет {entity} старше, чем {bridge} {entity:gent}?"@ru ;
  kgs:input [ kgs:role "start" ; kgs:relation ex:born ] , [ kgs:role "end" ; kgs:relation ex:born ; kgs:via ex:spouse ] .
ex:r-dow-director a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Calendar ; kgs:operation kgs:DayOfWeek ;
  kgs:input [ kgs:role "date" ; kgs:relation ex:born ; kgs:via ex:director ] .
"""
FILMS = ["The Quiet Harbour", "Northern Lights Over Ozyorsk", "A Winter in Vetluga", "The Glass Orchard",
         "Seven Bridges", "The Salt Road", "Paper Cranes", "The Last Ferry", "Birch and Stone", "The Long Summer",
         "Island of Clocks", "The Red Lantern Inn"]
FILMS_RU = ["Тихая гавань", "Северное сияние над Озёрском", "Зима в Ветлуге", "Стеклянный сад", "Семь мостов",
            "Соляной путь", "Бумажные журавли", "Последний паром", "Берёза и камень", "Долгое лето",
            "Остров часов", "Трактир «Красный фонарь»"]
# (first name, Russian first name, whether the surname takes the feminine -a)
FIRST = [("Anna", "Анна", True), ("Boris", "Борис", False), ("Clara", "Клара", True), ("Denis", "Денис", False),
         ("Elena", "Елена", True), ("Fyodor", "Фёдор", False), ("Galina", "Галина", True), ("Igor", "Игорь", False),
         ("Kira", "Кира", True), ("Lev", "Лев", False)]
LAST = [("Orlov", "Орлов"), ("Petrov", "Петров"), ("Sokolov", "Соколов"), ("Volkov", "Волков"), ("Zaitsev", "Зайцев"),
        ("Morozov", "Морозов")]
TOWNS = ["Zelenoborsk", "Ozyorsk", "Belogorsk", "Sosnovka", "Svetlogorsk", "Verkhnekamsk", "Vetluga", "Kamyshin"]
TOWNS_RU = ["Зеленоборск", "Озёрск", "Белогорск", "Сосновка", "Светлогорск", "Верхнекамск", "Ветлуга", "Камышин"]


def _facts(rng: random.Random) -> str:
    """People with birth and death dates (some as FB15k-237's decimal years), heights, scores,
    award years and languages; towns with populations and areas. Invented names."""
    lines = ['@prefix ex: <http://lib.example/> .', '@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .',
             '@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .']
    for lang_code in ("English", "German", "French", "Spanish"):
        lines.append(f'ex:lang-{lang_code} rdfs:label "{lang_code}"@en .')
    lines.append('ex:Town rdfs:label "town"@en, "город"@ru .')
    for i, ((first, first_ru, feminine), (last, last_ru)) in enumerate((f, la) for f in FIRST for la in LAST):
        last, last_ru = (last + "a", last_ru + "а") if feminine else (last, last_ru)
        born = dt.date(1850, 1, 1) + dt.timedelta(days=rng.randrange(60_000))
        died = born + dt.timedelta(days=rng.randrange(20 * 365, 90 * 365))
        person = f"ex:p{i}"
        lines.append(f'{person} rdfs:label "{first} {last}"@en, "{first_ru} {last_ru}"@ru ;')
        lines.append(f'  ex:born "{born}"^^xsd:date ; ex:died "{died}"^^xsd:date ;')
        lines.append(f'  ex:bornYear "{born.year + rng.randrange(12) / 12:.8f}"^^xsd:decimal ; ex:diedYear "{died.year}.0"^^xsd:decimal ;')
        lines.append(f'  ex:height "{Decimal(rng.randrange(150, 205)) / 100}"^^xsd:decimal ;')
        for year in rng.sample(range(1950, 2020), rng.randrange(2, 4)):
            lines.append(f'  ex:award "{year}"^^xsd:gYear ;')
        for score in rng.sample(range(10, 100), rng.randrange(2, 4)):
            lines.append(f'  ex:score {score} ;')
        for language in rng.sample(["English", "German", "French", "Spanish"], rng.randrange(1, 4)):
            lines.append(f'  ex:language ex:lang-{language} ;')
        lines[-1] = lines[-1].rstrip(" ;") + " ."
    people = len(FIRST) * len(LAST)
    for i in range(0, people - 1, 2):  # married couples: each the other's spouse
        lines.append(f"ex:p{i} ex:spouse ex:p{i + 1} . ex:p{i + 1} ex:spouse ex:p{i} .")
    for k, (film, film_ru) in enumerate(zip(FILMS, FILMS_RU, strict=True)):
        director = 5 * k
        released = dt.date(1850, 1, 1) + dt.timedelta(days=rng.randrange(60_000, 90_000))
        lines.append(f'ex:f{k} rdfs:label "{film}"@en, "{film_ru}"@ru ; ex:director ex:p{director} ; '
                     f'ex:released "{released}"^^xsd:date .')
    for j, (town, town_ru) in enumerate(zip(TOWNS, TOWNS_RU, strict=True)):
        old = rng.randrange(5_000, 90_000)
        lines.append(f'ex:t{j} a ex:Town ; rdfs:label "{town}"@en, "{town_ru}"@ru ; ex:oldPopulation {old} ; '
                     f'ex:population {old + rng.randrange(-4_000, 9_000)} ; ex:area "{rng.randrange(100, 9_000) / 10}"^^xsd:decimal .')
    return "\n".join(lines)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("library")
    (folder / "rules.ttl").write_text(RULES, encoding="utf-8")
    (folder / "facts.ttl").write_text(_facts(random.Random(7)), encoding="utf-8")
    kg = KnowledgeGraph.load(folder)
    rules = load_rules(kg)
    builder = ScenarioBuilder(kg, rules)
    subgraphs = sample_subgraphs(kg, "rule_application", limit=5_000, per_anchor=100, seed=0)
    scenarios = [s for sg in subgraphs for s in builder.build(sg)]
    items = [make_item(s, lang, DialogueSettings(), seed=0) for s in scenarios for lang in ("en", "ru")]
    rules_graph = rdflib.Graph().parse(data=RULES, format="turtle")
    return rules, items, rules_graph


def test_every_library_operation_makes_items_in_both_languages(library):
    rules, items, _ = library
    made = defaultdict(set)
    for item in items:
        made[rules[item.metadata.rule_iri].operation].add(item.language)
    wanted = {Operation.day_of_week, Operation.century, Operation.decade, Operation.leap_year, Operation.years_between,
              Operation.date_after, Operation.unit_conversion, Operation.ratio, Operation.difference,
              Operation.percent_change, Operation.count, Operation.total, Operation.maximum, Operation.earliest}
    assert {op for op, langs in made.items() if langs == {"en", "ru"}} == wanted
    assert {item.metadata.rule_origin for item in items} == {"library"}


def test_library_golds_match_the_independent_checker(library):
    _, items, rules_graph = library
    wrong = []
    for item in items:
        expected = canonical_gold(expected_item_answer(item, rules_graph), item.answer_format, item.constraints)
        if not check_answer(expected, item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases).correct:
            wrong.append((item.metadata.rule_iri, item.gold, expected, item.metadata.source_triples))
    assert wrong == [], f"{len(wrong)} of {len(items)} disagree, first: {wrong[:2]}"


def test_questions_are_filled_and_say_how_to_answer(library):
    rules, items, _ = library
    for item in items:
        assert not re.search(r"\{\w+(:[\w+]+)?\}", item.question), item.question
        assert item.question.endswith("?")
    by_rule = {(item.metadata.rule_iri.rsplit("-", 1)[1], item.language): item for item in items}
    assert by_rule["century", "en"].format_instruction.startswith("Answer with the number of the century")
    assert by_rule["decade", "ru"].format_instruction.startswith("Ответьте только первым годом десятилетия")
    # the years come without a day: counted as the later year minus the earlier
    assert "the later year minus the earlier" in by_rule["years", "en"].format_instruction
    assert "полных лет" in by_rule["age", "ru"].format_instruction
    assert by_rule["dow", "en"].answer_format is AnswerFormat.one_token
    assert "Monday" in by_rule["dow", "en"].format_instruction and "понедельник" in by_rule["dow", "ru"].format_instruction
    assert "feet" in by_rule["feet", "en"].question and "футах" in by_rule["feet", "ru"].question
    assert "months" in by_rule["after", "en"].question and "месяцев" in by_rule["after", "ru"].question


@pytest.mark.parametrize(("rule", "written"), [
    ("century", {"en": r"\d{4}", "ru": r"\d{4}"}),  # a decimal year as its year: 1912, not 1,912.67
    ("feet", {"en": r"\d[.\d]*\u00a0m", "ru": r"\d[,\d]*\u00a0м"}),  # a conversion says what it converts from
    ("density", {"en": r"[\d,]+(\.\d+)?\u00a0km²", "ru": r"[\d\u00a0]+(,\d+)?\u00a0км²"}),  # a ratio, its denominator's unit
])
def test_an_input_is_said_as_the_rule_reads_it(library, rule, written):
    _, items, _ = library
    chosen = [i for i in items if i.metadata.rule_iri.endswith(rule)]
    assert chosen
    for item in chosen:
        said = [v for v in item.metadata.fact_values if re.fullmatch(written[item.language], v)]
        assert len(said) == 1, item.metadata.fact_values
        assert said[0] in item.transcript


def test_a_century_is_right_in_every_writing_a_reader_uses(library):
    _, items, _ = library
    item = next(i for i in items if i.metadata.rule_iri.endswith("century") and i.gold == "20" and i.language == "ru")
    for answer in ("20", "XX", "XX век"):
        assert check_answer(answer, item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases).correct
    assert not check_answer("19", item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases).correct


def test_an_answer_that_may_be_negative_says_how_a_negative_half_rounds(library):
    _, items, _ = library
    signed = [i for i in items if i.metadata.rule_iri.endswith(("growth", "change"))]
    assert signed
    for item in signed:
        if item.constraints.rounding is not None:
            assert ("away from zero" if item.language == "en" else "дальше от нуля") in item.format_instruction
    # the engine rounds a negative half away from zero, as the instruction says
    change = next(i for i in signed if i.metadata.rule_iri.endswith("change") and i.language == "en")
    assert check_answer("-0.1", AnswerFormat.percent, "-0.1", change.constraints).correct


def test_another_entitys_decimal_year_is_never_a_confusable_turn(tmp_path):
    """A rule reading years says its entity's 1912.67 as 1912; another person's year of birth,
    drawn as a confusable turn from a simple question, would be said as 1,952.25."""
    (tmp_path / "rules.ttl").write_text(RULES, encoding="utf-8")
    (tmp_path / "facts.ttl").write_text(_facts(random.Random(7)), encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path)
    builder = ScenarioBuilder(kg, load_rules(kg))
    scenarios = [s for shape in ("rule_application", "simple")
                 for sg in sample_subgraphs(kg, shape, limit=2_000, per_anchor=100, seed=0) for s in builder.build(sg)]
    century = [s for s in scenarios if s.rule is not None and s.rule.iri.endswith("century")]
    settings = DialogueSettings(confusables=1.0)
    confusable_turns = 0
    for scenario in century[:40]:
        for lang in ("en", "ru"):
            item = make_item(scenario, lang, settings, seed=0, others=scenarios)
            for turn in item.dialogue:
                if turn.kind == "confusable":
                    confusable_turns += 1
                    assert not re.search(r"\d[.,]\d", turn.text), turn.text
    assert confusable_turns > 0


@pytest.mark.parametrize(("rule", "message"), [
    ('kgs:kind kgs:Calendar ; kgs:operation kgs:Century ; kgs:input [ kgs:role "date" ; kgs:relation ex:nowhere ]',
     "its 'date' relation <http://lib.example/nowhere> is in no triple of the graph"),
    ('kgs:kind kgs:Calendar ; kgs:operation kgs:DayOfWeek ; kgs:input [ kgs:role "date" ; kgs:relation ex:language ]',
     "its 'date' relation <http://lib.example/language> has IRIs values, not dates"),
    ('kgs:kind kgs:Conversion ; kgs:factor 2 ; kgs:sourceUnit "furlong" ; kgs:unit "ft" ; '
     'kgs:input [ kgs:role "amount" ; kgs:relation ex:height ]', "unit 'furlong' is not one kgsynth knows"),
    ('kgs:kind kgs:Calendar ; kgs:operation kgs:DayOfWeek ; kgs:input [ kgs:role "date" ; kgs:relation ex:born ; '
     'kgs:via ex:height ]', "its 'date' kgs:via relation <http://lib.example/height> has decimal values, not IRIs (bridges)"),
    ('kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ; '
     'kgs:input [ kgs:role "start" ; kgs:relation ex:born ; kgs:via ex:spouse ] , '
     '[ kgs:role "end" ; kgs:relation ex:died ; kgs:via ex:director ]',
     "its inputs go through 2 kgs:via relations (http://lib.example/director, http://lib.example/spouse); "
     "a rule reads one bridge"),
])
def test_a_rule_the_graph_cannot_answer_is_one_line_naming_it(tmp_path, capsys, rule, message):
    (tmp_path / "facts.ttl").write_text(_facts(random.Random(7)), encoding="utf-8")
    (tmp_path / "rule.ttl").write_text(RULES.split("ex:r-dow", 1)[0] + f"ex:r-bad a kgs:Rule ; {rule} .", encoding="utf-8")
    code = run(["synth", "--graph", str(tmp_path / "facts.ttl"), "--graph", str(tmp_path / "rule.ttl"),
                "--n", "20", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 1 and err == f"error: rule <http://lib.example/r-bad>: {message}" + err.split(message, 1)[1]
    assert len(err.splitlines()) == 1


BRIDGED = ("age-at-release", "older", "dow-director")


def test_an_input_read_on_a_bridge_describes_the_bridge_and_never_names_it(library):
    """"the date of birth of the director of The Quiet Harbour": the dialogue says who the
    director is and the question only describes them, as a multi-hop question does."""
    _, items, _ = library
    bridged = [i for i in items if i.metadata.rule_iri.endswith(BRIDGED)]
    assert {(i.metadata.rule_iri.rsplit("/r-", 1)[1], i.language) for i in bridged} == {
        (rule, lang) for rule in BRIDGED for lang in ("en", "ru")}
    for item in bridged:
        link, = [t for t in item.metadata.source_triples if "/director>" in t or "/spouse>" in t]
        bridge = link.split()[2]
        assert any(t.startswith(bridge) for t in item.metadata.source_triples)  # a fact read on the bridge
        assert item.metadata.bridged == 1
        names = {"en": _label(bridge, "en"), "ru": _label(bridge, "ru")}
        assert names[item.language] in item.transcript
        surname = names[item.language].split()[1][:4]  # any case of «Орлова»
        assert surname not in item.question, item.question
        if not item.metadata.rule_iri.endswith("older"):
            assert ("of the director of" if item.language == "en" else "режиссёра") in item.question


def _label(iri: str, lang: str) -> str:
    index = int(iri.rsplit("/p", 1)[1].rstrip(">"))
    (first, first_ru, feminine), (last, last_ru) = FIRST[index // len(LAST)], LAST[index % len(LAST)]
    return f"{first} {last}{'a' if feminine else ''}" if lang == "en" else f"{first_ru} {last_ru}{'а' if feminine else ''}"


def test_years_older_is_asked_of_the_older_of_a_couple_only(tmp_path):
    """A worked example: Boris Orlov, born 1 June 1957, is 2 full years older than his spouse
    Anna Orlova, born 10 May 1960 (three calendar years, the third not reached by 10 May);
    nothing is asked of Anna, whose spouse's birth is before her own. The Russian names her
    «супруга»: her name says she is a woman."""
    prefixes = "".join(line + "\n" for line in RULES.splitlines() if line.startswith("@prefix"))
    older = "ex:r-older" + RULES.split("ex:r-older", 1)[1].split("ex:r-dow-director", 1)[0]
    rule = prefixes + 'ex:spouse rdfs:label "spouse"@en, "супруг"@ru .\n' + older
    (tmp_path / "rules.ttl").write_text(rule, encoding="utf-8")
    (tmp_path / "facts.ttl").write_text("""@prefix ex: <http://lib.example/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:boris rdfs:label "Boris Orlov"@en, "Борис Орлов"@ru ; ex:born "1957-06-01"^^xsd:date ; ex:spouse ex:anna .
ex:anna rdfs:label "Anna Orlova"@en, "Анна Орлова"@ru ; ex:born "1960-05-10"^^xsd:date ; ex:spouse ex:boris .
""", encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path)
    builder = ScenarioBuilder(kg, load_rules(kg))
    scenarios = [s for sg in sample_subgraphs(kg, "rule_application", limit=10, seed=0) for s in builder.build(sg)]
    assert {(s.entity.label, s.gold["en"]) for s in scenarios} == {("Boris Orlov", "2")}
    assert scenarios[0].question == {"en": "How many full years older is Boris Orlov than the spouse?",
                                     "ru": "На сколько полных лет Борис Орлов старше, чем супруга Бориса Орлова?"}


def test_a_misstated_year_is_said_as_the_slip_not_as_the_true_year(library):
    """A year read from FB15k-237's 1912.67 is written as the xsd:gYear 1912; its slip
    (1910) must be said as 1910: "the year of birth is 1912, not 1910", never "1912, not 1912"."""
    _, items, _ = library
    scenarios_seen = 0
    for item in items:
        if not item.metadata.rule_iri.endswith(("century", "decade", "years")):
            continue
        slips = [t for t in item.dialogue if t.kind == "misstatement"]
        for turn in item.dialogue:
            if turn.kind == "fact" and (", not " in turn.text or ", а не " in turn.text):
                scenarios_seen += 1
                (fact,) = turn.facts
                value = item.metadata.fact_values[fact]
                assert turn.text.count(value) == 1, turn.text
                assert not any(value in slip.text for slip in slips), [s.text for s in slips]
    assert scenarios_seen > 0


def test_the_topic_is_named_again_after_its_bridges_fact(tmp_path):
    """A worked example: "the year of death of Anthony Newley is 1999", then "the year of birth
    is 1933" gives Newley Joan Collins's birth. A fact of the topic stated after a fact of its
    bridge names the topic again."""
    prefixes = "".join(line + "\n" for line in RULES.splitlines() if line.startswith("@prefix"))
    rule = prefixes + """ex:born rdfs:label "date of birth"@en, "дата рождения"@ru .
ex:died rdfs:label "date of death"@en, "дата смерти"@ru .
ex:spouse rdfs:label "spouse"@en, "супруг"@ru .
ex:r-widow a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
  kgs:input [ kgs:role "start" ; kgs:relation ex:born ] , [ kgs:role "end" ; kgs:relation ex:died ; kgs:via ex:spouse ] .
"""
    (tmp_path / "rules.ttl").write_text(rule, encoding="utf-8")
    (tmp_path / "facts.ttl").write_text("""@prefix ex: <http://lib.example/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:joan rdfs:label "Joan Collins"@en, "Джоан Коллинз"@ru ; ex:born "1933-05-23"^^xsd:date ; ex:spouse ex:anthony .
ex:anthony rdfs:label "Anthony Newley"@en, "Энтони Ньюли"@ru ; ex:died "1999-04-14"^^xsd:date .
""", encoding="utf-8")
    kg = KnowledgeGraph.load(tmp_path)
    builder = ScenarioBuilder(kg, load_rules(kg))
    scenarios = [s for sg in sample_subgraphs(kg, "rule_application", limit=10, seed=0) for s in builder.build(sg)]
    after_bridge = 0
    for scenario in scenarios:
        for lang, seed in ((lang, seed) for lang in ("en", "ru") for seed in range(12)):
            item = make_item(scenario, lang, DialogueSettings(), seed)
            facts = [(t, scenario.facts[t.facts[0]]) for t in item.dialogue if t.kind == "fact" and t.facts]
            for (_, before), (turn, fact) in zip(facts, facts[1:], strict=False):
                if before.subject.value == "http://lib.example/anthony" and fact.subject.value == "http://lib.example/joan":
                    after_bridge += 1
                    assert "Joan Collins" in turn.text or "Джоан Коллинз" in turn.text, item.dialogue
    assert after_bridge
