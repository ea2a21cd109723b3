"""Answer formats and the strict two-level answer checker, shared by synthesis and evaluation.

Every QA item names an :class:`AnswerFormat` and its :class:`Constraints`. The model is
told the format by :func:`format_instruction`, the gold is stored as the text that
:func:`canonical_gold` returns, and :func:`check_answer` scores an answer on two levels:

* syntactic: is the whole answer in the format, strictly (``"15600"``, not
  ``"about 15600 rubles"``);
* semantic: does the value carried by the answer equal the gold within tolerance.

Strict scoring counts an answer only when both hold. The value is still extracted from a
badly formatted answer, so that evaluation can tell a format violation from a wrong fact.
No substring matching anywhere: ``"711"`` never matches the gold ``"11"``.

One item has one expected answer: the instruction states the tie rule of its rounding,
how a day count is counted, the allowed labels of a class answer, and a list separator
(semicolons) that cannot collide with a number's commas. The checker accepts every writing
a careful reader would give: the dialogue's number writing, a Russian word in another case,
quotes anywhere, and the short forms of a class listed on the item as aliases.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import re
from collections.abc import Collection, Iterable, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kgsynth.formats import morph
from kgsynth.formats.locale import MONTHS_EN, MONTHS_RU_GENITIVE, check_lang, plain_number, plural_ru, to_decimal

__all__ = [
    "AnswerCheck",
    "AnswerFormat",
    "Choices",
    "Constraints",
    "canonical_gold",
    "check_answer",
    "class_aliases",
    "format_instruction",
    "normalize_text",
    "parse_number",
]


class AnswerFormat(StrEnum):
    """The answer formats of SPEC section 3; the value is the lower-case name."""

    yes_no = "yes_no"
    number = "number"
    currency = "currency"
    percent = "percent"  # the number of percent, without the sign: 13 for 13 %
    date = "date"  # YYYY-MM-DD
    one_token = "one_token"
    short_text = "short_text"  # 1..max_words words (4 by default)
    set = "set"  # items separated by semicolons (newlines, a last "and" and commas outside numbers also read)


NUMERIC_FORMATS = frozenset({AnswerFormat.number, AnswerFormat.currency, AnswerFormat.percent})
DEFAULT_MAX_WORDS = 4


class Choices(BaseModel):
    """The labels a closed question allows (a rule's classes), in each language the
    instruction can be written in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    en: tuple[str, ...] = ()
    ru: tuple[str, ...] = ()


class Constraints(BaseModel):
    """What an answer must satisfy beyond its format; the defaults constrain nothing.

    ``choices`` lists the allowed labels (named by the instruction); ``day_count`` marks a
    count of days from a start date to an end date, the start day not counted (the rule
    engine's end minus start), which the instruction spells out; ``years`` a number of years:
    "calendar" (the later year minus the earlier, for years without a day), "completed"
    (whole years between two dates, an age), a "century" (20) or a "decade" (1910).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tolerance: Decimal = Field(default=Decimal(0), ge=0)
    unit: str | None = None
    rounding: int | None = Field(default=None, ge=0)
    range: tuple[Decimal, Decimal] | None = None
    max_words: int | None = Field(default=None, ge=1)
    choices: Choices | None = None
    day_count: bool = False
    years: Literal["calendar", "completed", "century", "decade"] | None = None
    signed: bool = False  # the answer may be negative: the instruction says a negative half goes down

    @model_validator(mode="after")
    def _range_ordered(self) -> Constraints:
        if self.range is not None and self.range[0] > self.range[1]:
            raise ValueError(f"range must be (low, high) with low <= high, got {self.range}")
        return self


class AnswerCheck(BaseModel):
    """The verdict on one answer; ``correct`` is what strict scoring counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    syntactic_ok: bool
    value_matches: bool
    correct: bool
    value: str | None
    reason: str | None

    @model_validator(mode="after")
    def _consistent(self) -> AnswerCheck:
        if self.correct != (self.syntactic_ok and self.value_matches):
            raise ValueError("correct must equal syntactic_ok and value_matches")
        return self


def _verdict(syntactic_ok: bool, value_matches: bool, value: str | None, reason: str | None) -> AnswerCheck:
    correct = syntactic_ok and value_matches
    return AnswerCheck(
        syntactic_ok=syntactic_ok,
        value_matches=value_matches,
        correct=correct,
        value=value,
        reason=None if correct else (reason or "differs from gold"),
    )


# --------------------------------------------------------------------------- gold


def canonical_gold(
    value: object, fmt: AnswerFormat, constraints: Constraints = Constraints()
) -> str | list[str]:
    """The text a gold value is stored as, and what :func:`check_answer` compares with.

    bool -> ``"yes"``/``"no"``; numbers -> plain text without exponent or trailing zeros
    (rounded half-up to ``constraints.rounding`` places when set); dates -> ISO
    ``YYYY-MM-DD``; text -> stripped; set -> sorted list of distinct stripped items.
    """
    fmt = AnswerFormat(fmt)
    if fmt is AnswerFormat.yes_no:
        return _gold_yes_no(value)
    if fmt in NUMERIC_FORMATS:
        return plain_number(_gold_decimal(value), constraints.rounding)
    if fmt is AnswerFormat.date:
        return _gold_date(value).isoformat()
    if fmt is AnswerFormat.set:
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise TypeError(f"a set gold must be an iterable of str, got {value!r}")
        return sorted({str(item).strip() for item in value} - {""})
    return str(value).strip()


def _gold_yes_no(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and value.strip().casefold() in _YES_NO:
        return _YES_NO[value.strip().casefold()]
    raise ValueError(f"a yes_no gold must be a bool or yes/no, got {value!r}")


def _gold_decimal(value: object) -> Decimal:
    if isinstance(value, str):
        parsed = parse_number(value)
        return parsed if parsed is not None else to_decimal(value.strip())
    if isinstance(value, Decimal | int | float):
        return to_decimal(value)
    raise TypeError(f"a numeric gold must be a number, got {value!r}")


def _gold_date(value: object) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        parsed = _iso_date(value.strip())
        if parsed is not None:
            return parsed
    raise ValueError(f"a date gold must be a date or YYYY-MM-DD, got {value!r}")


# --------------------------------------------------------------------------- checking


def check_answer(
    answer: str,
    fmt: AnswerFormat,
    gold: str | list[str],
    constraints: Constraints = Constraints(),
    *,
    aliases: Sequence[str] = (),
) -> AnswerCheck:
    """Score ``answer`` strictly against ``gold`` (as returned by :func:`canonical_gold`).

    Whitespace around the answer and one trailing ``.`` or ``!`` are ignored everywhere.
    ``aliases`` are other acceptable texts for text golds (e.g. the Russian label, a class's
    short forms from :func:`class_aliases`) and numbers (a century's "XX"); for ``set`` each
    alias is a whole alternative list. A non-text gold (a Decimal, a date) is passed through :func:`canonical_gold` first.

    Texts match as a careful reader would: case, ё/е, quotes anywhere and one leading
    English article aside, and a Russian word in any grammatical case (see
    :func:`texts_match`). Set members that are numbers match by value in any writing the
    number checker accepts.
    """
    fmt = AnswerFormat(fmt)
    if not isinstance(gold, str | list):
        gold = canonical_gold(gold, fmt, constraints)
    text = _strip_answer(answer or "")
    if not text:
        return _verdict(False, False, None, "empty answer")
    if fmt is AnswerFormat.yes_no:
        return _check_yes_no(text, gold)
    if fmt in NUMERIC_FORMATS:
        verdict = _check_number(text, gold, constraints)
        if not verdict.correct and aliases and texts_match(text, aliases):  # a century as "XX" or "20th"
            return _verdict(True, True, normalize_text(text), None)
        return verdict
    if fmt is AnswerFormat.date:
        return _check_date(text, gold)
    if fmt is AnswerFormat.set:
        return _check_set(text, gold, constraints, aliases)
    golds = [gold] if isinstance(gold, str) else list(gold)
    accepted = [*golds, *aliases]
    if fmt is AnswerFormat.one_token:
        return _check_one_token(text, accepted)
    return _check_short_text(text, accepted, constraints.max_words or DEFAULT_MAX_WORDS)


def _strip_answer(answer: str) -> str:
    """Drop surrounding whitespace and one trailing period or exclamation mark."""
    text = answer.strip()
    if text[-1:] in (".", "!"):
        text = text[:-1].rstrip()
    return text


# yes_no ---------------------------------------------------------------------

_YES_NO = {"yes": "yes", "no": "no", "да": "yes", "нет": "no"}
# Whole words only: "yesterday" and "nothing" carry no yes/no.
_YES_NO_WORD = re.compile(r"(?<![\w'-])(yes|no|да|нет)(?![\w'-])", re.IGNORECASE)


def _check_yes_no(text: str, gold: str | list[str]) -> AnswerCheck:
    want = _gold_yes_no(gold if isinstance(gold, str) else gold[0])
    exact = _YES_NO.get(text.casefold())
    if exact is not None:
        return _verdict(True, exact == want, exact, None)
    found = {_YES_NO[m.casefold()] for m in _YES_NO_WORD.findall(text)}
    value = found.pop() if len(found) == 1 else None
    return _verdict(False, value == want, value, "not just yes or no")


# numbers --------------------------------------------------------------------

# One number: optional minus, digits with optional thousands groups of exactly three
# digits (one separator kind throughout: comma, space, NBSP, narrow NBSP or thin space),
# optional decimal part after "." or ",". A grouped number cannot start with 0, so
# "0,600" is 0.6.
_NUMBER = (
    r"(?P<sign>[-\u2212])?"
    r"(?P<int>[1-9][0-9]{0,2}(?P<sep>[, \u00a0\u202f\u2009])[0-9]{3}(?:(?P=sep)[0-9]{3})*|[0-9]+)"
    r"(?:(?P<dsep>[.,])(?P<frac>[0-9]+))?"
)
_NUMBER_FULL = re.compile(_NUMBER)
# The leading lookahead only restates how a number starts; it lets the scan drop a
# position before the lookbehinds run (2.5x faster over a dialogue).
_NUMBER_IN_TEXT = re.compile(r"(?=[-\u2212]?[0-9])(?<![0-9])(?<![0-9][.,])" + _NUMBER + r"(?![0-9])")


_NOT_DIGIT = re.compile("[^0-9]")


def _readings(m: re.Match[str]) -> tuple[Decimal, ...]:
    """The values a matched number can mean: one, or two for a lone ``,ddd``; () if invalid.

    ``15,600`` is 15600 (an English thousands comma, read first) but also 15.6 in Russian
    writing; the checker accepts either reading so Russian renderings such as ``15,123``
    (15.123) are not marked wrong. The two readings differ a thousandfold, so accepting
    both cannot reward a guess.
    """
    sep, dsep, frac = m["sep"], m["dsep"], m["frac"]
    if sep == "," and dsep == ",":
        return ()  # "1,234,5": a comma cannot both group and mark decimals
    sign = "-" if m["sign"] else ""
    digits = _NOT_DIGIT.sub("", m["int"])
    main = Decimal(f"{sign}{digits}.{frac}" if frac else f"{sign}{digits}")
    if sep == "," and dsep is None and m["int"].count(",") == 1:
        return (main, Decimal(sign + m["int"].replace(",", ".")))
    return (main,)


def parse_number(text: str) -> Decimal | None:
    """The value of ``text`` if it is exactly one number in the checker's grammar, else None.

    For the ambiguous ``15,600`` this is the thousands reading (15600).
    """
    m = _NUMBER_FULL.fullmatch(text.strip())
    readings = _readings(m) if m else ()
    return readings[0] if readings else None


_YEAR = re.compile(r"[0-9]{4}")


@functools.lru_cache(maxsize=1024)
def numbers_in(text: str) -> frozenset[Decimal]:
    """Every value any number written in ``text`` can mean (both readings of ``15,600``),
    leaving out the digits of dates ("November 2, 2024" states no 2): what the leakage
    filters look for. Cached: several filters read the same dialogue."""
    if _YEAR.search(text):  # every date form has a four-digit year
        for pattern in (_ISO_LIKE, _DAY_FIRST, _MONTH_FIRST, _DAY_MONTH):
            text = pattern.sub(" ", text)
    return frozenset(v for m in _NUMBER_IN_TEXT.finditer(text) for v in _readings(m))


_GROUP_SEPARATORS = ", \u00a0\u202f\u2009"  # the thousands separators numbers_in reads


@functools.lru_cache(maxsize=1024)  # a rule's numbers, and the golds whose marks a dialogue holds
def number_pattern(number: Decimal) -> re.Pattern[str]:
    """A pattern that every writing of ``number`` which ``numbers_in`` reads matches (and
    others: dates, decimal parts), so a text it does not match does not state the number.
    Most dialogues do not, and the pattern's literal start makes the search fast.

    A whole number is its digits or, past three digits, its first two groups ("100,000",
    "100 000"), not right after a non-zero digit or before any digit: "14" is in "014",
    "14.0" and "14,000" (read as 14.000 too), not in "140" or "214". A fraction is the last
    three digits of its whole part (not right after a non-zero digit, when that is all of
    it), a decimal point or comma and its fraction digits, then only zeros ("0.3", "0,30";
    "1,013.5"; "13,500", read as 13.5). A sign comes before all of it. Nothing further
    from the number is looked at: ``numbers_in`` takes dates out first, and a date may
    stand right after its decimal point ("14.2024-01-05" states 14).
    """
    whole, fraction = _digits(number)
    if fraction is None:
        head, rest = _first_group(whole)
        grouped = f"(?:{rest}|[{_GROUP_SEPARATORS}]{rest[:3]})" if rest else ""
        return re.compile(f"{head}{_starts_number(head)}{grouped}(?![0-9])")
    # a whole part past three digits may be grouped: only its last group is sure
    head = f"{whole}{_starts_number(whole)}" if len(whole) <= 3 else whole[-3:]
    return re.compile(f"{head}[.,]{fraction}0*(?![0-9])")


def number_marks(number: Decimal) -> tuple[str, ...]:
    """Substrings of which every match of :func:`number_pattern` holds one: the literal
    part of it, a pre-check that needs no compiling ("14"; "100000", "100,000", "100 000";
    "0.3", "0,3")."""
    whole, fraction = _digits(number)
    if fraction is None:
        head, rest = _first_group(whole)
        return (whole, *(f"{head}{sep}{rest[:3]}" for sep in _GROUP_SEPARATORS)) if rest else (whole,)
    return tuple(f"{whole[-3:]}{point}{fraction}" for point in ".,")


def _digits(number: Decimal) -> tuple[str, str | None]:
    """The digits of ``number``'s whole part, and of its fraction without trailing zeros
    (None for a whole number); the sign left out."""
    number = number.copy_abs()  # exact: abs() rounds to the context's 28 digits
    if number == number.to_integral_value():
        return str(int(number)), None
    whole, fraction = f"{number:f}".split(".")
    return whole, fraction.rstrip("0")


def _first_group(digits: str) -> tuple[str, str]:
    """``digits`` as the first group of their grouped writing (one to three digits) and the rest."""
    first = (len(digits) - 1) % 3 + 1
    return digits[:first], digits[first:]


def _starts_number(digits: str) -> str:
    """A lookbehind, put right after ``digits``: they start a number, or follow only zeros
    ("014"). Put first, the lookbehind would keep the search from its fast literal start."""
    return f"(?<![1-9]{digits})"


def dates_in(text: str) -> set[dt.date]:
    """Every unambiguous date written in ``text`` (ISO-like, D.M.YYYY, month names)."""
    return _dates_in_text(text)


def _numbers_in_text(text: str) -> tuple[tuple[Decimal, ...], str]:
    """Readings of the only number in a badly formatted answer, and the reason it failed."""
    found = [_readings(m) for m in _NUMBER_IN_TEXT.finditer(text)]
    if not found:
        return (), "no number"
    if not all(found):
        return (), "a comma both groups and marks decimals"
    if len({r[0] for r in found}) > 1:
        return (), "more than one number"
    if "%" in text:
        return found[0], "has a % sign"
    return found[0], "extra text around the number"


def _decimal_places(d: Decimal) -> int:
    """Decimal places that carry a non-zero digit: 15600.50 has 1, 15600.00 has 0."""
    text = plain_number(d)
    return len(text.partition(".")[2])


def _check_number(text: str, gold: str | list[str], c: Constraints) -> AnswerCheck:
    want = _gold_decimal(gold if isinstance(gold, str) else gold[0])
    m = _NUMBER_FULL.fullmatch(text)
    readings = _readings(m) if m else ()
    syntax_reason = None
    if not readings:
        readings, syntax_reason = _numbers_in_text(text)
        if not readings:
            return _verdict(False, False, None, syntax_reason)

    def in_range(v: Decimal) -> bool:
        return c.range is None or c.range[0] <= v <= c.range[1]

    def matches(v: Decimal) -> bool:
        return in_range(v) and abs(v - want) <= c.tolerance

    value = next((v for v in readings if matches(v)), readings[0])
    ok = matches(value)
    if syntax_reason is None and c.rounding is not None and _decimal_places(value) > c.rounding:
        syntax_reason = f"more than {c.rounding} decimal places"
    reason = syntax_reason
    if reason is None and c.range is not None and not in_range(value):
        reason = f"outside range {plain_number(c.range[0])}..{plain_number(c.range[1])}"
    return _verdict(syntax_reason is None, ok, plain_number(value), reason)


# dates ----------------------------------------------------------------------

_ISO_STRICT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_ISO_LIKE = re.compile(r"(?<![0-9])([0-9]{4})([-/.])([0-9]{1,2})\2([0-9]{1,2})(?![0-9])")
_DAY_FIRST = re.compile(r"(?<![0-9.])([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{4})(?![0-9])")
_MONTHS = {name.casefold(): i for names in (MONTHS_EN, MONTHS_RU_GENITIVE) for i, name in enumerate(names, 1)}
_MONTHS.update({name[:3].casefold(): i for i, name in enumerate(MONTHS_EN, 1)})
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORDINAL = "(?:st|nd|rd|th)?"
_MONTH_FIRST = re.compile(rf"(?<!\w)({_MONTH})\.?\s+([0-9]{{1,2}}){_ORDINAL},?\s+([0-9]{{4}})(?![0-9])", re.I)
_DAY_MONTH = re.compile(
    rf"(?<![0-9])([0-9]{{1,2}}){_ORDINAL}\s+(?:of\s+)?({_MONTH})\.?,?\s+([0-9]{{4}})(?![0-9])", re.I
)


def _date(year: str, month: str | int, day: str) -> dt.date | None:
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:
        return None


def _iso_date(text: str) -> dt.date | None:
    m = _ISO_STRICT.fullmatch(text)
    return _date(m[1], m[2], m[3]) if m else None


def _dates_in_text(text: str) -> set[dt.date]:
    """Unambiguous dates in any common writing: ISO-like, D.M.YYYY, or with a month name."""
    return {d for _, _, d in date_spans(text)}


def date_spans(text: str) -> list[tuple[int, int, dt.date]]:
    """Where each unambiguous date is written in ``text``: (start, end, date)."""
    found = [(m.start(), m.end(), _date(m[1], m[3], m[4])) for m in _ISO_LIKE.finditer(text)]
    found += [(m.start(), m.end(), _date(m[3], m[2], m[1])) for m in _DAY_FIRST.finditer(text)]
    found += [(m.start(), m.end(), _date(m[3], _MONTHS[m[1].casefold()], m[2])) for m in _MONTH_FIRST.finditer(text)]
    found += [(m.start(), m.end(), _date(m[3], _MONTHS[m[2].casefold()], m[1])) for m in _DAY_MONTH.finditer(text)]
    return [(start, end, d) for start, end, d in found if d is not None]


def number_spans(text: str) -> list[tuple[int, int, tuple[Decimal, ...]]]:
    """Where each number is written in ``text``, with the values it can mean."""
    return [(m.start(), m.end(), _readings(m)) for m in _NUMBER_IN_TEXT.finditer(text)]


def _check_date(text: str, gold: str | list[str]) -> AnswerCheck:
    want = _gold_date(gold if isinstance(gold, str) else gold[0])
    exact = _iso_date(text)
    if exact is not None:
        return _verdict(True, exact == want, exact.isoformat(), None)
    if _ISO_STRICT.fullmatch(text):
        return _verdict(False, False, None, "not a valid date")
    found = _dates_in_text(text)
    value = found.pop() if len(found) == 1 else None
    reason = "not YYYY-MM-DD" if value or not found else "more than one date"
    return _verdict(False, value == want, value.isoformat() if value else None, reason)


# text -----------------------------------------------------------------------

# Stripped from both ends of text values; "-", "+" and "#" stay ("C++", "-5").
_EDGE = " \"'«»“”„‟‘’`´.,;:!?()[]{}<>*•—–"
_OPEN_QUOTES = "\"'«“„‘`"
_CLOSE_QUOTES = "\"'»”“’`"
# Quotes dropped wherever they stand (Магазин «Парковый»); an apostrophe only outside a word (O'Brien keeps it).
_QUOTES = re.compile("[\"«»“”„‟]")
# Written char first, then "no word on one side of it": much faster over a whole dialogue than lookbehinds first.
_LOOSE_APOSTROPHE = re.compile(r"['`´](?:(?<=\B.)|\B)")
_SPACE_BEFORE_PERCENT = re.compile(r"(?<=[0-9])\s+%")  # Russian typography writes "18 %"
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_HAS_ALNUM = re.compile(r"[^\W_]")
_HAS_CYRILLIC = re.compile(r"[а-яё]")
_RUSSIAN_WORD = re.compile(r"[а-яё]+(?:-[а-яё]+)*")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)")


def has_word(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` delimited by non-word characters (or the ends):
    "TR" is not in "strange". A word character is what regex ``\\w`` matches; found by
    ``str.find`` (a regex per call cost 2 s of a 1M run, compiling each word anew)."""
    at, end = text.find(word), len(word)
    while at >= 0:
        after = at + end
        if (at == 0 or not _is_word_char(text[at - 1])) and (after == len(text) or not _is_word_char(text[after])):
            return True
        at = text.find(word, at + 1)
    return False


def has_any_word(text: str, words: Iterable[str]) -> bool:
    """Whether ``text``, casefolded, holds one of the casefolded ``words`` as a whole word."""
    folded = text.casefold()
    return any(has_word(folded, w) for w in words)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def normalize_text(text: str) -> str:
    """Comparable form of a text answer or gold.

    Casefold, ё -> е, curly apostrophes -> ``'``, quotes dropped anywhere, whitespace
    collapsed (none before ``%``), punctuation stripped at both ends, one leading English
    article dropped.
    """
    s = _QUOTES.sub(" ", text.casefold().replace("ё", "е").replace("’", "'").replace("‘", "'"))
    if "'" in s or "`" in s or "´" in s:
        s = _LOOSE_APOSTROPHE.sub(" ", s)
    s = " ".join(s.split()).strip(_EDGE)
    if "%" in s:
        s = _SPACE_BEFORE_PERCENT.sub("%", s)
    s = _ARTICLE.sub("", s, count=1)
    return s.strip(_EDGE)


def texts_match(answer: str, accepted: Iterable[str]) -> bool:
    """Whether ``answer`` writes one of the ``accepted`` texts: equal once normalised
    (:func:`normalize_text`), or, for Russian, equal word by word in dictionary form
    (pymorphy3), so «среднему» matches «средний» and «магазином Парковым» matches
    «Магазин «Парковый»»; the words must still be the same words in the same order."""
    said = normalize_text(answer)
    if not said:
        return False
    keys = [k for k in map(normalize_text, accepted) if k]
    if said in keys:
        return True
    if not _HAS_CYRILLIC.search(said):
        return False
    said_words = said.split()
    return any(_same_words(said_words, k.split()) for k in keys if _HAS_CYRILLIC.search(k))


def _same_words(said: list[str], gold: list[str]) -> bool:
    """Word by word: equal, or two Russian words with a dictionary form in common."""
    return len(said) == len(gold) and all(
        a == b or (_RUSSIAN_WORD.fullmatch(a) and _RUSSIAN_WORD.fullmatch(b) and _lemmas(a) & _lemmas(b))
        for a, b in zip(said, gold, strict=True)
    )


@functools.lru_cache(maxsize=65536)
def _lemmas(word: str) -> frozenset[str]:
    """Every dictionary form pymorphy3 reads a (normalised) Russian word as: its first guess
    alone misses some ("Анне" is first read as an indeclinable name, then as "Анна")."""
    return frozenset(p.normal_form.replace("ё", "е") for p in morph.analyzer().parse(word)) | {word}


def _unquote(text: str) -> str:
    """Drop one pair of surrounding quotes: ``"Paris"`` is still one word."""
    if len(text) >= 2 and text[0] in _OPEN_QUOTES and text[-1] in _CLOSE_QUOTES:
        return text[1:-1].strip()
    return text


def _check_one_token(text: str, accepted: Sequence[str]) -> AnswerCheck:
    value = normalize_text(text) or None
    syntactic = bool(_WORD.fullmatch(_unquote(text)))
    return _verdict(syntactic, texts_match(text, accepted), value, None if syntactic else "not exactly one word")


def _word_count(text: str) -> int:
    return sum(1 for w in text.split() if _HAS_ALNUM.search(w))


def _check_short_text(text: str, accepted: Sequence[str], max_words: int) -> AnswerCheck:
    value = normalize_text(text) or None
    words = _word_count(text)  # counted as written, a leading article included
    reason = None
    if words == 0:
        reason = "no words"
    elif words > max_words:
        reason = f"more than {max_words} words"
    return _verdict(reason is None, texts_match(text, accepted), value, reason)


@functools.lru_cache(maxsize=4096)  # one call per class and language of a rule: a handful per dataset
def class_aliases(label: str, labels: tuple[str, ...]) -> tuple[str, ...]:
    """The short forms of a class ``label`` among its rule's class ``labels`` (itself included):
    the label with any of the words every class shares left out ("B" and "class B" of
    "power class B" among "power class A".."D"; "13%" of "13% bracket"). A form that another
    class's label or short form could also be read as is left out.
    """
    forms = {other: _shorter_forms(other, labels) for other in labels}
    own = normalize_text(label)
    taken = {normalize_text(f) for other in labels if normalize_text(other) != own for f in [other, *forms[other]]}
    return tuple(f for f in forms[label] if normalize_text(f) not in taken)


def _shorter_forms(label: str, labels: Sequence[str]) -> list[str]:
    """``label`` with each non-empty subset of the words all ``labels`` share dropped, shortest first."""
    words = label.split()
    word_sets = [{w.casefold() for w in other.split()} for other in labels]
    shared = set.intersection(*word_sets) if len(labels) > 1 else set()
    droppable = [i for i, w in enumerate(words) if w.casefold() in shared]
    forms = []
    for n in range(len(droppable), 0, -1):
        for dropped in itertools.combinations(droppable, n):
            kept = " ".join(w for i, w in enumerate(words) if i not in dropped)
            if kept and kept not in forms:
                forms.append(kept)
    return forms


# sets -----------------------------------------------------------------------

_BULLET = re.compile(r"(?:[-*•]|[0-9]+[.)])\s+")
_LEADING_AND = re.compile(r"^(?:and|и)\s+", re.IGNORECASE)
_LAST_AND = re.compile(r"(.*\S)\s+(?:and|и)\s+(\S.*)", re.IGNORECASE | re.DOTALL)
_SEPARATOR = re.compile(r"[;\n]")
_COMMA_SEPARATOR = re.compile(r"(?<![0-9]),|,(?![0-9])")  # not inside a number: "14,317.82", "2 574,37"


def _set_items(text: str, known: Collection[str] = ()) -> list[str]:
    """Split a list answer into raw items: semicolons and newlines, else commas outside
    numbers; and a last "and"/"и".

    An answer that uses semicolons or newlines keeps its commas inside items ("Dumbbells,
    2 kg"); in a comma-only answer, neighbours that together write a known item are joined
    again. List bullets ("- ", "1. ") are dropped. The last "and" is not split when the
    whole piece is a known item ("Procter and Gamble").
    """
    by_comma = not _SEPARATOR.search(text)
    pieces = [_drop_bullet(p.strip()) for p in (_COMMA_SEPARATOR if by_comma else _SEPARATOR).split(text)]
    pieces = [p for p in pieces if p]
    if len(pieces) > 1:  # Oxford comma: "a, b, and c"
        pieces[1:] = [_LEADING_AND.sub("", p, count=1) for p in pieces[1:]]
    if pieces:
        last = pieces[-1]
        m = _LAST_AND.fullmatch(last)
        pieces[-1:] = [m[1], m[2]] if m and normalize_text(last) not in known else [last]
    return _join_known(pieces, known) if by_comma else pieces


def _join_known(pieces: list[str], known: Collection[str]) -> list[str]:
    """Comma-split pieces with each run that writes a known item joined back ("Dumbbells", "2 kg")."""
    joined: list[str] = []
    for piece in pieces:
        if joined and normalize_text(f"{joined[-1]}, {piece}") in known:
            joined[-1] = f"{joined[-1]}, {piece}"
        else:
            joined.append(piece)
    return joined


def _drop_bullet(item: str) -> str:
    m = _BULLET.match(item)
    return item[m.end() :] if m else item


def _number_readings(text: str) -> tuple[Decimal, ...]:
    """The values ``text`` can mean if it is exactly one number, else ()."""
    m = _NUMBER_FULL.fullmatch(text.strip().strip(_EDGE))
    return _readings(m) if m else ()


def _member_matches(item: str, member: str) -> bool:
    """One answer item against one gold member: numbers by value, texts by :func:`texts_match`."""
    value = parse_number(member)
    if value is not None:
        return value in _number_readings(item)
    return texts_match(item, (member,))


def _same_members(items: Sequence[str], members: Sequence[str]) -> bool:
    """Every item names a member and every member is named (repeats allowed, order free)."""
    hits = [[_member_matches(item, member) for member in members] for item in items]
    return bool(items and members) and all(map(any, hits)) and all(map(any, zip(*hits, strict=True)))


def _check_set(text: str, gold: str | list[str], c: Constraints, aliases: Sequence[str]) -> AnswerCheck:
    want = _set_items(gold) if isinstance(gold, str) else list(gold)
    alternatives = [[m for m in want if normalize_text(m)]] + [_set_items(a) for a in aliases]
    known = {normalize_text(m) for members in alternatives for m in members}
    items = [item for item in _set_items(text, known) if normalize_text(item)]
    reason = None
    if not items:
        reason = "no items"
    elif c.max_words is not None and any(_word_count(item) > c.max_words for item in items):
        reason = f"an item has more than {c.max_words} words"
    value = "; ".join(sorted({normalize_text(item) for item in items})) or None
    return _verdict(reason is None, any(_same_members(items, members) for members in alternatives), value, reason)


# --------------------------------------------------------------------------- instructions

_UNITS = {
    "en": {"RUB": "roubles", "USD": "US dollars", "EUR": "euros", "days": "days", "nights": "nights", "points": "points",
           "years": "years", "ft": "feet", "in": "inches", "mi": "miles", "lb": "pounds", "°F": "degrees Fahrenheit",
           "mi²": "square miles", "m": "metres", "km": "kilometres", "kg": "kilograms", "km²": "square kilometres",
           "°C": "degrees Celsius", "people/km²": "people per square kilometre", "%": "percent", "cm": "centimetres",
           "m²": "square metres", "ft²": "square feet", "ha": "hectares", "acre": "acres"},
    # locative, after "в": "в рублях"
    "ru": {"RUB": "рублях", "USD": "долларах США", "EUR": "евро", "days": "днях", "nights": "ночах", "points": "баллах",
           "years": "годах", "ft": "футах", "in": "дюймах", "mi": "милях", "lb": "фунтах", "°F": "градусах Фаренгейта",
           "mi²": "квадратных милях", "m": "метрах", "km": "километрах", "kg": "килограммах",
           "km²": "квадратных километрах", "°C": "градусах Цельсия", "people/km²": "жителях на квадратный километр",
           "%": "процентах", "cm": "сантиметрах", "m²": "квадратных метрах", "ft²": "квадратных футах",
           "ha": "гектарах", "acre": "акрах"},
}


# Units that are a count per something: Russian says «числом жителей на ...», not «в людях на ...».
_RU_COUNTS_PER_UNIT = {"people/km²": "Ответьте только числом жителей на квадратный километр"}


KNOWN_UNITS = frozenset(_UNITS["en"])


def unit_words(unit: str | None, lang: str) -> str:
    """A unit in words ("feet"; Russian in the locative, after «в»: «футах»); an unknown unit as written."""
    return _UNITS[lang].get(unit, unit) if unit else ""


def _rounding_phrase(rounding: int | None, lang: str, signed: bool = False) -> str:
    """How to round, with the tie rule: the engine rounds half away from zero, so 164.50 is
    165, never 164, and, for an answer that may be negative, -0.05 is -0.1."""
    if rounding is None:
        return ""
    if lang == "en":
        places = "whole units" if rounding == 0 else f"{rounding} decimal place{'' if rounding == 1 else 's'}"
        halves = "halves are rounded away from zero" if signed else "halves are rounded up"
        return f", rounded to {places} ({halves})"
    digits = plural_ru(rounding, "знака", "знаков", "знаков")
    places = "целых" if rounding == 0 else f"{rounding} {digits} после запятой"
    half = "0,5" if rounding == 0 else f"0,{'0' * rounding}5"
    side = f"{half} и −{half} — дальше от нуля" if signed else f"{half} — в большую сторону"
    return f", округлив до {places} ({side})"


def _day_count_instruction(unit: str | None, lang: str) -> str:
    """A count of days or nights from a start date to an end date, with a worked example:
    the start day is not counted (a stay from the 1st to the 3rd is 2 nights; read as
    days, both ends counted would make it 3)."""
    nights = unit == "nights"
    if lang == "en":
        what = "nights" if nights else "days"
        rule = "" if nights else ", excluding the first day"
        example = f"from the 1st to the 3rd is 2 {what}"
        return f"Answer with the number of {what} as a number only, without words{rule} ({example})."
    if nights:
        return "Ответьте только числом ночей, без слов (от 1-го до 3-го числа — 2 ночи)."
    return "Ответьте только числом дней, без слов, не считая первого дня (от 1-го до 3-го числа — 2 дня)."


def _years_instruction(years: str, lang: str) -> str:
    """A number of years, a century or a decade, with an example of how it is written."""
    if years == "century":
        if lang == "en":
            return "Answer with the number of the century only, in digits, without words (20 for the 20th century)."
        return "Ответьте только номером века арабскими цифрами, без слов (20 для XX века)."
    if years == "decade":
        if lang == "en":
            return "Answer with the first year of the decade only, without words (1910 for the 1910s)."
        return "Ответьте только первым годом десятилетия, без слов (1910 для 1910-х годов)."
    if years == "calendar":
        if lang == "en":
            return "Answer with the number of years as a number only, without words: the later year minus the earlier one (from 1990 to 2005 is 15)."
        return "Ответьте только числом лет, без слов: поздний год минус ранний (с 1990 по 2005 год — 15)."
    if lang == "en":
        return "Answer with the number of full years as a number only, without words (from 10 May 2000 to 9 May 2010 is 9)."
    return "Ответьте только числом полных лет, без слов (с 10 мая 2000 по 9 мая 2010 года — 9)."


def _choice_instruction(choices: Sequence[str], lang: str) -> str:
    *head, last = choices
    if lang == "en":
        listed = f"{', '.join(head)} or {last}" if head else last
        return f"Answer with one of these only: {listed}."
    listed = f"{', '.join(head)} или {last}" if head else last
    return f"Ответьте только одним из вариантов: {listed}."


def _list_instruction(max_words: int | None, lang: str) -> str:
    if lang == "en":
        each = f", each item at most {max_words} word{'' if max_words == 1 else 's'}" if max_words else ""
        return f"Answer with the list of items only, separated by semicolons{each}."
    each = ""
    if max_words:
        each = f", каждый элемент не длиннее {max_words} {plural_ru(max_words, 'слова', 'слов', 'слов')}"
    return f"Ответьте только перечнем элементов через точку с запятой{each}."


@functools.lru_cache(maxsize=1024)  # a dataset has few distinct (format, constraints) pairs
def format_instruction(fmt: AnswerFormat, constraints: Constraints, lang: str) -> str:
    """The one-sentence instruction that tells a model the answer format, in ``lang``."""
    fmt = AnswerFormat(fmt)
    check_lang(lang)
    c = constraints
    unit = _UNITS[lang].get(c.unit, c.unit) if c.unit else None
    r = _rounding_phrase(c.rounding, lang, c.signed)
    en = lang == "en"
    choices = getattr(c.choices, lang) if c.choices else ()
    if fmt is AnswerFormat.yes_no:
        return "Answer with one word only: yes or no." if en else "Ответьте одним словом: да или нет."
    if fmt is AnswerFormat.currency:
        if en:
            head = f"Answer with the amount in {unit} as a number only" if unit else "Answer with a number only"
            return f"{head}, without currency symbol or words{r}."
        head = f"Ответьте суммой в {unit} только числом" if unit else "Ответьте только числом"
        return f"{head}, без символа валюты и слов{r}."
    if fmt is AnswerFormat.number and c.day_count:
        return _day_count_instruction(c.unit, lang)
    if fmt is AnswerFormat.number and c.years:
        return _years_instruction(c.years, lang)
    if fmt is AnswerFormat.number:
        if en:
            head = f"Answer with the value in {unit} as a number only" if unit else "Answer with a number only"
            return f"{head}, without units or words{r}."
        head = f"Ответьте значением в {unit} только числом" if unit else "Ответьте только числом"
        head = _RU_COUNTS_PER_UNIT.get(c.unit, head)
        return f"{head}, без единиц измерения и слов{r}."
    if fmt is AnswerFormat.percent:
        if en:
            return f"Answer with the number of percent only, without the % sign or words{r}."
        return f"Ответьте только числом процентов, без знака % и слов{r}."
    if fmt is AnswerFormat.date:
        if en:
            return "Answer with a date only, in the format YYYY-MM-DD (for example, 2026-01-05)."
        return "Ответьте только датой в формате YYYY-MM-DD (например, 2026-01-05)."
    if fmt in (AnswerFormat.one_token, AnswerFormat.short_text) and choices:
        return _choice_instruction(choices, lang)
    if fmt is AnswerFormat.one_token:
        return "Answer with exactly one word." if en else "Ответьте ровно одним словом."
    if fmt is AnswerFormat.short_text:
        n = c.max_words or DEFAULT_MAX_WORDS
        if en:
            return f"Answer with at most {n} word{'' if n == 1 else 's'}, without explanation."
        return f"Ответьте не более чем {n} {plural_ru(n, 'словом', 'словами', 'словами')}, без пояснений."
    return _list_instruction(c.max_words, lang)
