"""An independent, plain-Python statement of set-valued multi-hop chains (multihop_set).

It works on a list of (subject, relation, object) triples with dicts and sets only, never
SPARQL: it follows a chain hop by hop from its start (``follow``), reads a kgsynth subgraph
back into the chain its question describes (``chain_of``), and lists every chain the
templates must find (``expected``). Written from the rules in the templates' headers and
docs/vocabulary.md, not from the .rq files or kgsynth/queries/_extract.py.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from kgsynth.kg.vocab import KGS, LABEL_PREDICATES, OWL, RDF, RDFS, SKOS, XSD

EXCLUDED = {
    RDF + "type", RDFS + "label", RDFS + "comment", RDFS + "seeAlso", RDFS + "subClassOf",
    SKOS + "prefLabel", SKOS + "altLabel", SKOS + "definition", "http://schema.org/name",
    "https://schema.org/name", OWL + "sameAs",
}


NUMBERS = {XSD + t for t in ("integer", "decimal", "int", "long")}


def key(kind: str, value: str, datatype: str | None = None, lang: str | None = None) -> tuple:
    """A term as ("iri" | "literal" | "blank", value, datatype, lang): what both sides compare.
    A number by its value: a store keeps one writing of it ("4119.9" for "4119.90")."""
    if kind == "literal" and datatype in NUMBERS:
        return (kind, Decimal(value), datatype, None)
    return (kind, value, datatype if kind == "literal" and not lang else None, lang or None)


def node_key(node) -> tuple:
    """The key of a kgsynth Node."""
    return key(node.kind, node.value, node.datatype, node.lang)


@dataclass(frozen=True)
class Chain:
    """A chain as its question describes it: the start, then each hop's relation and direction."""

    start: tuple
    hops: tuple[tuple[str, bool], ...]  # (relation IRI, inverse)
    fan_hop: int  # 1-based: the hop that fans out


class Triples:
    def __init__(self, triples):
        """``triples``: (s, p, o) with each term a key (see :func:`key`)."""
        self.triples = set(triples)
        self.out = defaultdict(set)  # (s, p) -> objects
        self.into = defaultdict(set)  # (p, o) -> subjects
        self.relations = defaultdict(set)  # node -> (p, inverse) of its facts
        owners = defaultdict(set)
        for s, p, o in self.triples:
            self.out[(s, p)].add(o)
            self.into[(p, o)].add(s)
            self.relations[s].add((p, False))
            self.relations[o].add((p, True))
            if p in LABEL_PREDICATES:
                owners[o].add(s)
        self.homonyms = {x for names in owners.values() if len(names) > 1 for x in names}

    def step(self, node: tuple, relation: str, inverse: bool) -> set:
        return self.into[(relation, node)] if inverse else self.out[(node, relation)]

    def follow(self, chain: Chain) -> list[set]:
        """The nodes reached after each hop, plain path following (a set per hop)."""
        reached, frontier = [], {chain.start}
        for relation, inverse in chain.hops:
            frontier = set().union(*(self.step(node, relation, inverse) for node in frontier))
            reached.append(frontier)
        return reached

    def traversed(self, chain: Chain) -> set:
        """Every triple the chain follows."""
        facts, frontier = set(), {chain.start}
        for relation, inverse in chain.hops:
            nxt = set()
            for node in frontier:
                for other in self.step(node, relation, inverse):
                    facts.add((other, relation, node) if inverse else (node, relation, other))
                    nxt.add(other)
            frontier = nxt
        return facts

    # ------------------------------------------------------------------ every chain
    def expected(self, hops: int, fan_hop: int, max_set_size: int = 8) -> dict:
        """{(facts, answer): fans out the other way at the pivot beyond max_set_size} for every
        answerable chain of ``hops`` hops fanning out at ``fan_hop``."""
        found = {}
        starts = {x for s, p, o in self.triples if p not in EXCLUDED and not p.startswith(KGS) for x in (s, o)}
        for start in starts:
            if start[0] == "blank" or start in self.homonyms:
                continue
            for prefix in self._prefixes(start, fan_hop - 1):
                bridges = prefix[1:]
                pivot = prefix[-1][0] if bridges else start
                for relation, inverse in sorted(self.relations[pivot]):
                    if relation in EXCLUDED or relation.startswith(KGS):
                        continue
                    members = self.step(pivot, relation, inverse)
                    bridge_nodes = {b for b, _ in bridges}
                    if (not 2 <= len(members) <= max_set_size or any(m[0] != "iri" for m in members)
                            or members & bridge_nodes):
                        continue
                    other_way = len(self.step(pivot, relation, not inverse)) > max_set_size
                    chain_hops = tuple(hop for _, hop in bridges) + ((relation, inverse),)
                    for last in self._last_hops(members, start, fan_hop < hops):
                        chain = Chain(start, chain_hops + last, fan_hop)
                        ends = self.follow(chain)[-1]
                        answer = ends - {start}
                        hidden = bridge_nodes | (members if last else set())
                        if any(e[0] != "iri" for e in ends) or ends & hidden or not 2 <= len(answer) <= max_set_size:
                            continue
                        found[(frozenset(self.traversed(chain)), frozenset(answer))] = other_way
        return found

    def _prefixes(self, start: tuple, length: int):
        """Chains of ``length`` hops from ``start`` that each pick out one node: [start, (b1, hop1), ...]."""
        paths = [[start]]
        for i in range(length):
            grown = []
            for path in paths:
                here = path[-1][0] if i else start
                for relation, inverse in sorted(self.relations[here]):
                    if relation in EXCLUDED or relation.startswith(KGS) or (inverse and i):
                        continue  # only the first hop may go backwards
                    nxt = self.step(here, relation, inverse)
                    if len(nxt) != 1:
                        continue
                    (node,) = nxt
                    if node[0] != "iri" or node == start or node in {b for b, _ in path[1:]}:
                        continue
                    grown.append([*path, (node, (relation, inverse))])
            paths = grown
        return paths

    def _last_hops(self, members: set, start: tuple, goes_on: bool):
        """The fan's last hop: none when the fan ends the chain; else each relation every
        member (the start not among them) has exactly once."""
        if not goes_on:
            yield ()
            return
        if start in members:
            return
        shared = set.intersection(*({p for p, inverse in self.relations[m] if not inverse} for m in members))
        for relation in sorted(shared):
            episodic = relation not in EXCLUDED and not relation.startswith(KGS)
            if episodic and all(len(self.out[(m, relation)]) == 1 for m in members):
                yield ((relation, False),)


def chain_of(subgraph) -> Chain:
    """The chain a multihop_set subgraph's question describes, read from its facts (in chain
    order: the hops before the fan, the fan's facts, then each member's last hop)."""
    hops_text, at = subgraph.variant.split("-hop-")
    fan_hop = int(hops_text) - (at == "mid")
    start = node_key(subgraph.mention[0])
    facts = [(node_key(f.subject), f.relation.value, node_key(f.object)) for f in subgraph.facts]
    hops, here = [], start
    for s, p, o in facts[:fan_hop]:  # the hops up to the fan's first fact
        inverse = o == here
        hops.append((p, inverse))
        here = s if inverse else o
    if at == "mid":
        hops.append((facts[-1][1], False))
    return Chain(start, tuple(hops), fan_hop)


def subgraph_facts(subgraph) -> set:
    return {(node_key(f.subject), f.relation.value, node_key(f.object)) for f in subgraph.facts}
