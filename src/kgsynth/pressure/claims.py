"""False claims computed from the graph, never written by a model (issue 18, item 1): for a
fact a model is asked about, a value of the same kind that the graph does not state for its
subject and relation, at a confusability level.

- An entity: ``high``, another object of the same relation that shares a class with the true
  one (another city a customer might live in; any other object of the relation in a graph
  without classes, as FB15k-237 is); ``medium``, an entity of that class that no fact of the
  relation names.
- A number: the true value moved by 5% (``high``), 20% (``medium``) or 100% (``low``), up or
  down by seed, written with the true value's decimals and datatype.
- A date (``xsd:date``, ``xsd:dateTime``, ``xsd:gYear``, and a whole number between 1000 and
  2100 of a relation named like a date or year, FB15k-237's decimal years): moved by 1, 5
  or 30 years.

Every claim is checked false by SPARQL before it is returned: the graph states no such fact
(value equality for a literal: ``5.0`` is ``5``). Candidates are sorted by IRI before the
seeded pick, so every engine gives the same claims for a seed.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Iterable
from decimal import Decimal
from enum import StrEnum
from typing import Literal

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict

from kgsynth.kg import KnowledgeGraph
from kgsynth.kg.vocab import XSD
from kgsynth.queries import Fact, Node


class Confusability(StrEnum):
    high = "high"
    medium = "medium"
    low = "low"


class FalseClaim(BaseModel):
    """A fact of the graph and a false value for its object."""

    model_config = ConfigDict(frozen=True)

    fact: Fact
    false_value: Node
    kind: Literal["entity", "number", "date"]
    confusability: Confusability
    how: str  # how the false value was made: "another object of lives in", "+20%", "5 years earlier"


NUMBER_OFFSETS = {Confusability.high: Decimal("0.05"), Confusability.medium: Decimal("0.2"), Confusability.low: Decimal("1")}
DATE_SHIFTS = {Confusability.high: 1, Confusability.medium: 5, Confusability.low: 30}  # years
_NUMBERS = {f"{XSD}{name}" for name in ("decimal", "integer", "int", "long", "nonNegativeInteger", "positiveInteger")}
_YEARLY = re.compile(r"(?<![a-z])(date|year|founded|born)(?![a-z])", re.IGNORECASE)  # a number of such a relation is a year
DAYS = {f"{XSD}date", f"{XSD}dateTime"}  # answered as a date; a gYear is answered as a number
_DATES = {*DAYS, f"{XSD}gYear"}

# another object of the relation, of a class of the true one's (any, in a graph without classes: FB15k-237)
_OTHER_OBJECTS = """SELECT DISTINCT ?o WHERE {
  #VALUES
  ?x ?r ?o .
  FILTER(isIRI(?o) && ?o != ?t)
  FILTER NOT EXISTS { ?s ?r ?o }
  FILTER(NOT EXISTS { ?t a ?any } || EXISTS { ?t a ?c . ?o a ?c })
}"""
_SAME_CLASS = """SELECT DISTINCT ?o WHERE {
  #VALUES
  ?t a ?c . ?o a ?c .
  FILTER(isIRI(?o) && ?o != ?t)
  FILTER NOT EXISTS { ?x ?r ?o }
}"""
_STATED = """SELECT ?o WHERE {
  #VALUES
  ?s ?r ?o . FILTER(?o = ?v)
}"""


def false_claims(kg: KnowledgeGraph, facts: Iterable[Fact], confusability: Confusability = Confusability.high,
                 seed: int = 0) -> list[FalseClaim]:
    """A false claim for each fact that can have one (an entity with another of its class, a
    number, a date; not a text), in the order of ``facts``."""
    rng = random.Random(seed)
    claims = []
    for fact in facts:
        claim = _claim(kg, fact, confusability, rng)
        if claim is not None and not _stated(kg, fact, claim.false_value.term()):
            claims.append(claim)
    return claims


def _claim(kg: KnowledgeGraph, fact: Fact, level: Confusability, rng: random.Random) -> FalseClaim | None:
    obj = fact.object
    if obj.kind == "iri":
        return _entity_claim(kg, fact, level, rng)
    if obj.datatype in _NUMBERS and _YEARLY.search(fact.relation.label) and 1000 <= Decimal(obj.value) <= 2100:
        return _year_claim(fact, level, rng)
    if obj.datatype in _NUMBERS:
        value = _moved_number(Decimal(obj.value), NUMBER_OFFSETS[level], rng.choice((1, -1)), obj.datatype)
        shown = f"{'+' if Decimal(value) > Decimal(obj.value) else '-'}{float(NUMBER_OFFSETS[level] * 100):g}%"
        return _literal_claim(fact, value, "number", level, shown)
    if obj.datatype in _DATES:
        years = DATE_SHIFTS[level] * rng.choice((1, -1))
        value = _moved_date(obj.value, obj.datatype, years)
        if value is None:
            return None
        return _literal_claim(fact, value, "date", level, f"{abs(years)} year{'s' if abs(years) > 1 else ''} {'later' if years > 0 else 'earlier'}")
    return None


def _year_claim(fact: Fact, level: Confusability, rng: random.Random) -> FalseClaim | None:
    """A year written as a number (FB15k-237's dates are decimal years): moved by years, not
    by a share of itself; a fraction of a year (2006.9166) is no answer anyone gives, so none."""
    year = Decimal(fact.object.value)
    if year != year.to_integral_value():
        return None
    years = DATE_SHIFTS[level] * rng.choice((1, -1))
    return _literal_claim(fact, str(int(year) + years), "date", level,
                          f"{abs(years)} year{'s' if abs(years) > 1 else ''} {'later' if years > 0 else 'earlier'}")


def _entity_claim(kg: KnowledgeGraph, fact: Fact, level: Confusability, rng: random.Random) -> FalseClaim | None:
    if level is Confusability.low:
        return None  # an entity of another class is no claim a reader would weigh
    query = _OTHER_OBJECTS if level is Confusability.high else _SAME_CLASS
    row = (fact.subject.term(), fact.relation.term(), fact.object.term())
    candidates = sorted((o for (o,) in kg.select(query, (("s", "r", "t"), [row]))), key=lambda term: term.value)
    if not candidates:
        return None
    chosen = rng.choice(candidates)
    labels = kg.labels([chosen])[chosen]
    node = Node.from_term(chosen, kg.pick_label(chosen, labels), labels)
    how = f"another object of {fact.relation.label}" if level is Confusability.high else "another entity of its class"
    return FalseClaim(fact=fact, false_value=node, kind="entity", confusability=level, how=how)


def _literal_claim(fact: Fact, value: str, kind: Literal["number", "date"], level: Confusability, how: str) -> FalseClaim:
    node = Node(kind="literal", value=value, datatype=fact.object.datatype, lang=None, label=value, labels={})
    return FalseClaim(fact=fact, false_value=node, kind=kind, confusability=level, how=how)


def _moved_number(value: Decimal, offset: Decimal, sign: int, datatype: str) -> str:
    """``value`` moved by ``offset`` (a share of it) in the direction ``sign``, with its
    decimals; a positive count stays positive; one step of its last decimal when the share
    rounds away."""
    places = max(0, -value.as_tuple().exponent) if datatype == f"{XSD}decimal" else 0
    step = Decimal(1).scaleb(-places)
    moved = value * (1 + sign * offset)
    if moved <= 0 < value:
        moved = value * (1 + offset)  # a price, an age or a count does not turn negative
    moved = moved.quantize(step)
    if moved == value:
        moved = value + step  # too small to move by the share: one step away
    return str(moved) if places else str(int(moved))


def _moved_date(lexical: str, datatype: str, years: int) -> str | None:
    try:
        if datatype == f"{XSD}gYear":
            return str(int(lexical) + years)
        day = dt.date.fromisoformat(lexical[:10])
    except ValueError:
        return None
    try:
        moved = day.replace(year=day.year + years)
    except ValueError:  # 29 February in a year without one
        moved = day.replace(year=day.year + years, day=28)
    return moved.isoformat() + lexical[10:]


def _stated(kg: KnowledgeGraph, fact: Fact, value: ox.NamedNode | ox.Literal) -> bool:
    """Whether the graph states ``value`` for the fact's subject and relation (by value for a literal)."""
    row = (fact.subject.term(), fact.relation.term(), value)
    return any(True for _ in kg.select(_STATED, (("s", "r", "v"), [row])))
