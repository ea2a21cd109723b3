"""The proposed words as Turtle: one block per relation or class under a comment that says
where each form came from and which forms are missing, and why."""

from __future__ import annotations

import pyoxigraph as ox

from kgsynth.kg.vocab import KGS, RDFS

_TERMS = {"noun": "kgs:nounForm", "inverse_noun": "kgs:inverseNounForm", "label": "rdfs:label"}


def write_turtle(terms, header: str, given: int) -> str:
    lines = [*(f"# {line}".rstrip() for line in header.splitlines()), ""]
    if given:
        lines += [f"# {given:,} relations already have their forms in the graph and are left out.", ""]
    missing = [t for t in terms if t.missing]
    if missing:
        lines += [f"# Not worded ({len(missing):,}): give these forms by hand, or run with a model."]
        lines += [f"#   <{t.iri}> {form} @{lang}: {why}" for t in missing for (form, lang), why in sorted(t.missing.items())]
        lines.append("")
    lines += [f"@prefix kgs: <{KGS}> .", f"@prefix rdfs: <{RDFS}> .", ""]
    for term in terms:
        if term.forms:
            lines += [*_block(term), ""]
    return "\n".join(lines)


def _block(term) -> list[str]:
    comment = [f"# {term.kind}, {term.uses:,} {'triples' if term.kind == 'relation' else 'instances'}"]
    comment += [f"#   {form} @{lang}: {said.source}" for (form, lang), said in sorted(term.forms.items())]
    by_term: dict[str, list[str]] = {}
    for (form, lang), said in sorted(term.forms.items()):
        by_term.setdefault(_TERMS[form], []).append(str(ox.Literal(said.text, language=lang)))
    body = " ;\n".join(f"    {predicate} {', '.join(objects)}" for predicate, objects in by_term.items())
    return [*comment, f"{ox.NamedNode(term.iri)}", body + " ."]
