"""The networkx view: whole graph, neighbourhoods over SPARQL, drawing a subgraph."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pyoxigraph as ox  # noqa: E402

from kgsynth.queries import enumerate_subgraphs  # noqa: E402

ALICE = "http://hand.example/alice"


def test_to_networkx_has_every_triple_with_labels(handmade_kg):
    graph = handmade_kg.to_networkx()
    assert graph.number_of_edges() == len(handmade_kg)
    assert graph.nodes[f"<{ALICE}>"]["label"] == "Alice"


def test_neighborhood_grows_with_hops(handmade_kg):
    one = handmade_kg.neighborhood(ALICE, hops=1)
    two = handmade_kg.neighborhood(ox.NamedNode(ALICE), hops=2)
    labels_one = {d["label"] for _, d in one.nodes(data=True)}
    assert {"Alice", "Acme", "Bob", "Carol", "5000"} <= labels_one and "Paris" not in labels_one
    assert "Paris" in {d["label"] for _, d in two.nodes(data=True)}
    assert one.nodes[f"<{ALICE}>"]["role"] == "mention"
    assert handmade_kg.neighborhood(ALICE, hops=2, max_edges=3).number_of_edges() == 3


def test_draw_a_subgraph_marks_roles(handmade_kg, tmp_path):
    sg = next(s for s in enumerate_subgraphs(handmade_kg, "multihop", hops=3))
    graph = sg.to_networkx()
    roles = {d["role"] for _, d in graph.nodes(data=True)}
    assert {"answer", "hidden"} <= roles
    ax = handmade_kg.draw(sg)
    ax.figure.savefig(tmp_path / "sg.png")
    assert (tmp_path / "sg.png").stat().st_size > 5000 and len(ax.texts) >= graph.number_of_nodes()
