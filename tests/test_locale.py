"""Rendering values for dialogue text in English and Russian."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from kgsynth.formats.answers import AnswerFormat, check_answer
from kgsynth.formats.locale import (
    as_written,
    format_date,
    format_days,
    format_money,
    format_number,
    format_percent,
    plural_ru,
)

NBSP = "\u00a0"


@pytest.mark.parametrize(
    ("value", "lang", "places", "text"),
    [
        (Decimal(15600), "en", None, "15,600"),
        (Decimal("15600.5"), "en", None, "15,600.5"),
        (Decimal("15600.50"), "en", None, "15,600.5"),
        (Decimal(15600), "ru", None, f"15{NBSP}600"),
        (Decimal("15600.5"), "ru", None, f"15{NBSP}600,5"),
        (1234567, "ru", None, f"1{NBSP}234{NBSP}567"),
        (999, "en", None, "999"),
        (0, "en", None, "0"),
        (Decimal("-0.0"), "en", None, "0"),
        (Decimal(-1500), "en", None, "-1,500"),
        (Decimal("270.5"), "en", 2, "270.50"),
        (Decimal("2.345"), "ru", 2, "2,35"),
        (Decimal("1E+6"), "en", None, "1,000,000"),
        (Decimal("0.000001"), "en", None, "0.000001"),
    ],
)
def test_format_number(value, lang, places, text):
    assert format_number(value, lang, places) == text


@pytest.mark.parametrize(
    ("value", "unit", "lang", "text"),
    [
        (Decimal(15600), "RUB", "ru", f"15{NBSP}600 руб."),
        (Decimal(15600), "USD", "ru", f"15{NBSP}600 долл."),
        (Decimal(15600), "EUR", "ru", f"15{NBSP}600 евро"),
        (Decimal(15600), "USD", "en", "$15,600"),
        (Decimal(15600), "EUR", "en", "€15,600"),
        (Decimal(15600), "RUB", "en", "15,600 roubles"),
        (Decimal(1), "RUB", "en", "1 rouble"),
        (Decimal("15600.5"), "USD", "en", "$15,600.50"),
        (Decimal("15600.5"), "RUB", "ru", f"15{NBSP}600,50 руб."),
        (Decimal("15600.00"), "USD", "en", "$15,600"),
        (Decimal(-20), "USD", "en", "-$20"),
        (Decimal(15600), "GBP", "en", "15,600 GBP"),
        (Decimal(15600), None, "ru", f"15{NBSP}600"),
        (15600, "rub", "ru", f"15{NBSP}600 руб."),
    ],
)
def test_format_money(value, unit, lang, text):
    assert format_money(value, unit, lang) == text


@pytest.mark.parametrize(
    ("value", "lang", "text"),
    [(Decimal(13), "en", "13%"), (Decimal(13), "ru", f"13{NBSP}%"), (Decimal("12.5"), "ru", f"12,5{NBSP}%")],
)
def test_format_percent(value, lang, text):
    assert format_percent(value, lang) == text


@pytest.mark.parametrize(
    ("value", "lang", "text"),
    [
        (dt.date(2026, 1, 5), "en", "January 5, 2026"),
        (dt.date(2026, 1, 5), "ru", "5 января 2026 г."),
        (dt.date(2025, 3, 31), "ru", "31 марта 2025 г."),
        (dt.date(2025, 8, 1), "ru", "1 августа 2025 г."),
        (dt.date(2025, 12, 25), "en", "December 25, 2025"),
    ],
)
def test_format_date(value, lang, text):
    assert format_date(value, lang) == text


@pytest.mark.parametrize(
    ("n", "en", "ru"),
    [
        (0, "0 days", "0 дней"),
        (1, "1 day", "1 день"),
        (2, "2 days", "2 дня"),
        (4, "4 days", "4 дня"),
        (5, "5 days", "5 дней"),
        (11, "11 days", "11 дней"),
        (12, "12 days", "12 дней"),
        (14, "14 days", "14 дней"),
        (21, "21 days", "21 день"),
        (22, "22 days", "22 дня"),
        (25, "25 days", "25 дней"),
        (111, "111 days", "111 дней"),
        (101, "101 days", "101 день"),
        (1001, "1,001 days", f"1{NBSP}001 день"),
    ],
)
def test_format_days(n, en, ru):
    assert format_days(n, "en") == en
    assert format_days(n, "ru") == ru


@pytest.mark.parametrize(
    ("n", "form"),
    [(1, "one"), (21, "one"), (101, "one"), (2, "few"), (3, "few"), (24, "few"), (0, "many"), (5, "many"),
     (11, "many"), (12, "many"), (13, "many"), (14, "many"), (112, "many"), (20, "many"), (-1, "one"), (-3, "few")],
)
def test_plural_ru(n, form):
    assert plural_ru(n, "one", "few", "many") == form


@pytest.mark.parametrize(
    "call",
    [
        lambda: format_number(1, "de"),
        lambda: format_money(1, "RUB", "EN"),
        lambda: format_percent(Decimal(1), "uk"),
        lambda: format_date(dt.date(2026, 1, 5), ""),
        lambda: format_days(1, "fr"),
    ],
)
def test_unsupported_language(call):
    with pytest.raises(ValueError, match='unsupported language .*"en".*"ru"') as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("value", [Decimal(15600), Decimal("15600.5"), Decimal("15.123"), Decimal(-1234567)])
def test_renderings_check_as_numbers(value, lang):
    # a model that copies a figure from the dialogue writes a valid number
    gold = format(value, "f")
    check = check_answer(format_number(value, lang), AnswerFormat.number, gold)
    assert check.syntactic_ok and check.value_matches


def test_money_in_text_is_a_format_violation_with_its_value():
    check = check_answer(format_money(Decimal(15600), "RUB", "ru"), AnswerFormat.currency, "15600")
    assert (check.syntactic_ok, check.value_matches, check.value) == (False, True, "15600")


# Worked examples: six significant figures, at least two decimals, nothing added to a short value.
@pytest.mark.parametrize(("stored", "written"), [
    ("1279.45412651", "1279.45"),  # FB15k-237's area of New Castle County
    ("51.758899", "51.7589"),
    ("-2.716667", "-2.71667"),
    ("0.00012345678", "0.000123457"),
    ("15763.18", "15763.18"),
    ("3.125", "3.125"),
    ("42", "42"),
])
def test_a_decimal_is_written_as_a_person_writes_it(stored, written):
    assert str(as_written(Decimal(stored))) == written
