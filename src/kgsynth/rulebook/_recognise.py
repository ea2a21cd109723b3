"""Which relations a library rule can read: dates and years, numbers with a known unit, and
the concept (birth, population, height ...) a relation is about.

A relation is recognised by its datatypes and values and by whole words of its IRI's local
name and its labels (``people.person.date_of_birth``, ``birthDate``, "date of birth"). The
readers of values here follow the rule engine's (kgsynth.synth.scenarios.rules), which this package
may not import: a date is an xsd:date or xsd:dateTime, a year an xsd:gYear or a number read
by its integer part; a string or a value of a misspelt date datatype is read from its text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import pyoxigraph as ox

from kgsynth.kg import local_name, spells_a_path
from kgsynth.kg._terms import NUMERIC_TYPES, STRING_TYPES, date_or_year, reads_from_text
from kgsynth.kg.vocab import XSD
from kgsynth.rulebook._library import Concept, Library, Unit
from kgsynth.rulebook._profile import RelationProfile

DATE_TYPES = (XSD + "date", XSD + "dateTime")
YEAR_TYPES = (XSD + "gYear",)
MOSTLY = 0.9  # a relation is of a type when this share of its values is
_CAMEL = re.compile(r"(?<=[a-zа-яё0-9])(?=[A-ZА-ЯЁ])")


def words(text: str) -> str:
    """Lower-case words between spaces, so a phrase is found whole: "birthDate" -> " birth date "."""
    return " " + " ".join(re.findall(r"\w+", _CAMEL.sub(" ", text).replace("_", " ").lower())) + " "


def has_phrase(text: str, phrase: str) -> bool:
    """Whether ``text`` (from :func:`words`) holds the words of ``phrase`` in a row."""
    return words(phrase) in text


def derived_label(iri: str) -> str:
    """A label from the IRI's last segment: "people.person.date_of_birth" -> "date of birth"."""
    return words(local_name(iri).rsplit(".", 1)[-1]).strip()


@dataclass(frozen=True)
class Relation:
    """A relation with what the library recognised in it."""

    profile: RelationProfile
    concept: Concept | None
    unit: Unit | None
    unit_reason: str | None  # how the unit was found, for the rule's comment
    temporal: bool  # its values are dates or years
    numeric: bool
    containment: bool = False  # its name says its subject holds its object or is held by it (a city's country)

    @property
    def iri(self) -> str:
        return self.profile.iri

    def name(self, lang: str) -> str:
        """The relation in words: its own label, else its concept's, else from its IRI."""
        labels = self.profile.labels
        own = labels.get(lang) or (labels.get("") if lang == "en" else None)
        if own and not spells_a_path(own):
            return own
        if self.concept is not None and self.concept.label is not None:
            return getattr(self.concept.label, lang)
        return self.name("en") if lang != "en" else derived_label(self.iri)

    @property
    def holds_years(self) -> bool:
        """Its values are xsd:gYear or years as text, so its noun is a year ("year of manufacture")."""
        return self.profile.part(self.profile.count(YEAR_TYPES) + self.profile.years_as_text) >= MOSTLY

    @property
    def unlabelled(self) -> bool:
        return not self.profile.labels


def recognise_all(profiles: list[RelationProfile], library: Library) -> list[Relation]:
    """Each relation with its kind, concept and unit (in the profiles' order)."""
    # longest first, so "square metres" is found before "metres"
    aliases = sorted(((a, u) for u in library.units for a in u.aliases), key=lambda au: (-len(words(au[0])), -len(au[0])))
    return [_recognise(profile, library, aliases) for profile in profiles]


def _recognise(profile: RelationProfile, library: Library, aliases: list[tuple[str, Unit]]) -> Relation:
    name = local_name(profile.iri)
    texts = (*(words(label) for label in profile.labels.values()), words(name))
    numeric = profile.share(NUMERIC_TYPES) >= MOSTLY
    temporal = _temporal(profile, texts, library)
    kind = "date" if temporal else "quantity" if numeric else None
    concept = next((c for c in library.concepts if c.kind == kind and _is_about(profile.iri, texts, c)), None)
    # a unit ends a label or the local name's last segment: "height_meters", "height in metres"
    # (not "icd_9_cm_classification.code", whose "cm" is a clinical modification)
    last = words(name.rsplit(".", 1)[-1])
    unit_texts = (*texts[:-1], last)
    unit, reason = _unit(profile, unit_texts, library, aliases) if numeric and not temporal else (None, None)
    # a long label ("location country form of government") spells where the relation is filed, not what it is
    own = (*(words(label) for label in profile.labels.values() if len(label.split()) <= 3), last)
    containment = profile.share([None]) >= MOSTLY and any(has_phrase(t, k) for t in own for k in library.containment_keywords)
    return Relation(profile=profile, concept=concept, unit=unit, unit_reason=reason, temporal=temporal,
                    numeric=numeric, containment=containment)


def _temporal(profile: RelationProfile, texts: tuple[str, ...], library: Library) -> bool:
    """Mostly dates (typed, or as text); or mostly years, numbers or texts, where its name has a
    date word (a number or a text alone may be a count or a code)."""
    dates = profile.count(DATE_TYPES + YEAR_TYPES) + profile.dates_as_text
    years = dates + profile.years + profile.years_as_text
    named = any(has_phrase(t, k) for t in texts for k in library.date_keywords)
    return profile.part(dates) >= MOSTLY or (years >= library.year_share * profile.values and named)


def _is_about(iri: str, texts: tuple[str, ...], concept: Concept) -> bool:
    return iri.endswith(concept.suffixes) or any(has_phrase(t, k) for t in texts for k in concept.keywords)


def _unit(profile: RelationProfile, texts: tuple[str, ...], library: Library,
          aliases: list[tuple[str, Unit]]) -> tuple[Unit | None, str | None]:
    """The relation's unit: fixed by its schema, declared, or named in its label or IRI."""
    for known in library.known_units:
        if profile.iri.endswith(known.suffix):
            return library.unit(known.unit), known.note
    for declared in profile.declared_units:
        for unit in library.units:
            if declared in unit.codes or any(words(declared) == words(a) for a in unit.aliases):
                return unit, f"declared unit {declared!r}"
    for text in texts:
        for alias, unit in aliases:
            if text.endswith(words(alias)):
                return unit, f"{alias!r} in {text.strip()!r}"
    return None, None


# ---------------------------------------------------------------------------- values
def when(term: ox.Literal) -> dt.date | int | None:
    """A date or a year as the rule engine reads it (:func:`~kgsynth.kg._terms.date_or_year`),
    so a rule's coverage is what the engine answers."""
    return date_or_year(term)


def mistyped(terms: Iterable[ox.Literal]) -> str | None:
    """How the engine reads the values among ``terms`` that it reads from their text (strings,
    a misspelt date datatype), for the rules file: "25 values read as dates from strings
    ("1923-05-12")", per kind and datatype; None where there are none."""
    read: dict[tuple[str, str], list[str]] = defaultdict(list)
    for term in terms:
        datatype = term.datatype.value
        if reads_from_text(datatype) and (moment := when(term)) is not None:
            kind = "dates" if isinstance(moment, dt.date) else "years"
            source = "from strings" if datatype in STRING_TYPES else f"typed <{datatype}>"
            read[kind, source].append(term.value)
    return "; ".join(f"{len(texts):,} values read as {kind} {source} ({ox.Literal(min(texts))})"
                     for (kind, source), texts in sorted(read.items())) or None


def number(term: ox.Literal) -> Decimal | None:
    """A numeric literal's exact value, or None."""
    if term.datatype.value not in NUMERIC_TYPES:
        return None
    try:
        value = Decimal(term.value.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def year_of(moment: dt.date | int) -> int:
    return moment.year if isinstance(moment, dt.date) else moment
