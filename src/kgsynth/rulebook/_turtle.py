"""Proposed rules as Turtle: one block per rule under a comment with its coverage, and
labels for the unlabelled relations the rules read; the same graph gives the same file."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

import pyoxigraph as ox

from kgsynth.kg.vocab import KGS, RDFS, XSD
from kgsynth.rulebook._library import Texts
from kgsynth.rulebook._propose import Proposal
from kgsynth.rulebook._recognise import Relation

DEFAULT_BASE = "https://w3id.org/kgsynth/library/rule/"
_SEGMENTS = re.compile(r"[/#.:]")
_NOT_IRI_WORD = re.compile(r"[^\w.-]")


def short_names(iris: Iterable[str]) -> dict[str, str]:
    """The fewest trailing segments of each IRI that no other IRI ends with:
    ``.../people.person.date_of_birth`` -> ``date_of_birth``, but two ``date_founded``
    relations -> ``organization.date_founded`` and ``dated_location.date_founded``."""
    segments = {iri: [s for s in _SEGMENTS.split(iri) if s] for iri in set(iris)}

    def tail(iri: str, k: int) -> tuple[str, ...]:
        return tuple(segments[iri][-k:])

    names = {}
    for iri, parts in segments.items():
        k = next((k for k in range(1, len(parts)) if all(tail(iri, k) != tail(o, k) for o in segments if o != iri)),
                 len(parts))
        names[iri] = _NOT_IRI_WORD.sub("-", ".".join(tail(iri, k)))
    return names


def rule_iris(proposals: list[Proposal], base: str) -> list[str]:
    names = short_names(iri for p in proposals for iri in p.named)
    return [base + p.name.format(*(names[iri] for iri in p.named)) for p in proposals]


def write_turtle(proposals: list[Proposal], iris: list[str], labels: Mapping[str, Texts | str],
                 classes: Mapping[str, str], header: str, left_out: Sequence[tuple[Proposal, str]],
                 readings: Mapping[str, str]) -> str:
    """The rules file: ``labels`` are written for relations that have none (a Texts, or an
    English label alone), ``classes`` name the main class of a relation's subjects;
    ``left_out`` rules are listed in comments with why; ``readings`` say above each rule
    that reads a relation how its dates or years were read from mistyped values."""
    lines = [*(f"# {line}".rstrip() for line in header.splitlines()), ""]
    if left_out:
        lines += ["# Left out, though they cover enough entities:"]
        lines += [f"#   {proposal.label.en}: {why}" for proposal, why in left_out] + [""]
    lines += [f"@prefix kgs: <{KGS}> .", f"@prefix rdfs: <{RDFS}> .", f"@prefix xsd: <{XSD}> .", ""]
    if labels:
        lines += ["# Labels for the relations these rules read, which have none in the graph.", ""]
        lines += [f"{_iri(iri)} rdfs:label {_texts(label)} ." for iri, label in sorted(labels.items())]
        lines.append("")
    family = None
    for proposal, iri in zip(proposals, iris, strict=True):
        if proposal.family != family:
            family = proposal.family
            lines += [f"# {'-' * 20} {family}", ""]
        lines += [*_comment(proposal, classes, readings), *_rule(proposal, iri), ""]
    return "\n".join(lines)


def _comment(proposal: Proposal, classes: Mapping[str, str], readings: Mapping[str, str]) -> list[str]:
    of_class = classes.get(proposal.about)
    covers = f"covers {proposal.coverage:,} entities" + (f" (mostly {of_class})" if of_class else "")
    comment = [f"# {proposal.label.en}: {covers}"]
    read = [f"# {readings[iri]}" for iri in dict.fromkeys(proposal.dated) if iri in readings]
    return comment + ([f"# {proposal.note}"] if proposal.note else []) + read


def _rule(proposal: Proposal, iri: str) -> list[str]:
    inputs = ", ".join(_input(i.role, i.relation, i.aggregate, i.via) for i in proposal.inputs)
    statements = [
        ("rdfs:label", _texts(proposal.label)),
        ("kgs:origin", "kgs:Library"),
        ("kgs:source", _string(proposal.source)),
        ("kgs:statement", _texts(proposal.statement)),
        ("kgs:question", _texts(proposal.question)),
        ("kgs:kind", f"kgs:{proposal.kind}"),
        ("kgs:operation", f"kgs:{proposal.operation}"),
        ("kgs:input", inputs),
        *((f"kgs:{name}", _value(value)) for name, value in proposal.parameters),
    ]
    body = " ;\n".join(f"    {predicate} {obj}" for predicate, obj in statements)
    return [f"{_iri(iri)} a kgs:Rule ;", body + " ."]


def _input(role: str, relation: str, aggregate: str | None, via: str | None = None) -> str:
    each = f" ; kgs:aggregate kgs:{aggregate}" if aggregate else ""
    bridge = f" ; kgs:via {_iri(via)}" if via else ""
    return f"[ kgs:role {_string(role)} ; kgs:relation {_iri(relation)}{each}{bridge} ]"


def _iri(iri: str) -> str:
    return str(ox.NamedNode(iri))


def _string(text: str) -> str:
    return str(ox.Literal(text))


def _texts(texts: Texts | str) -> str:
    if isinstance(texts, str):
        return str(ox.Literal(texts, language="en"))
    return f"{ox.Literal(texts.en, language='en')}, {ox.Literal(texts.ru, language='ru')}"


def _value(value: Decimal | int | str) -> str:
    if isinstance(value, Decimal):
        return f'"{value:f}"^^xsd:decimal'
    if isinstance(value, int):
        return str(value)
    return _string(value)


def relation_labels(relations: Iterable[Relation]) -> dict[str, Texts | str]:
    """Labels for the relations that have none: the concept's in English and Russian, else
    English words from the IRI."""
    return {r.iri: r.concept.label if r.concept is not None and r.concept.label is not None else r.name("en")
            for r in relations if r.unlabelled}
