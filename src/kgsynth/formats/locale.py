"""Render values in English and Russian for dialogue text: numbers, money, percents, dates, days.

Dialogues state facts the way people write them ("15 600 руб.", "January 5, 2026"), while
answers are checked in the strict formats of :mod:`kgsynth.formats.answers`. Every number
rendered here parses back to the same value with that checker's number parser, so a model
that copies a figure from the dialogue is never marked wrong for the rendering itself.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Context, Decimal

LANGS = ("en", "ru")
NBSP = "\u00a0"

MONTHS_EN = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
# Genitive: Russian dates read "5 января", not the nominative "январь".
MONTHS_RU_GENITIVE = (
    "января", "февраля", "марта", "апреля", "мая", "июня",
    "июля", "августа", "сентября", "октября", "ноября", "декабря",
)

# Quantizing under the default context (28 digits) raises for large values; one wide
# context keeps every rounding exact and half-up.
_WIDE = Context(prec=1000, rounding=ROUND_HALF_UP)


def check_lang(lang: str) -> str:
    """Return ``lang`` if supported; raise a one-line ``ValueError`` naming the supported ones."""
    if lang not in LANGS:
        raise ValueError(f'unsupported language {lang!r}: use "en" or "ru"')
    return lang


def to_decimal(value: Decimal | int | float | str) -> Decimal:
    """A finite Decimal from a number; floats go through ``str`` so 0.1 stays 0.1."""
    if isinstance(value, bool):
        raise TypeError(f"expected a number, got the bool {value!r}")
    if isinstance(value, float):
        value = str(value)
    try:
        d = Decimal(value)
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ValueError(f"not a number: {value!r}") from exc
    if not d.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return d


SIGNIFICANT = 6  # figures a person writes of a measured value; a graph may store ten decimals


def as_written(value: Decimal) -> Decimal:
    """A decimal as a person writes it: six significant figures, and at least two decimals
    (FB15k-237's area 1279.45412651 as 1279.45, a latitude 51.758899 as 51.7589); a value
    stored with no more places than that is returned as it is."""
    places = max(2, SIGNIFICANT - 1 - value.adjusted())
    if -value.as_tuple().exponent <= places:
        return value
    return value.quantize(Decimal(1).scaleb(-places), context=_WIDE)


def plain_number(value: Decimal | int, places: int | None = None) -> str:
    """Machine form of a number: no grouping, no exponent, ``.`` as the decimal point.

    With ``places`` the value is rounded half-up to exactly that many decimals
    (``270.5`` -> ``270.50``); without, trailing fractional zeros are dropped
    (``15600.00`` -> ``15600``). Negative zero prints as ``0``.
    """
    d = to_decimal(value)
    if places is not None:
        if places < 0:
            raise ValueError(f"places must be >= 0, got {places}")
        d = d.quantize(Decimal(1).scaleb(-places), context=_WIDE)
    text = format(d, "f")
    if places is None and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.startswith("-") and text.strip("-0.") == "":
        text = text[1:]
    return text


def format_number(value: Decimal | int, lang: str, places: int | None = None) -> str:
    """Group thousands the local way: en ``15,600.5``; ru ``15 600,5`` with a NBSP."""
    check_lang(lang)
    text = plain_number(value, places)
    sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, _, frac = text.partition(".")
    group, point = (",", ".") if lang == "en" else (NBSP, ",")
    whole = f"{int(whole):,}".replace(",", group)
    return sign + whole + (point + frac if frac else "")


# How a measure's unit is written after its number; a unit not listed is written as given.
_UNIT_SYMBOLS = {
    "en": {"acre": "acres"},
    "ru": {"m": "м", "cm": "см", "km": "км", "kg": "кг", "km²": "км²", "m²": "м²", "ha": "га", "ft": "фт",
           "in": "дюйм.", "mi": "мил.", "lb": "фунт.", "mi²": "кв. мил.", "ft²": "кв. фт", "acre": "акр."},
}


def format_quantity(value: Decimal | int, unit: str, lang: str) -> str:
    """A measure with its unit: en ``1.85 m``, ru ``1,85 м``."""
    check_lang(lang)
    return f"{format_number(value, lang)}\u00a0{_UNIT_SYMBOLS[lang].get(unit, unit)}"


def format_money(value: Decimal | int, unit: str | None, lang: str) -> str:
    """Money as written in text: en ``$15,600`` / ``15,600 roubles``; ru ``15 600 руб.``.

    Whole amounts have no decimals, others exactly two. Units other than RUB, USD and
    EUR (or ``None``) are written as given after the number.
    """
    check_lang(lang)
    d = to_decimal(value)
    number = format_number(d, lang, 0 if d == d.to_integral_value() else 2)
    code = unit.upper() if unit else None
    if lang == "en" and code in ("USD", "EUR"):
        sign, body = ("-", number[1:]) if number.startswith("-") else ("", number)
        return f"{sign}{'$' if code == 'USD' else '€'}{body}"
    if lang == "en" and code == "RUB":
        return f"{number} {'rouble' if abs(d) == 1 else 'roubles'}"
    if lang == "ru" and code in ("RUB", "USD", "EUR"):
        return f"{number} {_RU_MONEY[code]}"
    return f"{number} {unit}" if unit else number


_RU_MONEY = {"RUB": "руб.", "USD": "долл.", "EUR": "евро"}


def format_percent(value: Decimal | int, lang: str) -> str:
    """en ``13%``; ru ``13 %`` (Russian typography puts a NBSP before the sign)."""
    number = format_number(value, lang)
    return f"{number}%" if lang == "en" else f"{number}{NBSP}%"


def format_date(value: dt.date, lang: str) -> str:
    """en ``January 5, 2026``; ru ``5 января 2026 г.`` (genitive month)."""
    check_lang(lang)
    if lang == "en":
        return f"{MONTHS_EN[value.month - 1]} {value.day}, {value.year}"
    return f"{value.day} {MONTHS_RU_GENITIVE[value.month - 1]} {value.year} г."


def format_days(n: int, lang: str) -> str:
    """en ``1 day`` / ``14 days``; ru ``1 день``, ``2 дня``, ``5 дней``, ``21 день``."""
    number = format_number(n, lang)
    if lang == "en":
        return f"{number} {'day' if abs(n) == 1 else 'days'}"
    return f"{number} {plural_ru(n, 'день', 'дня', 'дней')}"


def plural_ru(n: int, one: str, few: str, many: str) -> str:
    """Pick the Russian plural form for ``n``: 1, 21 -> one; 2-4, 22 -> few; 0, 5-20 -> many.

    Returns the word only, so callers choose the case (``plural_ru(n, "слова", "слов",
    "слов")`` after "не более").
    """
    n = abs(int(n)) % 100
    if 11 <= n <= 14:
        return many
    n %= 10
    if n == 1:
        return one
    if 2 <= n <= 4:
        return few
    return many
