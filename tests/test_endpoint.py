"""The remote-endpoint path against a real `oxigraph serve` on 127.0.0.1 gives the same
results as the embedded store."""

from __future__ import annotations

import pytest
from conftest import DATA, DEMO, _free_port

from kgsynth.errors import EndpointError, KgsynthError, QueryError
from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import enumerate_subgraphs, sample_subgraphs

SHAPES = [("simple", {}), ("set", {}), ("conditional", {}), ("multihop", {"hops": 2}), ("multihop", {"hops": 3}),
          ("multihop", {"hops": 4}), ("comparison", {}), ("rule_application", {})]


@pytest.fixture(scope="module", params=["handmade", "demo"])
def both(request, oxigraph_server):
    """(embedded, remote) graphs over the same data."""
    if request.param == "handmade":
        files = [DATA / "handmade.ttl"]
    else:
        files = sorted(DEMO.glob("*.ttl"))
    oxigraph_server.clear()
    for path in files:
        oxigraph_server.load(path)
    yield KnowledgeGraph.load(*files, lang=("en", "ru")), KnowledgeGraph.from_endpoint(oxigraph_server.query_url, lang=("en", "ru"))


def test_stats_match(both):
    embedded, remote = both
    assert remote.is_remote and remote.stats() == embedded.stats()


@pytest.mark.parametrize(("shape", "kwargs"), SHAPES)
def test_sampling_matches_embedded(both, shape, kwargs):
    embedded, remote = both
    local = [sg.model_dump() for sg in sample_subgraphs(embedded, shape, limit=60, seed=5, **kwargs)]
    assert local, f"no {shape} subgraphs in the test data"
    assert [sg.model_dump() for sg in sample_subgraphs(remote, shape, limit=60, seed=5, **kwargs)] == local


@pytest.mark.parametrize(("shape", "kwargs"), SHAPES)
def test_enumeration_matches_embedded(both, shape, kwargs):
    embedded, remote = both
    local = sorted(sg.id for sg in enumerate_subgraphs(embedded, shape, limit=3000, **kwargs))
    remote_ids = sorted(sg.id for sg in enumerate_subgraphs(remote, shape, limit=3000, **kwargs))
    if len(local) < 3000:  # a complete enumeration: the same set; a truncated one: same size
        assert remote_ids == local
    else:
        assert len(remote_ids) == 3000


def test_labels_and_find_work_remotely(both):
    embedded, remote = both
    some = [sg.mention[0].term() for sg in sample_subgraphs(embedded, "simple", limit=20, seed=1)]
    assert remote.labels(some) == embedded.labels(some)
    label = embedded.label(some[0])
    assert remote.find(label) == embedded.find(label)


def test_endpoint_errors_are_one_line(oxigraph_server):
    with pytest.raises(EndpointError, match="cannot reach SPARQL endpoint"):
        KnowledgeGraph.from_endpoint(f"http://127.0.0.1:{_free_port()}/query")
    remote = KnowledgeGraph.from_endpoint(oxigraph_server.query_url)
    with pytest.raises(QueryError):
        list(remote.select("SELECT ?x WHERE { ?x ?y }"))
    with pytest.raises(KgsynthError, match="read-only"):
        remote.add(DATA / "handmade.ttl")
