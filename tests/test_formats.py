"""Answer formats: canonical golds, the strict two-level checker, and format instructions."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kgsynth.formats.answers import (
    AnswerCheck,
    AnswerFormat,
    Choices,
    Constraints,
    canonical_gold,
    check_answer,
    class_aliases,
    format_instruction,
    normalize_text,
    parse_number,
)
from kgsynth.formats.locale import NBSP, format_number

F = AnswerFormat
NNBSP, THIN = "\u202f", "\u2009"


def verdict(check: AnswerCheck) -> tuple[bool, bool, bool, str | None]:
    return check.syntactic_ok, check.value_matches, check.correct, check.value


OK = (True, True, True)  # syntactic_ok, value_matches, correct
FORMAT_ONLY = (False, True, False)  # a format violation carrying the right value
WRONG = (True, False, False)  # well formed, wrong value
BOTH = (False, False, False)


# ------------------------------------------------------------------ enum and models


def test_format_values_are_lower_case_names():
    assert [f.value for f in F] == [
        "yes_no", "number", "currency", "percent", "date", "one_token", "short_text", "set",
    ]
    assert F("set") is F.set and F.currency == "currency"


def test_constraints_are_frozen_and_strict():
    c = Constraints(tolerance="0.5", rounding=2, range=("0", "100"), unit="RUB")
    assert c.tolerance == Decimal("0.5") and c.range == (Decimal(0), Decimal(100))
    with pytest.raises(ValidationError):
        c.rounding = 3  # type: ignore[misc]
    for bad in ({"tolrance": 1}, {"tolerance": -1}, {"rounding": -1}, {"max_words": 0}, {"range": (5, 1)}):
        with pytest.raises(ValidationError):
            Constraints(**bad)


def test_answer_check_correct_is_consistent():
    with pytest.raises(ValidationError):
        AnswerCheck(syntactic_ok=False, value_matches=True, correct=True, value="1", reason=None)


# ------------------------------------------------------------------ canonical gold


@pytest.mark.parametrize(
    ("value", "fmt", "constraints", "gold"),
    [
        (True, F.yes_no, Constraints(), "yes"),
        (False, F.yes_no, Constraints(), "no"),
        ("Да", F.yes_no, Constraints(), "yes"),
        (Decimal("15600.00"), F.currency, Constraints(), "15600"),
        (Decimal("15600.00"), F.currency, Constraints(rounding=0), "15600"),
        (Decimal("270.5"), F.currency, Constraints(rounding=2), "270.50"),
        (Decimal("2.345"), F.number, Constraints(rounding=2), "2.35"),  # half-up, not half-even
        (Decimal("2.5"), F.number, Constraints(rounding=0), "3"),
        (Decimal("-0.001"), F.number, Constraints(rounding=2), "0.00"),
        (Decimal("1E+3"), F.number, Constraints(), "1000"),
        (Decimal("1.50E-7"), F.number, Constraints(), "0.00000015"),
        (15600, F.number, Constraints(), "15600"),
        (0.1, F.number, Constraints(), "0.1"),
        (13, F.percent, Constraints(), "13"),
        (dt.date(2026, 1, 5), F.date, Constraints(), "2026-01-05"),
        (dt.datetime(2026, 1, 5, 13, 30), F.date, Constraints(), "2026-01-05"),
        ("2026-01-05", F.date, Constraints(), "2026-01-05"),
        ("  Paris ", F.one_token, Constraints(), "Paris"),
        (" Eiffel Tower", F.short_text, Constraints(), "Eiffel Tower"),
        ({"Paris", " Lyon", "Nice", "Lyon"}, F.set, Constraints(), ["Lyon", "Nice", "Paris"]),
    ],
)
def test_canonical_gold(value, fmt, constraints, gold):
    assert canonical_gold(value, fmt, constraints) == gold


@pytest.mark.parametrize(
    ("value", "fmt", "error"),
    [
        ("maybe", F.yes_no, ValueError),
        (True, F.number, TypeError),
        ("many", F.number, ValueError),
        ("05.01.2026", F.date, ValueError),
        ("Paris", F.set, TypeError),
    ],
)
def test_canonical_gold_rejects(value, fmt, error):
    with pytest.raises(error):
        canonical_gold(value, fmt)


# ------------------------------------------------------------------ common rules


@pytest.mark.parametrize("answer", ["  yes ", "yes.", "yes!", "YES", "Yes.\n", "\tyes!  "])
def test_surrounding_whitespace_one_trailing_stop_and_case_are_ignored(answer):
    assert verdict(check_answer(answer, F.yes_no, "yes"))[:3] == OK


@pytest.mark.parametrize("answer", ["yes..", "yes!!", "yes?"])
def test_only_one_trailing_stop_is_ignored(answer):
    check = check_answer(answer, F.yes_no, "yes")
    assert verdict(check) == (*FORMAT_ONLY, "yes")


@pytest.mark.parametrize("fmt", list(F))
def test_empty_answer_is_a_format_violation(fmt):
    gold = ["a"] if fmt is F.set else {"yes_no": "yes", "date": "2026-01-05"}.get(fmt, "1")
    check = check_answer("  ", fmt, gold)
    assert verdict(check) == (*BOTH, None) and check.reason == "empty answer"


# ------------------------------------------------------------------ yes_no


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("No.", "no", (*OK, "no")),
        ("no", "yes", (*WRONG, "no")),
        ("да", "yes", (*OK, "yes")),
        ("Нет!", "no", (*OK, "no")),
        ("yesterday", "yes", (*BOTH, None)),
        ("nothing", "no", (*BOTH, None)),
        ("Yes, because the rule says so", "yes", (*FORMAT_ONLY, "yes")),
        ("Yes, because the rule says so", "no", (*BOTH, "yes")),
        ("I think the answer is no", "no", (*FORMAT_ONLY, "no")),
        ("Да, конечно", "yes", (*FORMAT_ONLY, "yes")),
        ("yes or no", "yes", (*BOTH, None)),  # both words: nothing extractable
        ("true", "yes", (*BOTH, None)),
    ],
)
def test_yes_no(answer, gold, expected):
    check = check_answer(answer, F.yes_no, gold)
    assert verdict(check) == expected
    assert (check.reason is None) == check.correct


# ------------------------------------------------------------------ numbers


@pytest.mark.parametrize(
    "answer",
    [
        "15,600", "15 600", f"15{NBSP}600", f"15{NNBSP}600", f"15{THIN}600",
        "15600.00", "15600", "15600,00", "15600.", " 15600 ",
    ],
)
def test_currency_spellings_of_the_same_value(answer):
    assert verdict(check_answer(answer, F.currency, "15600")) == (*OK, "15600")


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("15,6", "15.6"),
        ("15.6", "15.6"),
        ("1,234,567", "1234567"),
        ("1 234 567,25", "1234567.25"),
        ("1,234.5", "1234.5"),
        ("-42", "-42"),
        ("\u221242", "-42"),
        ("0,600", "0.6"),  # a grouped number cannot start with 0
        ("15,6000", "15.6"),
        ("007", "7"),
    ],
)
def test_number_grammar(answer, value):
    check = check_answer(answer, F.number, value)
    assert verdict(check) == (*OK, value)
    assert parse_number(answer) == Decimal(value)


@pytest.mark.parametrize(
    "answer", ["1,234,5", "1 234,567 8", "15  600", "12,34,567", "+5", "5.", ".5", "1.234.567", "1e3", "½", "1 000x"]
)
def test_not_numbers(answer):
    assert parse_number(answer) is None


def test_lone_comma_group_reads_as_thousands_first():
    assert parse_number("15,600") == Decimal(15600)
    # ... but Russian writes 15,600 for 15.6: either reading can match the gold
    assert verdict(check_answer("15,600", F.number, "15.6")) == (*OK, "15.6")
    assert verdict(check_answer("15,601", F.number, "15601")) == (*OK, "15601")


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("711", "11", (*WRONG, "711")),
        ("11", "711", (*WRONG, "11")),
        ("There are 11 items", "11", (*FORMAT_ONLY, "11")),  # extracted for diagnosis, never counted
        ("7110", "11", (*WRONG, "7110")),
        ("(42)", "42", (*FORMAT_ONLY, "42")),
        ("(42)", "-42", (*BOTH, "42")),
        ("about 15600 rubles", "15600", (*FORMAT_ONLY, "15600")),
        ("$15,600", "15600", (*FORMAT_ONLY, "15600")),
        ("15 600 руб.", "15600", (*FORMAT_ONLY, "15600")),
        ("15,600 USD", "15600", (*FORMAT_ONLY, "15600")),
        ("Ответ: 15 600", "15600", (*FORMAT_ONLY, "15600")),
        ("between 15000 and 16000", "15600", (*BOTH, None)),  # two numbers: nothing extractable
        ("fifteen thousand", "15000", (*BOTH, None)),
        ("15 600 руб. за 2026 год", "15600", (*BOTH, None)),
    ],
)
def test_currency_values_and_violations(answer, gold, expected):
    check = check_answer(answer, F.currency, gold)
    assert verdict(check) == expected
    assert (check.reason is None) == check.correct


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("60", (*OK, "60")),
        ("60.0", (*OK, "60")),
        ("60%", (*FORMAT_ONLY, "60")),
        ("60 %", (*FORMAT_ONLY, "60")),
        ("0.6", (*WRONG, "0.6")),
        ("6", (*WRONG, "6")),
    ],
)
def test_percent(answer, expected):
    check = check_answer(answer, F.percent, "60")
    assert verdict(check) == expected
    if answer.endswith("%"):
        assert "%" in check.reason


@pytest.mark.parametrize(
    ("answer", "tolerance", "expected"),
    [
        ("15600", "0", OK),
        ("15601", "0", WRONG),
        ("15601", "1", OK),
        ("15599", "1", OK),
        ("15602", "1", WRONG),
        ("15600.5", "0.5", OK),
        ("15600.51", "0.5", WRONG),
    ],
)
def test_tolerance_is_absolute_and_inclusive(answer, tolerance, expected):
    assert verdict(check_answer(answer, F.number, "15600", Constraints(tolerance=tolerance)))[:3] == expected


@pytest.mark.parametrize(
    ("answer", "rounding", "expected"),
    [
        ("15600", 0, OK),
        ("15600.00", 0, OK),  # trailing zeros are not extra places
        ("15,600.0", 0, OK),
        ("15600.5", 0, (False, False, False)),
        ("270.5", 2, OK),
        ("270.50", 2, OK),
        ("270.500", 2, OK),
        ("270.501", 2, (False, False, False)),
    ],
)
def test_rounding(answer, rounding, expected):
    gold = "15600" if answer.startswith("15") else "270.50"
    check = check_answer(answer, F.number, gold, Constraints(rounding=rounding))
    assert verdict(check)[:3] == expected
    if not check.syntactic_ok:
        assert check.reason == f"more than {rounding} decimal places"


def test_rounding_violation_still_extracts_the_value():
    check = check_answer("15600.4", F.number, "15600", Constraints(rounding=0, tolerance=Decimal("0.5")))
    assert verdict(check) == (*FORMAT_ONLY, "15600.4")


def test_range():
    c = Constraints(range=(Decimal(0), Decimal(100)))
    assert verdict(check_answer("60", F.percent, "60", c))[:3] == OK
    assert verdict(check_answer("100", F.percent, "100", c))[:3] == OK  # inclusive
    check = check_answer("160", F.percent, "160", c)  # a gold outside range is never matched
    assert verdict(check) == (*WRONG, "160") and "range" in check.reason
    check = check_answer("-5", F.percent, "60", c)
    assert verdict(check) == (*WRONG, "-5") and check.reason == "outside range 0..100"


# ------------------------------------------------------------------ dates


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("2026-01-05", (*OK, "2026-01-05")),
        ("2026-01-05.", (*OK, "2026-01-05")),
        ("2026-01-06", (*WRONG, "2026-01-06")),
        ("2026-1-5", (*FORMAT_ONLY, "2026-01-05")),
        ("2026/01/05", (*FORMAT_ONLY, "2026-01-05")),
        ("05.01.2026", (*FORMAT_ONLY, "2026-01-05")),  # day first
        ("5.1.2026", (*FORMAT_ONLY, "2026-01-05")),
        ("January 5, 2026", (*FORMAT_ONLY, "2026-01-05")),
        ("5 January 2026", (*FORMAT_ONLY, "2026-01-05")),
        ("5 января 2026 г.", (*FORMAT_ONLY, "2026-01-05")),
        ("The date is 2026-01-05", (*FORMAT_ONLY, "2026-01-05")),
        ("2026-02-30", (*BOTH, None)),
        ("01/05/2026", (*BOTH, None)),  # month or day first: ambiguous, not extracted
        ("2026-01-05 or 2026-01-06", (*BOTH, None)),
        ("20260105", (*BOTH, None)),
        ("next Monday", (*BOTH, None)),
    ],
)
def test_date(answer, expected):
    check = check_answer(answer, F.date, "2026-01-05")
    assert verdict(check) == expected
    assert (check.reason is None) == check.correct


def test_date_gold_may_be_a_date_object():
    assert check_answer("2026-01-05", F.date, dt.date(2026, 1, 5)).correct  # type: ignore[arg-type]


# ------------------------------------------------------------------ one_token


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Paris", (*OK, "paris")),
        ("PARIS.", (*OK, "paris")),
        ('"Paris"', (*OK, "paris")),
        ("«Париж»", (*OK, "париж")),
        ("Париж", (*OK, "париж")),
        ("Lyon", (*WRONG, "lyon")),
        ("Paris,", (*FORMAT_ONLY, "paris")),
        ("Paris?", (*FORMAT_ONLY, "paris")),
        ("It is Paris", (*BOTH, "it is paris")),  # no substring match
        ("Paris France", (*BOTH, "paris france")),
    ],
)
def test_one_token(answer, expected):
    assert verdict(check_answer(answer, F.one_token, "Paris", aliases=["Париж"])) == expected


@pytest.mark.parametrize("answer", ["Saint-Denis", "O'Brien", "O’Brien", "R2-D2", "2026"])
def test_one_token_allows_hyphen_apostrophe_digits_inside(answer):
    assert check_answer(answer, F.one_token, answer).correct


@pytest.mark.parametrize("answer", ["-Paris", "Paris-", "Par_is", "Paris/Lyon"])
def test_one_token_rejects_other_characters(answer):
    assert not check_answer(answer, F.one_token, "Paris").syntactic_ok


def test_one_token_is_always_one_word():
    check = check_answer("Eiffel Tower", F.one_token, "Eiffel Tower", Constraints(max_words=4))
    assert verdict(check) == (*FORMAT_ONLY, "eiffel tower")


# ------------------------------------------------------------------ short_text


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Eiffel Tower", (*OK, "eiffel tower")),
        ("the  Eiffel\u00a0tower!", (*OK, "eiffel tower")),
        ("An Eiffel Tower", (*OK, "eiffel tower")),
        ("'Eiffel Tower'", (*OK, "eiffel tower")),
        ("Эйфелева башня", (*OK, "эйфелева башня")),
        ("Louvre", (*WRONG, "louvre")),
        ("The Eiffel Tower in Paris", (False, False, False, "eiffel tower in paris")),  # 5 words as written
        ("the Eiffel Tower of Paris France", (False, False, False, "eiffel tower of paris france")),
    ],
)
def test_short_text(answer, expected):
    assert verdict(check_answer(answer, F.short_text, "Eiffel Tower", aliases=["Эйфелева башня"])) == expected


def test_short_text_too_long_still_compares_the_value():
    check = check_answer("The Eiffel Tower in Paris", F.short_text, "The Eiffel Tower in Paris")
    assert verdict(check) == (*FORMAT_ONLY, "eiffel tower in paris") and check.reason == "more than 4 words"


@pytest.mark.parametrize(("max_words", "ok"), [(1, False), (2, True), (None, True)])
def test_short_text_max_words(max_words, ok):
    check = check_answer("Eiffel Tower", F.short_text, "Eiffel Tower", Constraints(max_words=max_words))
    assert check.syntactic_ok is ok and check.value_matches


@pytest.mark.parametrize(
    ("text", "norm"),
    [
        ("  The Eiffel   Tower. ", "eiffel tower"),
        ("a", "a"),  # a lone article is the answer itself
        ("Ёлка", "елка"),
        ("«Война и мир»", "война и мир"),
        ("C++", "c++"),
        ("Theatre", "theatre"),
    ],
)
def test_normalize_text(text, norm):
    assert normalize_text(text) == norm


# ------------------------------------------------------------------ set

GOLD_SET = ["Lyon", "Nice", "Paris"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Paris, Lyon, Nice", (*OK, "lyon; nice; paris")),
        ("Paris, Lyon and Nice", (*OK, "lyon; nice; paris")),
        ("Paris, Lyon, and Nice.", (*OK, "lyon; nice; paris")),
        ("nice; LYON; paris", (*OK, "lyon; nice; paris")),
        ("Paris\nLyon\nNice", (*OK, "lyon; nice; paris")),
        ("- Paris\n- Lyon\n- Nice", (*OK, "lyon; nice; paris")),
        ("Nice, Paris, Lyon, Paris", (*OK, "lyon; nice; paris")),  # order free, duplicates ignored
        ("Париж, Лион и Ницца", (*OK, "лион; ницца; париж")),
        ("Paris", (*WRONG, "paris")),  # a single item is well formed but wrong
        ("Paris, Lyon", (*WRONG, "lyon; paris")),
        ("Paris, Lyon, Nice, Marseille", (*WRONG, "lyon; marseille; nice; paris")),
    ],
)
def test_set(answer, expected):
    assert verdict(check_answer(answer, F.set, GOLD_SET, aliases=["Париж; Лион; Ницца"])) == expected


def test_set_does_not_split_a_known_item_on_and():
    assert check_answer("Procter and Gamble", F.set, ["Procter and Gamble"]).correct
    assert check_answer("Tom and Jerry", F.set, ["Jerry", "Tom"]).correct


def test_set_item_word_limit():
    c = Constraints(max_words=1)
    check = check_answer("Paris, Lyon, Nice Côte d'Azur", F.set, GOLD_SET, c)
    assert not check.syntactic_ok and check.reason == "an item has more than 1 words"
    assert check_answer("Paris, Lyon, Nice", F.set, GOLD_SET, c).correct


def test_set_gold_round_trip():
    gold = canonical_gold(["Paris", "Nice", "Lyon"], F.set)
    assert check_answer(", ".join(gold), F.set, gold).correct


# ------------------------------------------------------------------ instructions


def test_instruction_example_from_the_brief():
    text = format_instruction(F.currency, Constraints(rounding=0), "en")
    assert text == (
        "Answer with a number only, without currency symbol or words, rounded to whole units (halves are rounded up)."
    )


@pytest.mark.parametrize(
    ("fmt", "c", "lang", "text"),
    [
        (F.currency, Constraints(rounding=0, unit="RUB"), "en",
         "Answer with the amount in roubles as a number only, without currency symbol or words, "
         "rounded to whole units (halves are rounded up)."),
        (F.currency, Constraints(rounding=0, unit="RUB"), "ru",
         "Ответьте суммой в рублях только числом, без символа валюты и слов, округлив до целых "
         "(0,5 — в большую сторону)."),
        (F.number, Constraints(rounding=2), "ru",
         "Ответьте только числом, без единиц измерения и слов, округлив до 2 знаков после запятой "
         "(0,005 — в большую сторону)."),
        (F.number, Constraints(rounding=1), "en",
         "Answer with a number only, without units or words, rounded to 1 decimal place "
         "(halves are rounded up)."),
        (F.short_text, Constraints(), "en", "Answer with at most 4 words, without explanation."),
        (F.short_text, Constraints(max_words=1), "ru", "Ответьте не более чем 1 словом, без пояснений."),
        (F.yes_no, Constraints(), "ru", "Ответьте одним словом: да или нет."),
    ],
)
def test_instruction_text(fmt, c, lang, text):
    assert format_instruction(fmt, c, lang) == text


@pytest.mark.parametrize("fmt", list(F))
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_instruction_is_one_sentence(fmt, lang):
    text = format_instruction(fmt, Constraints(rounding=0, unit="days", max_words=2), lang)
    assert text[0].isupper() and text.endswith(".") and "\n" not in text
    assert text[:-1].count(". ") == 0


def test_instruction_rejects_unknown_language():
    with pytest.raises(ValueError, match='"en", "ru"|"en" or "ru"'):
        format_instruction(F.number, Constraints(), "de")


# ------------------------------------------------------------------ round trips

decimals = st.decimals(
    allow_nan=False, allow_infinity=False, min_value=-(10**12), max_value=10**12, places=6
) | st.integers(-(10**15), 10**15).map(Decimal)


@settings(max_examples=150, deadline=None)
@given(decimals)
def test_canonical_number_checks_correct(v):
    gold = canonical_gold(v, F.number)
    assert Decimal(gold) == v and "E" not in gold
    assert check_answer(gold, F.number, gold).correct


@settings(max_examples=150, deadline=None)
@given(decimals, st.integers(0, 4))
def test_canonical_number_with_rounding_checks_correct(v, rounding):
    c = Constraints(rounding=rounding)
    gold = canonical_gold(v, F.number, c)
    assert len(gold.partition(".")[2]) == rounding
    assert check_answer(gold, F.number, gold, c).correct


@settings(max_examples=150, deadline=None)
@given(decimals, st.sampled_from(["en", "ru"]))
def test_rendered_numbers_parse_back(v, lang):
    text = format_number(v, lang)
    check = check_answer(text, F.number, canonical_gold(v, F.number))
    assert check.syntactic_ok and check.value_matches, text
    if lang == "en":
        assert parse_number(text) == v


# ------------------------------------------------------------------ one expected answer (issue 12)


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("rounding", [0, 2])
def test_rounding_instruction_states_the_tie_rule(rounding, lang):
    text = format_instruction(F.currency, Constraints(rounding=rounding, unit="RUB"), lang)
    assert ("(halves are rounded up)" if lang == "en" else "— в большую сторону)") in text


def test_a_tie_is_rounded_up_as_the_instruction_says():
    c = Constraints(rounding=0)
    gold = canonical_gold(Decimal("164.50"), F.currency, c)
    assert gold == "165"  # the worked example of the issue
    assert check_answer("165", F.currency, gold, c).correct
    assert verdict(check_answer("164", F.currency, gold, c))[:3] == WRONG


@pytest.mark.parametrize(
    ("unit", "lang", "text"),
    [
        ("days", "en", "Answer with the number of days as a number only, without words, excluding the first day "
                       "(from the 1st to the 3rd is 2 days)."),
        ("days", "ru", "Ответьте только числом дней, без слов, не считая первого дня (от 1-го до 3-го числа — 2 дня)."),
        ("nights", "en", "Answer with the number of nights as a number only, without words "
                         "(from the 1st to the 3rd is 2 nights)."),
        ("nights", "ru", "Ответьте только числом ночей, без слов (от 1-го до 3-го числа — 2 ночи)."),
    ],
)
def test_day_count_instruction_says_how_days_are_counted(unit, lang, text):
    assert format_instruction(F.number, Constraints(unit=unit, rounding=0, day_count=True), lang) == text


POWER = ("power class A", "power class B", "power class C", "power class D")
POWER_RU = ("класс мощности A", "класс мощности B", "класс мощности C", "класс мощности D")


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Answer with one of these only: power class A, power class B, power class C or power class D."),
        ("ru", "Ответьте только одним из вариантов: класс мощности A, класс мощности B, класс мощности C "
               "или класс мощности D."),
    ],
)
def test_class_instruction_lists_the_allowed_labels(lang, text):
    c = Constraints(choices=Choices(en=POWER, ru=POWER_RU))
    assert format_instruction(F.short_text, c, lang) == text


@pytest.mark.parametrize(
    ("label", "labels", "aliases"),
    [
        ("power class B", POWER, ("B", "class B", "power B")),
        ("класс мощности B", POWER_RU, ("B", "мощности B", "класс B")),
        ("13% bracket", ("13% bracket", "15% bracket", "18% bracket"), ("13%",)),
        ("ставка 18%", ("ставка 13%", "ставка 18%"), ("18%",)),
        ("very large", ("small", "medium", "large", "very large"), ()),  # no word shared by all
        ("gold plus", ("gold", "gold plus"), ("plus",)),
        ("gold", ("gold", "gold plus"), ()),
        ("X one", ("X one", "X two", "one X"), ()),  # "one" would also name "one X"
        ("X two", ("X one", "X two", "one X"), ("two",)),
        ("power class B", ("power class B",), ()),  # a lone class has no siblings to tell apart
    ],
)
def test_class_aliases(label, labels, aliases):
    assert class_aliases(label, labels) == aliases


def test_class_aliases_never_collide_with_a_sibling():
    labels = ("X one", "X two", "one X", "Y X one")
    forms = {label: {normalize_text(a) for a in class_aliases(label, labels)} for label in labels}
    for label in labels:
        others = {normalize_text(o) for o in labels if o != label}
        others |= {f for o in labels if o != label for f in forms[o]}
        assert not forms[label] & others


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("power class B", OK),
        ("B", OK),
        ("class B", OK),
        ("Class b.", OK),
        ("«класс B»", OK),  # the Russian short form, in quotes
        ("C", WRONG),
        ("class C", WRONG),
        ("power class", WRONG),  # the shared words alone name no class
        ("class", WRONG),
    ],
)
def test_class_answer_accepts_the_short_forms_listed_as_aliases(answer, expected):
    aliases = [*class_aliases("power class B", POWER), "класс мощности B", *class_aliases("класс мощности B", POWER_RU)]
    assert verdict(check_answer(answer, F.short_text, "power class B", aliases=aliases))[:3] == expected


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_set_instruction_says_semicolons(lang):
    text = format_instruction(F.set, Constraints(), lang)
    assert text.endswith("separated by semicolons." if lang == "en" else "через точку с запятой.")


NUMBER_SET = ["14317.82", "21366", "Desk lamp"]


@pytest.mark.parametrize(
    "answer",
    [
        "14,317.82; 21,366; Desk lamp",  # the English dialogue's writing, as instructed
        "14,317.82, 21,366 and desk lamp",  # commas between members, not inside a number
        "Desk lamp\n14317.82\n21366",
        f"14{NBSP}317,82; 21{NBSP}366; «Desk lamp»",  # the Russian dialogue's writing
        f"14{NNBSP}317,82, 21{NNBSP}366, Desk lamp",
        "14 317,82; 21 366 и Desk lamp",
        "14317.820; 21366.00; Desk lamp",  # numbers by value
    ],
)
def test_set_reads_numbers_written_with_commas(answer):
    assert verdict(check_answer(answer, F.set, NUMBER_SET))[:3] == OK


@pytest.mark.parametrize(
    "answer",
    [
        "14,317.82; 21,366",  # a member missing
        "14,317.83; 21,366; Desk lamp",  # a wrong value
        "14,317.82; 21,366; Desk lamp; 711",
        "14,317,82; 21,366; Desk lamp",  # a comma cannot both group and mark decimals
    ],
)
def test_set_with_numbers_stays_strict(answer):
    assert not check_answer(answer, F.set, NUMBER_SET).value_matches


def test_set_number_members_never_match_by_substring():
    assert not check_answer("711", F.set, ["11"]).value_matches
    assert not check_answer("11", F.set, ["711"]).value_matches


def test_set_russian_members_in_another_case():
    gold = ["Анна Петрова", "Магазин «Парковый»"]
    assert check_answer("Анне Петровой; магазину Парковому", F.set, gold).correct
    assert not check_answer("Анна Петрова; магазин «Лесной»", F.set, gold).value_matches


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Магазин «Парковый»", OK),
        ("Магазин Парковый", OK),  # without the guillemets
        ("«Магазин Парковый»", OK),  # quotes around the whole name
        ("магазином «Парковым»", OK),  # another case, word by word
        ("Магазин «Лесной»", WRONG),
        ("Парковый", WRONG),  # no substring match
        ("Магазин", WRONG),
    ],
)
def test_russian_text_in_any_case_with_or_without_quotes(answer, expected):
    assert verdict(check_answer(answer, F.short_text, "Магазин «Парковый»"))[:3] == expected


@pytest.mark.parametrize(("answer", "ok"), [("среднему", True), ("«средний»", True), ("Средним", True),
                                            ("высокий", False), ("низкий", False)])
def test_russian_one_word_in_any_case(answer, ok):
    assert check_answer(answer, F.one_token, "средний", aliases=["mid-range"]).correct is ok


@pytest.mark.parametrize(
    ("text", "norm"),
    [
        ("Магазин «Парковый»", "магазин парковый"),
        ('The "Red" Lion', "red lion"),
        ("O'Brien's 'pub'", "o'brien's pub"),  # an apostrophe inside a word stays
        ("18 %", "18%"),
        (f"18{NBSP}%", "18%"),
    ],
)
def test_normalize_text_drops_quotes_anywhere(text, norm):
    assert normalize_text(text) == norm


@pytest.mark.parametrize(
    ("answer", "gold", "c"),
    [
        ("16711.00", "16711", Constraints(rounding=0)),
        ("16711,00", "16711", Constraints()),
        ("14,317.82", "14317.82", Constraints(rounding=2)),
        (f"2{NBSP}574,37", "2574.37", Constraints(rounding=2)),
        (f"2{NNBSP}574,37", "2574.37", Constraints(rounding=2)),
        ("2574.37", "2574.37", Constraints(rounding=2)),
    ],
)
def test_number_in_the_dialogues_writing_or_with_zero_decimals(answer, gold, c):
    assert verdict(check_answer(answer, F.currency, gold, c))[:3] == OK


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize(
    ("fmt", "c"),
    [
        (F.number, Constraints(unit="days", rounding=0, day_count=True)),
        (F.number, Constraints(unit="nights", rounding=0, day_count=True)),
        (F.short_text, Constraints(choices=Choices(en=POWER, ru=POWER_RU))),
        (F.one_token, Constraints(choices=Choices(en=("bronze", "silver"), ru=("бронзовый", "серебряный")))),
    ],
)
def test_new_instructions_are_one_sentence(fmt, c, lang):
    text = format_instruction(fmt, c, lang)
    assert text[0].isupper() and text.endswith(".") and "\n" not in text
    assert text[:-1].count(". ") == 0
