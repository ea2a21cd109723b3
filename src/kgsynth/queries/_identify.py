"""Whether one fact of a subgraph alone identifies a node in the graph."""

from __future__ import annotations

from kgsynth.kg import KnowledgeGraph
from kgsynth.queries._subgraph import Fact, Node

# another node than ?x in ?x's place of the triple (?s ?r ?o): the triple alone does not pick ?x out
_OTHER_SUBJECT = "SELECT ?y WHERE {\n  #VALUES\n  ?y ?r ?o . FILTER(!sameTerm(?y, ?x))\n} LIMIT 1"
_OTHER_OBJECT = "SELECT ?y WHERE {\n  #VALUES\n  ?s ?r ?y . FILTER(!sameTerm(?y, ?x))\n} LIMIT 1"


def picks_out(kg: KnowledgeGraph, fact: Fact, node: Node) -> bool:
    """Whether ``fact`` alone identifies ``node`` (its subject or object) in the graph: no
    other subject has its relation and object, or no other object its subject and relation."""
    if fact.subject.value == node.value:
        query, names, terms = _OTHER_SUBJECT, ("r", "o", "x"), (fact.relation, fact.object, node)
    elif fact.object.value == node.value and fact.object.kind == node.kind:
        query, names, terms = _OTHER_OBJECT, ("s", "r", "x"), (fact.subject, fact.relation, node)
    else:
        return False
    return not any(True for _ in kg.select(query, values=(names, [[n.term() for n in terms]])))
