"""Run the shape templates: full enumeration, or anchored sampling with a seed.

Anchored sampling is how a synthesizer uses the templates: shuffle the template's anchor
population (kept with the graph) with the seed, bind a batch of anchors with VALUES, keep
at most ``per_anchor`` results per anchor (so hubs do not dominate), label them, repeat.
Templates of two or more facts anchor on a fact: up to ``per_anchor`` random facts of each
anchor entity, then a random walk to the template's other facts (a shared node, or for
comparison a shared relation), all bound; the template only verifies the candidates, so
a hub costs its degree once per call instead of its neighbourhood per anchor.
A set-valued chain (multihop_set) walks from its start along one-valued relations to a node
where a relation fans out (2 to ``max_set_size`` values, counted by the engine) and, when the
fan is not the last hop, picks a last relation every member has once; it binds the chain up
to the fan and the relations, so the template lists every member, and each fan is judged
whole (:func:`_fan_units`).
Results are sorted before any random choice, so the same seed gives the same subgraphs
on the embedded store and on a remote endpoint.
"""

from __future__ import annotations

import collections
import decimal
import hashlib
import itertools
import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from kgsynth.errors import KgsynthError, UnknownShapeError
from kgsynth.kg import KnowledgeGraph, Term
from kgsynth.kg.vocab import KGS
from kgsynth.queries._anchors import Anchors, anchor_population
from kgsynth.queries._rule_queries import rule_application_queries
from kgsynth.queries._subgraph import Fact, Node, Shape, Subgraph, share_field_names
from kgsynth.queries._templates import Template, load_template

Row = dict[str, Term]
Unit = tuple[Row, ...]  # the rows of one subgraph: one, or a contiguous group (set, rule)

CONDITIONAL_VARIANTS = {"shared_subject": "conditional_subject", "shared_object": "conditional_object", "chain": "conditional_chain"}
MULTIHOP_HOPS = (2, 3, 4)
# a set-valued chain fans out at its last hop, or at the one before it ("mid")
MULTIHOP_SET_VARIANTS = {f"{h}-hop-{at}": f"multihop_set_{h}_{at}" for h in MULTIHOP_HOPS for at in ("last", "mid")}
_GROUP_KEYS = {"set": ("key", "r", "inverse"), "rule_application": ("rule", "e")}
_LABEL_CHUNK = 500


def templates_for(shape: Shape | str, hops: int = 2, variant: str | None = None) -> list[str]:
    """The template names a shape draws from: conditional all three forms and multihop_set
    every chain length and fan position (``hops`` is multihop's), unless ``variant`` names one."""
    try:
        shape = Shape(shape)
    except ValueError:
        raise UnknownShapeError(f"unknown shape {shape!r}; choose one of {', '.join(s.value for s in Shape)}") from None
    if shape is Shape.conditional:
        return _variant_templates(shape, CONDITIONAL_VARIANTS, variant)
    if shape is Shape.multihop_set:
        return _variant_templates(shape, MULTIHOP_SET_VARIANTS, variant)
    if shape is Shape.multihop:
        if hops not in MULTIHOP_HOPS:
            raise UnknownShapeError(f"multihop needs 2, 3 or 4 hops, not {hops}")
        return [f"multihop_{hops}"]
    return [shape.value]


def _variant_templates(shape: Shape, variants: dict[str, str], variant: str | None) -> list[str]:
    if variant is None:
        return list(variants.values())
    if variant not in variants:
        raise UnknownShapeError(f"unknown {shape.value} variant {variant!r}; choose one of {', '.join(variants)}")
    return [variants[variant]]


# --------------------------------------------------------------------------- builders
class _Nodes:
    """Turns terms into labelled Nodes, one label lookup per batch of subgraphs."""

    def __init__(self, kg: KnowledgeGraph, units: Sequence[Unit]):
        self.kg = kg
        self.labels = kg.labels({t for unit in units for row in unit for t in row.values() if t is not None})
        self.nodes: dict[Term, Node] = {}  # Nodes are frozen: one per term, shared by its subgraphs

    def __call__(self, term: Term) -> Node:
        node = self.nodes.get(term)
        if node is None:
            labels = self.labels.get(term, {})
            node = self.nodes[term] = Node.from_term(term, self.kg.pick_label(term, labels), labels)
        return node

    def fact(self, s: Term, r: Term, o: Term, role: str | None = None) -> Fact:
        return share_field_names(Fact(subject=self(s), relation=self(r), object=self(o), role=role))


def _subgraph(shape: Shape, variant: str, template: str, facts, answer, mention, hidden=(), rule=None) -> Subgraph:
    facts, answer = tuple(facts), tuple(answer)
    return share_field_names(Subgraph(
        id=Subgraph.make_id(shape, variant, facts, answer, rule),
        shape=shape,
        variant=variant,
        template=template,
        facts=facts,
        answer=answer,
        mention=tuple(mention),
        hidden=tuple(hidden),
        rule=rule,
    ))


def _simple(unit: Unit, n: _Nodes) -> Subgraph:
    (row,) = unit
    return _subgraph(Shape.simple, "forward", "simple", [n.fact(row["s"], row["r"], row["o"])], [n(row["o"])], [n(row["s"])])


def _set(unit: Unit, n: _Nodes) -> Subgraph:
    key, relation, inverse = unit[0]["key"], unit[0]["r"], _true(unit[0]["inverse"])
    members = sorted((row["m"] for row in unit), key=str)
    facts = [n.fact(m, relation, key) if inverse else n.fact(key, relation, m) for m in members]
    return _subgraph(Shape.set, "inverse" if inverse else "forward", "set", facts, map(n, members), [n(key)])


def _conditional(variant: str, template: str, first: tuple[str, str, str], second: tuple[str, str, str], named: tuple[str, str]):
    def build(unit: Unit, n: _Nodes) -> Subgraph:
        (row,) = unit
        facts = [n.fact(*(row[v] for v in first)), n.fact(*(row[v] for v in second))]
        return _subgraph(Shape.conditional, variant, template, facts, [n(row["x"])], [n(row[v]) for v in named])

    return build


def _multihop(hops: int) -> Callable[[Unit, _Nodes], Subgraph]:
    chain = [f"b{i}" for i in range(1, hops)] + ["a"]

    def build(unit: Unit, n: _Nodes) -> Subgraph:
        (row,) = unit
        first = (row["b1"], row["r1"], row["n"]) if _true(row["inv1"]) else (row["n"], row["r1"], row["b1"])
        facts = [n.fact(*first)] + [n.fact(row[chain[i - 1]], row[f"r{i + 1}"], row[chain[i]]) for i in range(1, hops)]
        bridges = [n(row[b]) for b in chain[:-1]]
        return _subgraph(Shape.multihop, f"{hops}-hop", f"multihop_{hops}", facts, [n(row["a"])], [n(row["n"])], bridges)

    return build


def _multihop_set(hops: int, fan_hop: int) -> Callable[[Unit, _Nodes], Subgraph]:
    at = "last" if fan_hop == hops else "mid"

    def build(unit: Unit, n: _Nodes) -> Subgraph:
        first = unit[0]
        start, bridges = first["n"], [first[f"b{i}"] for i in range(1, fan_hop)]
        chain = [start, *bridges]
        facts = []
        if bridges:
            inverse_first = _true(first["inv1"])
            facts.append(n.fact(bridges[0], first["r1"], start) if inverse_first else n.fact(start, first["r1"], bridges[0]))
            facts += [n.fact(chain[i - 1], first[f"r{i}"], chain[i]) for i in range(2, fan_hop)]
        pivot, relation = chain[-1], first[f"r{fan_hop}"]
        rows = sorted(unit, key=lambda row: str(row["m"]))
        inverse = _true(first[f"inv{fan_hop}"])
        facts += [n.fact(row["m"], relation, pivot) if inverse else n.fact(pivot, relation, row["m"]) for row in rows]
        members = [row["m"] for row in rows]
        if fan_hop < hops:
            facts += [n.fact(row["m"], row[f"r{hops}"], row["a"]) for row in rows]
        ends = {row["a"] for row in rows} if fan_hop < hops else set(members)
        answer = sorted(ends - {start}, key=str)
        hidden = bridges + (members if fan_hop < hops else [])
        # dict.fromkeys: a chain back to its start meets its first fact again as a fan fact
        return _subgraph(Shape.multihop_set, f"{hops}-hop-{at}", f"multihop_set_{hops}_{at}", dict.fromkeys(facts),
                         map(n, answer), [n(start)], map(n, hidden))

    return build


def _true(term: Term) -> bool:
    """A template's BIND(true ...) flag: Virtuoso returns a computed boolean as 1 / 0."""
    return term.value in ("true", "1")


def _comparison(unit: Unit, n: _Nodes) -> Subgraph:
    (row,) = unit
    facts = [n.fact(row["s1"], row["r"], row["v1"]), n.fact(row["s2"], row["r"], row["v2"])]
    return _subgraph(
        Shape.comparison, "larger", "comparison", facts, [n(row["larger"])], [n(row["s1"]), n(row["s2"])], [n(row["v1"]), n(row["v2"])]
    )


def _rule_application(unit: Unit, n: _Nodes) -> Subgraph:
    """The entity's input facts by role; a bridged input's fact comes after the one fact
    that links the entity to its bridge (the bridge is hidden, as in multi-hop)."""
    rule, entity = unit[0]["rule"], unit[0]["e"]
    rows = sorted(unit, key=lambda r: (r["role"].value, r["r"].value, str(r["v"]), str(r["via"] or "")))
    facts: dict[Fact, None] = {}  # a dict keeps order and one link to a bridge two inputs share
    for row in rows:
        if row["via"] is not None:
            facts[n.fact(entity, row["via"], row["b"])] = None
        facts[n.fact(row["b"] or entity, row["r"], row["v"], role=row["role"].value)] = None
    kind = unit[0]["kind"].value.rsplit("#", 1)[-1].lower()
    bridges = dict.fromkeys(n(row["b"]) for row in rows if row["b"] is not None)
    hidden = [*bridges, *(n(row["v"]) for row in rows)]
    return _subgraph(Shape.rule_application, kind, "rule_application", facts, [], [n(entity)], hidden, rule=n(rule))


BUILDERS: dict[str, Callable[[Unit, _Nodes], Subgraph]] = {
    "simple": _simple,
    "set": _set,
    "conditional_subject": _conditional("shared_subject", "conditional_subject", ("x", "ra", "a"), ("x", "rb", "b"), ("a", "b")),
    "conditional_object": _conditional("shared_object", "conditional_object", ("s", "ra", "x"), ("t", "rb", "x"), ("s", "t")),
    "conditional_chain": _conditional("chain", "conditional_chain", ("s", "ra", "x"), ("x", "rb", "o"), ("s", "o")),
    **{f"multihop_{h}": _multihop(h) for h in MULTIHOP_HOPS},
    **{f"multihop_set_{h}_last": _multihop_set(h, h) for h in MULTIHOP_HOPS},
    **{f"multihop_set_{h}_mid": _multihop_set(h, h - 1) for h in MULTIHOP_HOPS},
    "comparison": _comparison,
    "rule_application": _rule_application,
}


# --------------------------------------------------------------------------- rows -> units
def _units(template: Template, variables: Sequence[str], rows: Iterable[tuple], max_set_size: int) -> Iterator[Unit]:
    dict_rows = (dict(zip(variables, row, strict=True)) for row in rows)
    if template.fan_hop:
        yield from _fans(template, variables, dict_rows, max_set_size)
        return
    if template.name == "comparison":
        dict_rows = (row for row in dict_rows if _comparable(row["v1"], row["v2"]))
    keys = _GROUP_KEYS.get(template.name)
    if keys is None:
        yield from ((row,) for row in dict_rows)
        return
    for _, group in itertools.groupby(dict_rows, key=lambda row: tuple(row[k] for k in keys)):
        unit = tuple(group)
        if template.name != "set" or 2 <= len(unit) <= max_set_size:
            yield unit


def _comparable(first: Term, second: Term) -> bool:
    """Two numbers, or two values of one datatype (two dates, two dateTimes): what a comparison
    may set side by side (checked here: see comparison.rq)."""
    return first.datatype == second.datatype or (_is_number(first) and _is_number(second))


def _is_number(term: Term) -> bool:
    return isinstance(KnowledgeGraph.value(term), int | float | decimal.Decimal)


def _fans(template: Template, variables: Sequence[str], rows: Iterable[Row], max_set_size: int) -> Iterator[Unit]:
    """The rows of each fan (they share everything before the member), gathered whatever
    order they come in and sorted, then judged whole. A fan past ``max_set_size`` members
    keeps none of its rows (enumeration meets hubs' fans of thousands)."""
    keys = variables[: variables.index("m")]
    fans: dict[tuple, dict[Term, list[Row]] | None] = {}  # fan -> its rows by member; None: too many members
    for row in rows:
        key = tuple(row[k] for k in keys)
        members = fans.setdefault(key, {})
        if members is not None:
            members.setdefault(row["m"], []).append(row)
            if len(members) > max_set_size:
                fans[key] = None
    for members in fans.values():
        if members is not None:
            fan = [row for member_rows in members.values() for row in member_rows]
            fan.sort(key=lambda row: tuple(map(str, row.values())))
            yield from _fan_units(template, tuple(fan), max_set_size)


def _fan_units(template: Template, rows: Unit, max_set_size: int) -> Iterator[Unit]:
    """The answerable chains of one fan (its rows, one per member and last value): 2 to
    ``max_set_size`` IRI members, none a bridge before the fan; when the fan is not the last
    hop, every member has exactly one value of the last relation and none is the start (which
    the question names); the ends, the start left out, are 2 to ``max_set_size`` IRIs, none a
    bridge. One unit per last relation that passes."""
    members = {row["m"] for row in rows}
    bridges = {rows[0][f"b{i}"] for i in range(1, template.fan_hop)}
    if not 2 <= len(members) <= max_set_size or not _iris(members) or members & bridges:
        return
    start = rows[0]["n"]
    if template.fan_hop == template.hops:
        if _answerable(members, start, bridges, max_set_size):
            yield rows
        return
    if start in members:
        return
    last = f"r{template.hops}"
    for relation in sorted({row[last] for row in rows if row[last] is not None}, key=str):
        chosen = tuple(row for row in rows if row[last] == relation and row["a"] is not None)
        reached = collections.Counter(row["m"] for row in chosen)
        if reached.keys() == members and max(reached.values()) == 1:
            if _answerable({row["a"] for row in chosen}, start, bridges | members, max_set_size):
                yield chosen


def _answerable(ends: set[Term], start: Term, bridges: set[Term], max_set_size: int) -> bool:
    return _iris(ends) and not ends & bridges and 2 <= len(ends - {start}) <= max_set_size


def _iris(nodes: Iterable[Term]) -> bool:
    return all(isinstance(node, ox.NamedNode) for node in nodes)


def _unit_key(unit: Unit) -> tuple[str, ...]:
    # The first rows of one anchor's units differ (a group's rows share its group key), and
    # a first row is the start of the key all rows would give: same order, less work.
    return tuple(str(t) for t in unit[0].values())


def _build(kg: KnowledgeGraph, template: Template, units: Sequence[Unit]) -> list[Subgraph]:
    nodes = _Nodes(kg, units)
    return [BUILDERS[template.name](unit, nodes) for unit in units]


# --------------------------------------------------------------------------- public API
def enumerate_subgraphs(
    kg: KnowledgeGraph,
    shape: Shape | str,
    *,
    limit: int | None = None,
    hops: int = 2,
    variant: str | None = None,
    max_set_size: int = 8,
) -> Iterator[Subgraph]:
    """Every subgraph of a shape, template by template, streamed (stops after ``limit``).

    Conditional and multi-hop results grow with the sum of squared degrees, and a
    multihop_set template reads all its rows before it judges a fan: on a large graph use
    :func:`sample_subgraphs` rather than enumerating them all.
    """
    names = templates_for(shape, hops, variant)
    _require_rules(kg, names)
    produced = 0
    for name in names:
        template = load_template(name)
        result = kg.select(template.text)
        units = _units(template, result.variables, result, max_set_size)
        while chunk := list(itertools.islice(units, _LABEL_CHUNK)):
            for subgraph in _build(kg, template, chunk):
                if limit is not None and produced >= limit:
                    return
                produced += 1
                yield subgraph


def sample_subgraphs(
    kg: KnowledgeGraph,
    shape: Shape | str,
    *,
    limit: int = 100,
    seed: int = 0,
    hops: int = 2,
    variant: str | None = None,
    per_anchor: int = 2,
    batch_size: int = 200,
    max_set_size: int = 8,
    anchors: Anchors | None = None,
) -> Iterator[Subgraph]:
    """Up to ``limit`` subgraphs drawn around random anchor entities (deterministic per seed).

    The anchors are every entity a template can start from, or, with ``anchors``, only the
    members of a class or what a query lists (no query then scans the whole graph for them).

    A shape with several templates (conditional, multihop_set) takes from each in turn.
    Fewer than ``limit`` come back only when every anchor has been tried. multihop_set
    leaves out a fan whose relation has more than ``max_set_size`` facts the other way at
    its node (the template would read them all).
    """
    if limit < 0 or per_anchor < 1 or batch_size < 1:
        raise KgsynthError("limit must be >= 0, per_anchor and batch_size >= 1")
    names = templates_for(shape, hops, variant)
    _require_rules(kg, names)
    templates = [load_template(name) for name in names]
    populations = {t.anchors_from: anchor_population(kg, t.anchors_from, anchors) for t in templates}
    facts = _Facts(kg, seed)  # shared: the conditional forms walk around many of the same hubs
    streams = [
        _sample_template(kg, t, populations[t.anchors_from], facts, _rng(seed, t), per_anchor, batch_size, max_set_size)
        for t in templates
    ]
    produced = 0
    while streams and produced < limit:
        for stream in list(streams):
            subgraph = next(stream, None)
            if subgraph is None:
                streams.remove(stream)
                continue
            produced += 1
            yield subgraph
            if produced >= limit:
                return


def _rng(seed: int, template: Template) -> random.Random:
    """A template's own random stream; the set-valued chains share theirs, so that they walk
    from the same anchors in the same order and read the facts around them once."""
    return random.Random(f"{seed}:{Shape.multihop_set.value if template.fan_hop else template.name}")


def _anchor_batches(population: list[Term], rng: random.Random, batch_size: int) -> Iterator[list[Term]]:
    order = rng.sample(population, len(population))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


_LOOKUPS = {
    "out": ("facts_out", "s", 0),
    "functional": ("facts_functional", "s", 0),
    "relation": ("facts_with", "p", 1),
    "in": ("facts_in", "o", 2),
}
_DATE_TYPES = {"http://www.w3.org/2001/XMLSchema#date", "http://www.w3.org/2001/XMLSchema#dateTime"}
_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
RELATION_FACTS = 10_000  # a relation with more facts is read in part (comparison's second entity)
_RELATION_SIZES = "SELECT ?p (COUNT(*) AS ?n) WHERE {\n  #VALUES\n  ?s ?p ?o\n} GROUP BY ?p"


class _Facts:
    """Episodic facts around nodes (out of, into, of a relation, or out of a node along a
    relation with one value there), read once per sampling call and sorted, so random
    picks are reproducible and a hub is read only once."""

    def __init__(self, kg: KnowledgeGraph, seed: int):
        self.kg, self.seed = kg, seed
        self.found: dict[str, dict[Term, list[tuple]]] = {lookup: {} for lookup in _LOOKUPS}
        self.fanned: dict[Term, dict[tuple[Term, bool], list[Term]]] = {}

    def around(self, terms: Iterable[Term], lookup: str) -> dict[Term, list[tuple]]:
        found = self.found[lookup]
        missing = sorted({t for t in terms if t not in found and isinstance(t, ox.NamedNode)}, key=str)
        if missing:
            position = _LOOKUPS[lookup][2]
            fetched: dict[Term, list[tuple]] = {t: [] for t in missing}
            for fact in self._read(missing, lookup):
                if lookup != "functional" or not (isinstance(fact[2], ox.BlankNode) or fact[2] == fact[0]):
                    fetched[fact[position]].append(fact)
            for term, facts in fetched.items():
                found[term] = sorted(facts, key=lambda f: tuple(map(str, f)))
        return found

    def _read(self, terms: list[Term], lookup: str) -> Iterator[tuple]:
        """The facts of a lookup; of a relation with more than RELATION_FACTS facts, only those
        whose subject's MD5 starts with a hex prefix drawn by seed, short enough to leave about
        RELATION_FACTS/16 to RELATION_FACTS of them (the engine computes the MD5, so every engine
        keeps the same ones, and a 10M-triple graph's relation is no longer read whole)."""
        name, var, _ = _LOOKUPS[lookup]
        whole = terms
        if lookup == "relation":
            sizes = {p: int(n.value) for p, n in self.kg.select(_RELATION_SIZES, (("p",), [(t,) for t in terms]))}
            whole = [t for t in terms if sizes.get(t, 0) <= RELATION_FACTS]
            for relation in (t for t in terms if sizes.get(t, 0) > RELATION_FACTS):
                digits = math.ceil(math.log(sizes[relation] / RELATION_FACTS, 16))
                prefix = hashlib.md5(f"{self.seed}:{relation.value}".encode()).hexdigest()[:digits]
                yield from self.kg.select(load_template("facts_with_part").text, (("p", "part"), [(relation, ox.Literal(prefix))]))
        if whole:
            yield from self.kg.select(load_template(name).text, ((var,), [(t,) for t in whole]))

    def fans(self, terms: Iterable[Term], max_set_size: int) -> dict[Term, dict[tuple[Term, bool], list[Term]]]:
        """The ways each node fans out: (relation, inverse) -> its 2 to ``max_set_size``
        members, all IRIs, sorted. A relation with more than ``max_set_size`` facts the other
        way at the node is left out: a template reads both ways, and a hub's side would be rows
        by the thousand. Found by the engine (``fans.rq``), once per node."""
        missing = sorted({t for t in terms if t not in self.fanned and isinstance(t, ox.NamedNode | ox.Literal)}, key=str)
        found: dict[Term, list[tuple[tuple[Term, bool], list[Term]]]] = {t: [] for t in missing}
        limit = ox.Literal(max_set_size)
        # literals one per query (fans_literal.rq): Virtuoso 7 answers a VALUES block of several
        # literals with a scan (71 of FB15k-237's: 11.5 s together, 0.26 s one by one)
        iris = [t for t in missing if isinstance(t, ox.NamedNode)]
        # a boolean shared is no set worth asking about ("the hotels that also have a pool"),
        # and Virtuoso keeps no boolean to match by term (it stores 1 / 0)
        literals = [t for t in missing if isinstance(t, ox.Literal) and t.datatype.value != _BOOLEAN]
        queries = ([("fans", iris)] if iris else []) + [("fans_literal", [t]) for t in literals]
        for name, bound in queries:
            for x, p, out, into in self.kg.select(load_template(name).text, (("x", "limit"), [(t, limit) for t in bound])):
                for inverse, ends in ((False, out.value.split()), (True, into.value.split())):
                    if len(ends) >= 2 and "-" not in ends:
                        found[x].append(((p, inverse), sorted(map(ox.NamedNode, ends), key=str)))
        for term, ways in found.items():  # sorted: the engine's order is its own
            self.fanned[term] = dict(sorted(ways, key=lambda way: (str(way[0][0]), way[0][1])))
        return self.fanned

    def relations_one_valued(self, terms: Iterable[Term]) -> dict[Term, set[Term]]:
        """The relations each node has exactly once, with an IRI value: its functional facts
        (one grouped query; a NOT EXISTS per fact took a hub 6 s on Virtuoso)."""
        functional = self.around(terms, "functional")
        return {t: {p for _, p, o in functional[t] if isinstance(o, ox.NamedNode)} for t in terms if t in functional}


def _is_numeric_or_date(term: Term) -> bool:
    """What the comparison template accepts as a value: numbers and dates (not booleans, years)."""
    if not isinstance(term, ox.Literal) or term.datatype.value.endswith(("#boolean", "#gYear")):
        return False
    return _is_number(term) or term.datatype.value in _DATE_TYPES


def _pick(options: list, k: int, rng: random.Random) -> list:
    return options if len(options) <= k else rng.sample(options, k)


def _bindings(facts: _Facts, template: Template, batch: list[Term], rng: random.Random, per_anchor: int,
              max_set_size: int) -> list[tuple]:
    """VALUES rows for a batch of anchor entities: the entities, or up to ``per_anchor``
    random facts of each (reversed too, and walked on, if the template asks), or the
    set-valued chains walked from each."""
    if template.fan_hop:
        return _fan_bindings(facts, template, batch, rng, per_anchor, max_set_size)
    if not template.anchors_facts:
        return [(a,) for a in batch]
    by_entity = facts.around(batch, "out")
    chosen, reversed_ = [], []
    for entity in sorted(set(batch), key=str):
        options = by_entity.get(entity, [])
        if template.anchor_values == "numeric":
            options = [f for f in options if _is_numeric_or_date(f[2])]
        forward = _single_valued(options) if template.walk_functional else options  # a chain's first hop too
        chosen += _pick(forward, per_anchor, rng)
        if template.anchor_reversed:
            reversed_ += [(o, p, s) for s, p, o in _pick(options, per_anchor, rng)]
    rows = _walk(facts, template, chosen + reversed_, rng, per_anchor)
    if template.bind:
        at = [template.walked_variables.index(v) for v in template.bind]
        rows = sorted({tuple(row[i] for i in at) for row in rows}, key=lambda row: tuple(map(str, row)))
    return rows


def _single_valued(facts: list[tuple]) -> list[tuple]:
    """The facts whose relation has no other value at their subject (all facts of it given)."""
    counts = collections.Counter(f[1] for f in facts)
    return [f for f in facts if counts[f[1]] == 1]


def _walk(facts: _Facts, template: Template, anchors: list[tuple], rng: random.Random, budget: int) -> list[tuple]:
    """Extend each anchor fact, step by step, with random facts that share a variable with it.

    Each anchor fact keeps at most ``budget`` walks after every step, so a hub costs a few
    rows instead of its whole neighbourhood; the template then verifies each candidate.
    """
    rows = [(fact,) for fact in anchors]  # (anchor fact, walked values...) kept per anchor
    bound = template.anchor
    for step in template.walk:
        (shared,) = [i for i, v in enumerate(step) if v in bound]
        at = bound.index(step[shared])
        lookup = "functional" if template.walk_functional else ("out", "relation", "in")[shared]
        found = facts.around((row[0][at] if at < 3 else row[at - 2] for row in rows), lookup)
        new = [i for i, v in enumerate(step) if v not in bound]
        last = step is template.walk[-1]
        walked = []
        for _, paths in itertools.groupby(rows, key=lambda row: row[0]):
            paths = list(paths)
            per_path = max(1, budget // len(paths))
            for path in paths:
                node = path[0][at] if at < 3 else path[at - 2]
                options = found.get(node, [])
                if template.walk_functional:
                    options = _chain_steps(options, path, last)
                walked += [path + tuple(f[i] for i in new) for f in _pick(options, per_path, rng)]
        rows = walked
        bound += tuple(step[i] for i in new)
    return [row[0] + row[1:] for row in rows]


def _chain_steps(options: list[tuple], path: tuple, last: bool) -> list[tuple]:
    """Chain steps the template can accept: to a node not on the path yet, and to an IRI
    unless it is the last hop (walks that loop back would only be rejected)."""
    visited = {path[0][0], path[0][2], *path[2::2]}
    return [f for f in options if f[2] not in visited and (last or isinstance(f[2], ox.NamedNode))]


@dataclass(frozen=True)
class _ChainWalk:
    """One walk of a set-valued chain: what it has bound so far and where it stands."""

    origin: tuple  # where it began (an anchor entity or fact): walks from one origin share a budget
    here: Term  # the node the next hop leaves from
    visited: frozenset[Term]
    bound: dict[str, Term]

    def to(self, node: Term, **bound: Term) -> _ChainWalk:
        return _ChainWalk(self.origin, node, self.visited | {node}, self.bound | bound)


def _fan_bindings(facts: _Facts, template: Template, batch: list[Term], rng: random.Random, budget: int,
                  max_set_size: int) -> list[tuple]:
    """VALUES rows for a set-valued chain: random walks from each anchor entity along
    one-valued relations to IRIs (the first hop may also go back along any fact) up to a node
    that fans out, then the fan's relation and, when the fan is not the last hop, a last
    relation every member has exactly once. Walks from one origin keep at most ``budget``
    continuations after every hop; the template verifies and lists the members."""
    walks = _chain_starts(facts, template, batch, rng, budget)
    for hop in range(2, template.fan_hop):
        walks = _chain_hop(facts, walks, hop, rng, budget)
    walks = _fan_out(facts, template, walks, rng, budget, max_set_size)
    rows = {tuple(walk.bound[v] for v in template.bind) for walk in walks}
    return sorted(rows, key=lambda row: tuple(map(str, row)))


def _chain_starts(facts: _Facts, template: Template, batch: list[Term], rng: random.Random,
                  budget: int) -> list[_ChainWalk]:
    """Where chains start: at the anchor entity, or at the value of a random fact of it; when
    the fan is not the first hop, with the first hop taken: forward along a one-valued
    relation to an IRI, or back along that fact (the template checks that the start has no
    other such subject)."""
    by_entity = facts.around(batch, "out")
    walks = []
    for entity in sorted(set(batch), key=str):
        options = by_entity.get(entity, [])
        backward = [(o, r, s) for s, r, o in _pick(options, budget, rng)]
        if template.fan_hop == 1:
            for origin in [(entity,), *backward]:  # the start is where the chain fans out
                walks.append(_ChainWalk(origin, origin[0], frozenset({origin[0]}), {"n": origin[0]}))
            continue
        forward = [f for f in _single_valued(options) if isinstance(f[2], ox.NamedNode)]
        for start, r, node in [*_pick(forward, budget, rng), *backward]:
            bound = {"n": start, "r1": r, "b1": node}
            walks.append(_ChainWalk((start, r, node), node, frozenset({start, node}), bound))
    return walks


def _chain_hop(facts: _Facts, walks: list[_ChainWalk], hop: int, rng: random.Random, budget: int) -> list[_ChainWalk]:
    """Each walk one hop on to the next bridge: along a one-valued relation to an IRI off the walk."""
    functional = facts.around({walk.here for walk in walks}, "functional")
    grown = []
    for walk, allowed in _allowances(walks, budget):
        steps = [(r, o) for _, r, o in functional.get(walk.here, [])
                 if isinstance(o, ox.NamedNode) and o not in walk.visited]
        grown += [walk.to(o, **{f"r{hop}": r, f"b{hop}": o}) for r, o in _pick(steps, allowed, rng)]
    return grown


def _fan_out(facts: _Facts, template: Template, walks: list[_ChainWalk], rng: random.Random, budget: int,
             max_set_size: int) -> list[_ChainWalk]:
    """Each walk's fan: a relation with 2 to ``max_set_size`` members at its node (either way,
    see :meth:`_Facts.fans`) and, when the fan is not the last hop, a last relation."""
    fans = facts.fans({walk.here for walk in walks}, max_set_size)
    if template.fan_hop == template.hops:
        return _last_fans(template, walks, fans, rng, budget)
    return _fans_then_last_hop(facts, template, walks, fans, rng, budget)


def _last_fans(template: Template, walks: list[_ChainWalk], fans: dict, rng: random.Random,
               budget: int) -> list[_ChainWalk]:
    # the template lists the members, both ways: the relation is all a walk binds
    grown = []
    for walk, allowed in _allowances(walks, budget):
        relations = sorted({relation for relation, _ in fans[walk.here]}, key=str)
        grown += [walk.to(walk.here, **{f"r{template.fan_hop}": r}) for r in _pick(relations, allowed, rng)]
    return grown


def _fans_then_last_hop(facts: _Facts, template: Template, walks: list[_ChainWalk], fans: dict, rng: random.Random,
                        budget: int) -> list[_ChainWalk]:
    """Fans whose members are all off the walk, each with a last relation that every member
    has exactly once, with an IRI value; the fans are picked before their members are looked up."""
    chosen = []  # (walk, allowance, its fans)
    for walk, allowed in _allowances(walks, budget):
        ways = [(way, members) for way, members in fans[walk.here].items() if not walk.visited.intersection(members)]
        chosen.append((walk, allowed, [(r, members) for (r, _), members in _pick(ways, allowed, rng)]))
    one_valued = facts.relations_one_valued({m for _, _, ways in chosen for _, members in ways for m in members})
    fan, last = f"r{template.fan_hop}", f"r{template.hops}"
    grown = []
    for walk, allowed, ways in chosen:
        steps = [(r, r_last) for r, members in ways
                 for r_last in sorted(set.intersection(*(one_valued[m] for m in members)), key=str)]
        grown += [walk.to(walk.here, **{fan: r, last: r_last}) for r, r_last in _pick(steps, allowed, rng)]
    return grown


def _allowances(walks: list[_ChainWalk], budget: int) -> Iterator[tuple[_ChainWalk, int]]:
    """Each walk with how many continuations it may take: walks from one origin share ``budget``."""
    for _, group in itertools.groupby(walks, key=lambda walk: walk.origin):
        group = list(group)
        for walk in group:
            yield walk, max(1, budget // len(group))


def _sample_template(
    kg: KnowledgeGraph,
    template: Template,
    population: list[Term],
    facts: _Facts,
    rng: random.Random,
    per_anchor: int,
    batch_size: int,
    max_set_size: int,
) -> Iterator[Subgraph]:
    seen: set[str] = set()  # a fact and its reverse (o p s) can reach one subgraph from two anchors
    queries = rule_application_queries(kg) if template.name == "rule_application" else (template.text,)
    for batch in _anchor_batches(population, rng, batch_size):
        bindings = _bindings(facts, template, batch, rng, per_anchor, max_set_size)
        # rows led by a literal bound apart: Virtuoso 7.2 drops some rows of a VALUES block whose
        # first column mixes literals and IRIs (multihop_2 on the demo: 553 of 555)
        blocks = [block for block in ([r for r in bindings if isinstance(r[0], ox.Literal)],
                                      [r for r in bindings if not isinstance(r[0], ox.Literal)]) if block]
        if not blocks:
            continue
        results = [kg.select(query, (template.bound_variables, block)) for query in queries for block in blocks]
        rows = itertools.chain.from_iterable(results)
        by_anchor: dict[tuple, list[Unit]] = {}
        for unit in _units(template, results[0].variables if results else (), rows, max_set_size):
            by_anchor.setdefault(tuple(unit[0][v] for v in template.anchor), []).append(unit)
        chosen: list[Unit] = []
        for anchor in sorted(by_anchor, key=lambda key: tuple(map(str, key))):
            units = sorted(by_anchor[anchor], key=_unit_key)
            chosen.extend(_pick(units, per_anchor, rng))
        rng.shuffle(chosen)
        for subgraph in _build(kg, template, chosen):
            if subgraph.id not in seen:
                seen.add(subgraph.id)
                yield subgraph


_ANY_RULE = f"SELECT ?rule WHERE {{ ?rule a <{KGS}Rule> }} LIMIT 1"


def _require_rules(kg: KnowledgeGraph, names: list[str]) -> None:
    if "rule_application" in names and not list(kg.select(_ANY_RULE)):
        raise KgsynthError(
            "the graph has no kgs:Rule resources, so rule_application has nothing to join; "
            "load a rules file beside the data (see docs/vocabulary.md)"
        )
