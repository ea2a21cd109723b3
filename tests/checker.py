"""An independent, plain-Python statement of every template's uniqueness rule.

It enumerates, from a list of triples with dicts and sets only (no SPARQL), every
subgraph each template must return, as canonical keys comparable with kgsynth's output.
It is deliberately written straight from the rules in the template headers and
docs/vocabulary.md, not from the .rq files.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from datetime import date, datetime
from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from kgsynth.kg.vocab import KGS, LABEL_PREDICATES, OWL, RDF, RDFS, SKOS, XSD

EXCLUDED = {
    RDF + "type", RDFS + "label", RDFS + "comment", RDFS + "seeAlso", RDFS + "subClassOf",
    SKOS + "prefLabel", SKOS + "altLabel", SKOS + "definition", "http://schema.org/name",
    "https://schema.org/name", OWL + "sameAs",
}
NUMERIC = {XSD + t for t in ("integer", "decimal", "double", "float", "int", "long")}
DATES = {XSD + "date", XSD + "dateTime"}


def node_key(term) -> tuple:
    if isinstance(term, Literal):
        return ("literal", term.value, None if term.language else term.datatype.value, term.language)
    return ("iri", term.value, None, None)


def subgraph_key(sg) -> tuple:
    """The canonical key of a kgsynth Subgraph, comparable with the checker's keys."""
    facts = tuple(
        (f.subject.value, f.relation.value, (f.object.kind, f.object.value, f.object.datatype, f.object.lang), f.role)
        for f in sg.facts
    )
    return (sg.template, facts, tuple((a.kind, a.value, a.datatype, a.lang) for a in sg.answer))


def _fact(s, r, o, role=None) -> tuple:
    return (s.value, r.value, node_key(o), role)


def _py(term):
    dt = term.datatype.value
    if dt in NUMERIC:
        return Decimal(term.value)
    if dt == XSD + "date":
        return date.fromisoformat(term.value)
    return datetime.fromisoformat(term.value)


class Checker:
    def __init__(self, triples, max_set_size: int = 8):
        self.triples = set(triples)
        self.max_set_size = max_set_size
        self.facts = [t for t in self.triples if t[1].value not in EXCLUDED and not t[1].value.startswith(KGS)]
        self.obj = defaultdict(set)  # (s, r) -> objects, over ALL triples
        self.subj = defaultdict(set)  # (r, o) -> subjects
        for s, r, o in self.triples:
            self.obj[(s, r)].add(o)
            self.subj[(r, o)].add(s)
        self.by_subject = defaultdict(list)
        self.by_object = defaultdict(list)
        for s, r, o in self.facts:
            self.by_subject[s].append((r, o))
            self.by_object[o].append((s, r))
        label_owners = defaultdict(set)
        self.labels = defaultdict(set)
        for s, r, o in self.triples:
            if r.value in LABEL_PREDICATES:
                label_owners[o].add(s)
                self.labels[s].add(o)
        self.homonym = {x for owners in label_owners.values() if len(owners) > 1 for x in owners}

    def nameable(self, x) -> bool:
        return not isinstance(x, BlankNode) and x not in self.homonym

    # ------------------------------------------------------------------ shapes
    def simple(self):
        for s, r, o in self.facts:
            if isinstance(s, NamedNode) and not isinstance(o, BlankNode) and s != o:
                if self.obj[(s, r)] == {o} and self.subj[(r, o)] == {s} and self.nameable(s):
                    yield ("simple", (_fact(s, r, o),), (node_key(o),))

    def set(self):
        forward = defaultdict(set)
        inverse = defaultdict(set)
        for s, r, o in self.facts:
            if s != o:
                if isinstance(s, NamedNode) and not isinstance(o, BlankNode):
                    forward[(s, r)].add(o)
                if isinstance(o, NamedNode) and not isinstance(s, BlankNode):
                    inverse[(o, r)].add(s)
        for (key, r), members in forward.items():
            if self.nameable(key) and 2 <= len(members) <= self.max_set_size:
                ordered = sorted(members, key=str)
                yield ("set", tuple(_fact(key, r, m) for m in ordered), tuple(node_key(m) for m in ordered))
        for (key, r), members in inverse.items():
            if self.nameable(key) and 2 <= len(members) <= self.max_set_size:
                ordered = sorted(members, key=str)
                yield ("set", tuple(_fact(m, r, key) for m in ordered), tuple(node_key(m) for m in ordered))

    def conditional_subject(self):
        for x, edges in self.by_subject.items():
            if not isinstance(x, NamedNode):
                continue
            for (ra, a), (rb, b) in itertools.permutations(edges, 2):
                if (ra.value, a.value) >= (rb.value, b.value) or x in (a, b):
                    continue
                if not (self.nameable(a) and self.nameable(b)):
                    continue
                if self.subj[(ra, a)] & self.subj[(rb, b)] == {x}:
                    yield ("conditional_subject", (_fact(x, ra, a), _fact(x, rb, b)), (node_key(x),))

    def conditional_object(self):
        for x, edges in self.by_object.items():
            if not isinstance(x, NamedNode):
                continue
            for (s, ra), (t, rb) in itertools.permutations(edges, 2):
                if (ra.value, s.value) >= (rb.value, t.value) or x in (s, t):
                    continue
                if not (self.nameable(s) and self.nameable(t)):
                    continue
                if self.obj[(s, ra)] & self.obj[(t, rb)] == {x}:
                    yield ("conditional_object", (_fact(s, ra, x), _fact(t, rb, x)), (node_key(x),))

    def conditional_chain(self):
        for s, ra, x in self.facts:
            if not isinstance(x, NamedNode) or s == x:
                continue
            for rb, o in self.by_subject[x]:
                if o in (x, s) or not (self.nameable(s) and self.nameable(o)):
                    continue
                middles = {y for y in self.obj[(s, ra)] if o in self.obj[(y, rb)]}
                if middles == {x}:
                    yield ("conditional_chain", (_fact(s, ra, x), _fact(x, rb, o)), (node_key(x),))

    def multihop(self, hops: int):
        for s, r1, o in self.facts:
            # forward first hop: n = s names bridge b1 = o; inverse: n = o names b1 = s
            for n, b1, first in ((s, o, (s, r1, o)), (o, s, (s, r1, o))):
                forward = n is s
                if not isinstance(b1, NamedNode) or isinstance(n, BlankNode) or n == b1 or not self.nameable(n):
                    continue
                if forward and self.obj[(n, r1)] != {b1}:
                    continue
                if not forward and self.subj[(r1, n)] != {b1}:
                    continue
                yield from self._extend(hops, [n, b1], [first])

    def _extend(self, hops, nodes, facts):
        if len(facts) == hops:
            answer = nodes[-1]
            if isinstance(answer, BlankNode) or len(set(nodes)) != len(nodes):
                return
            if any(not isinstance(b, NamedNode) for b in nodes[1:-1]):
                return
            yield (f"multihop_{hops}", tuple(_fact(*f) for f in facts), (node_key(answer),))
            return
        here = nodes[-1]
        for r, nxt in self.by_subject[here]:
            if self.obj[(here, r)] == {nxt}:
                yield from self._extend(hops, nodes + [nxt], facts + [(here, r, nxt)])

    def comparison(self):
        values = defaultdict(dict)  # r -> {s: v} for functional comparable values
        for s, r, v in self.facts:
            if isinstance(s, NamedNode) and isinstance(v, Literal) and not v.language:
                if v.datatype.value in NUMERIC | DATES and self.obj[(s, r)] == {v}:
                    values[r][s] = v
        for r, by_subject in values.items():
            for s1, s2 in itertools.combinations(sorted(by_subject, key=lambda t: t.value), 2):
                v1, v2 = by_subject[s1], by_subject[s2]
                numeric = v1.datatype.value in NUMERIC and v2.datatype.value in NUMERIC
                if not numeric and v1.datatype != v2.datatype:
                    continue
                if _py(v1) == _py(v2) or not (self.nameable(s1) and self.nameable(s2)):
                    continue
                larger = s1 if _py(v1) > _py(v2) else s2
                yield ("comparison", (_fact(s1, r, v1), _fact(s2, r, v2)), (node_key(larger),))

    def rule_application(self):
        rules = [s for s, r, o in self.triples if r.value == RDF + "type" and o.value == KGS + "Rule"]
        for rule in rules:
            inputs = []
            for node in self.obj[(rule, NamedNode(KGS + "input"))]:
                (role,) = self.obj[(node, NamedNode(KGS + "role"))]
                (relation,) = self.obj[(node, NamedNode(KGS + "relation"))]
                summed = bool(self.obj[(node, NamedNode(KGS + "aggregate"))])
                inputs.append((role.value, relation, summed))
            classes = self.obj[(rule, NamedNode(KGS + "appliesToClass"))]
            candidates = {s for s, r, o in self.triples if isinstance(s, NamedNode)}
            for e in candidates:
                if not self.nameable(e) or any(e not in self.subj[(NamedNode(RDF + "type"), c)] for c in classes):
                    continue
                if any(not self.obj[(e, rel)] or (not summed and len(self.obj[(e, rel)]) > 1) for _, rel, summed in inputs):
                    continue
                facts = sorted(
                    (role, rel.value, str(v), _fact(e, rel, v, role))
                    for role, rel, _ in inputs
                    for v in self.obj[(e, rel)]
                    if not isinstance(v, BlankNode)
                )
                if facts:
                    yield ("rule_application", tuple(f[3] for f in facts), ())

    def expected(self, template: str) -> Counter:
        if template.startswith("multihop_"):
            found = self.multihop(int(template.rsplit("_", 1)[1]))
        else:
            found = getattr(self, template)()
        return Counter(found)
