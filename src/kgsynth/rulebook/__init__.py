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

from dataclasses import dataclass, field

from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.rulebook._library import Library, Texts, load_library
from kgsynth.rulebook._profile import main_classes, nested_values, profile_relations, read_links, read_values, value_counts
from kgsynth.rulebook._propose import Input, Proposal, events, propose
from kgsynth.rulebook._recognise import Relation, derived_label, mistyped, recognise_all
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
    left_out: tuple[tuple[Proposal, str], ...] = ()  # rules that cover enough entities but ask nothing worth asking, and why
    mistyped: dict[str, str] = field(default_factory=dict)  # relation -> how its dates or years were read from text

    def turtle(self, header: str) -> str:
        """The rules as Turtle, with labels for the unlabelled relations they read."""
        read = {iri for p in self.proposals for i in p.inputs for iri in (i.relation, i.via) if iri is not None}
        labels = relation_labels(self.relations[iri] for iri in sorted(read))
        readings = {iri: f"{self.relations[iri].name('en')}: {how}" for iri, how in self.mistyped.items()}
        return write_turtle(list(self.proposals), list(self.iris), labels, self.classes, header, self.left_out,
                            readings)


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
    counts = value_counts(kg, [r.iri for r in relations if r.profile.multi > 0], library.member_range)
    values = read_values(kg, readable)
    candidates = propose(relations, values, links, counts, library)
    enough = [p for p in candidates if p.coverage >= min_entities]
    nested = nested_values(kg, [p.named[0] for p in enough if p.operation == "Count"], [r.iri for r in relations if r.containment])
    by_iri = {r.iri: r for r in relations}
    proposals, left_out = [], []
    for proposal in enough:
        why = _not_worth_asking(proposal, by_iri, nested, library)
        (left_out.append((proposal, why)) if why else proposals.append(proposal))
    if not proposals:
        raise KgsynthError(_nothing_to_propose(kg, relations, candidates, min_entities, library, left_out))
    read_as_dates = sorted({iri for p in proposals for iri in p.dated})
    how = {iri: text for iri in read_as_dates if (text := mistyped(t for ts in values.get(iri, {}).values() for t in ts))}
    return Suggestion(proposals=tuple(proposals), iris=tuple(rule_iris(proposals, base)), relations=by_iri,
                      classes=main_classes(kg, {p.about for p in proposals}), left_out=tuple(left_out), mistyped=how)


def _not_worth_asking(proposal: Proposal, relations: dict[str, Relation], nested: dict[str, int], library: Library) -> str | None:
    """Why a rule that covers enough entities is left out, or None: a count of values that
    contain each other, or answers mostly one value (a yes/no rule is exempt: synthesis
    balances its yes and no)."""
    if proposal.operation == "Count":
        profile = relations[proposal.named[0]].profile
        several = profile.subjects - profile.single
        if several and nested.get(profile.iri, 0) >= library.nested_share * several:
            return (f"its values contain each other (as a city and its country do) for {nested[profile.iri] / several:.0%} "
                    f"of the {several:,} entities with several: the count would count the graph's modelling")
    usual = proposal.usual_answer()
    if usual is not None and not isinstance(usual[0], bool) and usual[1] > library.one_answer_share:
        return (f"{usual[1]:.0%} of its {sum(proposal.answers.values()):,} answers are {usual[0]}: "
                "a model would answer by guessing the usual value")
    return None


def _nothing_to_propose(kg: KnowledgeGraph, relations: list[Relation], candidates: list[Proposal],
                        min_entities: int, library: Library, left_out: list[tuple[Proposal, str]]) -> str:
    if left_out:
        proposal, why = left_out[0]
        more = f" (and {len(left_out) - 1:,} more)" if len(left_out) > 1 else ""
        return (f"every rule of the rule library that covers {min_entities:,} or more entities of the "
                f"{kg.backend.description} is left out: {proposal.label.en!r}: {why}{more}")
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
