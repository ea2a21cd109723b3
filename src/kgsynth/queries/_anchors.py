"""Where anchored sampling starts: by default every entity a template can start from
(found by a query over the whole graph), or, on a graph too large for that, the members
of one class or what a SELECT query lists, read in pages."""

from __future__ import annotations

import re

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict, Field, model_validator

from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph, Term
from kgsynth.kg._terms import anchor_class_iri
from kgsynth.queries._templates import load_template

# a query that limits or offsets its own results is read as it is, in one request
_PAGED_ALREADY = re.compile(r"\b(LIMIT|OFFSET)\s+\d+\s*$", re.IGNORECASE)
_CLASS_MEMBERS = "SELECT ?e WHERE {{ ?e a {cls} . FILTER(isIRI(?e)) }}"
_CLASS_COUNT = "SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE {{ ?e a {cls} . FILTER(isIRI(?e)) }}"


class Anchors(BaseModel):
    """Anchors restricted to the members of ``anchor_class`` or to the IRIs in the first
    column of ``anchors_query`` (a SPARQL SELECT), read ``page_size`` rows per request. No
    query then runs over the whole graph to find anchors."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    anchor_class: str | None = Field(None, description="an IRI: sample around the members (rdf:type) of this class")
    anchors_query: str | None = Field(None, description="a SPARQL SELECT whose first variable lists the anchor entities")
    page_size: int = Field(10_000, ge=1, description="rows per request when the anchors are read in pages")

    @model_validator(mode="after")
    def _one_source(self) -> Anchors:
        if (self.anchor_class is None) == (self.anchors_query is None):
            raise ValueError("give anchor_class or anchors_query, not both or neither")
        return self


def anchor_population(kg: KnowledgeGraph, template_population: str, anchors: Anchors | None) -> list[Term]:
    """The candidate anchors, sorted (so a seed picks the same ones on every engine) and kept
    with the graph: the template's own population query, or the restricted ones."""
    if anchors is None:
        return kg.memo(("anchor population", template_population), lambda: _whole_graph(kg, template_population))
    return kg.memo(("anchor population", anchors), lambda: _restricted(kg, anchors))


def _whole_graph(kg: KnowledgeGraph, name: str) -> list[Term]:
    rows = kg.select(load_template(name).text)
    return sorted((row[0] for row in rows if isinstance(row[0], ox.NamedNode)), key=str)


def _restricted(kg: KnowledgeGraph, anchors: Anchors) -> list[Term]:
    if anchors.anchor_class is not None:
        cls = str(anchor_class_iri(anchors.anchor_class))
        found = _paged(kg, _CLASS_MEMBERS.format(cls=cls), anchors.page_size)
        (count,) = next(iter(kg.select(_CLASS_COUNT.format(cls=cls))))
        if len(found) != int(count.value):  # pages without ORDER BY are the server's order: it changed
            raise KgsynthError(f"{kg.backend.description}: read {len(found):,} members of {anchors.anchor_class} in pages, "
                               f"the server counts {int(count.value):,}; the graph changed while it was read, try again")
        where = f"class {anchors.anchor_class}"
    else:
        found = _paged(kg, anchors.anchors_query, anchors.page_size)
        where = "the anchors query"
    if not found:
        raise KgsynthError(f"{where} lists no entity (IRI) in {kg.backend.description}")
    return sorted(found, key=str)


def _paged(kg: KnowledgeGraph, query: str, page_size: int) -> set[Term]:
    """The IRIs in the first column of every page of ``query``. The offset moves by the rows
    a page returned (a server may return fewer than asked: Virtuoso's ResultSetMaxRows), and
    reading stops at an empty page."""
    if _PAGED_ALREADY.search(query.strip()):
        return _iris(kg.select(query))
    found: set[Term] = set()
    offset = 0
    while True:
        rows = list(kg.select(f"{query.rstrip()}\nLIMIT {page_size} OFFSET {offset}"))
        if not rows:
            return found
        found |= _iris(rows)
        offset += len(rows)


def _iris(rows) -> set[Term]:
    return {row[0] for row in rows if isinstance(row[0], ox.NamedNode)}
