"""Run the shape templates: full enumeration, or anchored sampling with a seed.

Anchored sampling is how a synthesizer uses the templates: shuffle the template's anchor
population with the seed, bind a batch of anchors with VALUES, keep at most
``per_anchor`` results per anchor (so hubs do not dominate), label them, repeat.
Two-triple and chain templates anchor on a fact: one random fact of each anchor entity
is bound, so a hub costs its degree, not the square of it.
Results are sorted before any random choice, so the same seed gives the same subgraphs
on the embedded store and on a remote endpoint.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Sequence

import pyoxigraph as ox

from kgsynth.errors import KgsynthError, UnknownShapeError
from kgsynth.kg import KnowledgeGraph, Term
from kgsynth.kg.vocab import KGS
from kgsynth.queries._subgraph import Fact, Node, Shape, Subgraph
from kgsynth.queries._templates import Template, load_template

Row = dict[str, Term]
Unit = tuple[Row, ...]  # the rows of one subgraph: one, or a contiguous group (set, rule)

CONDITIONAL_VARIANTS = {"shared_subject": "conditional_subject", "shared_object": "conditional_object", "chain": "conditional_chain"}
MULTIHOP_HOPS = (2, 3, 4)
_GROUP_KEYS = {"set": ("key", "r", "inverse"), "rule_application": ("rule", "e")}
_PAIR_BATCH = 64  # anchors per batch when a template anchors pairs (64 -> 2,016 pairs)
_WALK_FACTOR = 4  # walk candidates bound per result kept: verification rejects some
_LABEL_CHUNK = 500


def templates_for(shape: Shape | str, hops: int = 2, variant: str | None = None) -> list[str]:
    """The template names a shape draws from (conditional: all three forms unless ``variant``)."""
    try:
        shape = Shape(shape)
    except ValueError:
        raise UnknownShapeError(f"unknown shape {shape!r}; choose one of {', '.join(s.value for s in Shape)}") from None
    if shape is Shape.conditional:
        if variant is None:
            return list(CONDITIONAL_VARIANTS.values())
        if variant not in CONDITIONAL_VARIANTS:
            raise UnknownShapeError(f"unknown conditional variant {variant!r}; choose one of {', '.join(CONDITIONAL_VARIANTS)}")
        return [CONDITIONAL_VARIANTS[variant]]
    if shape is Shape.multihop:
        if hops not in MULTIHOP_HOPS:
            raise UnknownShapeError(f"multihop needs 2, 3 or 4 hops, not {hops}")
        return [f"multihop_{hops}"]
    return [shape.value]


# --------------------------------------------------------------------------- builders
class _Nodes:
    """Turns terms into labelled Nodes, one label lookup per batch of subgraphs."""

    def __init__(self, kg: KnowledgeGraph, units: Sequence[Unit]):
        self.kg = kg
        self.labels = kg.labels({t for unit in units for row in unit for t in row.values() if t is not None})

    def __call__(self, term: Term) -> Node:
        labels = self.labels.get(term, {})
        return Node.from_term(term, self.kg.pick_label(term, labels), labels)

    def fact(self, s: Term, r: Term, o: Term, role: str | None = None) -> Fact:
        return Fact(subject=self(s), relation=self(r), object=self(o), role=role)


def _subgraph(shape: Shape, variant: str, template: str, facts, answer, mention, hidden=(), rule=None) -> Subgraph:
    facts, answer = tuple(facts), tuple(answer)
    return Subgraph(
        id=Subgraph.make_id(shape, variant, facts, answer, rule),
        shape=shape,
        variant=variant,
        template=template,
        facts=facts,
        answer=answer,
        mention=tuple(mention),
        hidden=tuple(hidden),
        rule=rule,
    )


def _simple(unit: Unit, n: _Nodes) -> Subgraph:
    (row,) = unit
    return _subgraph(Shape.simple, "forward", "simple", [n.fact(row["s"], row["r"], row["o"])], [n(row["o"])], [n(row["s"])])


def _set(unit: Unit, n: _Nodes) -> Subgraph:
    key, relation, inverse = unit[0]["key"], unit[0]["r"], unit[0]["inverse"].value == "true"
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
        first = (row["b1"], row["r1"], row["n"]) if row["inv1"].value == "true" else (row["n"], row["r1"], row["b1"])
        facts = [n.fact(*first)] + [n.fact(row[chain[i - 1]], row[f"r{i + 1}"], row[chain[i]]) for i in range(1, hops)]
        bridges = [n(row[b]) for b in chain[:-1]]
        return _subgraph(Shape.multihop, f"{hops}-hop", f"multihop_{hops}", facts, [n(row["a"])], [n(row["n"])], bridges)

    return build


def _comparison(unit: Unit, n: _Nodes) -> Subgraph:
    (row,) = unit
    v1, v2 = KnowledgeGraph.value(row["v1"]), KnowledgeGraph.value(row["v2"])
    larger = row["s1"] if v1 > v2 else row["s2"]
    facts = [n.fact(row["s1"], row["r"], row["v1"]), n.fact(row["s2"], row["r"], row["v2"])]
    return _subgraph(
        Shape.comparison, "larger", "comparison", facts, [n(larger)], [n(row["s1"]), n(row["s2"])], [n(row["v1"]), n(row["v2"])]
    )


def _rule_application(unit: Unit, n: _Nodes) -> Subgraph:
    rule, entity = unit[0]["rule"], unit[0]["e"]
    rows = sorted(unit, key=lambda r: (r["role"].value, r["r"].value, str(r["v"])))
    facts = [n.fact(entity, row["r"], row["v"], role=row["role"].value) for row in rows]
    kind = unit[0]["kind"].value.rsplit("#", 1)[-1].lower()
    values = [n(row["v"]) for row in rows]
    return _subgraph(Shape.rule_application, kind, "rule_application", facts, [], [n(entity)], values, rule=n(rule))


BUILDERS: dict[str, Callable[[Unit, _Nodes], Subgraph]] = {
    "simple": _simple,
    "set": _set,
    "conditional_subject": _conditional("shared_subject", "conditional_subject", ("x", "ra", "a"), ("x", "rb", "b"), ("a", "b")),
    "conditional_object": _conditional("shared_object", "conditional_object", ("s", "ra", "x"), ("t", "rb", "x"), ("s", "t")),
    "conditional_chain": _conditional("chain", "conditional_chain", ("s", "ra", "x"), ("x", "rb", "o"), ("s", "o")),
    **{f"multihop_{h}": _multihop(h) for h in MULTIHOP_HOPS},
    "comparison": _comparison,
    "rule_application": _rule_application,
}


# --------------------------------------------------------------------------- rows -> units
def _units(template: Template, variables: Sequence[str], rows: Iterable[tuple], max_set_size: int) -> Iterator[Unit]:
    dict_rows = (dict(zip(variables, row, strict=True)) for row in rows)
    keys = _GROUP_KEYS.get(template.name)
    if keys is None:
        yield from ((row,) for row in dict_rows)
        return
    for _, group in itertools.groupby(dict_rows, key=lambda row: tuple(row[k] for k in keys)):
        unit = tuple(group)
        if template.name != "set" or 2 <= len(unit) <= max_set_size:
            yield unit


def _unit_key(unit: Unit) -> tuple[str, ...]:
    return tuple(str(t) for row in unit for t in row.values())


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

    Conditional and multi-hop results grow with the sum of squared degrees: on a large
    graph use :func:`sample_subgraphs` rather than enumerating them all.
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
) -> Iterator[Subgraph]:
    """Up to ``limit`` subgraphs drawn around random anchor entities (deterministic per seed).

    A shape with several templates (conditional) takes from each in turn. Fewer than
    ``limit`` come back only when every anchor has been tried.
    """
    if limit < 0 or per_anchor < 1 or batch_size < 1:
        raise KgsynthError("limit must be >= 0, per_anchor and batch_size >= 1")
    names = templates_for(shape, hops, variant)
    _require_rules(kg, names)
    templates = [load_template(name) for name in names]
    populations = {name: _anchor_population(kg, name) for name in {t.anchors_from for t in templates}}  # conditional's 3 share one
    streams = [
        _sample_template(kg, t, populations[t.anchors_from], random.Random(f"{seed}:{t.name}"), per_anchor, batch_size, max_set_size)
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


def _anchor_population(kg: KnowledgeGraph, name: str) -> list[Term]:
    rows = kg.select(load_template(name).text)
    return sorted((row[0] for row in rows if isinstance(row[0], ox.NamedNode)), key=str)


def _anchor_batches(population: list[Term], rng: random.Random, template: Template, batch_size: int) -> Iterator[list[Term]]:
    order = rng.sample(population, len(population))
    step = _PAIR_BATCH if template.anchor_kind == "pair" else batch_size
    for start in range(0, len(order), step):
        yield order[start : start + step]


def _facts_at(kg: KnowledgeGraph, nodes: Iterable[Term], outgoing: bool) -> dict[Term, list[tuple]]:
    """The episodic facts out of (or into) each node, sorted so random picks are reproducible."""
    name, var, position = ("facts_out", "s", 0) if outgoing else ("facts_in", "o", 2)
    bound = [(n,) for n in sorted(set(nodes), key=str) if isinstance(n, ox.NamedNode)]
    facts: dict[Term, list[tuple]] = {}
    if bound:
        for fact in kg.select(load_template(name).text, ((var,), bound)):
            facts.setdefault(fact[position], []).append(fact)
    return {node: sorted(found, key=lambda f: tuple(map(str, f))) for node, found in facts.items()}


def _pick(options: list, k: int, rng: random.Random) -> list:
    return options if len(options) <= k else rng.sample(options, k)


def _bindings(kg: KnowledgeGraph, template: Template, batch: list[Term], rng: random.Random, per_anchor: int) -> list[tuple]:
    """VALUES rows for a batch of anchor entities: the entities, their pairs, or up to
    ``per_anchor`` random facts of each (reversed too, and walked on, if the template asks)."""
    if template.anchor_kind == "entity":
        return [(a,) for a in batch]
    if template.anchor_kind == "pair":
        return [tuple(sorted(pair, key=str)) for pair in itertools.combinations(batch, 2)]
    by_entity = _facts_at(kg, batch, outgoing=True)
    chosen = [fact for entity in sorted(by_entity, key=str) for fact in _pick(by_entity[entity], per_anchor, rng)]
    if template.anchor_reversed:
        chosen += [(o, p, s) for s, p, o in chosen]
    return _walk(kg, template, chosen, rng, per_anchor) if template.walk else chosen


def _walk(kg: KnowledgeGraph, template: Template, anchors: list[tuple], rng: random.Random, per_anchor: int) -> list[tuple]:
    """Extend each anchor fact with random facts at the node it shares with the ``walk`` fact.

    Only ``_WALK_FACTOR * per_anchor`` candidates per anchor fact are bound, so a hub costs
    a few rows instead of its whole neighbourhood; the template verifies each candidate.
    (Chains are not walked: Oxigraph expands a functional chain from a bound fact faster
    than it verifies pre-walked ones.)
    """
    (shared,) = [v for v in template.walk if v in template.anchor]
    outgoing = template.walk[0] == shared
    position = template.anchor.index(shared)
    neighbours = _facts_at(kg, (fact[position] for fact in anchors), outgoing)
    extra = [i for i, v in enumerate(template.walk) if v not in template.anchor]
    rows = []
    for fact in anchors:
        for step in _pick(neighbours.get(fact[position], []), _WALK_FACTOR * per_anchor, rng):
            rows.append(fact + tuple(step[i] for i in extra))
    return rows


def _anchor_key(template: Template, row: Row) -> tuple:
    # pairs are capped per first entity, so one entity is not compared with everyone
    names = template.anchor[:1] if template.anchor_kind == "pair" else template.anchor
    return tuple(row[v] for v in names)


def _sample_template(
    kg: KnowledgeGraph,
    template: Template,
    population: list[Term],
    rng: random.Random,
    per_anchor: int,
    batch_size: int,
    max_set_size: int,
) -> Iterator[Subgraph]:
    seen: set[str] = set()  # a fact and its reverse (o p s) can reach one subgraph from two anchors
    for batch in _anchor_batches(population, rng, template, batch_size):
        result = kg.select(template.text, (template.bound_variables, _bindings(kg, template, batch, rng, per_anchor)))
        by_anchor: dict[tuple, list[Unit]] = {}
        for unit in _units(template, result.variables, result, max_set_size):
            by_anchor.setdefault(_anchor_key(template, unit[0]), []).append(unit)
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
