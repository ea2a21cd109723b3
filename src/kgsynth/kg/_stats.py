"""Graph statistics computed with SPARQL, so they work on the embedded store and endpoints:
over the whole graph, or over a sample of entities (no query then scans the whole store)."""

from __future__ import annotations

import collections
import statistics
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING

import pyoxigraph as ox
from pydantic import BaseModel, Field

from kgsynth.errors import KgsynthError, QueryError
from kgsynth.kg._terms import Term, anchor_class_iri, literal_type
from kgsynth.kg.vocab import KGS, LABEL_PATH, RDF, XSD

if TYPE_CHECKING:
    from kgsynth.kg._graph import KnowledgeGraph

WHOLE_GRAPH = "the whole graph"

_RELATIONS = "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p"
_LITERAL_TYPE = f"BIND({literal_type('o')} AS ?dt)"
_LITERAL_TYPES = f"""SELECT ?dt (COUNT(*) AS ?n) WHERE {{
  ?s ?p ?o FILTER(isLiteral(?o))
  {_LITERAL_TYPE}
}} GROUP BY ?dt"""
# out- and in-degrees apart: Virtuoso 7 groups the UNION of both wrongly (1,108 nodes of the demo's 1,166);
# literal objects are dropped afterwards: with FILTER(!isLiteral(?n)) Virtuoso 7.2 groups FB15k-237 wrongly
_OUT_DEGREES = "SELECT ?n (COUNT(*) AS ?d) WHERE { ?n ?p ?o } GROUP BY ?n"
_IN_DEGREES = "SELECT ?n (COUNT(*) AS ?d) WHERE { ?s ?p ?n } GROUP BY ?n"
_LABELLED = f"SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE {{ ?e {LABEL_PATH} ?l }}"
_LABEL_LANGS = f"SELECT ?lang (COUNT(DISTINCT ?e) AS ?n) WHERE {{ ?e {LABEL_PATH} ?l }} GROUP BY (LANG(?l) AS ?lang)"
_RULES = f"SELECT ?kind (COUNT(DISTINCT ?r) AS ?n) WHERE {{ ?r a <{KGS}Rule> ; <{KGS}kind> ?kind }} GROUP BY ?kind"

# The sample: LIMIT without ORDER BY streams (an ORDER BY would sort the whole store)
_FIRST_SUBJECTS = "SELECT DISTINCT ?e WHERE {{ ?e ?p ?o FILTER(isIRI(?e)) }} LIMIT {n}"
_FIRST_MEMBERS = "SELECT ?e WHERE {{ ?e a {cls} FILTER(isIRI(?e)) }} LIMIT {n}"
# ... and per batch of it, only aggregates come back (a hub's millions of facts stay on the server),
# grouped by entity or by relation, not both: a row cap (Virtuoso's ResultSetMaxRows, 10,000 on
# DBpedia) would silently cut batch x relations rows short
_SAMPLE_BATCH = 500
_OUT_RELATIONS = "SELECT ?p (COUNT(*) AS ?n) WHERE {\n  #VALUES\n  ?e ?p ?o\n} GROUP BY ?p"
_OUT_FACTS = "SELECT ?e (COUNT(*) AS ?n) WHERE {\n  #VALUES\n  ?e ?p ?o\n} GROUP BY ?e"
_OUT_LITERAL_TYPES = f"SELECT ?dt (COUNT(*) AS ?n) WHERE {{\n  #VALUES\n  ?e ?p ?o FILTER(isLiteral(?o))\n  {_LITERAL_TYPE}\n}} GROUP BY ?dt"
_IN_FACTS = "SELECT ?e (COUNT(*) AS ?n) WHERE {\n  #VALUES\n  ?s ?p ?e\n} GROUP BY ?e"
_SAMPLE_LABELLED = f"SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE {{\n  #VALUES\n  ?e {LABEL_PATH} ?l\n}}"
_SAMPLE_LABEL_LANGS = (f"SELECT ?lang (COUNT(DISTINCT ?e) AS ?n) WHERE {{\n  #VALUES\n  ?e {LABEL_PATH} ?l\n}} "
                       "GROUP BY (LANG(?l) AS ?lang)")


class DegreeSummary(BaseModel):
    """Node degree (in + out edges) over all entities, or over the sampled ones (each with its
    degree in the whole graph); ``histogram`` bins are powers of two."""

    min: int
    median: float
    mean: float
    p90: float
    p99: float
    max: int
    histogram: dict[str, int]


class GraphStats(BaseModel):
    """What :meth:`KnowledgeGraph.stats` counts, over ``scope``: the whole graph, or a sample of
    entities. In a sample, the fields marked "sample" count the sampled entities and the facts
    out of them (their subject is sampled); ``rules_by_kind`` is always the whole graph's."""

    scope: str = Field(WHOLE_GRAPH, description="what the figures cover: the whole graph, or which entities were sampled")
    triples: int = Field(description="triples (sample: facts out of the sampled entities)")
    entities: int = Field(description="nodes with an edge: subjects and non-literal objects (sample: the sampled entities)")
    relations: int = Field(description="distinct predicates (sample: of the sampled facts)")
    literals: int = Field(description="triples with a literal object (sample: of the sampled facts)")
    labelled_entities: int = Field(description="subjects with a label (sample: sampled entities with one)")
    label_languages: dict[str, int] = Field(description="subjects (sample: sampled entities) with a label per language tag")
    literal_types: dict[str, int] = Field(description="literal objects per datatype (sample: of the sampled facts)")
    top_relations: list[tuple[str, str, int]] = Field(description="(IRI, label, triples) of the most used predicates (sample: in the sampled facts)")
    rules_by_kind: dict[str, int] = Field(description="kgs:Rule resources per kind, always the whole graph's")
    degree: DegreeSummary


def _short(iri: str) -> str:
    for prefix, namespace in (("xsd:", XSD), ("rdf:", RDF)):
        if iri.startswith(namespace):
            return prefix + iri.removeprefix(namespace)
    return iri


def _histogram(degrees: list[int]) -> dict[str, int]:
    bins: dict[int, int] = {}
    for d in degrees:
        bins[d.bit_length() - 1] = bins.get(d.bit_length() - 1, 0) + 1
    return {(f"{2**b}" if b == 0 else f"{2**b}-{2 ** (b + 1) - 1}"): bins[b] for b in sorted(bins)}


def _degree_summary(degrees: list[int]) -> DegreeSummary:
    if not degrees:
        return DegreeSummary(min=0, median=0, mean=0, p90=0, p99=0, max=0, histogram={})
    cuts = statistics.quantiles(degrees, n=100, method="inclusive") if len(degrees) > 1 else [degrees[0]] * 99
    return DegreeSummary(
        min=min(degrees),
        median=statistics.median(degrees),
        mean=round(statistics.fmean(degrees), 3),
        p90=cuts[89],
        p99=cuts[98],
        max=max(degrees),
        histogram=_histogram(degrees),
    )


def compute_stats(kg: KnowledgeGraph, top: int, sample: int | None = None, anchor_class: str | None = None) -> GraphStats:
    """The whole graph's statistics, or, with ``sample``, those of ``sample`` entities (see
    :func:`sampled_stats`)."""
    if sample is not None:
        return sampled_stats(kg, top, sample, anchor_class)
    if anchor_class is not None:
        raise QueryError(f"anchor class {anchor_class} needs a sample size: give sample=N (--sample N)")
    relation_counts = {p: int(n.value) for p, n in kg.select(_RELATIONS)}
    literal_types = {_short(dt.value): int(n.value) for dt, n in kg.select(_LITERAL_TYPES)}
    degree: collections.Counter = collections.Counter()
    for query in (_OUT_DEGREES, _IN_DEGREES):
        degree.update({node: int(d.value) for node, d in kg.select(query) if not isinstance(node, ox.Literal)})
    return _assemble(
        kg, top, relation_counts, literal_types, list(degree.values()),
        labelled=int(next(iter(kg.select(_LABELLED)))[0].value),
        label_languages={(lang.value or '""'): int(n.value) for lang, n in kg.select(_LABEL_LANGS)},
        scope=WHOLE_GRAPH,
    )


def sampled_stats(kg: KnowledgeGraph, top: int, sample: int, anchor_class: str | None = None) -> GraphStats:
    """Statistics of ``sample`` entities and the facts out of them, for a graph too large to
    scan: the first ``sample`` members (IRIs) of ``anchor_class``, or else the first distinct
    subjects (IRIs), in the server's order (blank nodes cannot be bound, so are never sampled).
    They are sorted before anything else, so the same answer from the server gives the same
    figures. Per batch of entities, bound with VALUES, only counts come back (facts per
    relation and per entity, literal types, in-degrees, labels), so no query scans the whole
    store. An entity's degree is its degree in the whole graph."""
    if sample < 1:
        raise QueryError(f"a sample of {sample} entities: give 1 or more")
    if anchor_class is None:
        rows = kg.select(_FIRST_SUBJECTS.format(n=sample))
        who = "subjects (IRIs)"
    else:
        cls = anchor_class_iri(anchor_class)
        rows = kg.select(_FIRST_MEMBERS.format(cls=cls, n=sample))
        who = f"members of class {cls.value}"
    entities = sorted({row[0] for row in rows if isinstance(row[0], ox.NamedNode)}, key=str)
    if anchor_class is not None and not entities:
        raise KgsynthError(f"class {anchor_class} has no member (IRI) in {kg.backend.description}")
    relation_counts: collections.Counter = collections.Counter()
    literal_types: collections.Counter = collections.Counter()
    degree: collections.Counter = collections.Counter()
    labelled, label_languages = 0, collections.Counter()
    for start in range(0, len(entities), _SAMPLE_BATCH):
        bound = (("e",), [(e,) for e in entities[start : start + _SAMPLE_BATCH]])
        relation_counts.update(_counts(kg.select(_OUT_RELATIONS, bound), lambda p: p))
        degree.update(_counts(kg.select(_OUT_FACTS, bound), lambda e: e))
        literal_types.update(_counts(kg.select(_OUT_LITERAL_TYPES, bound), lambda dt: _short(dt.value)))
        degree.update(_counts(kg.select(_IN_FACTS, bound), lambda e: e))
        labelled += sum(int(n.value) for (n,) in kg.select(_SAMPLE_LABELLED, bound))
        label_languages.update(_counts(kg.select(_SAMPLE_LABEL_LANGS, bound), lambda lang: lang.value or '""'))
    asked = "" if len(entities) == sample else f" ({sample:,} asked)"
    return _assemble(
        kg, top, dict(relation_counts), _by_count(literal_types), [degree[e] for e in entities],
        labelled=labelled,
        label_languages=_by_count(label_languages),
        scope=f"{len(entities):,} entities: the first {who} the server returned{asked}, and their facts",
    )


def _counts(rows: Iterable, key: Callable[[Term], Hashable]) -> dict:
    return {key(term): int(n.value) for term, n in rows}


def _by_count(counts: collections.Counter) -> dict[str, int]:
    # summed over batches, so sorted here: the server's order of groups is no order
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _assemble(
    kg: KnowledgeGraph,
    top: int,
    relation_counts: dict,
    literal_types: dict[str, int],
    degrees: list[int],
    *,
    labelled: int,
    label_languages: dict[str, int],
    scope: str,
) -> GraphStats:
    top_relations = sorted(relation_counts.items(), key=lambda kv: (-kv[1], kv[0].value))[:top]
    labels = kg.labels([p for p, _ in top_relations])
    return GraphStats(
        scope=scope,
        triples=sum(relation_counts.values()),
        entities=len(degrees),
        relations=len(relation_counts),
        literals=sum(literal_types.values()),
        labelled_entities=labelled,
        label_languages=label_languages,
        literal_types=dict(sorted(literal_types.items(), key=lambda kv: -kv[1])),
        top_relations=[(p.value, kg.pick_label(p, labels[p]), n) for p, n in top_relations],
        rules_by_kind={kind.value.removeprefix(KGS).lower(): int(n.value) for kind, n in kg.select(_RULES)},
        degree=_degree_summary(degrees),
    )
