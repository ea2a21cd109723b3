"""What a release records of its graph, for the next release's diff: a digest of every
fact and the IRI of every entity (an IRI that is the subject of a triple).

A triple with a blank node is left out: a blank node has no name that lasts from one load
of the files to the next, so the same triple could not be recognised in the next graph.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import pyoxigraph as ox

from kgsynth.kg import KnowledgeGraph

_ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"


def fact_digest(triple: str) -> str:
    """16 hex digits of a triple in N-Triples (``<s> <p> "o" .``, as ``source_triples`` holds it)."""
    return hashlib.blake2b(triple.encode(), digest_size=8).hexdigest()


def triples(kg: KnowledgeGraph) -> Iterator[tuple[str, ox.NamedNode]]:
    """(the triple in N-Triples, its subject) of every triple without a blank node."""
    for s, p, o in kg.select(_ALL):
        if not (isinstance(s, ox.BlankNode) or isinstance(o, ox.BlankNode)):
            yield f"{s} {p} {o} .", s


@dataclass(frozen=True)
class GraphRecord:
    facts: frozenset[str]  # fact_digest of each triple
    entities: frozenset[str]  # subject IRIs

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> GraphRecord:
        facts, entities = set(), set()
        for triple, subject in triples(kg):
            facts.add(fact_digest(triple))
            entities.add(subject.value)
        return cls(frozenset(facts), frozenset(entities))
