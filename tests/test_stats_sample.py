"""`graph stats --sample N`: statistics of N entities and the facts out of them, for servers too
large to scan. The figures are checked against counts made here from the store's triples, the
whole-graph statistics where both cover the same facts, and on the Oxigraph server and Virtuoso;
and no query sent aggregates over the whole store."""

from __future__ import annotations

import collections
import json
import statistics

import pyoxigraph as ox
import pytest
from conftest import DEMO
from typer.testing import CliRunner

from kgsynth.cli import app
from kgsynth.errors import KgsynthError, QueryError
from kgsynth.kg import EndpointBackend, KnowledgeGraph, OxigraphBackend, Rows
from kgsynth.kg.vocab import KGS, LABEL_PREDICATES, RDF, XSD

ORDER = "https://kgsynth.example/demo/Order"
FIRST_SUBJECTS = "SELECT DISTINCT ?e WHERE { ?e ?p ?o FILTER(isIRI(?e)) } LIMIT %d"
ALL = 10**6  # more than the demo's entities
# out-facts-derived fields that a sample of every subject shares with the whole graph's statistics
SHARED = ("triples", "relations", "literals", "labelled_entities", "label_languages", "literal_types", "top_relations",
          "rules_by_kind")


@pytest.fixture(scope="module")
def demo() -> KnowledgeGraph:
    return KnowledgeGraph.load(DEMO, lang=("en", "ru"))


def _triples(kg: KnowledgeGraph) -> set[ox.Triple]:
    return {quad.triple for quad in kg.backend.store}


def _short(datatype: str) -> str:
    return datatype.replace(XSD, "xsd:").replace(RDF, "rdf:")


def _expected(kg: KnowledgeGraph, entities: set[ox.NamedNode]) -> dict:
    """The sampled figures, counted from the store's triples (not with kgsynth's queries)."""
    triples = _triples(kg)
    out = [t for t in triples if t.subject in entities]
    relations = collections.Counter(t.predicate.value for t in out)
    literals = [t.object for t in out if isinstance(t.object, ox.Literal)]
    labels = [t for t in out if t.predicate.value in LABEL_PREDICATES]
    languages = collections.Counter(lang for _, lang in {(t.subject, t.object.language or '""') for t in labels})
    degree = collections.Counter(t.subject for t in out)
    degree.update(t.object for t in triples if t.object in entities)
    top = sorted(relations.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    return {
        "entities": len(entities),
        "triples": len(out),
        "relations": len(relations),
        "literals": len(literals),
        "literal_types": dict(collections.Counter(_short(lit.datatype.value) for lit in literals)),
        "labelled_entities": len({t.subject for t in labels}),
        "label_languages": dict(languages),
        "top_relations": [list(kv) for kv in top],
        "degrees": sorted(degree[e] for e in entities),
    }


def _actual(stats) -> dict:
    figures = stats.model_dump(include={"entities", "triples", "relations", "literals", "literal_types",
                                        "labelled_entities", "label_languages"})
    figures["top_relations"] = [[iri, n] for iri, _, n in stats.top_relations]
    return figures


def _check(kg: KnowledgeGraph, stats, entities: set[ox.NamedNode]) -> None:
    expected = _expected(kg, entities)
    degrees = expected.pop("degrees")
    assert _actual(stats) == expected
    d = stats.degree
    assert (d.min, d.max, d.median, sum(d.histogram.values())) == (min(degrees), max(degrees), statistics.median(degrees), len(degrees))
    assert d.mean == round(statistics.fmean(degrees), 3)


@pytest.mark.parametrize("n", [1, 37, 300])
def test_sampled_subjects_match_counts_made_from_the_triples(demo, n):
    stats = demo.stats(sample=n)
    entities = {row[0] for row in demo.select(FIRST_SUBJECTS % n)}
    assert len(entities) == n
    _check(demo, stats, entities)
    assert stats.scope == f"{n:,} entities: the first subjects (IRIs) the server returned, and their facts"
    assert stats.rules_by_kind == demo.stats().rules_by_kind  # always the whole graph's


def test_sampled_class_members_match_counts_made_from_the_triples(demo):
    members = {t.subject for t in _triples(demo) if t.predicate.value == RDF + "type" and t.object == ox.NamedNode(ORDER)}
    whole_class = demo.stats(sample=ALL, anchor_class=ORDER)
    _check(demo, whole_class, members)
    assert whole_class.scope == (f"{len(members)} entities: the first members of class {ORDER} the server returned "
                                 f"({ALL:,} asked), and their facts")
    some = demo.stats(sample=20, anchor_class=f"<{ORDER}>")  # the Turtle/SPARQL form is read too
    first = {row[0] for row in demo.select(f"SELECT ?e WHERE {{ ?e a <{ORDER}> }} LIMIT 20")}
    assert first < members
    _check(demo, some, first)


def test_a_sample_of_every_subject_has_the_whole_graphs_out_fact_figures(demo):
    """Blank nodes cannot be bound in a query, so they are never sampled: on the demo without
    them, a sample of every subject counts the whole graph's facts; with them, all but theirs."""
    store = ox.Store()
    store.extend(ox.Quad(t.subject, t.predicate, t.object)
                 for t in _triples(demo) if not isinstance(t.subject, ox.BlankNode) and not isinstance(t.object, ox.BlankNode))
    plain = KnowledgeGraph(OxigraphBackend(store), lang=demo.lang)
    whole, sampled = plain.stats(), plain.stats(sample=ALL)
    assert sampled.model_dump(include=set(SHARED)) == whole.model_dump(include=set(SHARED))
    assert whole.scope == "the whole graph" and sampled.entities == len({t.subject for t in _triples(plain)})

    blank_facts = [t for t in _triples(demo) if isinstance(t.subject, ox.BlankNode)]
    assert blank_facts
    assert demo.stats(sample=ALL).triples == demo.stats().triples - len(blank_facts)


def test_the_same_entities_in_another_order_give_the_same_figures(demo, monkeypatch):
    """'The first N' is the server's order; the figures do not depend on the order it lists them in."""
    before = demo.stats(sample=200).model_dump()
    select = demo.backend.select

    def reversed_sample(query: str) -> Rows:
        result = select(query)
        return Rows(result.variables, iter(list(result)[::-1])) if query.startswith("SELECT DISTINCT ?e") else result

    monkeypatch.setattr(demo.backend, "select", reversed_sample)
    assert demo.stats(sample=200).model_dump() == before


def _is_scan(query: str) -> bool:
    """An aggregate over the whole store: counted or grouped without a VALUES block (the rules query
    reads kgs:Rule members only)."""
    aggregate = "COUNT(" in query or "GROUP BY" in query
    return aggregate and "VALUES" not in query and f"<{KGS}Rule>" not in query


def _check_sent(sent: list[str]) -> None:
    assert sent and not [q for q in sent if _is_scan(q)]
    # the rest: the first-N query (LIMIT), counts per batch, and the labels of the top relations
    for query in sent:
        assert "LIMIT" in query or "COUNT(" in query or query.startswith("SELECT ?e ?p ?l"), query


def _record(run) -> list[str]:
    kg = KnowledgeGraph.load(DEMO)
    sent: list[str] = []
    select = kg.backend.select
    kg.backend.select = lambda query: sent.append(query) or select(query)
    run(kg)
    return sent


def test_a_sample_sends_no_query_over_the_whole_store():
    assert any(_is_scan(q) for q in _record(lambda kg: kg.stats()))  # the check can fail
    _check_sent(_record(lambda kg: kg.stats(sample=500)))
    _check_sent(_record(lambda kg: kg.stats(sample=500, anchor_class=ORDER)))


def test_errors(demo):
    with pytest.raises(QueryError, match="give 1 or more"):
        demo.stats(sample=0)
    with pytest.raises(QueryError, match="anchor class 'Order' is not an IRI"):
        demo.stats(sample=5, anchor_class="Order")
    with pytest.raises(QueryError, match="needs a sample size"):
        demo.stats(anchor_class=ORDER)
    with pytest.raises(KgsynthError, match="has no member"):
        demo.stats(sample=5, anchor_class="https://kgsynth.example/demo/NoSuchClass")
    runner = CliRunner()
    for argv, said in [
        (["--sample", "0"], "Invalid value for '--sample'"),
        (["--sample", "-3"], "Invalid value for '--sample'"),
        (["--sample", "5", "--anchor-class", "not an iri"], "anchor class 'not an iri' is not an IRI"),
        (["--anchor-class", ORDER], "--anchor-class needs --sample N"),
    ]:
        result = runner.invoke(app, ["graph", "stats", str(DEMO), *argv])
        message = result.output + str(result.exception or "")
        assert result.exit_code != 0 and said in message, message
        assert "Traceback" not in message


def test_cli_on_files(demo):
    runner = CliRunner()
    result = runner.invoke(app, ["graph", "stats", str(DEMO), "--sample", "40", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == demo.stats(sample=40).model_dump(mode="json")
    table = runner.invoke(app, ["graph", "stats", str(DEMO), "--sample", "40", "--anchor-class", ORDER])
    assert table.exit_code == 0, table.output
    assert "40 entities: the first members of class" in " ".join(table.output.split()) and "degree" in table.output
    whole = runner.invoke(app, ["graph", "stats", str(DEMO), "--json"])
    assert json.loads(whole.output)["scope"] == "the whole graph"


@pytest.fixture(scope="module")
def demo_on_oxigraph(oxigraph_server) -> str:
    oxigraph_server.clear()
    for path in sorted(DEMO.glob("*.ttl")):
        oxigraph_server.load(path)
    return oxigraph_server.query_url


def test_cli_on_the_oxigraph_server(demo, demo_on_oxigraph, monkeypatch):
    sent: list[str] = []
    select = EndpointBackend.select
    monkeypatch.setattr(EndpointBackend, "select", lambda self, query: sent.append(query) or select(self, query))
    runner = CliRunner()
    for options in (["--sample", str(ALL)], ["--sample", "1000", "--anchor-class", ORDER]):
        result = runner.invoke(app, ["graph", "stats", "--endpoint", demo_on_oxigraph, *options, "--json"])
        assert result.exit_code == 0, result.output
        local = demo.stats(sample=int(options[1]), anchor_class=options[3] if len(options) > 2 else None)
        assert json.loads(result.output) == local.model_dump(mode="json")
    result = runner.invoke(app, ["graph", "stats", "--endpoint", demo_on_oxigraph, "--sample", "25", "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["entities"] == 25
    _check_sent(sent)


def test_virtuoso_samples_as_the_embedded_store(demo, virtuoso_server):
    url = virtuoso_server.load("urn:kgsynth:test:demo", *sorted(DEMO.glob("*.ttl")))  # test_virtuoso.py's graph
    virtuoso = KnowledgeGraph.from_endpoint(url, lang=demo.lang, retries=0)
    assert virtuoso.stats(sample=ALL) == demo.stats(sample=ALL)
    assert virtuoso.stats(sample=ALL, anchor_class=ORDER) == demo.stats(sample=ALL, anchor_class=ORDER)
    some = virtuoso.stats(sample=30)
    assert some.entities == 30 and some.scope.startswith("30 entities")
