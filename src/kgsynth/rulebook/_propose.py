"""Library rules for recognised relations, each with the number of entities it covers.

A rule covers an entity when the rule_application template would join it (exactly one
value per input; 2 to 30 values for an aggregate's set, the library's member range; for an
input read along one hop, exactly one value of the link, an IRI other than the entity, with
one value there) and the engine gives it an answer (a year ending in 00 has no single
century). Families yield every candidate that covers anyone; the caller keeps those above
its minimum.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import permutations

from kgsynth.kg.vocab import RDF
from kgsynth.rulebook._library import CalendarRule, Library, OneHopRule, Texts, Wording, YearsRule
from kgsynth.rulebook._profile import Links, Values
from kgsynth.rulebook._recognise import MOSTLY, Relation, number, when, year_of

_GREGORIAN = 1583  # the first full year of the Gregorian calendar, as in the engine
Moment = dt.date | int


@dataclass(frozen=True)
class Input:
    role: str
    relation: str
    aggregate: str | None = None  # "All": the input is a set
    via: str | None = None  # read on the bridge, the entity's one value of this link relation


@dataclass(frozen=True)
class Proposal:
    """One library rule for this graph, ready to be written as Turtle."""

    family: str  # "calendar", "years between", "one hop", "conversion", "ratio" or "aggregate"
    kind: str  # the local name of its kgs:kind
    operation: str
    name: str  # its IRI's last segment, "{}" standing for each relation of `named`
    named: tuple[str, ...]
    inputs: tuple[Input, ...]
    label: Texts
    statement: Texts
    question: Texts
    source: str
    parameters: tuple[tuple[str, Decimal | int | str], ...]  # kgs: term -> value
    coverage: int
    note: str | None = None  # why it applies, for the comment above it
    answers: Counter | None = field(default=None, compare=False)  # the engine's answer -> entities, where known

    def usual_answer(self) -> tuple[Hashable, float] | None:
        """The most frequent answer and its share of the covered entities (None where the
        answers are not known)."""
        if not self.answers:
            return None
        value, n = min(self.answers.items(), key=lambda kv: (-kv[1], str(kv[0])))
        return value, n / sum(self.answers.values())

    @property
    def dated(self) -> tuple[str, ...]:
        """The relations it reads as dates or years."""
        reads_dates = self.kind in ("Calendar", "Interval") or self.operation == "Earliest"
        return tuple(i.relation for i in self.inputs) if reads_dates else ()

    @property
    def about(self) -> str:
        """The relation whose subjects the rule asks about: the link of a one-hop rule."""
        return next((i.via for i in self.inputs if i.via is not None), self.named[0])


def propose(relations: list[Relation], values: Values, links: Links, counts: Mapping[str, Counter],
            library: Library) -> list[Proposal]:
    """Every library rule that covers at least one entity, in the file's order (``counts``:
    per relation, how many entities have each number of its values)."""
    return [*calendar_rules(relations, values, library), *years_between_rules(relations, values, library),
            *one_hop_rules(relations, values, links, library),
            *conversion_rules(relations, values, library), *ratio_rules(relations, values, library),
            *aggregate_rules(relations, counts, library)]


def _single(values: Values, relation: str, read: Callable) -> dict:
    """Each subject with exactly one value of the relation, read (those it cannot read left out)."""
    found = {}
    for subject, terms in values.get(relation, {}).items():
        if len(terms) == 1 and (value := read(terms[0])) is not None:
            found[subject] = value
    return found


def _named(template: Texts, relations: tuple[Relation, ...]) -> Texts:
    """A rule's label: what it computes, then the relations it reads."""
    return Texts(**{lang: f"{getattr(template, lang)}: {', '.join(r.name(lang) for r in relations)}"
                    for lang in ("en", "ru")})


def _fill(text: Texts, en: Mapping[str, str], ru: Mapping[str, str]) -> Texts:
    """Fill the library's own slots ({when}, {unit:gent} ...); synthesis fills the others."""
    return Texts(en=_replace(text.en, en), ru=_replace(text.ru, ru))


def _replace(text: str, slots: Mapping[str, str]) -> str:
    for slot, value in slots.items():
        text = text.replace("{" + slot + "}", value)
    return text


# ---------------------------------------------------------------------------- calendar
def _century(moment: Moment) -> int | None:
    year = year_of(moment)
    return year // 100 + 1 if year >= 1 and year % 100 else None


def _decade(moment: Moment) -> int | None:
    year = year_of(moment)
    return year - year % 10 if year >= 0 else None


def _leap_year(moment: Moment) -> bool | None:
    year = year_of(moment)
    return calendar.isleap(year) if year >= _GREGORIAN else None


def _day_of_week(moment: Moment) -> int | None:
    return moment.isoweekday() if isinstance(moment, dt.date) and moment.year >= _GREGORIAN else None


# The engine's answer for one value, or None where it does not apply.
_CALENDAR: dict[str, Callable[[Moment], Hashable | None]] = {
    "Century": _century, "Decade": _decade, "LeapYear": _leap_year, "DayOfWeek": _day_of_week,
}


def calendar_rules(relations: list[Relation], values: Values, library: Library) -> Iterator[Proposal]:
    """Century, Decade, LeapYear and DayOfWeek of each date or year relation whose answers vary
    (the century of 2024 and 2025 order dates is always the 21st: nothing to ask)."""
    for relation in (r for r in relations if r.temporal):
        moments = _single(values, relation.iri, when)
        for rule in library.calendar:
            answers = Counter(a for m in moments.values() if (a := _CALENDAR[rule.operation](m)) is not None)
            if len(answers) >= 2:
                yield _calendar_rule(rule, relation, answers)


def _calendar_rule(rule: CalendarRule, relation: Relation, answers: Counter) -> Proposal:
    event = relation.concept.event if relation.concept is not None else None
    if event is None:
        question = rule.year_question if relation.holds_years and rule.year_question else rule.question
    else:
        question = _fill(rule.event_question, en={"when": event.when, "stated": event.stated}, ru={"event": event.ru})
    return Proposal(family="calendar", kind="Calendar", operation=rule.operation, name=f"{rule.slug}-of-{{}}",
                    named=(relation.iri,), inputs=(Input("date", relation.iri),), label=_named(rule.label, (relation,)),
                    statement=rule.statement, question=question, source=rule.source, parameters=(),
                    coverage=sum(answers.values()), answers=answers)


# ---------------------------------------------------------------------------- years between
def _years_between(start: Moment, end: Moment) -> int | None:
    """Completed years between two dates, else the later year minus the earlier; None where
    the engine gives no answer (an end before the start, a 29 February without anniversary)."""
    if isinstance(start, dt.date) and isinstance(end, dt.date):
        no_anniversary = ((start.month, start.day) == (2, 29) and not calendar.isleap(end.year)
                          and (end.month, end.day) in ((2, 28), (3, 1)))
        if end < start or no_anniversary:
            return None
        return end.year - start.year - ((end.month, end.day) < (start.month, start.day))
    first, last = year_of(start), year_of(end)
    return last - first if last >= first else None


@dataclass
class _PairCount:
    both: int = 0  # entities with one value of each
    answered: int = 0  # ... where the end is not before the start
    nonzero: int = 0  # ... and at least a year apart
    dates: int = 0  # ... answered from two full dates
    years: Counter = field(default_factory=Counter)  # the answers

    def add(self, start: Moment, end: Moment) -> None:
        self.both += 1
        years = _years_between(start, end)
        if years is not None:
            self.years[years] += 1
            self.answered += 1
            self.nonzero += years > 0
            self.dates += isinstance(start, dt.date) and isinstance(end, dt.date)

    def evident(self, library: Library) -> bool:
        """The start is not after the end for order_share of the entities with both."""
        return self.both > 0 and self.answered >= library.order_share * self.both

    def askable(self, library: Library) -> bool:
        """Some answers, most of them above 0, all counting years one way (one question
        cannot ask for both ways of counting)."""
        return (self.answered > 0 and self.nonzero >= library.nonzero_share * self.answered
                and self.dates in (0, self.answered))


def years_between_rules(relations: list[Relation], values: Values, library: Library) -> Iterator[Proposal]:
    """YearsBetween for two date relations of one entity whose order a concept knows (birth ->
    death) or the data shows, where most answers are not 0 and all count years one way."""
    temporal = {r.iri: r for r in relations if r.temporal}
    for (start, end), count in sorted(_pair_counts(temporal, values).items()):
        known = _known_span(temporal[start], temporal[end])
        if (known is not None or count.evident(library)) and count.askable(library):
            yield _years_rule(library, temporal[start], temporal[end], known, count)


def _pair_counts(temporal: Mapping[str, Relation], values: Values) -> dict[tuple[str, str], _PairCount]:
    moments: dict = defaultdict(dict)  # subject -> relation -> its one date or year
    for iri in temporal:
        for subject, moment in _single(values, iri, when).items():
            moments[subject][iri] = moment
    counts: dict[tuple[str, str], _PairCount] = defaultdict(_PairCount)
    for by_relation in moments.values():
        for start, end in permutations(by_relation, 2):
            counts[(start, end)].add(by_relation[start], by_relation[end])
    return counts


def _known_span(start: Relation, end: Relation) -> str | None:
    """The span (life, existence, period) in which the library knows start comes before end."""
    a, b = start.concept, end.concept
    if a is not None and b is not None and (a.phase, b.phase) == ("start", "end") and a.span == b.span:
        return a.span
    return None


def _years_rule(library: Library, start: Relation, end: Relation, span: str | None, count: _PairCount) -> Proposal:
    rule: YearsRule = next((y for y in library.years_between if y.span == span and span is not None),
                           next(y for y in library.years_between if y.span is None))
    wording: Wording = rule.day if count.dates else rule.year
    if span is not None:
        note = f"order known: the {start.name('en')} comes before the {end.name('en')}"
    else:
        share = count.answered / count.both
        note = (f"order from the data: the {start.name('en')} is not after the {end.name('en')} for "
                f"{share:.0%} of the {count.both:,} entities with both")
    return Proposal(family="years between", kind="Interval", operation="YearsBetween",
                    name=f"{rule.slug}-from-{{}}-to-{{}}", named=(start.iri, end.iri),
                    inputs=(Input("start", start.iri), Input("end", end.iri)),
                    label=_named(rule.label, (start, end)), statement=wording.statement, question=wording.question,
                    source=rule.source, parameters=(), coverage=count.answered, note=note, answers=count.years)


# ---------------------------------------------------------------------------- one hop
def events(relations: Iterable[Relation]) -> list[Relation]:
    """The date relations of a concept with an event (birth, release ...): what a one-hop rule reads."""
    return [r for r in relations if r.temporal and r.concept is not None and r.concept.event is not None]


def one_hop_rules(relations: list[Relation], values: Values, links: Links, library: Library) -> Iterator[Proposal]:
    """YearsBetween with one date read on the bridge, the entity's one value of a link that
    most entities that have it have once (library.toml, [[one_hop]]):

    - bridge-born: the bridge's birth -> the entity's date of a concept with an event, in
      this order for order_share of the entities with both;
    - bridge-event: the entity's birth -> the bridge's date of another such concept, in
      this order likewise;
    - same-birth: the entity's birth -> the bridge's by the same relation (the engine
      answers where the entity is the older), unless bridge-born finds the bridge the older.
    """
    dated = events(relations)
    births = [r for r in dated if r.concept.name == library.birth_concept]
    moments = {r.iri: _single(values, r.iri, when) for r in dated}
    rules = {h.pair: h for h in library.one_hop}
    for link in (r for r in relations if r.iri in links):
        if link.profile.single < library.bridge_share * link.profile.subjects:
            continue  # "the composer of the film": most entities must have one
        bridges = links[link.iri]
        for birth in births:
            born = moments[birth.iri]
            for event in dated:
                happened = moments[event.iri]
                count = _count((born.get(b), happened.get(e)) for e, b in bridges.items())
                if "bridge-born" in rules and count.evident(library) and count.askable(library):
                    yield _one_hop_rule(library, rules["bridge-born"], link, birth, event, "start", count)
                if event is birth:
                    older = _count((born.get(e), born.get(b)) for e, b in bridges.items())
                    if "same-birth" in rules and not count.evident(library) and older.askable(library):
                        yield _one_hop_rule(library, rules["same-birth"], link, birth, event, "end", older)
                elif event.concept.name != library.birth_concept:
                    reverse = _count((born.get(e), happened.get(b)) for e, b in bridges.items())
                    if "bridge-event" in rules and reverse.evident(library) and reverse.askable(library):
                        yield _one_hop_rule(library, rules["bridge-event"], link, birth, event, "end", reverse)


def _count(pairs: Iterable[tuple[Moment | None, Moment | None]]) -> _PairCount:
    count = _PairCount()
    for start, end in pairs:
        if start is not None and end is not None:
            count.add(start, end)
    return count


def _one_hop_rule(library: Library, rule: OneHopRule, link: Relation, start: Relation, end: Relation,
                  bridged: str, count: _PairCount) -> Proposal:
    """``bridged``: the role ("start" or "end") read on the bridge."""
    wording: Wording = rule.day if count.dates else rule.year
    event = end.concept.event  # the later date's (same-birth's questions use none of its words)
    subject = rule.event_subject
    question = _fill(wording.question, en={"when": event.when.replace("{entity}", subject),
                                            "stated": event.stated.replace("{entity}", subject)}, ru={"event": event.ru})

    def via(relation: Relation) -> Texts:
        return _fill(library.via_label, en={"relation": relation.name("en"), "link": link.name("en")},
                     ru={"relation": relation.name("ru"), "link": link.name("ru")})

    names = {lang: [getattr(via(r), lang) if role == bridged else r.name(lang)
                    for role, r in (("start", start), ("end", end))] for lang in ("en", "ru")}
    label = Texts(**{lang: f"{getattr(rule.label, lang)}: {', '.join(names[lang])}" for lang in ("en", "ru")})
    single = (f"{link.name('en')}: one value for {link.profile.single / link.profile.subjects:.0%} of the "
              f"{link.profile.subjects:,} entities that have it")
    if rule.pair == "same-birth":
        named, name = (link.iri, start.iri), f"{rule.slug}-than-{{}}-by-{{}}"
        why = f"asked where the entity is the older: {count.answered:,} of the {count.both:,} entities with both"
    else:
        if bridged == "start":
            named, name = (start.iri, link.iri, end.iri), f"{rule.slug}-from-{{}}-of-{{}}-to-{{}}"
        else:
            named, name = (start.iri, end.iri, link.iri), f"{rule.slug}-from-{{}}-to-{{}}-of-{{}}"
        why = (f"order from the data: the {names['en'][0]} is not after the {names['en'][1]} for "
               f"{count.answered / count.both:.0%} of the {count.both:,} entities with both")
    inputs = tuple(Input(role, r.iri, via=link.iri if role == bridged else None)
                   for role, r in (("start", start), ("end", end)))
    return Proposal(family="one hop", kind="Interval", operation="YearsBetween", name=name, named=named,
                    inputs=inputs, label=label, statement=wording.statement, question=question, source=rule.source,
                    parameters=(), coverage=count.answered, note=f"{why}; {single}", answers=count.years)


# ---------------------------------------------------------------------------- quantities
def conversion_rules(relations: list[Relation], values: Values, library: Library) -> Iterator[Proposal]:
    """Each unit conversion from the unit of a number relation."""
    for relation in (r for r in relations if r.unit is not None):
        coverage = len(_single(values, relation.iri, number))
        for conversion in (c for c in library.conversions if c.source_unit == relation.unit.code):
            unit = library.unit(conversion.unit)
            question = _fill(library.conversion_question, en={"unit": unit.en}, ru={"unit:gent": unit.ru_gent})
            parameters = [(k, getattr(conversion, k)) for k in ("factor", "divisor", "offset")
                          if getattr(conversion, k) is not None]
            parameters += [("rounding", conversion.rounding), ("sourceUnit", conversion.source_unit),
                           ("unit", conversion.unit)]
            yield Proposal(family="conversion", kind="Conversion", operation="UnitConversion",
                           name=f"{{}}-in-{unit.slug}", named=(relation.iri,), inputs=(Input("amount", relation.iri),),
                           label=_named(conversion.label, (relation,)), statement=conversion.statement,
                           question=question, source=conversion.source, parameters=tuple(parameters),
                           coverage=coverage, note=f"unit {relation.unit.code}: {relation.unit_reason}")


def ratio_rules(relations: list[Relation], values: Values, library: Library) -> Iterator[Proposal]:
    """Each ratio between a relation of its numerator's concept and one of its denominator's
    concept in a unit it knows (population / area in km², m² or ha)."""
    for ratio in library.ratios:
        numerators = [r for r in relations if r.numeric and r.concept and r.concept.name == ratio.numerator]
        denominators = [r for r in relations if r.numeric and r.concept and r.concept.name == ratio.denominator
                        and r.unit is not None and r.unit.code in ratio.denominator_factors]
        for top in numerators:
            tops = _single(values, top.iri, number)
            for bottom in denominators:
                bottoms = _single(values, bottom.iri, number)
                coverage = sum(1 for s in tops if bottoms.get(s, 0) != 0)
                factor = ratio.denominator_factors[bottom.unit.code]
                parameters = [("factor", factor)] if factor != 1 else []
                parameters += [("rounding", ratio.rounding), ("unit", ratio.unit), ("sourceUnit", bottom.unit.code)]
                yield Proposal(family="ratio", kind="Arithmetic", operation="Ratio", name=f"{ratio.slug}-of-{{}}-per-{{}}",
                               named=(top.iri, bottom.iri),
                               inputs=(Input("numerator", top.iri), Input("denominator", bottom.iri)),
                               label=_named(ratio.label, (top, bottom)), statement=ratio.statement,
                               question=ratio.question, source=ratio.source, parameters=tuple(parameters),
                               coverage=coverage, note=f"{bottom.name('en')} in {bottom.unit.code}: {bottom.unit_reason}")


# ---------------------------------------------------------------------------- aggregates
def aggregate_rules(relations: list[Relation], counts: Mapping[str, Counter], library: Library) -> Iterator[Proposal]:
    """Count over any multi-valued relation (not of language-tagged texts: names and notes);
    Total and Maximum over numbers; Earliest over dates and years. A count's answers are the
    numbers of values (``counts``)."""
    low, high = library.member_range
    fits = {
        "any": lambda r: r.profile.share([RDF + "langString"]) < MOSTLY,
        "number": lambda r: r.numeric and not r.temporal,
        "date": lambda r: r.temporal,
    }
    for relation in (r for r in relations if r.profile.multi > 0):
        for rule in (a for a in library.aggregates if fits[a.values](relation)):
            yield Proposal(family="aggregate", kind="Aggregate", operation=rule.operation, name=f"{rule.slug}-of-{{}}",
                           named=(relation.iri,), inputs=(Input("member", relation.iri, "All"),),
                           label=_named(rule.label, (relation,)), statement=rule.statement, question=rule.question,
                           source=rule.source, parameters=(), coverage=relation.profile.multi,
                           note=f"entities with {low} to {high} values",
                           answers=counts.get(relation.iri) if rule.operation == "Count" else None)
