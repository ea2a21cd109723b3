"""The contamination check at the level of facts (kgsynth.ingest.wikidata) against a real
SPARQL server, ``oxigraph serve``, holding a small Wikidata-shaped graph
(tests/data/wikidata_shaped.ttl): known / contradicts / novel, aliases in English and Russian,
a date and a number within tolerance, a deprecated statement, a property read backwards,
namesakes; HTTP 429 with Retry-After (a FAULT INJECTOR in front of the server), the
User-Agent, the cache; an endpoint that is down or slow; and a whole `kgsynth ingest` run.

The expected labels are worked examples of the rules in the module's docstring, read off
the small graph by hand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, ROOT, OxigraphServer, _free_port
from llm_fault_injector import FaultInjectingServer
from sparql_fakes import FakeFlakySparqlServer, FakeRateLimitGate

from kgsynth.ingest import IngestConfig, ObjectKind, ingest
from kgsynth.ingest.wikidata import Claim, Contamination, WikidataCheck
from kgsynth.kg import EndpointBackend, KnowledgeGraph

AGENT = "kgsynth-tests/1 (tests/test_wikidata.py)"
E, N, D, T = ObjectKind.entity, ObjectKind.number, ObjectKind.date, ObjectKind.text


@pytest.fixture(scope="module")
def wikidata():
    binary = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    server = OxigraphServer(binary)
    server.load(DATA / "wikidata_shaped.ttl")
    yield server
    server.stop()


def _check(url: str, cache: Path, properties: dict | None = None, **endpoint) -> WikidataCheck:
    backend = EndpointBackend(url, timeout=endpoint.pop("timeout", 10), retries=endpoint.pop("retries", 3), user_agent=AGENT, **endpoint)
    return WikidataCheck(backend, cache, ("en", "ru"), properties or {}, date_tolerance_days=1, quantity_tolerance=0.01)


def _claim(subject: str, relation: str, obj: str, kind: ObjectKind = E, value: str | int | None = None) -> Claim:
    return Claim(subject=[subject], relation=[relation], kind=kind, object=[obj], value=value)


# (claim, label, the start of the reason)
CASES = [
    (_claim("Lopez Bakery", "founded by", "Maria Lopez"), "known", "wd:Q1002 P112 wd:Q1001"),
    (_claim("Maria Lopez", "founder", "Lopez Bakery"), "known", "wd:Q1001 ^P112 wd:Q1002"),  # an alias, stated the other way
    (_claim("Пекарня Лопес", "основатель", "Мария Лопес"), "known", "wd:Q1002 P112 wd:Q1001"),  # Russian labels
    (_claim("Лопес и Ко", "Founded By", "M. Lopez"), "known", "wd:Q1002 P112 wd:Q1001"),  # aliases; the relation's case
    (_claim("Lopez Bakery", "inception", "16 March 2011", D, "2011-03-16"), "known", "wd:Q1002 P571 '2011-03-15"),  # a day off
    (_claim("Lopez Bakery", "inception", "2011", D, 2011), "known", "wd:Q1002 P571"),  # the year
    (_claim("Lopez Bakery", "founding date", "1 May 2012", D, "2012-05-01"), "contradicts", "Wikidata has wd:Q1002 P571"),
    (_claim("Maria Lopez", "date of birth", "2 June 1975", D, "1975-06-02"), "known", "wd:Q1001 P569"),  # known to the year
    (_claim("Lopez Bakery", "headquarters location", "Dallas"), "contradicts", "Wikidata has wd:Q1002 P159 wd:Q1003"),
    (_claim("Lopez Bakery", "total revenue", "$2.41 million", N, "2410000"), "known", "wd:Q1002 P2139 '2400000'"),  # deprecated
    (_claim("Lopez Bakery", "выручка", "3 млн руб.", N, "3000000"), "contradicts", "Wikidata has wd:Q1002 P2139"),
    (_claim("Lopez Bakery", "city", "Austin"), "known", "wd:Q1002 P159 wd:Q1003"),  # no property named "city": any link
    (_claim("Maria Lopez", "birth", "1975", D, 1975), "known", "wd:Q1001 P569"),  # no property: any matching value
    (_claim("Austin", "date of birth", "4 July 1990", D, "1990-07-04"), "novel", "2 Wikidata items are named 'Austin'"),  # namesakes
    (_claim("Dallas", "inception", "20 November 1841", D, "1841-11-20"), "known", "wd:Q1004 P571 '1841-11-01"),  # known to the month
    (_claim("Lopez Bakery", "sales", "$2.4 million", N, "2400000"), "novel", "no Wikidata property is named 'sales'"),  # a number alone
    (Claim(subject=["Lopez Bakery"], relation=["total revenue"], kind=N, object=["3 млн руб."], value="3000000", unit="RUB"), "novel",
     "Wikidata has wd:Q1002 P2139 '2400000', in a unit not compared with RUB"),
    (_claim("Unknown Co", "founded by", "Maria Lopez"), "novel", "no Wikidata item is named 'Unknown Co'"),
    (_claim("Maria Lopez", "employer", "Dallas"), "novel", "no Wikidata property is named 'employer'"),
    (_claim("Maria Lopez", "motto", "Bread first", T), "novel", "no Wikidata property is named 'motto'"),
    (_claim("Lopez Bakery", "founded by", "Dallas"), "contradicts", "Wikidata has wd:Q1002 P112 wd:Q1001"),
]


def test_every_label_with_its_reason(wikidata, tmp_path):
    check = _check(wikidata.query_url, tmp_path / "cache.sqlite")
    verdicts = check.check([claim for claim, _, _ in CASES])
    for (claim, label, reason), verdict in zip(CASES, verdicts, strict=True):
        assert (verdict.label.value, verdict.reason[:len(reason)]) == (label, reason), (claim, verdict)


def test_the_configured_table_maps_relations_the_labels_do_not(wikidata, tmp_path):
    check = _check(wikidata.query_url, tmp_path / "cache.sqlite", {"Started By": "P112", "owner of": "^P112"})
    verdicts = check.check([_claim("Lopez Bakery", "started by", "Maria Lopez"), _claim("Maria Lopez", "owner of", "Lopez Bakery"),
                            _claim("Maria Lopez", "owner of", "Austin")])
    assert [v.label for v in verdicts] == [Contamination.known, Contamination.known, Contamination.contradicts]
    assert verdicts[1].reason == "wd:Q1001 ^P112 wd:Q1002"


def test_a_429_is_waited_out_as_its_retry_after_asks_and_every_request_names_kgsynth(wikidata, tmp_path):
    claims = [claim for claim, _, _ in CASES]
    expected = _check(wikidata.query_url, tmp_path / "direct.sqlite").check(claims)
    with FakeRateLimitGate(wikidata.query_url, limited=2, retry_after="0.3") as gate:
        got = _check(gate.url, tmp_path / "cache.sqlite").check(claims)
        asked = len(gate.times)
        assert gate.statuses[:3] == [429, 429, 200] and gate.times[2] - gate.times[1] >= 0.3
        assert set(gate.agents) == {AGENT}
        again = _check(gate.url, tmp_path / "cache.sqlite").check(claims)  # every answer is cached
        assert len(gate.times) == asked
    assert got == expected == again


def test_an_endpoint_that_is_down_or_slow_leaves_the_facts_unchecked_with_one_line(tmp_path):
    claims = [claim for claim, _, _ in CASES[:3]]
    down = _check(f"http://127.0.0.1:{_free_port()}/sparql", tmp_path / "a.sqlite", retries=0).check(claims)
    assert {v.label for v in down} == {Contamination.unchecked}
    assert down[0].reason.startswith("cannot reach SPARQL endpoint http://127.0.0.1:") and "\n" not in down[0].reason
    with FakeFlakySparqlServer([], then="stall", stall_s=5) as slow:
        late = _check(slow.url, tmp_path / "b.sqlite", timeout=0.3, retries=1, backoff=0.05).check(claims)
        assert slow.requests == 2  # the first query's two attempts; nothing more is asked once it failed
    assert {v.label for v in late} == {Contamination.unchecked}
    assert late[0].reason == f"SPARQL endpoint {slow.url} sent no complete answer within 0.3 s (gave up after 2 attempts)"


# ----------------------------------------------------------------------------- a whole run (FAULT INJECTOR as the model)
FACTS = [("Lopez Bakery", "founded by", "Maria Lopez", "Lopez Bakery was founded by Maria Lopez."),
         ("Lopez Bakery", "headquarters location", "Dallas", "Lopez Bakery is based in Dallas."),
         ("Maria Lopez", "employer", "Dallas", "Maria Lopez works for Dallas.")]


def _reply(body: dict) -> str:
    text = body["messages"][-1]["content"]
    found = [{"subject": s, "subject_type": "", "relation": r, "object": o, "object_kind": "entity", "object_type": "",
              "evidence": e} for s, r, o, e in FACTS if e in text]
    return json.dumps({"triples": found})


def test_ingest_drops_known_facts_keeps_the_labels_and_resumes_when_wikidata_was_down(wikidata, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "lang": "en", "text": e}) + "\n" for i, (*_, e) in enumerate(FACTS)),
                    encoding="utf-8")
    out = tmp_path / "g.trig"
    with FaultInjectingServer(_reply) as model:
        def config(endpoint: str) -> IngestConfig:
            return IngestConfig.model_validate({"extraction": {"base_url": model.base_url, "cache": str(tmp_path / "llm.sqlite")},
                                                "wikidata": {"check": True, "endpoint": endpoint, "retries": 0, "user_agent": AGENT}})

        down = ingest(docs, out, config(f"http://127.0.0.1:{_free_port()}/sparql"))
        assert down.problems == 3 and down.contamination == {"unchecked": 3} and down.dropped_known == 0
        assert all(d.problem.startswith("its facts are kept unchecked (a rerun asks again): cannot reach") for d in down.per_document)
        calls = len(model.requests)
        report = ingest(docs, out, config(wikidata.query_url))
        assert len(model.requests) == calls  # the documents were finished: only the check ran again
    assert report.problems == 0 and report.contamination == {"contradicts": 1, "known": 1, "novel": 1} and report.dropped_known == 1
    assert report.kept == 2
    kg = KnowledgeGraph.load(out)
    rows = kg.select("""PREFIX kgs: <https://w3id.org/kgsynth/vocab#>
        SELECT ?id ?label WHERE { GRAPH ?g { ?f kgs:contamination ?label ; kgs:statedIn ?g . ?g kgs:sourceId ?id } } ORDER BY ?id""")
    assert [(r[0].value, r[1].value) for r in rows] == [("d1", "contradicts"), ("d2", "novel")]
    documents = {r[0].value for r in kg.select("SELECT ?id WHERE { ?g <https://w3id.org/kgsynth/vocab#sourceId> ?id }")}
    assert documents == {"d0", "d1", "d2"}  # d0's one fact was known: the document is still there
    checked = [json.loads(line) for line in (tmp_path / "g.trig.wikidata.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(c["documents"], c["label"]) for c in checked] == [(["d0"], "known"), (["d1"], "contradicts"), (["d2"], "novel")]


def test_a_language_tag_that_is_none_is_refused_in_the_config():
    with pytest.raises(ValueError, match="not a language tag"):
        IngestConfig.model_validate({"wikidata": {"languages": ["en", "English"]}})


def test_the_command_says_to_rerun_when_only_wikidata_failed(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d0", "lang": "en", "text": FACTS[0][3]}) + "\n", encoding="utf-8")
    with FaultInjectingServer(_reply) as model:
        config = tmp_path / "ingest.toml"
        config.write_text(f'[extraction]\nbase_url = "{model.base_url}"\ncache = "{tmp_path / "llm.sqlite"}"\n'
                          f'[wikidata]\nretries = 0\n', encoding="utf-8")
        result = subprocess.run([sys.executable, "-m", "kgsynth", "ingest", str(docs), "--out", str(tmp_path / "g.trig"), "--config",
                                 str(config), "--wikidata", f"http://127.0.0.1:{_free_port()}/sparql"],
                                capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(ROOT / "src")}, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and lines[0].strip().startswith("d0: its facts are kept unchecked (a rerun asks again): cannot reach")
    assert lines[-1] == "error: the facts of 1 of 1 documents were not checked against Wikidata (listed above): rerun when the endpoint answers"
