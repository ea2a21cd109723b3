"""bench/artefacts.py: each detector of issue 12's artefact patterns on hand-made items,
a positive and a negative control each (no synthesis; the demo graph gives the labels)."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import DEMO, ROOT

sys.path.insert(0, str(ROOT / "bench"))

import artefacts as A  # noqa: E402

EX = "https://kgsynth.example/demo/"
XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.fixture(scope="module")
def ctx(demo_kg) -> A.Context:
    info = A.GraphInfo.from_kg(demo_kg)
    return A.Context(info, A.LabelSlots(info))


def triple(s: str, p: str, o: str, datatype: str | None = None) -> str:
    """One N-Triples line: ``o`` is a demo IRI's local name, or a literal when datatype is given."""
    obj = f'"{o}"^^<{XSD}{datatype}>' if datatype else f"<{EX}{o}>"
    return f"<{EX}{s}> <{EX}{p}> {obj} ."


def item(lang="en", question="Q?", turns=(), gold="x", aliases=(), fmt="short_text", instruction="Answer.",
         triples=(), values=(), **meta) -> A.Item:
    """An item dict as items.jsonl holds one; ``turns`` are (speaker, kind, text[, facts])."""
    dialogue = [{"speaker": t[0], "role": "r", "kind": t[1], "text": t[2], "facts": list(t[3]) if len(t) > 3 else []}
                for t in turns]
    raw = {
        "id": "x", "language": lang, "dialogue": dialogue, "question": question, "format_instruction": instruction,
        "answer_format": fmt, "constraints": {}, "gold": gold, "gold_aliases": list(aliases),
        "metadata": {"shape": "simple", "difficulty": "easy", "rule_iri": None, "fact_values": list(values),
                     "source_triples": list(triples), **meta},
    }
    return A.Item.of(raw)


# ------------------------------------------------------------------- label classification
@pytest.mark.parametrize("label, noun", [
    ("trip budget", True), ("date of birth", True), ("sales area in square metres", True),
    ("UTC offset in hours", True),
    ("located in", False), ("issued by", False), ("in country", False), ("works in", False),
    ("based at office", False), ("part of trip", False), ("has a swimming pool", False),
])
def test_english_label_is_noun(label, noun):
    assert A.english_label_is_noun(label) is noun


@pytest.mark.parametrize("label, noun", [
    ("дата рождения", True), ("ИНН", True), ("месячный лимит трат", True),
    ("находится в городе", False), ("выпущена банком", False), ("виновен страхователь", False), ("есть бассейн", False),
])
def test_russian_label_is_noun(label, noun):
    assert A.ru_label_is_noun(label) is noun


def test_boolean_relations_are_never_nouns(ctx):
    assert not ctx.info.is_noun_label(EX + "taxResident", "en") and not ctx.info.is_noun_label(EX + "taxResident", "ru")
    assert ctx.info.is_noun_label(EX + "tripBudget", "en")


# ------------------------------------------------------------------- relation label as a noun
@pytest.mark.parametrize("question", [
    "What is the located in of the based at office of Accounting department of Oblako Soft?",
    "List everything whose ordered by is Alexei Bogdanov.",
    "Which one has category home goods and article number 23395687?",
    "Through which intermediary is IT department of Vostok Logistics linked by head to something?",
])
def test_label_as_noun_question_english(ctx, question):
    assert A.detect_label_as_noun_question(item(question=question), ctx)


@pytest.mark.parametrize("question", [
    "What is the trip budget of Trip TR-0026?",
    "List everything whose destination is Almaty.",
    "In which city is the Granit Stroy office in Yekaterinburg located?",
    "Which bank issued Berezka Bank card *3318?",
    "Which employee is the head of IT department of Vostok Logistics and has Head of department as its job title?",
])
def test_label_as_noun_question_english_negative(ctx, question):
    assert not A.detect_label_as_noun_question(item(question=question), ctx)


def test_label_as_noun_question_russian(ctx):
    for question in (
        "Что указано как «исходный заказ» у «Возврат R-0016»?",
        "Возьмите то, у чего «годовой доход» — «1764000»; далее по цепочке. Что получится в конце?",
        "Через что Егор Богданов связан с Новосибирском?",
    ):
        assert A.detect_label_as_noun_question(item("ru", question), ctx), question
    for question in ("Какой исходный заказ у возврата R-0016?", "В каком городе находится офис «Гранит Строй»?"):
        assert not A.detect_label_as_noun_question(item("ru", question), ctx), question


def test_label_as_noun_fact(ctx):
    bad = item(turns=[("Jack", "fact", "For Order ORD-2024-00046, the ordered by is Marina Gerasimova.", [0])])
    good = item(turns=[("Jack", "fact", "Order ORD-2024-00046 was placed by Marina Gerasimova.", [0]),
                       ("Ann", "fact", "The trip budget is 125,000.", [1])])
    assert A.detect_label_as_noun_fact(bad, ctx) and not A.detect_label_as_noun_fact(good, ctx)
    ru_bad = item("ru", turns=[("Иван", "fact", "По «Олег Козлов»: работает в отделе — Отдел маркетинга.", [0])])
    ru_good = item("ru", turns=[("Иван", "fact", "Олег Козлов работает в отделе маркетинга.", [0])])
    assert A.detect_label_as_noun_fact(ru_bad, ctx) and not A.detect_label_as_noun_fact(ru_good, ctx)


def test_wh_question_answered_yes_no(ctx):
    assert A.detect_wh_yes_no(item(question="What is the swimming pool of the hotel of Booking BK-1?", gold="yes",
                                   fmt="yes_no"), ctx)
    assert A.detect_wh_yes_no(item("ru", "Какой бассейн у гостиницы?", gold="yes", fmt="yes_no"), ctx)
    assert not A.detect_wh_yes_no(item(question="Does the hotel of Booking BK-1 have a pool?", gold="yes",
                                       fmt="yes_no"), ctx)
    assert not A.detect_wh_yes_no(item(question="What is the trip budget of Trip TR-0026?", gold="125000"), ctx)


def test_plural_label_with_is(ctx):
    assert A.detect_en_plural_is(item(turns=[("A", "fact", "The trip expenses is 207,900.", [0])]), ctx)
    assert not A.detect_en_plural_is(item(turns=[("A", "fact", "The trip expenses are 207,900.", [0])]), ctx)
    assert not A.detect_en_plural_is(item(turns=[("A", "fact", "The trip budget is 207,900.", [0])]), ctx)


# ------------------------------------------------------------------- dialogue prose
SALARY = [triple("emp-005", "monthlySalary", "255500", "decimal")]


def test_value_as_topic(ctx):
    separate = item(turns=[("A", "fact", "Can we look at 255500 today?"),
                           ("B", "fact", "For Oleg Kozlov, the monthly salary is 255,500.", [0])],
                    triples=SALARY, values=["255,500"])
    merged = item(turns=[("A", "fact", "Next on my list is 255500. For Oleg Kozlov, the monthly salary is 255,500.",
                           [0])], triples=SALARY, values=["255,500"])
    named = item(turns=[("A", "fact", "Let's go over Oleg Kozlov."),
                        ("B", "fact", "His monthly salary is 255,500.", [0])], triples=SALARY, values=["255,500"])
    corrected = item(turns=[("A", "misstatement", "His monthly salary is 255,500."),
                            ("A", "fact", "Sorry: it is 242,725, not 255,500.", [0])],
                     triples=[triple("emp-005", "monthlySalary", "242725", "decimal")], values=["242,725"])
    assert A.detect_value_as_topic(separate, ctx) and A.detect_value_as_topic(merged, ctx)
    assert not A.detect_value_as_topic(named, ctx) and not A.detect_value_as_topic(corrected, ctx)


def test_yes_no_value(ctx):
    for lang, text in (("en", "The policyholder at fault is yes."), ("en", "Just so you know, tax resident: no."),
                       ("ru", "Виновен страхователь — да."), ("ru", "Поправка: налоговый резидент на самом деле нет.")):
        assert A.detect_yes_no_value(item(lang, turns=[("A", "fact", text, [0])]), ctx), text
    for lang, kind, text in (("en", "clarify_a", "Yes, it was confirmed this week."),
                             ("en", "fact", "The policyholder was at fault."),
                             ("ru", "fact", "Павел не является налоговым резидентом."),
                             ("en", "fact", "There is no pool at the hotel.")):
        assert not A.detect_yes_no_value(item(lang, turns=[("A", kind, text, [0])]), ctx), text


EMPLOYEE = [triple("emp-001", "monthlySalary", "100000", "decimal")]  # Boris Pavlov / Борис Павлов
TRIP = [triple("trip-019", "tripBudget", "125000", "decimal")]  # Trip TR-0019 / Поездка TR-0019


def test_person_called_it(ctx):
    assert A.detect_person_it(item(turns=[("A", "fact", "I have a question about Boris Pavlov — it's an employee.")],
                                   triples=EMPLOYEE), ctx)
    assert A.detect_person_it(item("ru", turns=[("A", "fact", "Для контекста: речь про объект типа «сотрудник».")],
                                   triples=EMPLOYEE), ctx)
    assert not A.detect_person_it(item(turns=[("A", "fact", "Trip TR-0019 — it's a trip.")], triples=TRIP), ctx)
    assert not A.detect_person_it(item(turns=[("A", "fact", "Boris Pavlov is an employee; he joined in 2019.")],
                                       triples=EMPLOYEE), ctx)


def test_introduced_as_it(ctx):
    assert A.detect_introduced_as_it(item(turns=[("A", "fact", "Trip TR-0019 — it's a trip.")], triples=TRIP), ctx)
    assert A.detect_introduced_as_it(item("ru", turns=[("A", "fact", "У меня вопрос по поездке, тип — поездка.")]), ctx)
    assert not A.detect_introduced_as_it(item(turns=[("A", "fact", "Let's go over Trip TR-0019.")], triples=TRIP), ctx)


def test_class_restated(ctx):
    assert A.detect_class_restated(item(turns=[("A", "fact", "Trip TR-0019 — it's a trip.")], triples=TRIP), ctx)
    assert A.detect_class_restated(item("ru", turns=[("A", "fact", "Разберём поездку «Поездка TR-0019».")],
                                        triples=TRIP), ctx)
    # "trip" inside the relation label "trip budget" does not restate the class
    assert not A.detect_class_restated(item(turns=[("A", "fact", "For Trip TR-0019, the trip budget is 125,000.")],
                                            triples=TRIP), ctx)
    person = item(turns=[("A", "fact", "Boris Pavlov is an employee.")], triples=EMPLOYEE)
    assert not A.detect_class_restated(person, ctx)


def test_correction_before_intro(ctx):
    intro = ("B", "fact", "Let's go over Trip TR-0019.")
    slip = ("A", "misstatement", "The trip budget is 120,000.")
    fix = ("A", "fact", "Sorry, the trip budget is 125,000, not 120,000.", [0])
    early, late = item(turns=[slip, intro, fix]), item(turns=[intro, slip, fix])
    assert A.detect_correction_before_intro(early, ctx) == ["re-introduced after the slip"]
    assert not A.detect_correction_before_intro(late, ctx)
    unnamed = item(turns=[("A", "misstatement", "The trip budget is 120,000."),
                          ("A", "fact", "Sorry, the trip budget of Trip TR-0019 is 125,000, not 120,000.", [0])],
                   triples=TRIP)
    named = item(turns=[("A", "misstatement", "The trip budget of Trip TR-0019 is 120,000."),
                        ("A", "fact", "Sorry, it is 125,000, not 120,000.", [0])], triples=TRIP)
    assert A.detect_correction_before_intro(unnamed, ctx) == ["the slip names no entity"]
    assert A.detect_correction_before_intro(named, ctx) == ["the slip names the entity first"]


def test_same_speaker_and_line_twice(ctx):
    pen = "Let me grab a pen."
    twice = item(turns=[("A", "noise", pen), ("A", "fact", "Hi."), ("B", "noise", pen)])
    once = item(turns=[("A", "noise", "Let me grab a pen."), ("B", "fact", "Hi."), ("A", "ack", "Got it.")])
    assert A.detect_same_speaker(twice, ctx) == ["noise->fact"] and not A.detect_same_speaker(once, ctx)
    assert A.detect_line_twice(twice, ctx) and not A.detect_line_twice(once, ctx)
    pool = A._noise_pool([twice, once])["count"]["en"]
    assert pool == {"distinct": 1, "max": 3, "most_frequent": pen, "dialogues_with_a_noise_line_twice": 1}


# ------------------------------------------------------------------- Russian morphology
def test_ru_name_nominative(ctx):
    for text in ("У меня вопрос по «Денис Сорокин».", "Что касается «Виктор Соболев», город — Москва.",
                 "Давай разберём «Ксения Воробьёва».", "Посмотрим сегодня Денис Сорокин?"):
        assert A.detect_ru_name_nominative(item("ru", turns=[("A", "fact", text)]), ctx), text
    for text in ("Следующий пункт — «Денис Сорокин».", "У меня вопрос по Денису Сорокину.",
                 "Денис Сорокин работает в отделе кадров.", "Какой кешбэк получит покупатель «Денис Сорокин»?",
                 "Какой кешбэк за год получит Денис Сорокин?"):
        assert not A.detect_ru_name_nominative(item("ru", turns=[("A", "fact", text)]), ctx), text
    assert not A.detect_ru_name_nominative(item("en", turns=[("A", "fact", "по «Денис Сорокин»")]), ctx)
    # "Дмитрия Соболева" is also a (rare) feminine nominative, but reads first as a masculine genitive
    assert not A.detect_ru_name_nominative(item("ru", turns=[("A", "fact", "Давай разберём Дмитрия Соболева.")]), ctx)


def test_ru_label_nominative(ctx):
    assert A.detect_ru_label_nominative(item("ru", "Сколько выплатят по «Полис KS-2024-00061»?"), ctx)
    assert A.detect_ru_label_nominative(item("ru", "Сколько дней до «Поездка TR-0003»?"), ctx)
    for question in ("Сколько выплатят по полису KS-2024-00061?", "Давай разберём «Заказ ORD-2024-00001».",
                     "Следующий пункт — «Поездка TR-0003»."):
        assert not A.detect_ru_label_nominative(item("ru", question), ctx), question


def test_ru_reask_nominative(ctx):
    assert A.detect_ru_reask_nominative(item("ru", turns=[("A", "reask", "Повтори, пожалуйста, дата выезда?")]), ctx)
    for text in ("Повтори, пожалуйста, дату выезда?", "Напомни, пожалуйста, какая там дата выезда?",
                 "Повтори, пожалуйста, тариф?"):
        assert not A.detect_ru_reask_nominative(item("ru", turns=[("A", "reask", text)]), ctx), text


def test_ru_gender(ctx):
    assert A.detect_ru_gender(item("ru", "Через что «Ксения Воробьёва» связан с Москвой?"), ctx)
    assert not A.detect_ru_gender(item("ru", "Через что «Ксения Воробьёва» связана с Москвой?"), ctx)
    assert not A.detect_ru_gender(item("ru", "Через что «Денис Сорокин» связан с Москвой?"), ctx)


# ------------------------------------------------------------------- leaks and duplicates
def test_leak_question(ctx):
    order = [triple("order-057", "orderNumber", "ORD-2024-00057", "string")]
    assert A.detect_leak_question(item(question="What is the order number of Order ORD-2024-00057?",
                                       gold="ORD-2024-00057", triples=order), ctx)
    assert not A.detect_leak_question(item(question="What is the order number of Order ORD-2024-00057?",
                                           gold="ORD-2024-00058", triples=order), ctx)
    # Russian in another case: "в Москве" gives away "Москва"
    assert A.detect_leak_question(item("ru", "Где живёт сотрудник офиса в Москве?", gold="Москва"), ctx)
    # nested guillemets: the city inside a named office gives the answer away, it is not an option
    office = [triple("holder-037", "livesIn", "city-moscow"),
              triple("office-mayak-media-moscow", "locatedIn", "city-moscow")]
    question = ("Что является «город проживания» для «Виктория Белова» и «находится в городе» для "
                "«Офис «Маяк Медиа» в Москве»?")
    assert A.detect_leak_question(item("ru", question, gold="Москва", triples=office), ctx)
    # a choice between named options is not a leak
    choice = [triple("claim-015", "deductible", "10000", "decimal"),
              triple("claim-034", "deductible", "50000", "decimal")]
    assert not A.detect_leak_question(item(question="Which has the greater deductible: Claim CL-0015 or Claim CL-0034?",
                                           gold="Claim CL-0034", triples=choice), ctx)
    # yes/no golds are skipped
    assert not A.detect_leak_question(item(question="Is it yes?", gold="yes", fmt="yes_no"), ctx)


def test_leak_partial(ctx):
    card = item(question="What is the card number of Rodnik Bank card *9605?", gold="2201 **** **** 9605")
    assert A.detect_leak_partial(card, ctx) == ["9605"]
    assert not A.detect_leak_partial(item(question="What is the card number of Rodnik Bank card *9605?",
                                          gold="2201 **** **** 1111"), ctx)


def test_leak_bridge(ctx):
    chain = [triple("dept-granit-stroy-it", "office", "office-granit-stroy-yekaterinburg"),
             triple("office-granit-stroy-yekaterinburg", "locatedIn", "city-yekaterinburg")]
    turns = [("A", "fact", "The IT department of Granit Stroy sits in Granit Stroy office in Yekaterinburg.", [0])]
    assert A.detect_leak_bridge(item(question="In which city does the IT department of Granit Stroy sit?",
                                     gold="Yekaterinburg", turns=turns, triples=chain), ctx)
    assert not A.detect_leak_bridge(item(question="In which city does the IT department of Granit Stroy sit?",
                                         gold="Moscow", turns=turns, triples=chain), ctx)


def test_duplicates():
    a, b = item(question="What is X?", gold="1"), item(question="what is  X?", gold="1", difficulty="hard")
    c, d = item("ru", question="What is X?", gold="1"), item(question="What is X?", gold="2")
    assert A.duplicate_ids([a, b, c, d]) == {1: 0}


# ------------------------------------------------------------------- ambiguity
def bonus_item(total: str, gold: str, instruction: str = "Answer with a number, rounded to whole units.") -> A.Item:
    return item(question="How many bonus points does Order ORD-2024-00057 earn?", gold=gold, fmt="number",
                instruction=instruction, triples=[triple("order-057", "orderTotal", total, "decimal")],
                rule_iri=EX + "rule-bonus-points", shape="rule_application")


def test_tie_rounding(ctx):
    assert A.tie_eligible(bonus_item("3290", "165"), ctx)
    assert A.detect_tie_rounding(bonus_item("3290", "165"), ctx) == "164.5 -> 165"
    assert not A.detect_tie_rounding(bonus_item("3300", "165"), ctx)
    assert not A.detect_tie_rounding(bonus_item("3290", "165", "Answer with a number, rounded to whole units, "
                                                              "halves rounded up."), ctx)
    assert not A.tie_eligible(bonus_item("3290", "5"), ctx)  # a gold the rule does not give (e.g. its rate)


def test_class_short_forms(ctx):
    power = {"question": "Which engine power class does Volkswagen Polo X970TP 52 belong to?"}
    assert A.detect_class_short_forms(item(gold="power class B", **power), ctx) == "power class B"
    assert A.class_eligible(item(gold="power class B", **power), ctx)
    assert not A.detect_class_short_forms(item(gold="power class B", aliases=["B", "class B"], **power), ctx)
    listed = "Answer with one of: power class A, power class B, power class C, power class D."
    assert not A.detect_class_short_forms(item(gold="power class B", instruction=listed, **power), ctx)
    assert not A.detect_class_short_forms(item(gold="silver"), ctx)  # one word: no shorter writing


def test_day_count(ctx):
    trip = {"rule_iri": EX + "rule-trip-length", "shape": "rule_application"}
    assert A.detect_day_count(item(question="How many days does Trip TR-0021 last?", **trip), ctx)
    assert not A.detect_day_count(item(question="How many days does Trip TR-0021 last?",
                                       instruction="Count both the first and the last day (inclusive).", **trip), ctx)
    nights = {"rule_iri": EX + "rule-stay-nights", "shape": "rule_application"}
    assert not A.day_count_eligible(item(question="How many nights does Booking BK-1 cover?", **nights), ctx)


def test_set_separator(ctx):
    turns = [("A", "fact", "The purchase this month is 14,317.82.", [0]), ("A", "fact", "Another one: 16,711.", [1])]
    commas = "Answer with the list of items only, separated by commas."
    assert A.detect_set_separator(item(gold="14317.82; 16711", fmt="set", instruction=commas, turns=turns), ctx)
    assert not A.detect_set_separator(item(gold="14317.82; 16711", fmt="set", turns=turns,
                                           instruction="Answer with the items separated by semicolons."), ctx)
    assert not A.detect_set_separator(item(gold="Trip TR-0012; Trip TR-0025", fmt="set", instruction=commas), ctx)


def test_correction_then_more(ctx):
    purchases = [triple("card-051", "purchaseAmount", "6747", "decimal"),
                 triple("card-051", "purchaseAmount", "8589", "decimal")]
    values = ["6,747", "8,589"]
    flipped = item(turns=[("A", "misstatement", "The purchase this month is 7,422."),
                          ("A", "fact", "Correction — it is actually 6,747, not 7,422. Also another purchase, 8,589.",
                           [0, 1])],
                   triples=purchases, values=values)
    apart = item(turns=[("A", "fact", "A purchase this month is 8,589.", [1]),
                        ("A", "misstatement", "The purchase this month is 7,422."),
                        ("A", "fact", "Correction — it is actually 6,747, not 7,422.", [0])],
                 triples=purchases, values=values)
    assert A.detect_correction_then_more(flipped, ctx) and not A.detect_correction_then_more(apart, ctx)


def test_rule_given_away(ctx):
    assert A.detect_rule_given_away(item(question="Which rate, in percent, applies to Claim CL-0010 under the rule "
                                                  "“payout by fault”?"), ctx)
    assert A.detect_rule_given_away(item("ru", "Какая ставка применяется к «Бронирование BK-1»?"), ctx)
    assert not A.detect_rule_given_away(item(question="How much will be reimbursed on Claim CL-0047?"), ctx)
    assert not A.detect_rule_given_away(item(question="Does Order ORD-2025-00064 qualify for free delivery?"), ctx)
    rate = item(question="What share of the claim is paid for Claim CL-0010?", gold="50", fmt="percent",
                rule_iri=EX + "rule-fault-payout")
    assert A.detect_rule_given_away(rate, ctx) == ["gold is the rule's rate"]


# ------------------------------------------------------------------- the script
def test_main_writes_a_table_and_json(tmp_path, capsys):
    rows = [item(question="What is the located in of Granit Stroy office in Yekaterinburg?", gold="Yekaterinburg").raw,
            item("ru", "Что указано как «исходный заказ» у «Возврат R-0016»?", gold="Заказ ORD-2025-00060").raw]
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    assert A.main([str(tmp_path), "--graph", str(DEMO), "--json", str(tmp_path / "out.json")]) == 0
    table = capsys.readouterr().out
    assert table.count("\n| ") == len(A.ROWS) + 2 and "2 items (1 en, 1 ru)" in table
    result = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert result["rows"]["label_as_noun_question"]["count"] == {"en": 1, "ru": 1, "all": 2}
    assert result["relation_labels"]["en"]["located in"] == "not a noun"
