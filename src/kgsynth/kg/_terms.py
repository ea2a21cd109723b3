"""RDF terms: typed Python values, fallback names, and escaped VALUES blocks.

kgsynth uses pyoxigraph's term classes everywhere (also for remote endpoints), so a
term's ``str()`` is its N-Triples form with all escaping done by pyoxigraph.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
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


def local_name(iri: str) -> str:
    """The last segment of an IRI, percent-decoded: the name of an unlabelled entity."""
    stripped = iri.rstrip("/#")
    for sep in ("#", "/", ":"):
        if sep in stripped:
            stripped = stripped.rsplit(sep, 1)[1]
            break
    return unquote(stripped) or iri


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
