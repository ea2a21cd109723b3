"""An independent gold checker for rule-application items.

It re-derives an item's gold answer from the item's source triples (N-Triples) and the
rule's raw definition in an rdflib graph of the rules file, in plain Python with
``decimal``. It deliberately shares no code with the rule engine (``kgsynth.synth.scenarios.rules``)
nor with ``kgsynth.kg.vocab.load_rules``: it reads the vocabulary straight from
docs/vocabulary.md's operations table.
"""

from __future__ import annotations

import datetime as dt
import operator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import rdflib
from rdflib import RDFS, Literal, URIRef

KGS = rdflib.Namespace("https://w3id.org/kgsynth/vocab#")

# kind -> operation when kgs:operation is absent (the "(default)" rows of the table)
DEFAULT_OPERATION = {
    "Arithmetic": "PercentOf",
    "Threshold": "Compare",
    "Conditional": "CaseRate",
    "Interval": "WithinDays",
    "Classification": "BracketClass",
    "Calendar": "DayOfWeek",
    "Conversion": "UnitConversion",
    "Aggregate": "Count",
}
WEEKDAYS = {"en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
            "ru": ("понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье")}
COMPARISONS = {
    "GreaterThan": operator.gt,
    "GreaterOrEqual": operator.ge,
    "LessThan": operator.lt,
    "LessOrEqual": operator.le,
}


DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


def demo_rules_graph() -> rdflib.Graph:
    """The demo's rules: its invented ones and its library rules."""
    graph = rdflib.Graph().parse(DEMO / "rules.ttl", format="turtle")
    return graph.parse(DEMO / "library.ttl", format="turtle")


class GoldCheckError(ValueError):
    """The rule does not give an answer for these triples."""


def local_name(iri) -> str:
    return str(iri).rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def as_decimal(term) -> Decimal:
    value = term.toPython()
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise GoldCheckError(f"not a number: {term!r}")
    return Decimal(str(value))


def as_date(term) -> dt.date:
    value = term.toPython()
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    raise GoldCheckError(f"not a date: {term!r}")


def as_year(term) -> tuple[int, bool]:
    """A year and whether it came with a day: a date's year, an xsd:gYear, a number's whole part."""
    if isinstance(term, Literal) and term.datatype == rdflib.XSD.gYear:
        return int(str(term)), False
    value = term.toPython()
    if isinstance(value, dt.date):
        return value.year, True
    return int(as_decimal(term).to_integral_value(rounding="ROUND_FLOOR")), False


def comparable(term):
    """A condition value compared by value, not spelling; booleans never equal numbers."""
    if isinstance(term, Literal):
        value = term.toPython()
        if isinstance(value, bool):
            return ("bool", value)
        if isinstance(value, int | float | Decimal):
            return ("number", Decimal(str(value)))
        return ("literal", str(value), term.language)
    return ("iri", str(term))


class _Rule:
    """One rule's raw definition, read from the rules graph on demand."""

    def __init__(self, iri: str, g: rdflib.Graph):
        self.node, self.g = URIRef(iri), g
        if (self.node, None, None) not in g:
            raise GoldCheckError(f"rule {iri} is not in the rules graph")

    def get(self, name: str, subject=None):
        return self.g.value(subject if subject is not None else self.node, KGS[name])

    def all(self, name: str, subject=None) -> list:
        return list(self.g.objects(subject if subject is not None else self.node, KGS[name]))

    @property
    def operation(self) -> str:
        op = self.get("operation")
        return local_name(op) if op is not None else DEFAULT_OPERATION[local_name(self.get("kind"))]

    def inputs(self) -> dict[tuple[str, str | None], tuple[str, bool]]:
        """(relation IRI, its kgs:via IRI or None) -> (role, whether its values are summed)."""
        found = {}
        for d in self.all("input"):
            via = self.get("via", d)
            key = (str(self.get("relation", d)), str(via) if via is not None else None)
            if key in found:
                raise GoldCheckError(f"relation {key[0]} feeds two inputs")
            found[key] = (str(self.get("role", d)), self.get("aggregate", d) in (KGS.Sum, KGS.All))
        return found


class _Facts:
    """The item's source triples, grouped by the role the rule gives their relation. The
    entity is the one subject no triple points at; a triple about another subject is read on
    the bridge the entity links to by an input's kgs:via."""

    def __init__(self, rule: _Rule, source_triples: list[str]):
        g = rdflib.Graph()
        g.parse(data="\n".join(source_triples), format="nt")
        inputs = rule.inputs()
        vias = {via for _, via in inputs if via is not None}
        entities = set(g.subjects()) - set(g.objects())
        if len(entities) != 1:
            raise GoldCheckError(f"the triples have {len(entities)} subjects no triple points at, expected one entity")
        (entity,) = entities
        bridges = {o: str(p) for s, p, o in g if s == entity and str(p) in vias}
        self.values: dict[str, list] = {}
        self.summed: set[str] = set()
        for s, p, o in g:  # rdflib sets drop exact duplicate triples, as RDF does
            if s == entity and str(p) in vias and o in bridges:
                continue  # the link to the bridge
            key = (str(p), None if s == entity else bridges.get(s))
            if key not in inputs:
                raise GoldCheckError(f"triple {s} {p} {o} is no input of the rule")
            role, summed = inputs[key]
            self.values.setdefault(role, []).append(o)
            if summed:
                self.summed.add(role)

    def has(self, role: str) -> bool:
        return role in self.values

    def one(self, role: str):
        terms = self.values.get(role, [])
        if len(terms) != 1:
            raise GoldCheckError(f"role {role!r} needs exactly one value, got {len(terms)}")
        return terms[0]

    def number(self, role: str) -> Decimal:
        if role in self.summed:
            return sum((as_decimal(t) for t in self.values[role]), Decimal(0))
        return as_decimal(self.one(role))


def _limit(rule: _Rule, facts: _Facts) -> Decimal:
    """The limit/threshold: from a `limit` or `threshold` fact, else the rule's kgs:threshold."""
    sources = [facts.number(r) for r in ("limit", "threshold") if facts.has(r)]
    if rule.get("threshold") is not None:
        sources.append(as_decimal(rule.get("threshold")))
    if len(sources) != 1:
        raise GoldCheckError(f"expected exactly one limit/threshold, got {len(sources)}")
    return sources[0]


def _days(rule: _Rule) -> int:
    return int(rule.get("maxDays").toPython())


def applied_rate(rule: _Rule, facts: _Facts) -> Decimal:
    """CaseRate: the rate of the case whose kgs:when equals the condition, else kgs:defaultRate."""
    wanted = comparable(facts.one("condition"))
    for case in rule.all("case"):
        if any(comparable(w) == wanted for w in rule.all("when", case)):
            return as_decimal(rule.get("rate", case))
    default = rule.get("defaultRate")
    if default is None:
        raise GoldCheckError("no case matches and there is no default rate")
    return as_decimal(default)


def _bracket(rule: _Rule, facts: _Facts) -> str:
    amount = facts.number("amount")
    hits = []
    for b in rule.all("bracket"):
        low, high = rule.get("lowerBound", b), rule.get("upperBound", b)
        if (low is None or as_decimal(low) <= amount) and (high is None or amount < as_decimal(high)):
            hits.append(str(rule.get("class", b)))
    if len(hits) != 1:
        raise GoldCheckError(f"amount {amount} falls in {len(hits)} brackets")
    return hits[0]


def _span(facts: _Facts) -> int:
    return (as_date(facts.one("end")) - as_date(facts.one("start"))).days


def _decimal_or(rule: _Rule, name: str, default: int) -> Decimal:
    value = rule.get(name)
    return Decimal(default) if value is None else as_decimal(value)


def _years_between(facts: _Facts) -> int:
    (start, start_day), (end, end_day) = as_year(facts.one("start")), as_year(facts.one("end"))
    if start_day and end_day:  # completed years, the anniversary counting as reached
        a, b = as_date(facts.one("start")), as_date(facts.one("end"))
        return b.year - a.year - ((b.month, b.day) < (a.month, a.day))
    return end - start


def _century(facts: _Facts) -> int:
    year = as_year(facts.one("date"))[0]
    if year % 100 == 0:
        raise GoldCheckError(f"{year} ends in 00: strict and popular counting disagree")
    return year // 100 + 1


def _months_after(start: dt.date, months: int) -> dt.date:
    index = start.year * 12 + start.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, start.day)  # a missing day raises ValueError


def _members(facts: _Facts) -> list:
    return facts.values["member"]


def _earliest(facts: _Facts):
    years = [as_year(t) for t in _members(facts)]
    if all(has_day for _, has_day in years):
        return min(as_date(t) for t in _members(facts))
    return min(year for year, _ in years)


OPERATIONS = {
    "PercentOf": lambda r, f: f.number("amount") * as_decimal(r.get("rate")),
    "PercentOfExcess": lambda r, f: max(Decimal(0), f.number("amount") - _limit(r, f)) * as_decimal(r.get("rate")),
    "CaseRate": lambda r, f: f.number("amount") * applied_rate(r, f),
    "Compare": lambda r, f: COMPARISONS[local_name(r.get("comparison"))](f.number("amount"), _limit(r, f)),
    "WithinDays": lambda r, f: _span(f) <= _days(r),
    "DaysBetween": lambda r, f: _span(f),
    "Deadline": lambda r, f: as_date(f.one("start")) + dt.timedelta(days=_days(r)),
    "BracketClass": _bracket,
    "Ratio": lambda r, f: f.number("numerator") / f.number("denominator") * _decimal_or(r, "factor", 1),
    "Difference": lambda r, f: f.number("to") - f.number("from"),
    "PercentChange": lambda r, f: (f.number("to") - f.number("from")) / f.number("from") * 100,
    "YearsBetween": lambda r, f: _years_between(f),
    "DateAfter": lambda r, f: (as_date(f.one("start")) + dt.timedelta(days=int(r.get("days").toPython())) if r.get("days")
                               is not None else _months_after(as_date(f.one("start")), int(r.get("months").toPython()))),
    "DayOfWeek": lambda r, f: as_date(f.one("date")).isoweekday(),
    "Century": lambda r, f: _century(f),
    "Decade": lambda r, f: as_year(f.one("date"))[0] // 10 * 10,
    "LeapYear": lambda r, f: (lambda y: y % 4 == 0 and (y % 100 != 0 or y % 400 == 0))(as_year(f.one("date"))[0]),
    "UnitConversion": lambda r, f: (f.number("amount") * _decimal_or(r, "factor", 1) / _decimal_or(r, "divisor", 1)
                                    + _decimal_or(r, "offset", 0)),
    "Count": lambda r, f: len({comparable(t) for t in _members(f)}),
    "Total": lambda r, f: sum((as_decimal(t) for t in _members(f)), Decimal(0)),
    "Maximum": lambda r, f: max(as_decimal(t) for t in _members(f)),
    "Earliest": lambda r, f: _earliest(f),
}


def expected_gold(rule_iri: str, source_triples: list[str], rules_graph: rdflib.Graph) -> object:
    """The rule's answer for the entity the triples describe.

    Decimal (rounded half-up to kgs:rounding when set) for money and numbers, bool for
    yes/no, int for day counts, ``datetime.date`` for deadlines, the class IRI (str) for
    classifications. Raises :class:`GoldCheckError` when the rule gives no answer.
    """
    rule = _Rule(rule_iri, rules_graph)
    value = OPERATIONS[rule.operation](rule, _Facts(rule, source_triples))
    rounding = rule.get("rounding")
    if isinstance(value, Decimal) and rounding is not None:
        value = value.quantize(Decimal(1).scaleb(-int(rounding.toPython())), rounding=ROUND_HALF_UP)
    return value


def class_label(class_iri: str, lang: str, rules_graph: rdflib.Graph) -> str:
    labels = [o for o in rules_graph.objects(URIRef(class_iri), RDFS.label) if getattr(o, "language", None) == lang]
    if len(labels) != 1:
        raise GoldCheckError(f"{class_iri} has {len(labels)} labels in {lang!r}")
    return str(labels[0])


def expected_item_answer(item, rules_graph: rdflib.Graph) -> object:
    """:func:`expected_gold` of a rule item from its source triples, a class as its label in
    the item's language (the text formats' gold)."""
    value = expected_gold(item.metadata.rule_iri, list(item.metadata.source_triples), rules_graph)
    if item.answer_format not in ("one_token", "short_text"):
        return value
    if isinstance(value, int):  # a day of the week, 1 = Monday
        return WEEKDAYS[item.language][value - 1]
    return class_label(value, item.language, rules_graph)
