"""The answer-leak filter on demo items: a question that holds its answer (or a code-like
part of it, or a number or date in another writing) and a bridge whose name holds the
answer are caught with their reasons; comparisons, yes/no items, numbers inside codes and
words that only contain the answer pass. The worked examples are the demo graph's own
labels (data/demo/retail.ttl, payroll.ttl)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from decimal import Decimal

import pytest

from kgsynth.dataset.splits import read_items
from kgsynth.filters import AnswerLeakFilter
from kgsynth.formats import locale
from kgsynth.formats.answers import AnswerFormat
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells, synthesize
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import Item, make_item

EX = "https://kgsynth.example/demo/"
LANGUAGES = ("en", "ru")
SHAPES = ["rule_application", "simple", "set", "conditional", "multihop", "comparison"]


@pytest.fixture(scope="module")
def scenarios(demo_kg):
    # every fact of an anchor, so the worked examples below are sampled whatever else the graph holds
    config = SynthConfig.model_validate({"sampling": {"shapes": SHAPES, "per_anchor": 50}})
    return [s for plan in plan_cells(demo_kg, config, load_rules(demo_kg)) for s in plan.scenarios]


@pytest.fixture(scope="module")
def leak(scenarios) -> AnswerLeakFilter:
    return AnswerLeakFilter.from_scenarios(scenarios)


def _items(scenarios, shape: str, *triples: str, gold: str | None = None) -> dict[str, Item]:
    """Both languages' items of the first ``shape`` scenario whose source triples include
    every one of ``triples`` (and whose English gold is ``gold``, when given)."""
    scenario = next(s for s in scenarios if s.shape.value == shape and all(t in s.source_triples for t in triples)
                    and (gold is None or s.gold["en"] == gold))
    return {lang: make_item(scenario, lang, DialogueSettings(), 0) for lang in LANGUAGES}


def _triple(subject: str, relation: str, obj: str) -> str:
    return f"<{EX}{subject}> <{EX}{relation}> {obj} ."


YEKATERINBURG_OFFICE = _triple("office-granit-stroy-yekaterinburg", "locatedIn", f"<{EX}city-yekaterinburg>")


def test_a_question_that_names_its_answer_is_caught(leak, scenarios):
    # ex:order-057 is labelled "Order ORD-2024-00057" and its order number is "ORD-2024-00057"
    items = _items(scenarios, "simple", _triple("order-057", "orderNumber", '"ORD-2024-00057"'))
    for item in items.values():
        assert leak.reason(item) == "the question contains the answer 'ORD-2024-00057'"


def test_a_code_like_part_of_the_answer_in_the_question_is_caught(leak, scenarios):
    # ex:card-040 is "Rodnik Bank card *9605", its number "2201 **** **** 9605"
    items = _items(scenarios, "simple", _triple("card-040", "cardNumber", '"2201 **** **** 9605"'))
    for item in items.values():
        assert leak.reason(item) == "the question contains '9605' of the answer '2201 **** **** 9605'"


def test_a_bridge_whose_name_holds_the_answer_is_caught_in_both_languages(leak, scenarios):
    items = _items(scenarios, "multihop", YEKATERINBURG_OFFICE, gold="Yekaterinburg")
    assert leak.reason(items["en"]) == "the name 'Granit Stroy office in Yekaterinburg' contains the answer 'Yekaterinburg'"
    # Russian by lemma: «в Екатеринбурге» holds «Екатеринбург»
    assert leak.reason(items["ru"]) == (
        "the name 'Офис «Гранит Строй» в Екатеринбурге' contains the answer 'Екатеринбург'")
    # the names come from the nodes the filter was given; the question itself does not leak
    assert [AnswerLeakFilter().reason(item) for item in items.values()] == [None, None]


def test_the_answers_own_name_and_names_without_it_pass(leak, scenarios):
    # the Granit-Stroy office -> its city Yekaterinburg -> the country Russia: the country's
    # own label is the gold, the office's and the city's do not hold it
    items = _items(scenarios, "multihop", _triple("office-granit-stroy-yekaterinburg", "locatedIn", f"<{EX}city-yekaterinburg>"),
                   _triple("city-yekaterinburg", "country", f"<{EX}country-ru>"))
    assert [item.gold for item in items.values()] == ["Russia", "Россия"]
    assert [leak.reason(item) for item in items.values()] == [None, None]


def test_a_declined_russian_answer_in_the_question_is_caught(scenarios):
    ru = _items(scenarios, "multihop", YEKATERINBURG_OFFICE, gold="Yekaterinburg")["ru"]
    asked = ru.model_copy(update={"question": "Какой город у офиса в Екатеринбурге?"})
    assert AnswerLeakFilter().reason(asked) == "the question contains the answer 'Екатеринбург'"


def test_a_word_that_only_contains_the_answer_is_no_leak(scenarios):
    en = _items(scenarios, "multihop", YEKATERINBURG_OFFICE, gold="Yekaterinburg")["en"]
    for question in ("Which city is New-Yekaterinburg in?", "What is the Yekaterinburgskaya office?"):
        assert AnswerLeakFilter().reason(en.model_copy(update={"question": question})) is None, question


def _number_item(scenarios, language: str = "en") -> Item:
    # Rassvet Foods has 5041 staff
    return _items(scenarios, "simple", _triple("employer-rassvet-foods", "staffCount",
                                               '"5041"^^<http://www.w3.org/2001/XMLSchema#integer>'))[language]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_number_answer_is_found_in_any_writing(scenarios, language):
    item = _number_item(scenarios, language)
    assert item.gold == "5041" and AnswerLeakFilter().reason(item) is None
    for written in {locale.format_number(Decimal(5041), language), "5041", "5041.00"}:
        asked = item.model_copy(update={"question": f"Does the company with {written} people have staff of its own?"})
        assert AnswerLeakFilter().reason(asked) == "the question contains the answer '5041'", written
    other = item.model_copy(update={"question": f"Is it {locale.format_number(Decimal(5042), language)} people?"})
    assert AnswerLeakFilter().reason(other) is None


def test_a_number_inside_a_code_is_not_the_answer(scenarios):
    item = _number_item(scenarios)
    for gold in ("57", "2024"):
        asked = item.model_copy(update={"gold": gold, "question": "How many items does Order ORD-2024-00057 hold?"})
        assert AnswerLeakFilter().reason(asked) is None, gold


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_date_answer_is_found_in_any_writing(scenarios, language):
    # Granit Stroy was founded on 1995-04-05
    item = _items(scenarios, "simple", _triple("employer-granit-stroy", "foundedDate",
                                               '"1995-04-05"^^<http://www.w3.org/2001/XMLSchema#date>'))[language]
    assert item.gold == "1995-04-05" and AnswerLeakFilter().reason(item) is None
    for day in (dt.date(1995, 4, 5), dt.date(1995, 4, 6)):
        asked = item.model_copy(update={"question": f"{item.question} ({locale.format_date(day, language)})"})
        expected = "the question contains the answer '1995-04-05'" if day.day == 5 else None
        assert AnswerLeakFilter().reason(asked) == expected, asked.question


def test_comparisons_and_yes_no_items_are_out_of_scope(leak, scenarios):
    comparisons = list(itertools.islice((make_item(s, lang, DialogueSettings(), 0)
                                         for s in scenarios if s.shape.value == "comparison" for lang in LANGUAGES), 20))
    assert any(str(i.gold) in i.question for i in comparisons)  # "Which has the greater ...: A or B?" names the gold
    assert [leak.reason(i) for i in comparisons] == [None] * len(comparisons)
    yes_no = next(make_item(s, "en", DialogueSettings(), 0) for s in scenarios if s.answer_format is AnswerFormat.yes_no)
    assert leak.reason(yes_no.model_copy(update={"question": f"{yes_no.question} Say {yes_no.gold}."})) is None


def test_a_one_letter_answer_is_not_looked_for(scenarios):
    en = _number_item(scenarios).model_copy(update={"answer_format": AnswerFormat.short_text, "gold": "A"})
    assert AnswerLeakFilter().reason(en.model_copy(update={"question": "Which class is a booking of a hotel in?"})) is None
    assert AnswerLeakFilter().reason(en.model_copy(update={"gold": "A1", "question": "Is it class A1?"})) == (
        "the question contains the answer 'A1'")


# the anchors of the worked examples: the order and the card themselves, and the departments
# in the Yekaterinburg office (department -> office -> city)
WORKED_ANCHORS = (f"SELECT ?a WHERE {{ {{ VALUES ?a {{ <{EX}order-057> <{EX}card-040> }} }} UNION "
                  f"{{ ?a <{EX}office> <{EX}office-granit-stroy-yekaterinburg> }} }}")


@pytest.mark.slow  # about 45 s (every anchor's multi-hop scenarios); the anchors case below checks the same in 1 s
def test_a_real_run_records_the_leaks_and_keeps_none(demo_kg, tmp_path):
    """Every scenario of the simple and multi-hop cells is worded (a pool far above a cell's
    share): the worked examples above are rejected with their reasons, and kept out."""
    _real_run_records_the_leaks_and_keeps_none(demo_kg, tmp_path, None)


def test_a_real_run_around_the_worked_examples_records_the_leaks_and_keeps_none(demo_kg, tmp_path):
    """The same run around the worked examples' anchors alone (every scenario of theirs is worded)."""
    _real_run_records_the_leaks_and_keeps_none(demo_kg, tmp_path, WORKED_ANCHORS)


def _real_run_records_the_leaks_and_keeps_none(demo_kg, tmp_path, anchors: str | None) -> None:
    config = SynthConfig.model_validate({
        "sampling": {"shapes": ["simple", "multihop"], "per_anchor": 50, "anchors_query": anchors},
        "dataset": {"n": 2, "formats": ["one_token", "short_text"]},
        "filters": {"top_n_pool": 1000},
    })
    result = synthesize(demo_kg, config, tmp_path / "out")
    rejections = [json.loads(line) for line in (tmp_path / "out" / "rejections.jsonl").open(encoding="utf-8")]
    leaks = {(r["language"], r["reason"]) for r in rejections if r["filter"] == "answer_leak"}
    assert {
        ("en", "the question contains the answer 'ORD-2024-00057'"),
        ("ru", "the question contains the answer 'ORD-2024-00057'"),
        ("en", "the question contains '9605' of the answer '2201 **** **** 9605'"),
        ("en", "the name 'Granit Stroy office in Yekaterinburg' contains the answer 'Yekaterinburg'"),
        ("ru", "the name 'Офис «Гранит Строй» в Екатеринбурге' contains the answer 'Екатеринбург'"),
    } <= leaks
    rejected = {r["scenario_id"] for r in rejections if r["filter"] == "answer_leak"}
    items = list(read_items(tmp_path / "out" / "items.jsonl"))
    assert len(items) == result.items > 0
    assert not rejected & {i.metadata.scenario_id for i in items}
    assert result.manifest["filters"]["answer_leak"]["rejected"] == sum(r["filter"] == "answer_leak" for r in rejections)
