"""The kgsynth vocabulary: how rules, domains and categories are written as RDF.

Episodic facts are ordinary triples about entities. Semantic rules are resources of
class ``kgs:Rule`` with a kind, parameters and input descriptors that name the
relations the rule reads. ``docs/vocabulary.md`` documents every term with a Turtle
example; :func:`load_rules` reads them back as typed, validated :class:`Rule` objects.
``kgs:worldKnown`` (and identity links to public graphs) says which entities a model can
know from the world: :class:`WorldKnowledge`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kgsynth.errors import KgsynthError, RuleError

if TYPE_CHECKING:
    from kgsynth.kg._graph import KnowledgeGraph

KGS = "https://w3id.org/kgsynth/vocab#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
SCHEMA = "http://schema.org/"
# provenance of an ingested fact (kgsynth.ingest): a statement node points at the fact's
# subject and object, which are entities, not schema, though named by kgs: predicates
FACT_SUBJECT, FACT_RELATION, FACT_OBJECT = f"{KGS}factSubject", f"{KGS}factRelation", f"{KGS}factObject"
OWL = "http://www.w3.org/2002/07/owl#"

RDF_TYPE = RDF + "type"
# Label predicates in priority order: the first one an entity has wins for a language.
LABEL_PREDICATES = (SKOS + "prefLabel", RDFS + "label", SCHEMA + "name", "https://schema.org/name")
LABEL_PATH = "|".join(f"<{p}>" for p in LABEL_PREDICATES)  # a SPARQL property path over them
SCHEMA_NAMESPACES = (RDF, RDFS, OWL, SKOS, KGS)  # the schema's own vocabulary: no entity's facts or classes


def is_fact_relation(iri: str) -> bool:
    """Whether a predicate states a fact about an entity: not a name (a label predicate) nor
    the schema's own vocabulary (RDF, RDFS, OWL, SKOS, kgsynth's)."""
    return iri not in LABEL_PREDICATES and not iri.startswith(SCHEMA_NAMESPACES)


class RuleKind(StrEnum):
    """The rule kinds hypothesis H4 compares: the five of the demo's invented rules, and the
    three of the rule library's operations over dates, quantities and sets."""

    arithmetic = "arithmetic"
    threshold = "threshold"
    conditional = "conditional"
    interval = "interval"
    classification = "classification"
    calendar = "calendar"
    conversion = "conversion"
    aggregate = "aggregate"


class RuleOrigin(StrEnum):
    """Whether a model can know the rule: a library rule (a unit factor, a calendar rule, a
    published rate) is common knowledge; a graph's own rule (a 2% booking fee) is invented."""

    library = "Library"
    invented = "Invented"


class Operation(StrEnum):
    """What a rule computes from its inputs (see docs/vocabulary.md for the formulas)."""

    percent_of = "PercentOf"
    percent_of_excess = "PercentOfExcess"
    compare = "Compare"
    case_rate = "CaseRate"
    within_days = "WithinDays"
    days_between = "DaysBetween"
    deadline = "Deadline"
    bracket_class = "BracketClass"
    ratio = "Ratio"
    difference = "Difference"
    percent_change = "PercentChange"
    years_between = "YearsBetween"
    date_after = "DateAfter"
    day_of_week = "DayOfWeek"
    century = "Century"
    decade = "Decade"
    leap_year = "LeapYear"
    unit_conversion = "UnitConversion"
    count = "Count"
    total = "Total"
    maximum = "Maximum"
    earliest = "Earliest"


class Aggregate(StrEnum):
    """How an input with several values is read: added up, or kept as a set."""

    sum = "Sum"
    all = "All"


class Comparison(StrEnum):
    greater_than = "GreaterThan"
    greater_or_equal = "GreaterOrEqual"
    less_than = "LessThan"
    less_or_equal = "LessOrEqual"


# Which operations each kind allows, and the input roles each operation needs.
OPERATIONS_BY_KIND: dict[RuleKind, tuple[Operation, ...]] = {
    RuleKind.arithmetic: (Operation.percent_of, Operation.percent_of_excess, Operation.ratio, Operation.difference,
                          Operation.percent_change),
    RuleKind.threshold: (Operation.compare,),
    RuleKind.conditional: (Operation.case_rate,),
    RuleKind.interval: (Operation.within_days, Operation.days_between, Operation.deadline, Operation.years_between,
                        Operation.date_after),
    RuleKind.classification: (Operation.bracket_class,),
    RuleKind.calendar: (Operation.day_of_week, Operation.century, Operation.decade, Operation.leap_year),
    RuleKind.conversion: (Operation.unit_conversion,),
    RuleKind.aggregate: (Operation.count, Operation.total, Operation.maximum, Operation.earliest),
}
REQUIRED_ROLES: dict[Operation, frozenset[str]] = {
    Operation.percent_of: frozenset({"amount"}),
    Operation.percent_of_excess: frozenset({"amount"}),
    Operation.compare: frozenset({"amount"}),
    Operation.case_rate: frozenset({"amount", "condition"}),
    Operation.within_days: frozenset({"start", "end"}),
    Operation.days_between: frozenset({"start", "end"}),
    Operation.deadline: frozenset({"start"}),
    Operation.bracket_class: frozenset({"amount"}),
    Operation.ratio: frozenset({"numerator", "denominator"}),
    Operation.difference: frozenset({"from", "to"}),
    Operation.percent_change: frozenset({"from", "to"}),
    Operation.years_between: frozenset({"start", "end"}),
    Operation.date_after: frozenset({"start"}),
    Operation.day_of_week: frozenset({"date"}),
    Operation.century: frozenset({"date"}),
    Operation.decade: frozenset({"date"}),
    Operation.leap_year: frozenset({"date"}),
    Operation.unit_conversion: frozenset({"amount"}),
    Operation.count: frozenset({"member"}),
    Operation.total: frozenset({"member"}),
    Operation.maximum: frozenset({"member"}),
    Operation.earliest: frozenset({"member"}),
}
# The aggregate kind reads a set: its "member" input must say kgs:aggregate kgs:All.
SET_OPERATIONS = frozenset(OPERATIONS_BY_KIND[RuleKind.aggregate])
ROLES = frozenset({"amount", "limit", "threshold", "condition", "start", "end", "numerator", "denominator", "from", "to",
                   "date", "member"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RuleInput(_Frozen):
    """One fact a rule reads: the entity's value for ``relation`` plays ``role``; with
    ``via``, the value of ``relation`` on the bridge, the entity's one value of ``via``
    (the director of a film: ``?e via ?bridge . ?bridge relation ?value``)."""

    role: str
    relation: str
    aggregate: Aggregate | None = None  # several values allowed: added up (Sum) or kept as a set (All)
    via: str | None = None

    @property
    def sum_values(self) -> bool:
        return self.aggregate is Aggregate.sum


class Bracket(_Frozen):
    """A half-open range [lower, upper) mapped to a class resource."""

    lower: Decimal | None = None
    upper: Decimal | None = None
    class_iri: str


class Case(_Frozen):
    """Rate used when the ``condition`` input equals ``when`` (an N-Triples term)."""

    when: str
    rate: Decimal


class Rule(_Frozen):
    """A semantic rule read from the graph, validated for its kind."""

    iri: str
    kind: RuleKind
    operation: Operation
    labels: dict[str, str] = {}
    statements: dict[str, str] = {}
    questions: dict[str, str] = {}  # by language; "{entity}" stands for the entity's label
    domain: str | None = None
    category: str | None = None
    applies_to_class: str | None = None
    inputs: tuple[RuleInput, ...]
    rate: Decimal | None = None
    threshold: Decimal | None = None
    comparison: Comparison | None = None
    max_days: int | None = None
    default_rate: Decimal | None = None
    rounding: int | None = None
    unit: str | None = None
    brackets: tuple[Bracket, ...] = ()
    cases: tuple[Case, ...] = ()
    factor: Decimal | None = None  # conversion: amount x factor / divisor + offset
    divisor: Decimal | None = None
    offset: Decimal | None = None
    source_unit: str | None = None  # the unit of a conversion's amount or a ratio's denominator
    days: int | None = None  # DateAfter: start + days, or start + months
    months: int | None = None
    origin: RuleOrigin = RuleOrigin.invented
    source: str | None = None  # where a library rule's constant comes from, with its year

    @property
    def relations(self) -> tuple[str, ...]:
        return tuple(i.relation for i in self.inputs)

    @property
    def via(self) -> str | None:
        """The relation from the entity to the bridge its ``via`` inputs are read on (one per rule)."""
        return next((i.via for i in self.inputs if i.via is not None), None)


_RULE_QUERY = f"""
PREFIX kgs: <{KGS}>
SELECT ?rule ?p ?o WHERE {{ ?rule a kgs:Rule ; ?p ?o . }}
"""
_NODE_QUERY = f"""
PREFIX kgs: <{KGS}>
SELECT ?rule ?link ?node ?p ?o WHERE {{
  ?rule a kgs:Rule ; ?link ?node .
  VALUES ?link {{ kgs:input kgs:bracket kgs:case }}
  ?node ?p ?o .
}}
"""


def _local(iri: str) -> str:
    return iri.removeprefix(KGS)


def _rule_error(rule: str, message: str) -> RuleError:
    return RuleError(f"rule <{rule}>: {message}")


def load_rules(kg: KnowledgeGraph) -> dict[str, Rule]:
    """Read and validate every ``kgs:Rule`` in the graph, keyed by IRI.

    Raises:
        RuleError: a rule misses a parameter its kind needs, or has an unknown value.
    """
    props: dict[str, dict[str, list]] = {}
    for rule, p, o in kg.select(_RULE_QUERY):
        props.setdefault(rule.value, {}).setdefault(p.value, []).append(o)
    nodes: dict[tuple[str, str], dict[str, dict[str, list]]] = {}
    for rule, link, node, p, o in kg.select(_NODE_QUERY):
        key = (rule.value, _local(link.value))
        nodes.setdefault(key, {}).setdefault(str(node), {}).setdefault(p.value, []).append(o)
    return {iri: _build_rule(iri, props[iri], nodes) for iri in sorted(props)}


def _one(rule: str, values: dict[str, list], name: str, required: bool = False):
    found = values.get(KGS + name, [])
    if len(found) > 1:
        raise _rule_error(rule, f"kgs:{name} has {len(found)} values, expected one")
    if not found:
        if required:
            raise _rule_error(rule, f"missing kgs:{name}")
        return None
    return found[0]


def _decimal(rule: str, values: dict[str, list], name: str) -> Decimal | None:
    term = _one(rule, values, name)
    if term is None:
        return None
    try:
        value = Decimal(term.value)
    except ArithmeticError:
        value = None
    if value is None or not value.is_finite():
        raise _rule_error(rule, f"kgs:{name} {term.value!r} is not a number")
    return value


def _integer(rule: str, values: dict[str, list], name: str) -> int | None:
    term = _one(rule, values, name)
    if term is None:
        return None
    try:
        return int(term.value)
    except ValueError:
        raise _rule_error(rule, f"kgs:{name} {term.value!r} is not a whole number") from None


def _enum(rule: str, values: dict[str, list], name: str, enum: type[StrEnum], required: bool = False):
    """Read a kgs: resource value as an enum member; RuleKind members are lower-case names."""
    term = _one(rule, values, name, required)
    if term is None:
        return None
    local = _local(term.value)
    for member in enum:
        if member.value.lower() == local.lower():
            return member
    allowed = ", ".join(f"kgs:{m.value[0].upper()}{m.value[1:]}" for m in enum)
    raise _rule_error(rule, f"kgs:{name} {term} is not one of {allowed}")


def _lang_texts(terms: list) -> dict[str, str]:
    return {t.language or "": t.value for t in sorted(terms, key=str, reverse=True)}


def _build_rule(iri: str, values: dict[str, list], nodes: dict) -> Rule:
    kind = _enum(iri, values, "kind", RuleKind, required=True)
    allowed = OPERATIONS_BY_KIND[kind]
    operation = _enum(iri, values, "operation", Operation) or allowed[0]
    if operation not in allowed:
        raise _rule_error(iri, f"kgs:{operation.value} is not an operation of kind {kind.value}")
    inputs = tuple(_build_input(iri, n) for n in nodes.get((iri, "input"), {}).values())
    missing = REQUIRED_ROLES[operation] - {i.role for i in inputs}
    if missing:
        raise _rule_error(iri, f"kgs:{operation.value} needs inputs with roles {sorted(missing)}")
    rule = Rule(
        iri=iri,
        kind=kind,
        operation=operation,
        labels=_lang_texts(values.get(RDFS + "label", [])),
        statements=_lang_texts(values.get(KGS + "statement", [])),
        questions=_lang_texts(values.get(KGS + "question", [])),
        domain=_value(_one(iri, values, "domain")),
        category=_value(_one(iri, values, "category")),
        applies_to_class=_value(_one(iri, values, "appliesToClass")),
        inputs=tuple(sorted(inputs, key=lambda i: (i.role, i.relation, i.via or ""))),
        rate=_decimal(iri, values, "rate"),
        threshold=_decimal(iri, values, "threshold"),
        comparison=_enum(iri, values, "comparison", Comparison),
        max_days=_integer(iri, values, "maxDays"),
        default_rate=_decimal(iri, values, "defaultRate"),
        rounding=_integer(iri, values, "rounding"),
        unit=_value(_one(iri, values, "unit")),
        brackets=tuple(_build_bracket(iri, n) for n in nodes.get((iri, "bracket"), {}).values()),
        cases=tuple(_build_case(iri, n) for n in nodes.get((iri, "case"), {}).values()),
        factor=_decimal(iri, values, "factor"),
        divisor=_decimal(iri, values, "divisor"),
        offset=_decimal(iri, values, "offset"),
        source_unit=_value(_one(iri, values, "sourceUnit")),
        days=_integer(iri, values, "days"),
        months=_integer(iri, values, "months"),
        origin=_enum(iri, values, "origin", RuleOrigin) or RuleOrigin.invented,
        source=_value(_one(iri, values, "source")),
    )
    _check_parameters(rule)
    return rule


def _value(term) -> str | None:
    """An IRI's string or a literal's lexical form."""
    return None if term is None else term.value


def _build_input(rule: str, values: dict[str, list]) -> RuleInput:
    role = _one(rule, values, "role", required=True).value
    if role not in ROLES:
        raise _rule_error(rule, f"input role {role!r} is not one of {sorted(ROLES)}")
    aggregate = _enum(rule, values, "aggregate", Aggregate)
    relation = _one(rule, values, "relation", required=True)
    return RuleInput(role=role, relation=relation.value, aggregate=aggregate, via=_value(_one(rule, values, "via")))


def _build_bracket(rule: str, values: dict[str, list]) -> Bracket:
    return Bracket(
        lower=_decimal(rule, values, "lowerBound"),
        upper=_decimal(rule, values, "upperBound"),
        class_iri=_one(rule, values, "class", required=True).value,
    )


def _build_case(rule: str, values: dict[str, list]) -> Case:
    rate = _decimal(rule, values, "rate")
    if rate is None:
        raise _rule_error(rule, "a kgs:case misses kgs:rate")
    return Case(when=str(_one(rule, values, "when", required=True)), rate=rate)


# Constants a real rule stays within: a rate is a fraction (0.13 = 13%; "13" meant as a
# percentage is the usual slip), amounts fit in 15 digits, windows in a century.
MAX_RATE = Decimal(10)
MAX_MAGNITUDE = Decimal("1e15")
MAX_DAYS = 36_600
MAX_ROUNDING = 10
MAX_MONTHS = 1_200


def _check_ranges(rule: Rule) -> None:
    rates = [("kgs:rate", rule.rate), ("kgs:defaultRate", rule.default_rate)]
    rates += [(f"the kgs:rate of the case {c.when}", c.rate) for c in rule.cases]
    constants = [("kgs:threshold", rule.threshold)]
    constants += [(f"kgs:{name} of a bracket", value) for b in rule.brackets
                  for name, value in (("lowerBound", b.lower), ("upperBound", b.upper))]
    for name, value in [*rates, *constants]:
        if value is not None and abs(value) > MAX_MAGNITUDE:
            raise _rule_error(rule.iri, f"{name} {value} is outside ±{MAX_MAGNITUDE:,.0f}")
    for name, value in rates:
        if value is not None and not 0 <= value <= MAX_RATE:
            raise _rule_error(rule.iri, f"{name} {value} is outside 0..{MAX_RATE} (a fraction: 0.13 is 13%)")
    if rule.max_days is not None and not 0 <= rule.max_days <= MAX_DAYS:
        raise _rule_error(rule.iri, f"kgs:maxDays {rule.max_days} is outside 0..{MAX_DAYS:,}")
    if rule.rounding is not None and not 0 <= rule.rounding <= MAX_ROUNDING:
        raise _rule_error(rule.iri, f"kgs:rounding {rule.rounding} is outside 0..{MAX_ROUNDING} decimal places")
    for name, value in (("kgs:factor", rule.factor), ("kgs:divisor", rule.divisor)):
        if value is not None and not 0 < value <= MAX_MAGNITUDE:
            raise _rule_error(rule.iri, f"{name} {value} is outside 0 (excluded)..{MAX_MAGNITUDE:,.0f}")
    if rule.offset is not None and abs(rule.offset) > MAX_MAGNITUDE:
        raise _rule_error(rule.iri, f"kgs:offset {rule.offset} is outside ±{MAX_MAGNITUDE:,.0f}")
    if rule.days is not None and not 0 <= rule.days <= MAX_DAYS:
        raise _rule_error(rule.iri, f"kgs:days {rule.days} is outside 0..{MAX_DAYS:,}")
    if rule.months is not None and not 0 <= rule.months <= MAX_MONTHS:
        raise _rule_error(rule.iri, f"kgs:months {rule.months} is outside 0..{MAX_MONTHS:,}")


def _check_parameters(rule: Rule) -> None:
    _check_ranges(rule)
    roles = {i.role for i in rule.inputs}
    op = rule.operation
    if op in (Operation.percent_of, Operation.percent_of_excess) and rule.rate is None:
        raise _rule_error(rule.iri, f"kgs:{op.value} needs kgs:rate")
    if op in (Operation.percent_of_excess, Operation.compare):
        given = (rule.threshold is not None) + len(roles & {"limit", "threshold"})
        if given != 1:
            problem = "needs" if given == 0 else "needs exactly one of"
            raise _rule_error(rule.iri, f"kgs:{op.value} {problem} kgs:threshold or a 'limit'/'threshold' input")
    if op is Operation.compare and rule.comparison is None:
        raise _rule_error(rule.iri, "a threshold rule needs kgs:comparison")
    if op is Operation.case_rate and not rule.cases:
        raise _rule_error(rule.iri, "a conditional rule needs at least one kgs:case")
    if op in (Operation.within_days, Operation.deadline) and rule.max_days is None:
        raise _rule_error(rule.iri, f"kgs:{op.value} needs kgs:maxDays")
    if op is Operation.bracket_class and len(rule.brackets) < 2:
        raise _rule_error(rule.iri, "a classification rule needs at least two kgs:bracket")
    _check_library_parameters(rule)


def _check_library_parameters(rule: Rule) -> None:
    """The parameters of the operations over dates, quantities and sets."""
    op = rule.operation
    divides = op in (Operation.ratio, Operation.percent_change) or rule.divisor is not None
    if divides and rule.rounding is None:
        raise _rule_error(rule.iri, f"kgs:{op.value} divides, so it needs kgs:rounding (the answer's decimal places)")
    if op is Operation.date_after and (rule.days is None) == (rule.months is None):
        raise _rule_error(rule.iri, "kgs:DateAfter needs exactly one of kgs:days or kgs:months")
    if op is Operation.unit_conversion:
        if rule.factor is None and rule.divisor is None:
            raise _rule_error(rule.iri, "kgs:UnitConversion needs kgs:factor or kgs:divisor")
        if rule.unit is None or rule.source_unit is None:
            raise _rule_error(rule.iri, "kgs:UnitConversion needs kgs:sourceUnit and kgs:unit (the units it converts between)")
    sets = [i for i in rule.inputs if i.aggregate is Aggregate.all]
    if op in SET_OPERATIONS and [i.role for i in sets] != ["member"]:
        raise _rule_error(rule.iri, f"kgs:{op.value} reads one set: a 'member' input with kgs:aggregate kgs:All")
    if op not in SET_OPERATIONS and sets:
        raise _rule_error(rule.iri, f"kgs:aggregate kgs:All is for the aggregate kind; kgs:{op.value} reads one value per role")
    bridges = sorted({i.via for i in rule.inputs if i.via is not None})
    if len(bridges) > 1:  # the question describes one bridge ("the director of ...")
        raise _rule_error(rule.iri, f"its inputs go through {len(bridges)} kgs:via relations ({', '.join(bridges)}); "
                                    "a rule reads one bridge")


# ---------------------------------------------------------------------------- world knowledge
# An entity a model can know from the world (a real city, a country) makes poor episodic
# material: a question about its facts ("which of Sochi and Yekaterinburg has the greater UTC
# offset?") is answered without the dialogue. A graph says which entities those are.
WORLD_KNOWN = KGS + "worldKnown"
# identity links to another graph's IRI for the same thing (owl:sameAs is never an episodic fact)
SAME_AS_PREDICATES = (OWL + "sameAs", SKOS + "exactMatch", SCHEMA + "sameAs", "https://schema.org/sameAs")
# IRIs of public encyclopaedic graphs: an entity that is one, or is the same as one, is world-known
PUBLIC_KB_IRI = re.compile(
    r"https?://(?:(?:www\.)?wikidata\.org/(?:entity|wiki)/Q\d"
    r"|(?:[a-z-]+\.)?dbpedia\.org/(?:resource|page)/"
    r"|[a-z-]+\.(?:m\.)?wikipedia\.org/wiki/"
    r"|sws\.geonames\.org/\d"
    r"|yago-knowledge\.org/resource/)"
)
# A Freebase id ending an IRI of any namespace, after a /, #, _ or : (rdf.freebase.com/ns/m.027rn,
# .../m/027rn, FB15k-237's .../entity_m_027rn): graphs built from Freebase rename its IRIs but keep
# the id. A MID is m.0 and 1-8 characters of Freebase's alphabet, which has no vowels (so no
# word such as item_m_data is one); a newer id is g.1 and 6-10 of them.
_FREEBASE_ALPHABET = "0-9b-df-hj-np-tv-z_"
FREEBASE_ID = re.compile(
    rf"(?<=[/#_:])(?:m[./_]0[{_FREEBASE_ALPHABET}]{{1,8}}|g[./_]1[{_FREEBASE_ALPHABET}]{{6,10}})\Z"
)


def public_iri(iri: str) -> bool:
    """Whether ``iri`` names a thing of a public encyclopaedic graph: an IRI of one
    (:data:`PUBLIC_KB_IRI`), or one that ends in a Freebase id (:data:`FREEBASE_ID`)."""
    return PUBLIC_KB_IRI.match(iri) is not None or FREEBASE_ID.search(iri) is not None

_WORLD_DIRECT = f"SELECT ?e ?v WHERE {{ ?e <{WORLD_KNOWN}> ?v . FILTER(isIRI(?e)) }}"
_WORLD_BY_CLASS = f"""SELECT DISTINCT ?e ?v WHERE {{
  ?c <{WORLD_KNOWN}> ?v . ?sub <{RDFS}subClassOf>* ?c . ?e a ?sub . FILTER(isIRI(?e))
}}"""
_WORLD_LINKS = "SELECT DISTINCT ?e ?t WHERE {\n  %s\n  FILTER(isIRI(?e) && isIRI(?t))\n}" % " UNION ".join(
    f"{{ ?e <{p}> ?t }}" for p in SAME_AS_PREDICATES
)


_FACT_SOURCES = f"""SELECT ?s ?r ?o ?id WHERE {{
  ?st <{FACT_SUBJECT}> ?s ; <{FACT_RELATION}> ?r ; <{FACT_OBJECT}> ?o ; <{KGS}statedIn> ?g .
  ?g <{KGS}sourceId> ?id .
}}"""


def fact_sources(kg: KnowledgeGraph) -> dict[str, tuple[str, ...]]:
    """The ids of the documents stating each fact (N-Triples line -> sorted ids), from the
    provenance ``kgsynth ingest`` writes (``docs/vocabulary.md``); empty for other graphs."""
    found: dict[str, set[str]] = {}
    for s, r, o, source in kg.select(_FACT_SOURCES):
        found.setdefault(f"{s} {r} {o} .", set()).add(source.value)
    return {triple: tuple(sorted(ids)) for triple, ids in found.items()}


class WorldKnowledge:
    """Which entities of a graph a model can know from the world, and so which facts are
    world knowledge rather than episodic (``docs/vocabulary.md``, "World knowledge").

    An entity is world-known by, first to last: its own ``kgs:worldKnown true|false``; a
    class of it (``rdf:type`` / ``rdfs:subClassOf*``) with ``kgs:worldKnown`` (true if any
    class says true); an ``owl:sameAs`` / ``skos:exactMatch`` / ``schema:sameAs`` link to a
    public graph (Wikidata, DBpedia, Wikipedia, GeoNames, Freebase, YAGO); an IRI of one
    itself, or of any namespace ending in a Freebase id (:func:`public_iri`). A fact is world
    knowledge when its subject is world-known, its object is a value or a world-known
    entity, and its relation is not marked ``kgs:worldKnown false``: the UTC offset of Sochi
    is; the city a fictional employee lives in is not.

    Args:
        known: IRIs world-known by a statement or link.
        unknown: IRIs (entities, classes' instances, relations) stated not to be.
    """

    def __init__(self, known: Iterable[str] = (), unknown: Iterable[str] = ()):
        self.unknown = frozenset(unknown)
        self.known = frozenset(known) - self.unknown

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> WorldKnowledge:
        """Read the statements and links of ``kg`` (three queries).

        Raises:
            KgsynthError: a ``kgs:worldKnown`` value is not a boolean.
        """
        direct = {e.value: _world_flag(e, v) for e, v in kg.select(_WORLD_DIRECT)}
        by_class: dict[str, set[bool]] = {}
        for e, v in kg.select(_WORLD_BY_CLASS):
            by_class.setdefault(e.value, set()).add(_world_flag(e, v))
        linked = {e.value for e, t in kg.select(_WORLD_LINKS) if public_iri(t.value)}
        said = {e: True in flags for e, flags in by_class.items()} | direct  # the entity's own statement wins
        known = {e for e, v in said.items() if v} | (linked - said.keys())
        return cls(known, {e for e, v in said.items() if not v})

    def entity(self, iri: str) -> bool:
        """Whether the entity ``iri`` is world-known."""
        return iri in self.known or (iri not in self.unknown and public_iri(iri))

    def why(self, iri: str) -> str:
        """Why the world-known entity ``iri`` is, in a few words: what a message says of it."""
        if iri in self.known:
            return "marked kgs:worldKnown or linked to a public graph"
        if FREEBASE_ID.search(iri):
            return "its IRI ends in a Freebase id"
        return "an IRI of a public graph"

    def fact(self, subject: str, relation: str, obj: str | None) -> bool:
        """Whether a triple is world knowledge; ``obj`` is None for a literal value."""
        return relation not in self.unknown and self.entity(subject) and (obj is None or self.entity(obj))


def _world_flag(entity, value) -> bool:
    datatype = getattr(value, "datatype", None)  # an IRI has none
    if datatype is not None and datatype.value == XSD + "boolean" and value.value in ("true", "1", "false", "0"):
        return value.value in ("true", "1")
    raise KgsynthError(f"<{entity.value}> kgs:worldKnown {value} is not a boolean: write true or false")
