"""networkx views of a KnowledgeGraph for notebooks: whole graph, neighbourhoods, drawing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx
import pyoxigraph as ox

if TYPE_CHECKING:
    from kgsynth.kg._graph import KnowledgeGraph

_EDGES = "SELECT ?s ?p ?o WHERE { #VALUES\n ?s ?p ?o . }"  # bound on ?s (out) or ?o (in)
_ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
_ROLE_COLOURS = {"answer": "#2ca02c", "mention": "#1f77b4", "hidden": "#ff7f0e", "rule": "#9467bd"}


def _add_edges(kg: KnowledgeGraph, graph: nx.MultiDiGraph, triples: list[tuple]) -> None:
    labels = kg.labels({t for triple in triples for t in triple})
    for s, p, o in triples:
        for node in (s, o):
            if str(node) not in graph:
                kind = "literal" if isinstance(node, ox.Literal) else "entity"
                graph.add_node(str(node), label=kg.pick_label(node, labels[node]), kind=kind)
        graph.add_edge(str(s), str(o), key=p.value, relation=p.value, label=kg.pick_label(p, labels[p]))


def whole_graph(kg: KnowledgeGraph, include_literals: bool) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    triples = [t for t in kg.select(_ALL) if include_literals or not isinstance(t[2], ox.Literal)]
    _add_edges(kg, graph, triples)
    return graph


def neighborhood(kg: KnowledgeGraph, entity: ox.NamedNode, hops: int, max_edges: int) -> nx.MultiDiGraph:
    """Breadth-first over SPARQL (works on endpoints too), stopping at ``max_edges`` edges."""
    graph = nx.MultiDiGraph()
    seen = {entity}
    frontier = [entity]
    triples: list[tuple] = []
    for _ in range(hops):
        anchors = [(n,) for n in sorted(frontier, key=str) if isinstance(n, ox.NamedNode)]
        if not anchors or len(triples) >= max_edges:
            break
        edges = {*kg.select(_EDGES, (("s",), anchors)), *kg.select(_EDGES, (("o",), anchors))}
        found = sorted(edges - set(triples), key=str)[: max_edges - len(triples)]
        triples.extend(found)
        frontier = [n for s, _, o in found for n in (s, o) if n not in seen]
        seen.update(frontier)
    _add_edges(kg, graph, triples)
    if str(entity) in graph:
        graph.nodes[str(entity)]["role"] = "mention"
    return graph


def draw(graph: nx.MultiDiGraph, ax=None, seed: int = 0, node_size: int = 900, font_size: int = 8):
    """Draw with matplotlib: nodes coloured by ``role`` (answer, mention, hidden), edges labelled."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 6))
    pos = nx.spring_layout(graph, seed=seed)
    colours = [_ROLE_COLOURS.get(graph.nodes[n].get("role"), "#c7c7c7") for n in graph.nodes]
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_color=colours, node_size=node_size, alpha=0.9)
    nx.draw_networkx_labels(graph, pos, ax=ax, labels=nx.get_node_attributes(graph, "label"), font_size=font_size)
    nx.draw_networkx_edges(graph, pos, ax=ax, arrows=True, node_size=node_size, connectionstyle="arc3,rad=0.08")
    edge_labels = {(u, v): d["label"] for u, v, d in graph.edges(data=True)}
    nx.draw_networkx_edge_labels(graph, pos, ax=ax, edge_labels=edge_labels, font_size=font_size - 1)
    ax.set_axis_off()
    return ax
