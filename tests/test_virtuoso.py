"""Virtuoso 7 (Debian's virtuoso-opensource) as a second real SPARQL engine: on the demo graph and
on FB15k-237, graph stats and sampled subgraphs are the embedded store's, `kgsynth graph subgraphs`
writes the same bytes from the files, from `oxigraph serve` and from Virtuoso, and a dataset
synthesized from Virtuoso is the embedded store's. Skipped where Virtuoso is not installed."""

from __future__ import annotations

import pytest
from conftest import DEMO, FB15K, ROOT, ntriples
from typer.testing import CliRunner

from kgsynth.cli import app
from kgsynth.errors import EndpointError
from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize
from kgsynth.queries import _extract, sample_subgraphs

RULES = ROOT / "data" / "rules" / "fb15k237_rules.ttl"
SHAPES = [("simple", {}), ("set", {}), ("conditional", {}), ("multihop", {"hops": 2}), ("multihop", {"hops": 3}),
          ("multihop", {"hops": 4}), ("multihop_set", {}), ("comparison", {}), ("rule_application", {})]
# name: (named graph in Virtuoso, files, label languages, subgraphs sampled per shape)
GRAPHS = {
    "demo": ("urn:kgsynth:test:demo", lambda: sorted(DEMO.glob("*.ttl")), ("en", "ru"), 200),
    "fb15k237": ("urn:kgsynth:test:fb15k237", lambda: [FB15K, RULES], ("en",), 100),
}
# multihop_set on FB15k-237 takes Virtuoso about 15 s a test: run with -m slow
HEAVY = {("fb15k237", "multihop_set")}


def _cases() -> list:
    cases = []
    for graph in GRAPHS:
        for shape, kwargs in SHAPES:
            case = f"{graph}-{shape}{kwargs.get('hops', '')}"
            marks = [pytest.mark.slow] if (graph, shape) in HEAVY else []
            cases.append(pytest.param(graph, shape, kwargs, id=case, marks=marks))
    return cases


class Engines:
    """Each graph once per module: its files, the embedded store, Virtuoso's URL and graph, and
    which graph `oxigraph serve` holds (the server is shared with test_endpoint.py)."""

    def __init__(self, virtuoso, oxigraph, folder):
        self.virtuoso, self.oxigraph, self.folder = virtuoso, oxigraph, folder
        self.loaded: dict[str, tuple] = {}
        self.in_oxigraph: str | None = None

    def get(self, name: str) -> tuple[list, KnowledgeGraph, str, KnowledgeGraph]:
        if name not in self.loaded:
            if name == "fb15k237" and not FB15K.exists():
                pytest.skip("../shared/external/fb15k237 is not present")
            graph, files, lang, _ = GRAPHS[name]
            files = files()
            url = self.virtuoso.load(graph, *files)
            virtuoso = KnowledgeGraph.from_endpoint(url, lang=lang, retries=0)  # a local server: no error is passing
            self.loaded[name] = (files, KnowledgeGraph.load(*files, lang=lang), url, virtuoso)
        return self.loaded[name]

    def oxigraph_url(self, name: str) -> str:
        if self.in_oxigraph != name:
            nt = self.folder / f"{name}.nt"
            ntriples(self.get(name)[0], nt)
            self.oxigraph.clear()
            self.oxigraph.load(nt, "application/n-triples")
            nt.unlink()  # FB15k-237's is 65 MB
            self.in_oxigraph = name
        return self.oxigraph.query_url


@pytest.fixture(scope="module")
def engines(virtuoso_server, oxigraph_server, tmp_path_factory):
    return Engines(virtuoso_server, oxigraph_server, tmp_path_factory.mktemp("engines"))


@pytest.mark.parametrize("graph", ["demo", "fb15k237"])
def test_stats_match(engines, graph):
    _, embedded, _, virtuoso = engines.get(graph)
    assert virtuoso.is_remote and virtuoso.stats() == embedded.stats()


@pytest.mark.parametrize(("graph", "shape", "kwargs"), _cases())
def test_sampling_matches_embedded(engines, graph, shape, kwargs):
    _, embedded, _, virtuoso = engines.get(graph)
    limit = GRAPHS[graph][3]
    local = [sg.model_dump() for sg in sample_subgraphs(embedded, shape, limit=limit, seed=5, **kwargs)]
    assert len(local) == limit, f"only {len(local)} {shape} subgraphs in {graph}"
    remote = [sg.model_dump() for sg in sample_subgraphs(virtuoso, shape, limit=limit, seed=5, **kwargs)]
    first = next((i for i, (a, b) in enumerate(zip(local, remote, strict=False)) if a != b), None)
    assert remote == local, f"{len(remote)} subgraphs from Virtuoso, {len(local)} embedded; the first to differ: #{first}"


def test_a_relation_read_in_part_samples_the_same(engines, monkeypatch):
    """Of a relation too large to read whole, the part the seed draws is the same on Virtuoso
    (the engine computes the subjects' MD5s)."""
    _, embedded, _, virtuoso = engines.get("demo")
    monkeypatch.setattr(_extract, "RELATION_FACTS", 20)
    local = [sg.model_dump() for sg in sample_subgraphs(embedded, "comparison", limit=100, seed=1)]
    assert len(local) == 100
    assert [sg.model_dump() for sg in sample_subgraphs(virtuoso, "comparison", limit=100, seed=1)] == local


@pytest.mark.parametrize(("graph", "shape", "kwargs"), _cases())
def test_cli_writes_the_same_bytes_on_three_engines(engines, tmp_path, graph, shape, kwargs):
    files, _, virtuoso_url, _ = engines.get(graph)
    options = ["--shape", shape, "--limit", "40", "--seed", "3", *(["--hops", str(kwargs["hops"])] if kwargs else [])]
    sources = {
        "embedded": [str(f) for f in files],
        "oxigraph": ["--endpoint", engines.oxigraph_url(graph)],
        "virtuoso": ["--endpoint", virtuoso_url],
    }
    written = {}
    for engine, source in sources.items():
        out = tmp_path / f"{engine}.jsonl"
        result = CliRunner().invoke(app, ["graph", "subgraphs", *source, *options, "--out", str(out)])
        assert result.exit_code == 0, f"{engine}: {result.output} {result.exception!r}"
        written[engine] = out.read_bytes()
    assert written["embedded"].count(b"\n") == 40
    assert written["oxigraph"] == written["embedded"]
    assert written["virtuoso"] == written["embedded"]


def test_synthesis_from_virtuoso_writes_the_same_items(engines, tmp_path):
    _, embedded, _, virtuoso = engines.get("demo")
    config = SynthConfig.model_validate({"dataset": {"n": 40}})
    synthesize(embedded, config, tmp_path / "embedded")
    synthesize(virtuoso, config, tmp_path / "virtuoso")
    items = (tmp_path / "embedded" / "items.jsonl").read_bytes()
    assert items.count(b"\n") > 100
    assert (tmp_path / "virtuoso" / "items.jsonl").read_bytes() == items


def test_an_answer_cut_at_the_servers_row_limit_is_an_error(engines, virtuoso_server):
    """Virtuoso cuts an answer at ResultSetMaxRows with HTTP 200 and a header: sampling on from
    it would miss facts without a word, so it is one line naming the limit instead."""
    _, embedded, _, virtuoso = engines.get("demo")
    cap = virtuoso_server.max_rows
    pairs = f"SELECT ?a ?b WHERE {{ ?a a ?c . ?b a ?d }} LIMIT {cap + 1}"
    assert len(list(embedded.select(pairs))) == cap + 1  # the demo has that many pairs to give
    with pytest.raises(EndpointError, match=rf"cut its answer at its row limit \(X-SPARQL-MaxRows: {cap}\).*ResultSetMaxRows"):
        list(virtuoso.select(pairs))
    # an answer of exactly the limit is flagged too (Virtuoso cannot tell there was no more); one row less is not
    assert len(list(virtuoso.select(f"SELECT ?a ?b WHERE {{ ?a a ?c . ?b a ?d }} LIMIT {cap - 1}"))) == cap - 1
