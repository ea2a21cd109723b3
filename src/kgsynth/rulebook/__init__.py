"""The rule library: common-knowledge rules (unit conversions, calendar rules, ages,
population density, counts) proposed for a graph's own relations.

:func:`suggest` profiles the graph with a few SPARQL queries, recognises its dates, years,
quantities with a unit and multi-valued relations, finds the links to bridges with a date
(a film's composer, a person's spouse), and proposes every library rule that covers
enough entities; :meth:`Suggestion.turtle` writes them as ``kgs:Rule`` resources
with ``kgs:origin kgs:Library`` (``kgsynth rules suggest``). The library itself is package
data, ``library.toml`` (see ``docs/vocabulary.md``). This package reads graphs through
:mod:`kgsynth.kg` only.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.rulebook._library import Library, Texts, load_library
from kgsynth.rulebook._profile import main_classes, profile_relations, read_links, read_values
from kgsynth.rulebook._propose import Input, Proposal, events, propose
from kgsynth.rulebook._recognise import Relation, derived_label, recognise_all
from kgsynth.rulebook._turtle import DEFAULT_BASE, relation_labels, rule_iris, write_turtle

__all__ = ["DEFAULT_BASE", "Input", "Library", "Proposal", "Relation", "Suggestion", "Texts", "load_library",
           "suggest"]

_NAMES_SHOWN = 8  # relations named in the error for a graph the library cannot use


@dataclass(frozen=True)
class Suggestion:
    """The library rules proposed for one graph, in the order they are written."""

    proposals: tuple[Proposal, ...]
    iris: tuple[str, ...]  # each proposal's rule IRI
    relations: dict[str, Relation]  # every fact relation of the graph, by IRI
    classes: dict[str, str]  # the main class of the subjects of each relation a rule reads first

    def turtle(self, header: str) -> str:
        """The rules as Turtle, with labels for the unlabelled relations they read."""
        read = {iri for p in self.proposals for i in p.inputs for iri in (i.relation, i.via) if iri is not None}
        labels = relation_labels(self.relations[iri] for iri in sorted(read))
        return write_turtle(list(self.proposals), list(self.iris), labels, self.classes, header)


def suggest(kg: KnowledgeGraph, min_entities: int = 20, base: str = DEFAULT_BASE) -> Suggestion:
    """Every library rule that covers at least ``min_entities`` entities of ``kg``.

    Raises:
        KgsynthError: no library rule covers that many (the message names the relations
            looked at, or the rule that came closest).
    """
    library = load_library()
    relations = recognise_all(profile_relations(kg, library.member_range, library.year_range), library)
    readable = [r.iri for r in relations if r.temporal or r.unit is not None or r.concept is not None]
    dated = [r.iri for r in events(relations)]
    links = read_links(kg, dated, (r.iri for r in relations))
    candidates = propose(relations, read_values(kg, readable), links, library)
    proposals = [p for p in candidates if p.coverage >= min_entities]
    if not proposals:
        raise KgsynthError(_nothing_to_propose(kg, relations, candidates, min_entities, library))
    return Suggestion(proposals=tuple(proposals), iris=tuple(rule_iris(proposals, base)),
                      relations={r.iri: r for r in relations},
                      classes=main_classes(kg, {p.about for p in proposals}))


def _nothing_to_propose(kg: KnowledgeGraph, relations: list[Relation], candidates: list[Proposal],
                        min_entities: int, library: Library) -> str:
    if candidates:
        best = max(candidates, key=lambda p: (p.coverage, p.label.en))
        return (f"no rule of the rule library covers {min_entities:,} or more entities of the {kg.backend.description} "
                f"(the most: {best.label.en!r}, {best.coverage:,}); give a smaller --min-entities")
    names = [derived_label(r.iri) for r in relations]
    shown = ", ".join(names[:_NAMES_SHOWN]) + (f" and {len(names) - _NAMES_SHOWN:,} more" if len(names) > _NAMES_SHOWN else "")
    low, high = library.member_range
    looked = f"looked at {len(names):,} relations: {shown}" if names else "it has no relations besides types and labels"
    return (f"no rule of the rule library applies to the {kg.backend.description}: it has no dates or years, "
            f"no numbers in a known unit and no relation with {low}-{high} values per entity ({looked})")
