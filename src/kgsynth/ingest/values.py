"""Numbers, money and dates as a document writes them ("$15.6 million", "1 234,5 руб.",
"5 января 2026 г.") read into values for typed literals."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation

_SCALES = {
    "thousand": 3, "thousands": 3, "k": 3, "тыс": 3, "тысяч": 3, "тысячи": 3, "тысяча": 3,
    "million": 6, "millions": 6, "mln": 6, "m": 6, "mn": 6, "млн": 6, "миллион": 6, "миллиона": 6, "миллионов": 6,
    "billion": 9, "billions": 9, "bn": 9, "b": 9, "млрд": 9, "миллиард": 9, "миллиарда": 9, "миллиардов": 9,
    "trillion": 12, "трлн": 12, "триллион": 12, "триллиона": 12, "триллионов": 12,
}
_CURRENCIES = {
    "$": "USD", "us$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "доллар": "USD", "доллара": "USD",
    "долларов": "USD", "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "евро": "EUR", "£": "GBP",
    "gbp": "GBP", "pounds": "GBP", "₽": "RUB", "rub": "RUB", "руб": "RUB", "рубль": "RUB", "рубля": "RUB",
    "рублей": "RUB", "roubles": "RUB", "rubles": "RUB", "р": "RUB", "%": "%", "percent": "%", "per cent": "%",
    "процент": "%", "процента": "%", "процентов": "%",
}
_PREFIX = r"(?P<prefix>us\$|\$|€|£|₽)?"
_DIGITS = r"(?P<number>[-−–]?\d[\d\s\u00a0\u202f,.']*)"
_AFTER = r"(?P<after>[^\d]*)"
_NUMBER = re.compile(rf"^\s*{_PREFIX}\s*{_DIGITS}{_AFTER}$", re.IGNORECASE)
_YEAR = re.compile(r"^\s*(?:in\s+|в\s+)?(?P<year>1\d{3}|20\d{2})(?:\s*(?:г\.?|года?|году|year))?\s*$", re.IGNORECASE)
_DATE_SETTINGS = {"PARSERS": ["custom-formats", "absolute-time"], "REQUIRE_PARTS": ["day", "month", "year"], "DATE_ORDER": "DMY"}


def number_of(text: str, lang: str) -> tuple[Decimal, str | None] | None:
    """The value and unit (an ISO currency code, ``%``, or the word after the number) of a
    number written alone with at most a scale word and a unit; None for anything else."""
    match = _NUMBER.match(text.replace("−", "-"))
    if not match:
        return None
    value = _decimal(match["number"].strip(" \u00a0\u202f.,'"), lang)
    if value is None:
        return None
    words = [w for w in re.split(r"[\s.]+", match["after"].strip().casefold()) if w]
    if words and words[0] in _SCALES:
        value *= Decimal(10) ** _SCALES[words.pop(0)]
    unit = _CURRENCIES.get((match["prefix"] or "").casefold())
    rest = " ".join(words)
    if rest:
        if unit is not None or len(words) > 2:  # "$5 million dollars more" is no plain value
            return None
        unit = _CURRENCIES.get(rest, _CURRENCIES.get(words[0], rest))
    return (Decimal(int(value)) if value == value.to_integral() else value.normalize()), unit


def _decimal(digits: str, lang: str) -> Decimal | None:
    digits = re.sub(r"[\s\u00a0\u202f']", "", digits)
    if re.search(r",\d{3}(?!\d)", digits) and (lang == "en" or "." in digits or digits.count(",") > 1):
        digits = digits.replace(",", "")  # 15,600 / 1,234.5: grouping commas
    elif lang != "en" or "." not in digits:
        digits = digits.replace(".", "") if re.search(r"\.\d{3}(?!\d)", digits) and "," in digits else digits
        digits = digits.replace(",", ".")  # 1 234,5 / 15,6: a decimal comma
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def date_of(text: str, lang: str) -> dt.date | int | None:
    """A calendar date (day, month and year) or a year alone (an int); None otherwise."""
    year = _YEAR.match(text)
    if year:
        return int(year["year"])
    import dateparser  # a second or so to import: only when a date is read

    parsed = dateparser.parse(text, languages=[lang], settings=_DATE_SETTINGS)
    return parsed.date() if parsed else None


# a number as a text writes it inside a sentence: groups of three only after a separator (so
# "in 2020 12 people" stays two numbers), a decimal part, then maybe a scale word
_NUMBER_IN_TEXT = re.compile(
    r"(?<![\w.,])[-−–]?(?P<digits>\d{1,3}(?:[\s\u00a0\u202f,.']\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?:[\s\u00a0]*(?P<scale>[^\W\d_]+))?",
)


def numbers_in(text: str, lang: str) -> set[Decimal]:
    """Every value a number written in ``text`` may stand for: as written, and times its
    scale word when one follows ("2.4 million": 2.4 and 2,400,000); a number after a dash
    with and without the minus."""
    values = set()
    for match in _NUMBER_IN_TEXT.finditer(text.replace("−", "-")):
        value = _decimal(match["digits"], lang)
        if value is None:
            continue
        signs = (1, -1) if match.group(0)[0] in "-–" else (1,)  # "COVID-19": a hyphen, not a sign
        scale = _SCALES.get((match["scale"] or "").casefold())
        for sign in signs:
            values.add(sign * value)
            if scale:
                values.add(sign * value * Decimal(10) ** scale)
    return {Decimal(int(v)) if v == v.to_integral() else v.normalize() for v in values}


_YEAR_IN_TEXT = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?!\d)")


def dates_in(text: str, lang: str, years_only: bool = False) -> set[dt.date | int]:
    """The years written in ``text``, and unless ``years_only`` its calendar dates (day,
    month and year), as :func:`date_of` reads them."""
    found: set[dt.date | int] = {int(year) for year in _YEAR_IN_TEXT.findall(text)}
    if years_only:
        return found
    from dateparser.search import search_dates  # a second or so to import: only when a date is read

    found.update(when.date() for _, when in search_dates(text, languages=[lang], settings=_DATE_SETTINGS) or ())
    return found
