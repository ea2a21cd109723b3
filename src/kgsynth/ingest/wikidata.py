"""The contamination check at the level of facts: does Wikidata already state a fact?

Each entity is linked to the Wikidata items that carry its name as a label or an alias
(``rdfs:label`` / ``skos:altLabel``, in every configured language). A relation is mapped to a
property by the configured table (``"founder of" = "^P112"``: the inverse of P112) or else by
the property's own label or alias. Then the statement itself is looked up, in every rank
(``wdt:`` and ``p:``/``ps:``), in both directions for an entity object:

- ``known``: Wikidata states it: the object is one of the values, a date falls within the
  tolerance (a date known to the month or the year, which Wikidata writes as the 1st or as
  1 January, matches any day of it), a number within the relative tolerance. A relation with
  no property still counts as known when any statement links the two items, or gives the
  subject the same date. A value (date, number, text) is compared only when the subject's
  name links to one item: a match with one of several namesakes says nothing.
- ``contradicts``: the relation's property has values for the subject (one item only: a
  name shared by several items cannot contradict) and none matches. Text objects never
  contradict (the wording of a text varies too much to tell), nor numbers with a unit
  (Wikidata's unit is not read).
- ``novel``: nothing found; ``unchecked``: the endpoint failed (the fact is kept and a
  rerun asks again, since only answers are cached).

Every query's rows are cached in a SQLite file (a name's items name by name), so a rerun
asks nothing it asked before.
The endpoint client (``kg.EndpointBackend``) sends the configured User-Agent and honours
HTTP 429 with its Retry-After.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel

from kgsynth.errors import KgsynthError
from kgsynth.ingest.extraction import ObjectKind, fold
from kgsynth.kg import EndpointBackend

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
_PREFIXES = f"""PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX wd: <{WD}>
PREFIX wdt: <{WDT}>
PREFIX p: <{P}>
PREFIX ps: <{PS}>
"""
_BATCH = 40  # names or items in one query's VALUES: Wikidata's query service answers these in well under a second
_VALUE_TYPES = "xsd:dateTime, xsd:date, xsd:decimal, xsd:integer, xsd:double"


class Contamination(StrEnum):
    known = "known"
    contradicts = "contradicts"
    novel = "novel"
    unchecked = "unchecked"


class Claim(BaseModel):
    """A fact as the check sees it: names and labels, the object's kind and typed value."""

    subject: list[str]
    relation: list[str]
    kind: ObjectKind
    object: list[str]  # an entity's names, or the literal as the document writes it
    value: str | int | None = None  # a number (decimal text), an ISO date, or a year
    unit: str | None = None  # a number's unit or currency ("USD")


class Verdict(BaseModel):
    label: Contamination
    reason: str


class WikidataCheck:
    """Label claims ``known`` / ``contradicts`` / ``novel`` against a Wikidata SPARQL endpoint."""

    def __init__(self, endpoint: EndpointBackend, cache: Path, languages: Sequence[str], properties: dict[str, str],
                 date_tolerance_days: int, quantity_tolerance: float):
        self.endpoint, self.languages = endpoint, tuple(languages)
        self.properties = {fold(name): prop for name, prop in properties.items()}
        self.days, self.tolerance = date_tolerance_days, Decimal(str(quantity_tolerance))
        cache.parent.mkdir(parents=True, exist_ok=True)
        self._cache = sqlite3.connect(cache)
        self._cache.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, rows TEXT NOT NULL)")

    def close(self) -> None:
        self._cache.close()

    def check(self, claims: Sequence[Claim]) -> list[Verdict]:
        """One verdict per claim. An endpoint failure (down, slow, an odd answer) makes the
        claims not yet decided ``unchecked`` with its one line, and asks nothing more."""
        verdicts: list[Verdict] = []
        try:
            items = self._items({name for c in claims for name in [*c.subject, *(c.object if c.kind is ObjectKind.entity else [])]})
            props = self._properties({name for c in claims for name in c.relation})
            for claim in claims:
                verdicts.append(self._verdict(claim, items, props))
        except KgsynthError as e:
            verdicts += [Verdict(label=Contamination.unchecked, reason=str(e)) for _ in claims[len(verdicts):]]
        return verdicts

    # ------------------------------------------------------------------ linking
    def _items(self, names: Iterable[str]) -> dict[str, set[str]]:
        """Each name's items: those with it as a label or an alias in a configured language."""
        return self._named(names, f"FILTER(STRSTARTS(STR(?x), \"{WD}Q\"))")

    def _properties(self, names: Iterable[str]) -> dict[str, set[str]]:
        """Each relation name's property ids by label or alias ("P112"), the configured table first."""
        found = {n: {self.properties[fold(n)]} for n in names if fold(n) in self.properties}
        rest = [n for n in names if n not in found]
        # Wikidata writes property labels in lower case ("founded by"); a model may not
        by_label = self._named({*rest, *(n.lower() for n in rest)}, f"FILTER(STRSTARTS(STR(?x), \"{WD}P\"))")
        for name in rest:
            iris = by_label.get(" ".join(name.split()), set()) | by_label.get(" ".join(name.lower().split()), set())
            if iris:
                found[name] = {iri.removeprefix(WD) for iri in iris}
        return found

    def _named(self, names: Iterable[str], restriction: str) -> dict[str, set[str]]:
        """Each name's IRIs; cached name by name, so a rerun with more documents asks only for the new names."""
        names = sorted({" ".join(n.split()) for n in names if n.strip()})
        keys = {n: self._key(f"named\n{self.languages}\n{restriction}\n{n}") for n in names}
        found = {n: set(cached) for n in names if (cached := self._cached(keys[n])) is not None}
        for batch in _batches([n for n in names if n not in found]):
            literals = " ".join(f"{_string(n)}@{lang}" for n in batch for lang in self.languages)
            query = (f"SELECT DISTINCT ?l ?x WHERE {{ VALUES ?l {{ {literals} }} {{ ?x rdfs:label ?l }} UNION "
                     f"{{ ?x skos:altLabel ?l }} {restriction} }}")
            answered: dict[str, set[str]] = {n: set() for n in batch}
            for label, iri in self.endpoint.select(_PREFIXES + query):
                answered.setdefault(label.value, set()).add(iri.value)
            for name in batch:
                self._store(keys[name], sorted(answered[name]))
            found |= answered
        return found

    # ------------------------------------------------------------------ statements
    def _verdict(self, claim: Claim, items: dict[str, set[str]], props: dict[str, set[str]]) -> Verdict:
        subjects = _linked(claim.subject, items)
        if not subjects:
            return Verdict(label=Contamination.novel, reason=f"no Wikidata item is named {claim.subject[0]!r}")
        objects = _linked(claim.object, items) if claim.kind is ObjectKind.entity else set()
        if claim.kind is ObjectKind.entity and not objects:
            return Verdict(label=Contamination.novel, reason=f"no Wikidata item is named {claim.object[0]!r}")
        if claim.kind is not ObjectKind.entity and len(subjects) > 1:  # a value matching one of several namesakes says nothing
            return Verdict(label=Contamination.novel, reason=f"{len(subjects)} Wikidata items are named {claim.subject[0]!r}")
        mapped = sorted(_linked(claim.relation, props))
        if not mapped:
            return self._unmapped(claim, subjects, objects)
        values: list[tuple[str, str, dict, bool]] = []  # (subject item, property, value, the mapped direction)
        for prop in mapped:
            values += [(s, prop, v, True) for s, v in self._values(sorted(subjects), prop)]
            if claim.kind is ObjectKind.entity:  # stated the other way round
                other = prop[1:] if prop.startswith("^") else f"^{prop}"
                values += [(s, other, v, False) for s, v in self._values(sorted(subjects), other)]
        values.sort(key=lambda v: (not v[3], v[0], v[1], v[2]["value"]))  # the same reason from any endpoint's row order
        for subject, prop, value, _ in values:
            if self._matches(claim, objects, value):
                return Verdict(label=Contamination.known, reason=_statement(subject, prop, value))
        stated = [(s, p, v) for s, p, v, mapped_way in values if mapped_way]
        if stated and len(subjects) == 1 and claim.kind is not ObjectKind.text:
            shown = "; ".join(_statement(s, p, v) for s, p, v in stated[:3])
            if claim.kind is ObjectKind.number and claim.unit:  # Wikidata's unit (psv:) is not read: no telling
                return Verdict(label=Contamination.novel, reason=f"Wikidata has {shown}, in a unit not compared with {claim.unit}")
            return Verdict(label=Contamination.contradicts, reason=f"Wikidata has {shown}")
        return Verdict(label=Contamination.novel, reason=f"no statement of {', '.join(mapped)} matches")

    def _unmapped(self, claim: Claim, subjects: set[str], objects: set[str]) -> Verdict:
        """A relation with no property: known if any statement links the items, or gives the
        subject the same date (a number or a text alone matches too much by chance), else novel."""
        found = []
        if claim.kind is ObjectKind.entity:
            found = [(s, p, {"type": "uri", "value": o}) for s, p, o in self._links(sorted(subjects), sorted(objects))]
        elif claim.kind is ObjectKind.date:
            found = [(s, p, v) for s, p, v in self._all_values(sorted(subjects)) if self._matches(claim, objects, v)]
        if found:
            return Verdict(label=Contamination.known, reason=_statement(*min(found, key=lambda f: (f[0], f[1], f[2]["value"]))))
        return Verdict(label=Contamination.novel, reason=f"no Wikidata property is named {claim.relation[0]!r} and no statement matches")

    def _values(self, subjects: list[str], prop: str) -> list[tuple[str, dict]]:
        """(subject, value) of every statement of ``prop`` ("P112", or "^P112" read backwards), all ranks."""
        pid, inverse = prop.lstrip("^"), prop.startswith("^")
        rows = []
        for batch in _batches(subjects):
            s, o = ("?o", "?s") if inverse else ("?s", "?o")
            query = (f"SELECT DISTINCT ?s ?o WHERE {{ VALUES ?s {{ {_iris(batch)} }} "
                     f"{{ {s} wdt:{pid} {o} }} UNION {{ {s} p:{pid} ?st . ?st ps:{pid} {o} }} }}")
            rows += [(row[0]["value"], row[1]) for row in self._select(query)]
        return rows

    def _links(self, subjects: list[str], objects: list[str]) -> list[tuple[str, str, str]]:
        """(subject, property, object) of any statement between the items, either way."""
        rows = []
        for batch in _batches([f"(<{s}> <{o}>)" for s in subjects for o in objects]):
            query = (f"SELECT DISTINCT ?s ?p ?o WHERE {{ VALUES (?s ?o) {{ {' '.join(batch)} }} "
                     f"{{ ?s ?d ?o BIND(?d AS ?q) }} UNION {{ ?o ?d ?s BIND(?d AS ?r) }} UNION "
                     f"{{ ?s ?ps ?st . ?st ?d ?o BIND(?d AS ?q) }} UNION {{ ?o ?ps ?st . ?st ?d ?s BIND(?d AS ?r) }} "
                     f"FILTER(STRSTARTS(STR(?d), \"{WDT}\") || STRSTARTS(STR(?d), \"{PS}\")) "
                     f"BIND(IF(BOUND(?q), STR(?q), CONCAT(\"^\", STR(?r))) AS ?p) }}")
            rows += [(s["value"], _pid(p["value"]), o["value"]) for s, p, o in self._select(query)]
        return rows

    def _all_values(self, subjects: list[str]) -> list[tuple[str, str, dict]]:
        """(subject, property, value) of every dated or numeric statement of the items."""
        rows = []
        for batch in _batches(subjects):
            query = (f"SELECT DISTINCT ?s ?d ?v WHERE {{ VALUES ?s {{ {_iris(batch)} }} "
                     f"{{ ?s ?d ?v }} UNION {{ ?s ?ps ?st . ?st ?d ?v }} "
                     f"FILTER((STRSTARTS(STR(?d), \"{WDT}\") || STRSTARTS(STR(?d), \"{PS}\")) && isLiteral(?v) "
                     f"&& DATATYPE(?v) IN ({_VALUE_TYPES})) }}")
            rows += [(s["value"], _pid(d["value"]), v) for s, d, v in self._select(query)]
        return rows

    # ------------------------------------------------------------------ comparing
    def _matches(self, claim: Claim, objects: set[str], value: dict) -> bool:
        if claim.kind is ObjectKind.entity:
            return value.get("type") == "uri" and value["value"] in objects
        if value.get("type") == "uri":
            return False
        if claim.kind is ObjectKind.date:
            return _same_date(claim.value, value["value"], self.days)
        if claim.kind is ObjectKind.number:
            return _same_number(claim.value, value["value"], self.tolerance)
        return any(fold(text) == fold(value["value"]) for text in claim.object)

    # ------------------------------------------------------------------ the endpoint, cached
    def _select(self, query: str) -> list[list[dict]]:
        """The query's rows, each term as {"type": "uri" | "literal", "value", "datatype"}."""
        query = _PREFIXES + query
        key = self._key(query)
        if (cached := self._cached(key)) is not None:
            return cached
        rows = [[_term(term) for term in row] for row in self.endpoint.select(query)]
        self._store(key, rows)
        return rows

    def _key(self, what: str) -> str:
        return hashlib.sha256(f"{self.endpoint.url}\n{what}".encode()).hexdigest()

    def _cached(self, key: str) -> list | None:
        row = self._cache.execute("SELECT rows FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _store(self, key: str, rows: list) -> None:
        with self._cache:
            self._cache.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, json.dumps(rows, ensure_ascii=False)))


def _linked(names: Sequence[str], found: dict[str, set[str]]) -> set[str]:
    return set().union(*(found.get(" ".join(n.split()), set()) for n in names))


def _term(term) -> dict:
    if term is None:
        return {"type": "none", "value": ""}
    if hasattr(term, "datatype"):
        return {"type": "literal", "value": term.value, "datatype": term.datatype.value}
    return {"type": "uri", "value": term.value}


def _batches(values: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), _BATCH):
        yield values[start:start + _BATCH]


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid SPARQL string literal


def _iris(iris: Iterable[str]) -> str:
    return " ".join(f"<{iri}>" for iri in iris)


def _pid(iri: str) -> str:
    """"P112" from a wdt:/ps: property IRI, keeping a leading ^ (read backwards)."""
    inverse = iri.startswith("^")
    return ("^" if inverse else "") + iri.lstrip("^").rsplit("/", 1)[-1]


def _statement(subject: str, prop: str, value: dict) -> str:
    """How the reason shows a Wikidata statement: "wd:Q2 P112 wd:Q1" (or "^P112": the other way)."""
    shown = f"wd:{value['value'].removeprefix(WD)}" if value.get("type") == "uri" else repr(value["value"])
    return f"wd:{subject.removeprefix(WD)} {prop} {shown}"


def _same_date(claimed: str | int | None, lexical: str, days: int) -> bool:
    """A claimed year matches any date in it; a claimed day matches within ``days``, or a
    1 January of its year (Wikidata writes a date known to the year as 1 January)."""
    try:
        found = dt.date.fromisoformat(lexical[:10])
    except ValueError:
        return False  # a date before year 1 or otherwise unreadable
    if isinstance(claimed, int):
        return found.year == claimed
    try:
        day = dt.date.fromisoformat(str(claimed))
    except ValueError:
        return False
    if abs((found - day).days) <= days:
        return True
    # Wikidata writes a date known to the month as its 1st, and one known to the year as 1 January
    return found.day == 1 and found.year == day.year and (found.month == 1 or found.month == day.month)


def _same_number(claimed: str | int | None, lexical: str, tolerance: Decimal) -> bool:
    try:
        a, b = Decimal(str(claimed)), Decimal(lexical)
    except (InvalidOperation, ValueError):
        return False
    return a.is_finite() and b.is_finite() and abs(a - b) <= tolerance * max(abs(a), abs(b))
