"""Anchored rule_application as one query per rule, written from the rule's description.

The generic ``rule_application.rq`` checks, for every fact row, the rule's whole
description (each input present, on the entity or on its one bridge, single-valued unless
summed, the class) with nested
``NOT EXISTS`` over the rule's inputs: about 20 µs a row, most of a batch's time. With the
rule fixed, each check becomes a plain pattern on ``?e`` (``EXISTS { ?e <relation> ?x }``),
run once per anchor: a batch of 200 anchors took 9 ms instead of 17 (100,000 triples). The descriptions are read by SPARQL, not through
:func:`kgsynth.kg.vocab.load_rules`, so a rule the engine would reject still gets exactly
the rows the generic template gives (tests/test_rule_queries.py compares both on random
graphs and rule descriptions).
Enumeration keeps the generic template: it runs once over all entities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from kgsynth.kg import KnowledgeGraph, Term
from kgsynth.kg._terms import VALUES_PLACEHOLDER
from kgsynth.kg.vocab import KGS, LABEL_PATH
from kgsynth.queries._templates import load_template

RULE_QUERY_MARK = "# rule_application for "  # first line of each generated query (the benchmark finds them by it)

_INPUTS = f"""SELECT ?rule ?in ?role ?r ?aggregate ?via WHERE {{
  ?rule a <{KGS}Rule> ; <{KGS}input> ?in .
  ?in <{KGS}relation> ?r .
  OPTIONAL {{ ?in <{KGS}role> ?role }}
  OPTIONAL {{ ?in <{KGS}aggregate> ?aggregate }}
  OPTIONAL {{ ?in <{KGS}via> ?via }}
}}"""
_CLASSES = f"SELECT ?rule ?class WHERE {{ ?rule a <{KGS}Rule> ; <{KGS}appliesToClass> ?class }}"


@dataclass
class _Input:
    roles: set[Term] = field(default_factory=set)
    relations: set[Term] = field(default_factory=set)
    vias: set[Term] = field(default_factory=set)  # none: read on the entity; else on its one value of each
    summed: bool = False


def rule_application_queries(kg: KnowledgeGraph) -> tuple[str, ...]:
    """The anchored rule_application queries for this graph (bind ``?e`` at ``#VALUES``):
    one per rule, or the generic template when a rule, role or class is a blank node (it
    cannot be named in a query). Kept with the graph until it changes."""
    return kg.memo(("rule_application queries",), lambda: _queries(kg))


def _queries(kg: KnowledgeGraph) -> tuple[str, ...]:
    inputs: dict[Term, dict[Term, _Input]] = {}
    for rule, node, role, relation, aggregate, via in kg.select(_INPUTS):
        described = inputs.setdefault(rule, {}).setdefault(node, _Input())
        described.relations.add(relation)
        described.summed |= aggregate is not None
        if role is not None:
            described.roles.add(role)
        if via is not None:
            described.vias.add(via)
    classes: dict[Term, set[Term]] = {}
    for rule, class_ in kg.select(_CLASSES):
        classes.setdefault(rule, set()).add(class_)
    generic = (load_template("rule_application").text,)
    named = [*inputs, *(role for described in inputs.values() for i in described.values() for role in i.roles)]
    if any(isinstance(t, ox.BlankNode) for t in [*named, *(c for cs in classes.values() for c in cs)]):
        return generic  # a blank node in query text would be a fresh variable, not that node
    queries = (_query(rule, list(inputs[rule].values()), classes.get(rule, set())) for rule in sorted(inputs, key=str))
    queries = tuple(q for q in queries if q is not None)
    if any(q.count(VALUES_PLACEHOLDER) != 1 for q in queries):
        return generic  # a term that spells the placeholder would take the VALUES block
    return queries


def _query(rule: Term, inputs: list[_Input], classes: set[Term]) -> str | None:
    """The rule's query, or None when no entity can match (a relation that is not an IRI,
    or no input with both a role and a relation)."""
    terms = {t for i in inputs for t in (*i.relations, *i.vias)}
    branches = sorted(_branch(str(role), str(r), str(via) if via else None)
                      for i in inputs for role in i.roles for r in i.relations for via in (i.vias or {None}))
    if not branches or any(not isinstance(t, ox.NamedNode) for t in terms):
        return None
    direct = [i for i in inputs if not i.vias]
    checks = [f"FILTER EXISTS {{ ?e {r} ?any }}" for r in sorted({str(r) for i in direct for r in i.relations})]
    bridged = sorted({(str(via), str(r)) for i in inputs for via in i.vias for r in i.relations})
    checks += [f"FILTER EXISTS {{ ?e {via} ?nb . FILTER(isIRI(?nb) && !sameTerm(?nb, ?e)) ?nb {r} ?any }}" for via, r in bridged]
    single = sorted({str(r) for i in direct if not i.summed for r in i.relations})
    checks += [f"FILTER NOT EXISTS {{ ?e {r} ?va . FILTER EXISTS {{ ?e {r} ?vb . FILTER(!sameTerm(?va, ?vb)) }} }}" for r in single]
    checks += [f"FILTER NOT EXISTS {{ ?e {via} ?ba . FILTER EXISTS {{ ?e {via} ?bb . FILTER(!sameTerm(?ba, ?bb)) }} }}"
               for via in sorted({via for via, _ in bridged})]
    single_bridged = sorted({(str(via), str(r)) for i in inputs if not i.summed for via in i.vias for r in i.relations})
    checks += [f"FILTER NOT EXISTS {{ ?e {via} ?b1 . ?b1 {r} ?va . FILTER EXISTS {{ ?b1 {r} ?vb . FILTER(!sameTerm(?va, ?vb)) }} }}"
               for via, r in single_bridged]
    checks += [f"FILTER EXISTS {{ ?e a {c} }}" for c in sorted(map(str, classes))]
    union = "\n  UNION ".join(branches)
    checks_text = "\n    ".join(checks)
    # The checks sit in a group with the VALUES, so they run once per anchor, not per fact row.
    return f"""{RULE_QUERY_MARK}{rule}
SELECT ?rule ?kind ?e ?role ?r ?v ?via ?b WHERE {{
  {{
    #VALUES
    FILTER(isIRI(?e))
    {checks_text}
    FILTER NOT EXISTS {{ ?e {LABEL_PATH} ?he . FILTER EXISTS {{ ?xe {LABEL_PATH} ?he . FILTER(!sameTerm(?xe, ?e)) }} }}
  }}
  {union}
  FILTER(!isBlank(?v))
  {rule} <{KGS}kind> ?kind .
  BIND({rule} AS ?rule)
}}
ORDER BY ?e ?role ?r ?v ?via ?b
"""


def _branch(role: str, relation: str, via: str | None) -> str:
    """One input's facts: on the entity, or on the bridge, its one value of ``via`` (the
    checks have made sure that is an IRI other than the entity)."""
    if via is None:
        return f"{{ ?e {relation} ?v . BIND({role} AS ?role) BIND({relation} AS ?r) }}"
    return (f"{{ ?e {via} ?b . ?b {relation} ?v . "
            f"BIND({role} AS ?role) BIND({relation} AS ?r) BIND({via} AS ?via) }}")
