"""RDF terms: typed Python values, fallback names, and escaped VALUES blocks.

kgsynth uses pyoxigraph's term classes everywhere (also for remote endpoints), so a
term's ``str()`` is its N-Triples form with all escaping done by pyoxigraph.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from urllib.parse import unquote

from pyoxigraph import BlankNode, Literal, NamedNode

from kgsynth.errors import QueryError
from kgsynth.kg.vocab import XSD

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


def date_or_year(term: Literal) -> dt.date | int | None:
    """A literal read as a date (xsd:date, xsd:dateTime) or a year (int): an xsd:gYear, or a
    number by its integer part (FB15k-237's 1912.66666667 is 1912). None for anything else,
    for a negative number with a fraction (whether -43.5 is in the year -43 or -44 depends on
    how it was encoded) and for a year after :data:`MAX_YEAR`. The rule engine and
    ``kgsynth rules suggest`` read dates and years through this one function."""
    datatype, lexical = term.datatype.value, term.value.strip()
    if datatype in (XSD + "date", XSD + "dateTime"):
        return literal_date(lexical, datatype)
    if datatype == XSD + "gYear":
        match = _YEAR.fullmatch(lexical)
        year = int(match.group(1)) if match else None
    elif datatype in NUMERIC_TYPES:
        year = _year_of_number(lexical)
    else:
        return None
    return year if year is not None and year <= MAX_YEAR else None


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
