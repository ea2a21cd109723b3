"""RDF terms: typed Python values, fallback names, and escaped VALUES blocks.

kgsynth uses pyoxigraph's term classes everywhere (also for remote endpoints), so a
term's ``str()`` is its N-Triples form with all escaping done by pyoxigraph.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from functools import lru_cache
from urllib.parse import unquote

from pyoxigraph import BlankNode, Literal, NamedNode
from rapidfuzz.distance import Levenshtein

from kgsynth.errors import QueryError
from kgsynth.kg.vocab import RDF, XSD

Term = NamedNode | BlankNode | Literal

VALUES_PLACEHOLDER = "#VALUES"

_INTEGER_TYPES = {
    XSD + t
    for t in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "negativeInteger", "nonPositiveInteger", "unsignedLong", "unsignedInt",
        "unsignedShort", "unsignedByte",
    )
}
NUMERIC_TYPES = _INTEGER_TYPES | {XSD + "decimal", XSD + "double", XSD + "float"}


def to_python(lexical: str, datatype: str | None) -> object:
    """A literal's value as Python: Decimal, int, float, date, year (int), bool or str.

    Ill-typed lexical forms (``"abc"^^xsd:decimal``) stay strings rather than failing.
    """
    try:
        if datatype in _INTEGER_TYPES:
            return int(lexical)
        if datatype == XSD + "decimal":
            return Decimal(lexical)
        if datatype in (XSD + "double", XSD + "float"):
            return float(lexical)
        if datatype == XSD + "date":
            return dt.date.fromisoformat(lexical)
        if datatype == XSD + "dateTime":
            return dt.datetime.fromisoformat(lexical)
        if datatype == XSD + "gYear":
            return int(lexical)
        if datatype == XSD + "boolean":
            return lexical in ("true", "1")
    except (ValueError, ArithmeticError):
        return lexical
    return lexical


_DATE = re.compile(r"(-?\d{4,}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})?")
_YEAR = re.compile(r"(-?\d{4,})(Z|[+-]\d{2}:\d{2})?")
# A later "year" is a placeholder, not a date: Freebase writes 10000 for a series still running.
MAX_YEAR = 9999


def literal_date(lexical: str, datatype: str) -> dt.date | None:
    """The calendar date of an xsd:date or xsd:dateTime as written (a timezone is not
    applied), or None if ill-typed or of another datatype."""
    if datatype == XSD + "dateTime":
        value = to_python(lexical, datatype)
        return value.date() if isinstance(value, dt.datetime) else None
    match = _DATE.fullmatch(lexical.strip()) if datatype == XSD + "date" else None
    try:
        return dt.date.fromisoformat(match.group(1)) if match else None
    except ValueError:
        return None


# Dates and years as real graphs mistype them, read from their text: a string (plain,
# xsd:string or language-tagged) or a value of a misspelt date datatype. The whole text (spaces
# aside) is an ISO date, with a time and a zone if any, or a year of four digits from 1000 to
# 2100, the rule library's year range: "12", "862" (a count as likely), "1923 AD", "05/12/1923"
# and "3000" are not read. XPath regexes too: SPARQL narrows values with them, the reader decides.
DATE_TEXT = r"([0-9]{4}-[0-9]{2}-[0-9]{2})([T ]([0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?))?(Z|[+-][0-9]{2}:[0-9]{2})?"
YEAR_TEXT = r"[0-9]{4}"
TEXT_YEARS = (1000, 2100)
_DATE_TEXT, _YEAR_TEXT = re.compile(DATE_TEXT), re.compile(YEAR_TEXT)
STRING_TYPES = frozenset({XSD + "string", RDF + "langString"})
_TEMPORAL_TYPES = frozenset({XSD + "date", XSD + "dateTime", XSD + "gYear"})
_XSD_LIKE = re.compile(r"https?://www\.w3\.org/2001/XMLSchema[#/]([A-Za-z]+)", re.IGNORECASE)
_TEMPORAL_NAMES = ("date", "datetime", "gyear")
_MISSPELLING = 2  # edits
_OTHER_XSD_TYPES = frozenset({"byte", "name"})  # XSD's own types within two edits of "date"


def date_or_year(term: Literal) -> dt.date | int | None:
    """A literal read as a date (xsd:date, xsd:dateTime) or a year (int): an xsd:gYear, or a
    number by its integer part (FB15k-237's 1912.66666667 is 1912); a string or a value of a
    misspelt date datatype (:func:`reads_from_text`) by its text (:data:`DATE_TEXT`,
    :data:`YEAR_TEXT`). None for anything else, for a negative number with a fraction
    (whether -43.5 is in the year -43 or -44 depends on how it was encoded) and for a year
    after :data:`MAX_YEAR`. The rule engine and ``kgsynth rules suggest`` read dates and
    years through this one function."""
    datatype, lexical = term.datatype.value, term.value.strip()
    if datatype in (XSD + "date", XSD + "dateTime"):
        return literal_date(lexical, datatype)
    if reads_from_text(datatype):
        return _date_or_year_of_text(lexical)
    if datatype == XSD + "gYear":
        match = _YEAR.fullmatch(lexical)
        year = int(match.group(1)) if match else None
    elif datatype in NUMERIC_TYPES:
        year = _year_of_number(lexical)
    else:
        return None
    return year if year is not None and year <= MAX_YEAR else None


@lru_cache(maxsize=256)
def reads_from_text(datatype: str) -> bool:
    """Whether :func:`date_or_year` reads a value of this datatype from its text: a string's,
    or a slip for xsd:date, xsd:dateTime or xsd:gYear: the XSD namespace (with ``#`` or
    ``/``) and a local name within two edits of theirs, case aside (``xsd:dat``,
    ``xsd:Date``, ``XMLSchema/date``, ``xsd:datetime``)."""
    if datatype in STRING_TYPES:
        return True
    match = _XSD_LIKE.fullmatch(datatype)
    name = match.group(1).lower() if match else None
    if name is None or datatype in _TEMPORAL_TYPES or name in _OTHER_XSD_TYPES:
        return False
    return any(Levenshtein.distance(name, t, score_cutoff=_MISSPELLING) <= _MISSPELLING for t in _TEMPORAL_NAMES)


def _date_or_year_of_text(text: str) -> dt.date | int | None:
    if _YEAR_TEXT.fullmatch(text):
        year = int(text)
        return year if TEXT_YEARS[0] <= year <= TEXT_YEARS[1] else None
    match = _DATE_TEXT.fullmatch(text)
    if match is None:
        return None
    try:
        if match.group(3):
            dt.time.fromisoformat(match.group(3))  # an hour 25 is no time: the text is no date
        return dt.date.fromisoformat(match.group(1))
    except ValueError:
        return None


def literal_type(variable: str) -> str:
    """A SPARQL 1.1 expression: the datatype of the literal ``?variable`` alike on every engine
    (Virtuoso gives a language-tagged literal no DATATYPE; SPARQL 1.1 says rdf:langString);
    an error for an IRI or a blank node."""
    return f'IF(LANG(?{variable}) != "", <{RDF}langString>, COALESCE(DATATYPE(?{variable}), <{XSD}string>))'


def text_matches(variable: str, pattern: str) -> str:
    """A SPARQL 1.1 condition: the variable's text, spaces aside, is all ``pattern``."""
    whole = Literal(rf"^\s*({pattern})\s*$")
    return f"REGEX(STR(?{variable}), {whole})"


def _year_of_number(lexical: str) -> int | None:
    try:
        number = Decimal(lexical)
    except InvalidOperation:
        return None
    if not number.is_finite() or number.adjusted() > 4 or (number < 0 and number != number.to_integral_value()):
        return None  # more than five digits before the point is no year (and 1e400000 takes seconds to expand)
    return int(number.to_integral_value(rounding=ROUND_FLOOR))


def local_name(iri: str) -> str:
    """The last segment of an IRI, percent-decoded: the name of an unlabelled entity."""
    stripped = iri.rstrip("/#")
    for sep in ("#", "/", ":"):
        if sep in stripped:
            stripped = stripped.rsplit(sep, 1)[1]
            break
    return unquote(stripped) or iri


# an English label with its variant's region glued on after a word: FB15k-237's "Actor-GB", "Mountain Time Zone-US"
REGION_MARK = re.compile(r"(?<=[^\W\d_])-(?:GB|US|AU|CA|IE|NZ)$")


def spells_a_path(label: str) -> bool:
    """Whether a relation's label spells its IRI's path instead of naming it (FB15k-237's
    "people.person.nationality", "award award category category of"): a dot, a slash or an
    underscore, or a word said twice in a row."""
    said = label.casefold().split()
    return any(c in label for c in "./_") or any(a == b for a, b in zip(said, said[1:], strict=False))


def readable_name(iri: str) -> str:
    """The IRI's last segment as a person writes a name: percent escapes decoded, underscores
    as spaces ("Kim_Dae-jung" -> "Kim Dae-jung"). camelCase stays whole: "McDonald" and
    "iPhone" are names too."""
    return " ".join(local_name(iri).replace("_", " ").split()) or iri


def values_block(variables: Sequence[str], rows: Iterable[Sequence[Term]]) -> str:
    """A SPARQL ``VALUES`` block; every term is serialised (and escaped) by pyoxigraph."""
    rows = list(rows)
    for row in rows:
        for term in row:
            if isinstance(term, BlankNode):
                raise QueryError(f"blank node {term} cannot be bound in a query; give the entity an IRI")
    if len(variables) == 1:
        body = " ".join(str(row[0]) for row in rows)
        return f"VALUES ?{variables[0]} {{ {body} }}"
    names = " ".join(f"?{v}" for v in variables)
    body = " ".join("(" + " ".join(str(t) for t in row) + ")" for row in rows)
    return f"VALUES ({names}) {{ {body} }}"


def bind_values(query: str, variables: Sequence[str], rows: Iterable[Sequence[Term]]) -> str:
    """Put a VALUES block where the query has its ``#VALUES`` placeholder line."""
    if query.count(VALUES_PLACEHOLDER) != 1:
        raise QueryError(f"query needs exactly one {VALUES_PLACEHOLDER} line to bind {list(variables)}")
    return query.replace(VALUES_PLACEHOLDER, values_block(variables, rows))


def anchor_class_iri(text: str) -> NamedNode:
    """A user's class IRI (angle brackets optional), or a one-line error."""
    try:
        return NamedNode(text.strip().removeprefix("<").removesuffix(">"))
    except ValueError:
        raise QueryError(f"anchor class {text!r} is not an IRI") from None
