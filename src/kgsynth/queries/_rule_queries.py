"""Anchored rule_application as one query per rule, written from the rule's description.

The generic ``rule_application.rq`` checks, for every fact row, the rule's whole
description (each input present, single-valued unless summed, the class) with nested
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

_INPUTS = f"""SELECT ?rule ?in ?role ?r ?aggregate WHERE {{
  ?rule a <{KGS}Rule> ; <{KGS}input> ?in .
  ?in <{KGS}relation> ?r .
  OPTIONAL {{ ?in <{KGS}role> ?role }}
  OPTIONAL {{ ?in <{KGS}aggregate> ?aggregate }}
}}"""
_CLASSES = f"SELECT ?rule ?class WHERE {{ ?rule a <{KGS}Rule> ; <{KGS}appliesToClass> ?class }}"


@dataclass
class _Input:
    roles: set[Term] = field(default_factory=set)
    relations: set[Term] = field(default_factory=set)
    summed: bool = False


def rule_application_queries(kg: KnowledgeGraph) -> tuple[str, ...]:
    """The anchored rule_application queries for this graph (bind ``?e`` at ``#VALUES``):
    one per rule, or the generic template when a rule, role or class is a blank node (it
    cannot be named in a query). Kept with the graph until it changes."""
    return kg.memo(("rule_application queries",), lambda: _queries(kg))


def _queries(kg: KnowledgeGraph) -> tuple[str, ...]:
    inputs: dict[Term, dict[Term, _Input]] = {}
    for rule, node, role, relation, aggregate in kg.select(_INPUTS):
        described = inputs.setdefault(rule, {}).setdefault(node, _Input())
        described.relations.add(relation)
        described.summed |= aggregate is not None
        if role is not None:
            described.roles.add(role)
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
    relations = {r for i in inputs for r in i.relations}
    branches = sorted((str(role), str(r)) for i in inputs for role in i.roles for r in i.relations)
    if not branches or any(not isinstance(r, ox.NamedNode) for r in relations):
        return None
    checks = [f"FILTER EXISTS {{ ?e {r} ?any }}" for r in sorted(map(str, relations))]
    single = sorted({str(r) for i in inputs if not i.summed for r in i.relations})
    checks += [f"FILTER NOT EXISTS {{ ?e {r} ?va . FILTER EXISTS {{ ?e {r} ?vb . FILTER(!sameTerm(?va, ?vb)) }} }}" for r in single]
    checks += [f"FILTER EXISTS {{ ?e a {c} }}" for c in sorted(map(str, classes))]
    union = "\n  UNION ".join(f"{{ ?e {r} ?v . BIND({role} AS ?role) BIND({r} AS ?r) }}" for role, r in branches)
    checks_text = "\n    ".join(checks)
    # The checks sit in a group with the VALUES, so they run once per anchor, not per fact row.
    return f"""{RULE_QUERY_MARK}{rule}
SELECT ?rule ?kind ?e ?role ?r ?v WHERE {{
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
ORDER BY ?e ?role ?r ?v
"""
