"""Words for a relation the graph does not word, read from its IRI and label, and the
Russian of an English noun.

Graphs nobody worded name their relations by identifiers: a Freebase path (``film/film/genre``:
the genre property of the film type; ``film/film/estimated_budget/measurement_unit/
dated_money_value/currency``: through an intermediate node, the currency of a film's
budget), a camelCase local name (DBpedia's ``birthPlace``), or a label that spells the path
("film film genre"). :func:`relation_words` reads what such a name says: the property in
words, the type of the relation's subjects, and through an intermediate node the outer
property. ``words.toml`` (package data) gives an English noun for a name that is not one
("produced by" -> "producer") and the Russian of English relation and class nouns
("genre" -> «жанр»), so a Russian item never names a relation in English.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from urllib.parse import unquote

import inflect

from kgsynth.formats import morph
from kgsynth.kg import local_name, readable_name, spells_a_path

# segments that file relations under a namespace rather than name them ("/relation/", "/ontology/")
_NAMESPACE_WORDS = frozenset("relation relations attribute attributes property properties prop ontology ns vocab "
                             "predicate predicates".split())
_PATH_SEGMENT = re.compile(r"[a-z0-9_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Freebase domains named by more than one segment: base/<name>/..., user/<who>/<name>/...
_DOMAIN_SEGMENTS = {"base": 2, "user": 3}
_PREPOSITIONS = frozenset("of in at by for on to from with into about as under over per within".split())
# intermediate nodes that hold an amount: their relation's value is a unit of the outer property
_MEASURES = frozenset({"dated money value", "adjusted money value", "dated integer", "dated float"})
# a unit a name ends with ("runway length feet", "elevation (in metres)"): the noun says "in <unit>",
# the Russian «в <unit>»
_UNITS = {"feet": "feet", "foot": "feet", "ft": "feet", "metre": "metres", "metres": "metres", "meter": "metres",
          "meters": "metres", "kilometres": "kilometres", "kilometers": "kilometres", "km": "kilometres",
          "miles": "miles", "inches": "inches", "kilograms": "kilograms", "kg": "kilograms", "tonnes": "tonnes"}
_UNITS_RU = {"feet": "футах", "metres": "метрах", "kilometres": "километрах", "miles": "милях", "inches": "дюймах",
             "kilograms": "килограммах", "tonnes": "тоннах"}


@dataclass(frozen=True)
class RelationWords:
    """What a relation's IRI or label says about it, in lower-case English words."""

    name: str  # the property: "genre", "date of birth", "produced by"
    subject: str | None = None  # the type of its subjects, by a path-shaped IRI: "film", "person"
    outer: str | None = None  # through an intermediate node, the outer property: "estimated budget"
    via: str | None = None  # the intermediate node's type: "dated money value"

    @property
    def noun(self) -> str:
        """The English noun the name gives: the glossary's for a name that is not a noun
        ("produced by" -> "producer"), "currency of the estimated budget" for the unit of an
        amount, the noun before a unit and the unit ("1st runway length feet" -> "length of the
        first runway in feet"), else the name in the singular ("time zones" -> "time zone")."""
        if self.outer and self.via in _MEASURES:
            return f"{self.name} of the {glossary().english.get(self.outer) or singular(self.outer)}"
        english = glossary().english
        # the most specific context first: an award winning work's "award winner" is no co-winner
        contexts = [f"{self.subject} {self.outer}"] if self.subject and self.outer else []
        contexts += [c for c in (self.outer or self.subject,) if c]  # "ethnicity people" is a member, "cause of death people" a victim
        given = next((english[f"{c} {self.name}"] for c in contexts if f"{c} {self.name}" in english), None)
        return given or english.get(self.name) or _with_unit(self.name) or singular(self.name)

    @property
    def subject_noun(self) -> str | None:
        """What a subject of the relation is, by the type its IRI files it under ("film")."""
        return self.subject and (glossary().english.get(self.subject) or singular(self.subject))


@cache
def singular(noun: str) -> str:
    """A noun phrase in the singular, by its head: the last word, or the word before a
    preposition ("production companies" -> "production company", "languages spoken" stays:
    the head is not last); a phrase joined by "and" / "or", or one already singular, as it is."""
    words = noun.split()
    at = next((i - 1 for i, w in enumerate(words) if w in _PREPOSITIONS and i > 0), len(words) - 1)
    head = words[at] if words else ""
    if {"and", "or"} & set(words) or head.isupper() or not head.endswith("s") or head.endswith(("us", "ss", "is")):
        return noun
    one = inflection().singular_noun(head)
    return " ".join([*words[:at], one, *words[at + 1:]]) if one else noun


@cache
def inflection() -> inflect.engine:
    return inflect.engine()


def _with_unit(name: str) -> str | None:
    """For a name that ends with a unit ("elevation in feet", "length metre", "elevation (in
    metres)"): the noun before it, as the glossary gives it, and "in <unit>"; else None."""
    *words, last = name.replace("(", " ").replace(")", " ").split() or [""]
    if last not in _UNITS:
        return None
    if words and words[-1] == "in":
        words.pop()
    if "in" in words or (words and words[-1] in ("square", "cubic")):
        return None  # said with its unit already ("sales area in square metres")
    base = " ".join(words)
    return base and f"{glossary().english.get(base) or singular(base)} in {_UNITS[last]}"


@lru_cache(maxsize=1 << 16)  # asked per fact and per entity's relations: a graph has few relations, many facts
def relation_words(iri: str, label: str | None) -> RelationWords:
    """The relation's words: its label, unless the label spells a path or is only the IRI's
    name made readable, as an unlabelled relation is shown (then the IRI's)."""
    segments = _name_segments(iri)
    path = _freebase_words(segments) if len(segments) >= 3 and all(_PATH_SEGMENT.fullmatch(s) for s in segments) else None
    if label and label != readable_name(iri) and not _spells_path(label, segments):
        # the label names the relation; a path still says what its subjects are
        return RelationWords(name=label.replace("_", " ").strip(), subject=path.subject if path else None)
    return path or RelationWords(name=_spoken(segments[-1]) if segments else label or local_name(iri))


def _spells_path(label: str, segments: list[str]) -> bool:
    """Whether a label spells the IRI's path rather than naming the relation (FB15k-237's
    "people person nationality", "award award category category of"): a dot, a slash or an
    underscore, a word said twice in a row, one camelCase word, or more words than the last
    segment, all of them the path's."""
    said = label.casefold().split()
    if spells_a_path(label) or (len(said) == 1 and _CAMEL.search(label)):  # an identifier for a label ("birthPlace")
        return True
    path_words = {w for s in segments for w in _spoken(s).casefold().split()}
    last = _spoken(segments[-1]).split() if segments else []
    return len(said) > len(last) and set(said) <= path_words


def _name_segments(iri: str) -> list[str]:
    """The segments of the IRI that name the relation, percent-decoded: after the host and the
    last namespace word ("relation", "ontology"), else the last segment; a dotted last segment
    is a path too."""
    path = re.sub(r"^[A-Za-z][\w+.-]*://[^/]*/?", "", iri)
    segments = [unquote(s) for s in re.split(r"[/#]", path) if s]
    cut = max((i + 1 for i, s in enumerate(segments) if s.casefold() in _NAMESPACE_WORDS), default=len(segments) - 1)
    named = segments[cut:] or segments[-1:]
    if len(named) == 1 and "." in named[0] and " " not in named[0]:
        named = [s for s in named[0].split(".") if s]
    return named


def _spoken(segment: str) -> str:
    """A segment in words: "birthPlace" -> "birth place", "date_of_birth" -> "date of birth";
    Freebase marks a property with several values by "_s" ("spouse_s")."""
    text = _CAMEL.sub(" ", segment).replace("_", " ").replace("-", " ")
    words = text.split()
    if len(words) > 1 and words[-1] == "s":
        words = words[:-1]
    return " ".join(w if w.isupper() else w.lower() for w in words)


def _freebase_words(segments: list[str]) -> RelationWords:
    """A Freebase path: domain, type, property, and through an intermediate node its domain,
    type and property again (``award/award_nominee/award_nominations/award/award_nomination/award``)."""
    first = _hop(segments)
    if first is None:
        return RelationWords(name=_spoken(segments[-1]))
    subject, prop, rest = first
    inner = _hop(rest) if rest else None
    if inner is None:
        return RelationWords(name=_spoken(segments[-1]), subject=_spoken(subject),
                             outer=_spoken(prop) if rest else None)
    via, inner_prop, _ = inner
    return RelationWords(name=_spoken(inner_prop), subject=_spoken(subject), outer=_spoken(prop), via=_spoken(via))


def _hop(segments: list[str]) -> tuple[str, str, list[str]] | None:
    """(type, property, the segments after) of a path's first hop, or None when too short."""
    at = _DOMAIN_SEGMENTS.get(segments[0], 1)
    if len(segments) < at + 2:
        return None
    return segments[at], segments[at + 1], segments[at + 2:]


# ---------------------------------------------------------------------- the glossary
@dataclass(frozen=True)
class Glossary:
    english: dict[str, str]  # a relation name that is no noun -> the noun ("produced by" -> "producer")
    russian: dict[str, str]  # an English noun -> its Russian, nominative singular ("genre" -> "жанр")


@cache
def glossary() -> Glossary:
    data = tomllib.loads(resources.files("kgsynth.synth.naming").joinpath("words.toml").read_text(encoding="utf-8"))
    return Glossary(english=data["english"], russian={k.casefold(): v for k, v in data["russian"].items()})


@cache
def russian_of(noun: str) -> str | None:
    """The Russian of an English noun phrase, in the nominative: from the glossary whole
    ("date of birth" -> «дата рождения»); "A in feet" as A «в футах»; "A of the B" as A with
    B in the genitive («валюта сметного бюджета»); else the phrase without its first words ("film release region" ->
    "release region" -> "region" -> «регион»); None when no part of it is known."""
    russian = glossary().russian
    key = noun.casefold().removeprefix("the ")
    if key in russian:
        return russian[key]
    base, in_, unit = key.rpartition(" in ")
    if in_ and unit in _UNITS_RU:
        base_ru = russian_of(base)
        return base_ru and f"{base_ru} в {_UNITS_RU[unit]}"
    head, of, dependent = key.partition(" of the ")
    if of and (head_ru := russian_of(head)) and (dependent_ru := russian_of(dependent)):
        return f"{head_ru} {morph.decline(dependent_ru, 'gent')}"
    words = key.split()
    return russian_of(" ".join(words[1:])) if len(words) > 1 else None
