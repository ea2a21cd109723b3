"""The rule library (package data ``library.toml``) as validated, frozen pydantic models.

TOML rather than Python data: the library is mostly prose (statements and questions in two
languages) that a reviewer reads and edits, and it stays data that no code path can
bend. The models refuse unknown keys, so a misspelt key is an error, never a silent default.
"""

from __future__ import annotations

import functools
import tomllib
from decimal import Decimal
from importlib import resources
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from kgsynth._config import Strict
from kgsynth.errors import KgsynthError


class Texts(Strict):
    """One text in English and Russian."""

    en: str
    ru: str


class Unit(Strict):
    code: str  # the kgs:unit / kgs:sourceUnit value
    slug: str  # in rule IRIs
    aliases: tuple[str, ...]  # whole words naming it in a local name or label
    codes: tuple[str, ...] = ()  # declared units: QUDT local names, UN/CEFACT codes
    en: str  # "feet": "How many feet ..."
    ru_gent: str  # "футов": "Сколько футов ..."
    ru_loct: str  # "футах": "в футах"


class KnownUnit(Strict):
    suffix: str  # the end of the relation's IRI
    unit: str
    note: str  # why the unit is known


class Event(Strict):
    """How a question speaks of a date concept's event."""

    when: str  # "was {entity} born"
    stated: str  # "{entity} was born"
    ru: str  # the Russian event noun in the genitive: "рождения"


class Concept(Strict):
    name: str
    kind: Literal["date", "quantity"]
    keywords: tuple[str, ...]
    suffixes: tuple[str, ...] = ()
    label: Texts | None = None  # written for a relation without one
    phase: Literal["start", "end"] | None = None
    span: str | None = None
    event: Event | None = None


class CalendarRule(Strict):
    operation: Literal["DayOfWeek", "Century", "Decade", "LeapYear"]
    slug: str
    label: Texts
    source: str
    statement: Texts
    question: Texts
    year_question: Texts | None = None  # for a relation of xsd:gYear values, whose noun is a year
    event_question: Texts


class Wording(Strict):
    statement: Texts
    question: Texts


class YearsRule(Strict):
    span: str | None = None  # None: the wording for every other pair
    slug: str
    label: Texts
    source: str
    day: Wording  # both inputs full dates: completed years
    year: Wording  # a year on either side: later year minus earlier


class OneHopRule(Strict):
    """YearsBetween along one hop (kgs:via): a date of the entity and one of its bridge, the
    entity's one value of a link relation ("the composer of a film")."""

    pair: Literal["bridge-born", "bridge-event", "same-birth"]  # where each date is (library.toml)
    slug: str
    event_subject: str = "{entity}"  # put for {entity} in the event's {when} and {stated}
    label: Texts
    source: str
    day: Wording
    year: Wording


class Conversion(Strict):
    source_unit: str
    unit: str
    factor: Decimal | None = None
    divisor: Decimal | None = None
    offset: Decimal | None = None
    rounding: int
    label: Texts
    source: str
    statement: Texts


class RatioRule(Strict):
    slug: str
    numerator: str  # a quantity concept
    denominator: str  # a quantity concept, in one of denominator_factors' units
    denominator_factors: dict[str, Decimal]
    unit: str
    rounding: int
    label: Texts
    source: str
    statement: Texts
    question: Texts


class AggregateRule(Strict):
    operation: Literal["Count", "Total", "Maximum", "Earliest"]
    slug: str
    values: Literal["any", "number", "date"]
    label: Texts
    source: str
    statement: Texts
    question: Texts


class Library(Strict):
    date_keywords: tuple[str, ...]
    year_range: tuple[int, int]
    year_share: float
    member_range: tuple[int, int]
    order_share: float
    nonzero_share: float
    one_answer_share: float
    nested_share: float
    containment_keywords: tuple[str, ...]
    bridge_share: float
    birth_concept: str
    via_label: Texts
    units: tuple[Unit, ...] = Field(alias="unit")
    known_units: tuple[KnownUnit, ...] = Field(alias="known_unit")
    concepts: tuple[Concept, ...] = Field(alias="concept")
    calendar: tuple[CalendarRule, ...]
    years_between: tuple[YearsRule, ...]
    one_hop: tuple[OneHopRule, ...]
    conversion_question: Texts
    conversions: tuple[Conversion, ...] = Field(alias="conversion")
    ratios: tuple[RatioRule, ...] = Field(alias="ratio")
    aggregates: tuple[AggregateRule, ...] = Field(alias="aggregate")

    def unit(self, code: str) -> Unit:
        return next(u for u in self.units if u.code == code)

    @model_validator(mode="after")
    def _references_resolve(self) -> Library:
        units = {u.code for u in self.units}
        concepts = {c.name for c in self.concepts}
        spans = {c.span for c in self.concepts if c.span}
        wanted = [(f"known_unit {k.suffix}", k.unit, units) for k in self.known_units]
        wanted += [(f"conversion {c.source_unit} -> {c.unit}", u, units) for c in self.conversions
                   for u in (c.source_unit, c.unit)]
        wanted += [(f"ratio {r.slug}", c, concepts) for r in self.ratios for c in (r.numerator, r.denominator)]
        wanted += [(f"ratio {r.slug}", u, units) for r in self.ratios for u in r.denominator_factors]
        wanted += [(f"years_between {y.slug}", y.span, spans) for y in self.years_between if y.span]
        for where, name, known in wanted:
            if name not in known:
                raise ValueError(f"{where} names {name!r}, which the library does not define")
        birth = next((c for c in self.concepts if c.name == self.birth_concept), None)
        if birth is None or birth.kind != "date" or birth.phase != "start":
            raise ValueError(f"birth_concept names {self.birth_concept!r}, which is not a start date concept")
        pairs = sorted(h.pair for h in self.one_hop)
        if len(set(pairs)) != len(pairs):
            raise ValueError(f"one_hop has two entries for one pair: {pairs}")
        if sum(y.span is None for y in self.years_between) != 1:
            raise ValueError("years_between needs exactly one entry without a span (the wording of other pairs)")
        return self


@functools.cache
def load_library() -> Library:
    """The shipped rule library, read once.

    Raises:
        KgsynthError: the package data does not validate (a broken installation or edit).
    """
    text = resources.files("kgsynth.rulebook").joinpath("library.toml").read_text(encoding="utf-8")
    try:
        return Library.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as e:
        raise KgsynthError(f"the rule library kgsynth/rulebook/library.toml is invalid: {e}") from None
