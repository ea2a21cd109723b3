"""Endpoint options: the graph to query (``default-graph-uri``), retries with backoff, and
how SPARQL JSON terms (Virtuoso's among them) become pyoxigraph terms.

The named-graph tests run against the real ``oxigraph serve`` fixture. The retry tests talk
to ``FakeFlakySparqlServer`` (tests/sparql_fakes.py), a FAULT INJECTOR for error handling
only, whose good answer is canned. Backoffs are hundredths of a second here (parameters):
the schedule is checked, not waited for. Time bounds are lower bounds (a wait happened) or
generous upper ones (it was not the long one).
"""

from __future__ import annotations

import email.utils
import json
import random
import time
import urllib.parse
import urllib.request

import pyoxigraph as ox
import pytest
from conftest import DATA
from sparql_fakes import FakeFlakySparqlServer

from kgsynth.errors import EndpointError, QueryError
from kgsynth.kg import KnowledgeGraph
from kgsynth.kg._backends import EndpointBackend, _blank_label, _retry_after, _term
from kgsynth.queries import sample_subgraphs

GRAPH = "http://kgsynth.test/graph/handmade"
XSD = "http://www.w3.org/2001/XMLSchema#"
Q = "SELECT ?s WHERE { ?s ?p ?o }"


# ---------------------------------------------------------------------------- the graph to query
@pytest.fixture
def named(oxigraph_server, tmp_path):
    """The real server holding handmade.ttl in the named graph GRAPH, and one other triple
    in its default graph."""
    oxigraph_server.clear()
    request = urllib.request.Request(f"{oxigraph_server.base}/store?graph={urllib.parse.quote(GRAPH, safe='')}",
                                     data=(DATA / "handmade.ttl").read_bytes(), headers={"Content-Type": "text/turtle"},
                                     method="POST")
    urllib.request.urlopen(request, timeout=60).read()
    default = tmp_path / "default.ttl"
    default.write_text('<http://kgsynth.test/other> <http://www.w3.org/2000/01/rdf-schema#label> "Only in the default graph"@en .\n')
    oxigraph_server.load(default)
    yield oxigraph_server
    oxigraph_server.clear()


@pytest.fixture(scope="module")
def handmade() -> KnowledgeGraph:
    return KnowledgeGraph.load(DATA / "handmade.ttl", lang=("en", "ru"))


def test_without_a_graph_uri_the_named_graph_is_not_seen(named):
    kg = KnowledgeGraph.from_endpoint(named.query_url)
    assert len(kg) == 1
    assert kg.find("Alice") == [] and kg.find("Only in the default graph") == [ox.NamedNode("http://kgsynth.test/other")]


def test_a_graph_uri_queries_that_named_graph_alone(named, handmade):
    kg = KnowledgeGraph.from_endpoint(named.query_url, lang=("en", "ru"), graph_uri=GRAPH)
    assert kg.backend.description == f"SPARQL endpoint {named.query_url} (graph <{GRAPH}>)"
    assert len(kg) == len(handmade) and kg.stats() == handmade.stats()
    assert kg.find("Alice") == [ox.NamedNode("http://hand.example/alice")] and kg.find("Only in the default graph") == []
    local = [sg.model_dump() for sg in sample_subgraphs(handmade, "simple", limit=20, seed=3)]
    assert local and [sg.model_dump() for sg in sample_subgraphs(kg, "simple", limit=20, seed=3)] == local


def test_a_default_graph_uri_in_the_url_keeps_working(named, handmade):
    url = f"{named.query_url}?default-graph-uri={urllib.parse.quote(GRAPH, safe='')}"
    assert len(KnowledgeGraph.from_endpoint(url)) == len(handmade)
    same = KnowledgeGraph.from_endpoint(url, graph_uri=GRAPH)  # the same graph twice is no conflict
    assert len(same) == len(handmade) and same.backend.description == f"SPARQL endpoint {url}"
    with pytest.raises(EndpointError, match=r"names the default graph .*handmade \(default-graph-uri\), and the graph to query "
                                            r"is http://kgsynth\.test/graph/other: name it in one place$"):
        KnowledgeGraph.from_endpoint(url, graph_uri="http://kgsynth.test/graph/other")
    with pytest.raises(EndpointError, match="'not an iri' is not an absolute IRI"):
        KnowledgeGraph.from_endpoint(named.query_url, graph_uri="not an iri")


def test_the_graph_is_sent_as_the_protocols_default_graph_uri_parameter():
    with FakeFlakySparqlServer([]) as server:
        list(EndpointBackend(server.url, graph_uri=GRAPH).select(Q))
        list(EndpointBackend(server.url).select(Q))
        list(EndpointBackend(f"{server.url}?default-graph-uri={urllib.parse.quote(GRAPH)}", graph_uri=GRAPH).select(Q))
    sent = [urllib.parse.parse_qs(body) for body in server.bodies]
    assert [form.get("default-graph-uri") for form in sent] == [[GRAPH], None, None]  # the URL's own is not repeated
    assert all(form["query"] == [Q] for form in sent)


def test_graph_commands_take_graph_uri(named, handmade, capsys, tmp_path):
    from kgsynth.cli._app import run

    assert run(["graph", "stats", "--endpoint", named.query_url, "--graph-uri", GRAPH, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["triples"] == len(handmade)
    assert run(["graph", "stats", "--endpoint", named.query_url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["triples"] == 1
    out = tmp_path / "simple.jsonl"
    assert run(["graph", "subgraphs", "--endpoint", named.query_url, "--graph-uri", GRAPH, "--shape", "simple", "--limit", "5",
                "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 5


@pytest.mark.parametrize(("argv", "message"), [
    (["graph", "stats", str(DATA / "handmade.ttl"), "--graph-uri", GRAPH], "--graph-uri needs --endpoint"),
    (["graph", "stats", "--endpoint", "http://127.0.0.1:1/query", "--graph-uri", "people"], "--graph-uri 'people' is not an absolute IRI"),
    (["graph", "subgraphs", "--endpoint", "http://127.0.0.1:1/query?default-graph-uri=http://a/g", "--graph-uri", "http://b/g",
      "--shape", "simple"], "--graph-uri http://b/g differs from default-graph-uri=http://a/g in the --endpoint URL"),
    (["rules", "suggest", "--endpoint", "http://127.0.0.1:1/query", "--graph-uri", "x y", "--out", "{tmp}/r.ttl"],
     "--graph-uri 'x y' is not an absolute IRI"),
])
def test_a_bad_graph_uri_is_one_line(argv, message, capsys, tmp_path):
    from kgsynth.cli._app import run

    assert run([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err


# ---------------------------------------------------------------------------- retries
def _backend(server: FakeFlakySparqlServer, **fields) -> EndpointBackend:
    return EndpointBackend(server.url, **({"timeout": 2, "retries": 3, "backoff": 0.02, "max_backoff": 0.5} | fields))


def _select(backend: EndpointBackend) -> list[str]:
    return [row[0].value for row in backend.select(Q)]


def test_429_with_retry_after_waits_what_the_server_asks_then_succeeds():
    with FakeFlakySparqlServer(["429:0.3"]) as server:
        assert _select(_backend(server, backoff=5, max_backoff=2)) == ["http://x/a"]  # 5 s drawn would be 2.5 s or more
    assert server.requests == 2
    assert 0.29 <= server.times[1] - server.times[0] < 2


def test_a_long_retry_after_is_capped():
    with FakeFlakySparqlServer(["503:120"]) as server:
        started = time.monotonic()
        assert _select(_backend(server, max_backoff=0.1)) == ["http://x/a"]
    assert server.requests == 2 and time.monotonic() - started < 5


def test_503_twice_then_success_backs_off_exponentially():
    with FakeFlakySparqlServer(["503", "503"]) as server:
        assert _select(_backend(server, backoff=0.1)) == ["http://x/a"]
    assert server.requests == 3
    first, second = server.times[1] - server.times[0], server.times[2] - server.times[1]
    assert first >= 0.05 and second >= 0.1  # at least half of 0.1 s, then of 0.2 s


@pytest.mark.parametrize("status", ["500", "502", "504"])
def test_a_server_error_every_time_is_one_line_naming_the_attempts(status):
    reason = {"500": "Internal Server Error", "502": "Bad Gateway", "504": "Gateway Timeout"}[status]
    with FakeFlakySparqlServer([], then=status) as server:
        with pytest.raises(EndpointError) as caught:
            _select(_backend(server, retries=2))
    assert str(caught.value) == (f"SPARQL endpoint {server.url} answered with an error: HTTP {status} {reason}: fault {status} "
                                 "(gave up after 3 attempts)")
    assert server.requests == 3


def test_retries_zero_is_one_attempt_and_says_nothing_of_attempts():
    with FakeFlakySparqlServer([], then="503") as server, pytest.raises(EndpointError) as caught:
        _select(_backend(server, retries=0))
    assert server.requests == 1
    assert str(caught.value) == f"SPARQL endpoint {server.url} answered with an error: HTTP 503 Service Unavailable: fault 503"


@pytest.mark.parametrize("answer", ["renamed", "renamed_xml"])
def test_an_answer_of_other_variables_than_the_querys_is_one_line(answer):
    with FakeFlakySparqlServer([answer]) as server, pytest.raises(EndpointError) as caught:
        _backend(server).select("SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s")
    assert str(caught.value) == (f"SPARQL endpoint {server.url} answered a query for ?s, ?n with the variables ?thing: "
                                 "the server did not run the query as sent")


def test_a_bad_query_is_never_retried():
    with FakeFlakySparqlServer(["400"]) as server, pytest.raises(QueryError) as caught:
        _select(_backend(server))
    assert server.requests == 1
    assert str(caught.value) == f"SPARQL endpoint {server.url} rejected the query: HTTP 400: Parse error: unexpected '}}'"


@pytest.mark.parametrize("status", ["401", "403", "404"])
def test_other_client_errors_are_not_retried(status):
    with FakeFlakySparqlServer([status]) as server, pytest.raises(EndpointError, match=f"answered with an error: HTTP {status} "):
        _select(_backend(server))
    assert server.requests == 1


def test_a_stall_past_the_deadline_is_retried_with_a_fresh_deadline():
    with FakeFlakySparqlServer(["stall"], stall_s=3) as server:
        started = time.monotonic()
        assert _select(_backend(server, timeout=0.5, retries=1)) == ["http://x/a"]
        elapsed = time.monotonic() - started
    assert server.requests == 2 and 0.5 <= elapsed < 2.5


def test_stalls_every_time_end_in_one_line_with_the_deadline_and_the_attempts():
    with FakeFlakySparqlServer([], then="stall", stall_s=3) as server, pytest.raises(EndpointError) as caught:
        _select(_backend(server, timeout=0.3, retries=1))
    assert str(caught.value) == f"SPARQL endpoint {server.url} sent no complete answer within 0.3 s (gave up after 2 attempts)"
    assert server.requests == 2


def test_a_dropped_connection_is_retried():
    with FakeFlakySparqlServer(["reset", "reset"]) as server:
        assert _select(_backend(server)) == ["http://x/a"]
    assert server.requests == 3
    with FakeFlakySparqlServer([], then="reset") as server, pytest.raises(EndpointError) as caught:
        _select(_backend(server, retries=1))
    assert str(caught.value).startswith(f"SPARQL endpoint {server.url} broke off ")
    assert str(caught.value).endswith("(gave up after 2 attempts)") and "\n" not in str(caught.value)


def test_an_answer_that_is_not_sparql_json_is_one_line_and_not_retried():
    with FakeFlakySparqlServer(["badjson"]) as server, pytest.raises(EndpointError) as caught:
        _select(_backend(server))
    assert str(caught.value) == f'SPARQL endpoint {server.url} did not return SPARQL JSON results: it sent application/sparql-results+json: {{"hello": "world"}}'
    assert server.requests == 1


def test_the_backoff_schedule_is_seeded_jittered_doubling_and_capped():
    def schedule(seed: int) -> list[float]:
        backend = EndpointBackend("http://127.0.0.1:1/sparql", backoff=1, max_backoff=5, seed=seed)
        return [backend._wait(attempt, None) for attempt in range(1, 6)]

    waits = schedule(0)
    assert waits == schedule(0) and waits != schedule(1)
    for attempt, wait in enumerate(waits, start=1):
        full = min(2 ** (attempt - 1), 5)
        assert full / 2 <= wait <= full
    backend = EndpointBackend("http://127.0.0.1:1/sparql", max_backoff=5)
    assert backend._wait(1, 2.5) == 2.5 and backend._wait(1, 60) == 5


def test_retry_after_reads_seconds_and_http_dates():
    assert _retry_after({"Retry-After": "7"}) == 7 and _retry_after({"Retry-After": " 0.5 "}) == 0.5
    assert _retry_after({}) is None and _retry_after({"Retry-After": "soon"}) is None and _retry_after({"Retry-After": "nan"}) is None
    assert _retry_after({"Retry-After": "-3"}) == 0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= _retry_after({"Retry-After": later}) <= 31


def test_graph_stats_retries_and_takes_retries_from_the_command_line(capsys):
    from kgsynth.cli._app import run

    with FakeFlakySparqlServer(["503"]) as server:
        assert run(["graph", "stats", "--endpoint", server.url, "--retries", "0"]) == 1
    assert server.requests == 1
    assert capsys.readouterr().err == f"error: SPARQL endpoint {server.url} answered with an error: HTTP 503 Service Unavailable: fault 503\n"
    with FakeFlakySparqlServer([], then="429") as server:
        assert run(["graph", "stats", "--endpoint", server.url, "--retries", "1", "--timeout", "5"]) == 1
    assert server.requests == 2
    assert capsys.readouterr().err.endswith("HTTP 429 Too Many Requests: fault 429 (gave up after 2 attempts)\n")


# ---------------------------------------------------------------------------- terms
def test_virtuoso_shaped_bindings_become_the_same_terms_as_the_w3c_ones():
    assert _term({"type": "uri", "value": "http://dbpedia.org/resource/Paris"}) == ox.NamedNode("http://dbpedia.org/resource/Paris")
    assert _term({"type": "typed-literal", "datatype": f"{XSD}integer", "value": "42"}) == ox.Literal("42", datatype=ox.NamedNode(f"{XSD}integer"))
    assert _term({"type": "literal", "datatype": f"{XSD}date", "value": "1999-01-02"}) == ox.Literal("1999-01-02", datatype=ox.NamedNode(f"{XSD}date"))
    assert _term({"type": "literal", "xml:lang": "en", "value": "Paris"}) == ox.Literal("Paris", language="en")
    assert _term({"type": "literal", "xml:lang": "ru", "value": "Париж"}) == ox.Literal("Париж", language="ru")
    assert _term({"type": "literal", "xml:lang": "EN-gb", "value": "colour"}).language == "en-gb"  # tags are case-insensitive
    plain = ox.Literal("just text")
    assert plain.datatype == ox.NamedNode(f"{XSD}string")
    for binding in ({"type": "literal", "value": "just text"}, {"type": "typed-literal", "datatype": f"{XSD}string", "value": "just text"},
                    {"type": "literal", "xml:lang": "", "value": "just text"}):
        assert _term(binding) == plain, binding
    assert _term(None) is None


def test_virtuoso_blank_node_ids_map_one_to_one():
    virtuoso = _term({"type": "bnode", "value": "nodeID://b10006"})
    assert virtuoso == ox.BlankNode("esc_nodeID_3a__2f__2f_b10006")
    assert _term({"type": "bnode", "value": "nodeID://b10006"}) == virtuoso  # the same id, the same node, in every query
    assert _term({"type": "bnode", "value": "b10006"}) == ox.BlankNode("b10006")  # a valid label is kept
    # ids the old character replacement sent to one label, and labels shaped like the escapes
    ids = ["nodeID://b10006", "nodeID://b10007", "nodeID:/b10006", "nodeID:://b10006", "nodeID___b10006", "nodeID_//b10006",
           "nodeID_3a__2f__2f_b10006", "esc_nodeID_3a__2f__2f_b10006", "esc_", "", "a:b", "a/b", "a_b", "a.b", "a b", "-a", "_a",
           "a_3a_b", "esc_a_3a_b", "é", "e\u0301", "ab", "AB"]
    labels = [_blank_label(i) for i in ids]
    assert len(set(labels)) == len(ids)
    for label in labels:
        ox.BlankNode(label)  # valid


def test_blank_label_is_injective_on_random_ids():
    rng = random.Random(7)
    alphabet = "ab_:/.-é 3fx" + "esc"
    ids = {"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(5000)}
    labels = {_blank_label(i) for i in ids}
    assert len(labels) == len(ids)


@pytest.mark.parametrize("binding", [
    {"type": "uri", "value": "http://x/a b"},
    {"type": "literal", "xml:lang": "en_US", "value": "x"},
    {"type": "triple", "value": {"subject": {"type": "uri", "value": "http://x/a"}}},
    {"value": "no type"},
])
def test_a_term_pyoxigraph_cannot_hold_is_one_line_naming_it(binding):
    backend = EndpointBackend("http://127.0.0.1:1/sparql")
    with pytest.raises(EndpointError) as caught:
        list(backend._rows(("x",), [{"x": binding}]))
    message = str(caught.value)
    assert message.startswith("SPARQL endpoint http://127.0.0.1:1/sparql returned a term kgsynth cannot read, ?x = {")
    assert "\n" not in message and json.dumps(binding, ensure_ascii=False)[:40] in message
