"""The bad-input corpus: what a demanding user feeds the `kgsynth` command line, case by
case (RDF documents, configs, option values, datasets, results folders, output paths,
endpoints, rules), each with the outcome it must get:

- an input the command cannot use: exit 1 and ONE line on stderr, ``error: ...``, that
  contains the case's fragments (the file, the line, the option, the key...), nothing on
  stdout, no traceback and no catch-all message (``internal error``, or the bare
  ``cannot use PATH`` of the safety net for files);
- a malformed command line (unknown command or option, a required one left out): exit 2,
  one line naming the ``--help`` to read;
- odd but valid input (unicode paths, CRLF, a byte-order mark, empty sections...): exit 0.

Cases run in-process through ``kgsynth.cli.main`` (fast); a handful run again in a real
subprocess, so nothing reaches a terminal that the in-process run would not show. Ctrl-C
is tested by sending SIGINT to a running ``synth`` and ``eval``. The fake HTTP servers here
are FAULT FAKES (an HTML page, a 500, JSON that is not SPARQL results): they test error
handling only. ``python tests/test_bad_inputs.py`` prints the corpus table of
docs/reliability.md, which a test keeps in step with the cases.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import DATA, DEMO, ROOT, _free_port  # noqa: E402

HANDMADE = DATA / "handmade.ttl"
EXAMPLE_REPORT = ROOT / "docs" / "example-report"
REFUSED = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there

PREFIXES = """@prefix ex: <http://hand.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
"""
PEOPLE = """ex:alice rdfs:label "Alice"@en, "Алиса"@ru ; ex:salary "5000"^^xsd:decimal .
ex:bob rdfs:label "Bob"@en, "Боб"@ru ; ex:salary "4000"^^xsd:decimal .
"""


def rule(body: str) -> str:
    """A graph of two labelled people and one rule ``ex:bonus`` described by ``body``."""
    return f"{PREFIXES}{PEOPLE}ex:bonus a kgs:Rule ; {body} .\n"


GOOD_RULE = 'kgs:kind kgs:Arithmetic ; kgs:rate 0.1 ; kgs:input [ kgs:role "amount" ; kgs:relation ex:salary ]'
HOMONYMS = f"""{PREFIXES}ex:a rdfs:label "Same"@en, "Тот"@ru ; ex:salary "5000"^^xsd:decimal .
ex:b rdfs:label "Same"@en, "Тот"@ru ; ex:salary "4000"^^xsd:decimal .
ex:bonus a kgs:Rule ; {GOOD_RULE} .
"""


# ---------------------------------------------------------------------------- the fault fakes
_SPARQL_JSON = "application/sparql-results+json"
_SPARQL_XML = "application/sparql-results+xml"
_RENAMED_XML = (b'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="thing"/>'
                b'</head><results><result><binding name="thing"><uri>http://x/a</uri></binding></result></results></sparql>')
# kind -> (status, content type, body, extra headers): what a careless server, a proxy or a
# server of another protocol answers, to a SPARQL query and a chat completion alike
FAULTS = {
    "html": (200, "text/html", b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>", {}),
    "500": (500, "text/plain", b"internal server error", {}),
    "502": (502, "text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>", {}),
    "json": (200, "application/json", b'{"hello": "world"}', {}),
    "cut": (200, _SPARQL_JSON, b'{"head": {"vars": ["n"]}, "results": {"bindings": []}}', {"X-SPARQL-MaxRows": "10000"}),
    "renamed": (200, _SPARQL_JSON, b'{"head": {"vars": ["thing"]}, "results": {"bindings": [{"thing": {"type": "uri", "value": "http://x/a"}}]}}', {}),
    "renamedxml": (200, _SPARQL_XML, _RENAMED_XML, {}),
    "empty": (200, _SPARQL_JSON, b"", {}),
    "halfjson": (200, _SPARQL_JSON, b'{"head": {"vars": ["n"]}, "results": {"bind', {}),
    "nonutf8": (200, _SPARQL_JSON, b'{"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "literal", "value": "\xff\xfe"}}]}}', {}),
    "boolean": (200, _SPARQL_JSON, b'{"head": {}, "boolean": true}', {}),
    "bindingsdict": (200, _SPARQL_JSON, b'{"head": {"vars": ["n"]}, "results": {"bindings": {}}}', {}),
    "xmlgarbage": (200, _SPARQL_XML, b"<html><body>not results</body></html>", {}),
    "csv": (200, "text/csv", b"n\n1\n", {}),
    "401": (401, "text/plain", b"authentication required", {"WWW-Authenticate": 'Basic realm="sparql"'}),
    "bearer": (401, "application/json", b'{"error": "invalid_token"}', {"WWW-Authenticate": 'Bearer realm="api"'}),
    "403": (403, "text/html", b"<html><body>Forbidden</body></html>", {}),
    "405": (405, "text/plain", b"method not allowed", {"Allow": "GET"}),
    "429": (429, "application/json", b'{"error": "rate limited"}', {"Retry-After": "0"}),
    "nochoices": (200, "application/json", b'{"id": "x", "object": "chat.completion", "choices": []}', {}),
    "nullcontent": (200, "application/json", b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, '
                    b'"message": {"role": "assistant", "content": null}, "finish_reason": "stop"}]}', {}),
    "prose": (200, "application/json", b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": '
              b'{"role": "assistant", "content": "I am sorry, I cannot help with that."}, "finish_reason": "stop"}], '
              b'"usage": {"prompt_tokens": 10, "completion_tokens": 9, "total_tokens": 19}}', {}),
}


class FaultFakeServer:
    """FAULT FAKE, not a SPARQL endpoint nor a model: the first path segment names the fault
    of ``FAULTS`` it answers (``/html/...`` an HTML page, ``/500/...`` HTTP 500, ``/renamed/...``
    SPARQL results of other variables...; an unknown one 404), for GET and POST alike."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                kind = self.path.strip("/").split("/")[0]
                status, ctype, body, extra = FAULTS.get(kind, (404, "text/plain", b"not found", {}))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, kind: str, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{kind}/{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a client that hung up early is no news here
        pass


@pytest.fixture(scope="module")
def fakes():
    server = FaultFakeServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory) -> Path:
    """A finished dataset from the hand-made graph (4 items, easy: a medium item needs two
    other salaried entities for its confusable turns, and the graph has one): damaged copies are cases."""
    from kgsynth.kg import KnowledgeGraph
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import synthesize

    out = tmp_path_factory.mktemp("tiny") / "dataset"
    synthesize(KnowledgeGraph.load(HANDMADE), SynthConfig.model_validate({"dataset": {"n": 4, "difficulties": ["easy"]}}), out)
    return out


@pytest.fixture(scope="module")
def tiny_release(tmp_path_factory) -> Path:
    """Release 1.0.0 of the hand-made graph (2 items): damaged copies are given as --previous."""
    from kgsynth.kg import KnowledgeGraph
    from kgsynth.release import ReleaseConfig, release

    out = tmp_path_factory.mktemp("release") / "release"
    release(KnowledgeGraph.load(HANDMADE), ReleaseConfig.model_validate({"dataset": {"n": 4}}), out, version="1.0.0")
    return out


@pytest.fixture(scope="module")
def simple_dataset(tmp_path_factory) -> Path:
    """A dataset of the demo graph's ``simple`` items: in-context claims come from them."""
    from kgsynth.kg import KnowledgeGraph
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import synthesize

    out = tmp_path_factory.mktemp("simple") / "dataset"
    config = {"dataset": {"n": 4, "difficulties": ["easy"], "languages": ["en"]}, "sampling": {"shapes": ["simple"], "subgraphs_per_shape": 40}}
    synthesize(KnowledgeGraph.demo(lang=("en", "ru")), SynthConfig.model_validate(config), out)
    return out


# ---------------------------------------------------------------------------- the context a case builds in
@dataclass
class Ctx:
    tmp: Path
    dataset_src: Path
    fakes: FaultFakeServer
    release_src: Path
    simple_dataset_src: Path

    def file(self, name: str, content: str | bytes) -> str:
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
        return str(path)

    def folder(self, name: str) -> str:
        (self.tmp / name).mkdir(parents=True, exist_ok=True)
        return str(self.tmp / name)

    def dataset(self, damage: Callable[[Path], object] | None = None) -> str:
        """A copy of the tiny dataset, damaged by ``damage(folder)``."""
        return self._copy(self.dataset_src, "dataset", damage)

    def release(self, damage: Callable[[Path], object] | None = None) -> str:
        """A copy of the tiny release, damaged by ``damage(folder)``."""
        return self._copy(self.release_src, "release", damage)

    def _copy(self, source: Path, name: str, damage: Callable[[Path], object] | None) -> str:
        copy = self.tmp / name
        shutil.copytree(source, copy)
        if damage:
            damage(copy)
        return str(copy)

    def simple_dataset(self) -> str:
        return str(self.simple_dataset_src)

    def results(self, damage: Callable[[Path], object] | None = None) -> str:
        """A copy of docs/example-report's results.jsonl and run.json, damaged by ``damage(folder)``."""
        copy = self.tmp / "results"
        copy.mkdir()
        for name in ("results.jsonl", "run.json"):
            shutil.copy(EXAMPLE_REPORT / name, copy / name)
        if damage:
            damage(copy)
        return str(copy)

    def eval_config(self, text: str) -> str:
        return self.file("eval.toml", text)


def _eval(ctx: Ctx, dataset: str, *more: str) -> list[str]:
    return ["eval", "--dataset", dataset, "--base-url", REFUSED, "--out", str(ctx.tmp / "eval-out"), *more]


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _rewrite_lines(path: Path, edit: Callable[[list[bytes]], list[bytes]]) -> None:
    path.write_bytes(b"".join(edit(_lines(path))))


def _edit_row(path: Path, number: int, edit: Callable[[dict], object]) -> None:
    lines = _lines(path)
    row = json.loads(lines[number - 1])
    edit(row)  # in place
    lines[number - 1] = json.dumps(row, ensure_ascii=False).encode() + b"\n"
    path.write_bytes(b"".join(lines))


def _edit_json(path: Path, edit: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)  # in place
    path.write_text(json.dumps(data), encoding="utf-8")


def _unfinished_other_run(folder: Path) -> None:
    (folder / ".work").mkdir(parents=True)
    (folder / ".work" / "progress.jsonl").write_text('{"run": "0000000000000000"}\n')


# ---------------------------------------------------------------------------- the corpus
Argv = Callable[[Ctx], list[str]]


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    argv: Argv
    fragments: tuple[str, ...] = ()  # substrings of the one line ("{tmp}" is the case's folder); "re:..." a pattern
    code: int = 1
    waits_on: str | None = None  # the part of the issue's work this case's outcome depended on
    root_skips: bool = False  # permissions mean nothing to root: skipped there


CASES: list[Case] = []


def case(id: str, kind: str, argv: Argv, *fragments: str, code: int = 1, **kw) -> None:
    CASES.append(Case(id, kind, argv, fragments, code, **kw))


def after(*_steps: object) -> list[str]:
    """The last argument (an argv); the ones before it were steps that built the case's files."""
    return _steps[-1]


def stats(ctx: Ctx, name: str, content: str | bytes, *more: str) -> list[str]:
    return ["graph", "stats", ctx.file(name, content), *more]


# --- RDF documents: every parser error names the file, and the line and column where the parser gives them
K = "RDF documents"
case("ttl-unterminated-string", K, lambda c: stats(c, "g.ttl", '@prefix ex: <http://x/> .\nex:a ex:b ex:c .\nex:a ex:b "open .\n'),
     "syntax error in {tmp}/g.ttl at line 3, column")
case("ttl-undeclared-prefix", K, lambda c: stats(c, "g.ttl", "ex:a ex:p ex:b .\n"), "g.ttl at line 1, column 1", "ex: has not been declared")
case("ttl-missing-final-dot", K, lambda c: stats(c, "g.ttl", "@prefix ex: <http://x/> .\nex:a ex:p ex:b"), "g.ttl at line 2, column")
case("ttl-bad-escape", K, lambda c: stats(c, "g.ttl", '@prefix ex: <http://x/> .\nex:a ex:p "bad \\q" .\n'), "g.ttl at line 2, column 16", "\\q")
case("ttl-bad-language-tag", K, lambda c: stats(c, "g.ttl", '@prefix ex: <http://x/> .\nex:a ex:p "x"@123 .\n'), "g.ttl at line 2, column")
case("ttl-binary-bytes", K, lambda c: stats(c, "g.ttl", b"\x00\x01\x02binary\xff\xfe"), "syntax error in {tmp}/g.ttl at line 1, column 1")
case("ttl-latin1-bytes", K, lambda c: stats(c, "g.ttl", b"@prefix ex: <http://x/> .\nex:a ex:p \"caf\xe9\" .\n"), "g.ttl at line 2, column", "UTF-8")
case("ttl-byte-order-mark", K, lambda c: stats(c, "g.ttl", "\ufeff@prefix ex: <http://x/> .\nex:a ex:p ex:b .\n"), "triples", code=0)
case("ttl-turtle-in-nt-file", K, lambda c: stats(c, "g.nt", "@prefix ex: <http://x/> .\nex:a ex:p ex:b .\n"), "syntax error in {tmp}/g.nt at line 1, column")
case("ttl-second-file-broken", K, lambda c: ["graph", "stats", str(HANDMADE), c.file("b.ttl", "@prefix ex: <http://x/> .\nex:a ex:p .\n")],
     "syntax error in {tmp}/b.ttl at line 2")
case("nt-unclosed-iri", K, lambda c: stats(c, "g.nt", "<http://x/a> <http://x/p> <http://x/b .\n"), "g.nt at line 1, column 27")
case("nt-relative-iri", K, lambda c: stats(c, "g.nt", "<a> <b> <c> .\n"), "g.nt at line 1, column 1", "IRI")
case("nt-unterminated-literal", K, lambda c: stats(c, "g.nt", '<http://x/a> <http://x/p> "open .\n<http://x/a> <http://x/p> <http://x/b> .\n'),
     "g.nt at line")
case("nq-five-terms", K, lambda c: stats(c, "g.nq", "<http://x/a> <http://x/p> <http://x/b> <http://x/g> <http://x/h> .\n"), "g.nq at line 1, column 53")
case("trig-unclosed-graph", K, lambda c: stats(c, "g.trig", "@prefix ex: <http://x/> .\nex:g { ex:a ex:p ex:b .\n"), "g.trig at line 3, column 1")
case("n3-unclosed-formula", K, lambda c: stats(c, "g.n3", "@prefix ex: <http://x/> .\n{ ex:a ex:p ex:b .\n"), "syntax error in {tmp}/g.n3")
case("rdfxml-unclosed-element", K, lambda c: stats(c, "g.rdf", '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
                                                      '<rdf:Description rdf:about="http://x/a">\n</rdf:RDF>\n'), "syntax error in {tmp}/g.rdf")
case("rdfxml-not-xml", K, lambda c: stats(c, "g.rdf", "just some words\n"), "syntax error in {tmp}/g.rdf")
case("jsonld-cut-off", K, lambda c: stats(c, "g.jsonld", '{"@context": {"ex": "http://x/"}, "@id": "ex:a", "ex:p": '), "g.jsonld at line 1, column")
case("jsonld-not-json-ld", K, lambda c: stats(c, "g.jsonld", "[1, 2, 3]"), "g.jsonld holds no triples")
case("gz-not-gzip", K, lambda c: stats(c, "g.ttl.gz", "hello"), "cannot read {tmp}/g.ttl.gz: not a valid gzip file")
case("gz-cut-off", K, lambda c: stats(c, "g.ttl.gz", gzip.compress(b"@prefix ex: <http://x/> .\n" + b"ex:a ex:p ex:b .\n" * 200)[:60]), "{tmp}/g.ttl.gz")
case("empty-file", K, lambda c: stats(c, "g.ttl", ""), "g.ttl holds no triples")
case("only-comments", K, lambda c: stats(c, "g.ttl", "# nothing here\n# at all\n"), "g.ttl holds no triples")
case("unknown-extension", K, lambda c: stats(c, "g.txt", "<http://x/a> <http://x/p> <http://x/b> .\n"), "cannot tell the RDF format of {tmp}/g.txt")
case("no-extension", K, lambda c: stats(c, "graph", "<http://x/a> <http://x/p> <http://x/b> .\n"), "cannot tell the RDF format of {tmp}/graph")
case("missing-file", K, lambda c: ["graph", "stats", str(c.tmp / "nope.ttl")], "cannot read {tmp}/nope.ttl: no such file or folder")
case("folder-without-rdf", K, lambda c: after(c.file("f/readme.txt", "hi"), ["graph", "stats", str(c.tmp / "f")]), "no RDF files in folder {tmp}/f")
case("empty-folder", K, lambda c: ["graph", "stats", c.folder("empty")], "no RDF files in folder {tmp}/empty")
case("unreadable-file", K, lambda c: after(c.file("g.ttl", "<http://x/a> <http://x/p> <http://x/b> .\n"), os.chmod(c.tmp / "g.ttl", 0),
                                           ["graph", "stats", str(c.tmp / "g.ttl")]), "cannot read {tmp}/g.ttl", root_skips=True)
case("subgraphs-on-broken-file", K, lambda c: ["graph", "subgraphs", c.file("g.ttl", "@prefix ex: <http://x/> .\nex:a ex:p\n"), "--shape", "simple"],
     "syntax error in {tmp}/g.ttl at line 3")
case("synth-on-broken-file", K, lambda c: ["synth", "--graph", c.file("g.ttl", "@prefix ex: <http://x/> .\nex:a ex:p \"open .\n"), "--out",
                                            str(c.tmp / "o")], "syntax error in {tmp}/g.ttl at line 2")

# --- graph command options
K = "graph command options"
H = str(HANDMADE)
case("stats-no-graph", K, lambda c: ["graph", "stats"], "give one or more graph files/folders, or --endpoint URL")
case("stats-files-and-endpoint", K, lambda c: ["graph", "stats", H, "--endpoint", "http://127.0.0.1:1/query"], "not both")
case("lang-empty", K, lambda c: ["graph", "stats", H, "--lang", ","], "--lang ',' names no language")
case("shape-unknown", K, lambda c: ["graph", "subgraphs", H, "--shape", "triangle"], "unknown shape 'triangle'")
case("hops-7", K, lambda c: ["graph", "subgraphs", H, "--shape", "multihop", "--hops", "7"], "multihop needs 2, 3 or 4 hops")
case("hops-1", K, lambda c: ["graph", "subgraphs", H, "--shape", "multihop", "--hops", "1"], "multihop needs 2, 3 or 4 hops")
case("hops-not-a-number", K, lambda c: ["graph", "subgraphs", H, "--shape", "multihop", "--hops", "two"], "--hops", "valid integer")
case("limit-negative", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--limit", "-1"], "--limit", "greater than or equal to 0")
case("limit-not-a-number", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--limit", "many"], "--limit", "valid integer")
case("per-anchor-0", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--per-anchor", "0"], "--per-anchor", "greater than or equal to 1")
case("seed-not-a-number", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--seed", "x"], "--seed", "valid integer")
case("variant-unknown", K, lambda c: ["graph", "subgraphs", H, "--shape", "conditional", "--variant", "sideways"], "sideways")
case("rule-application-without-rules", K, lambda c: ["graph", "subgraphs", c.file("p.nt", "<http://x/a> <http://x/p> <http://x/b> .\n"), "--shape",
                                                     "rule_application"], "no kgs:Rule")
case("subgraphs-rule-without-kind", K, lambda c: ["graph", "subgraphs", c.file("r.ttl", rule('kgs:rate 0.1 ; kgs:input [ kgs:role "amount" ; kgs:relation ex:salary ]')),
                                                  "--shape", "rule_application"], "<http://hand.example/bonus>", "missing kgs:kind")
case("subgraphs-out-under-a-file", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--out", str(Path(c.file("existing_file.txt", "x")) / "x.jsonl")],
     "--out {tmp}/existing_file.txt/x.jsonl", "{tmp}/existing_file.txt is a file")
case("subgraphs-out-is-a-folder", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--out", c.folder("outdir")], "--out {tmp}/outdir is a folder")
case("subgraphs-out-in-proc", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--out", "/proc/x.jsonl"], "/proc/x.jsonl")
case("subgraphs-out-unmakeable-folder", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--out", "/proc/none/x.jsonl"], "cannot create the folder /proc/none")
case("stats-sample-0", K, lambda c: ["graph", "stats", H, "--sample", "0"], "--sample", "greater than or equal to 1")
case("stats-anchor-class-without-sample", K, lambda c: ["graph", "stats", H, "--anchor-class", "http://hand.example/Person"],
     "--anchor-class needs --sample N")
case("stats-anchor-class-not-an-iri", K, lambda c: ["graph", "stats", H, "--sample", "5", "--anchor-class", "a person"],
     "anchor class 'a person' is not an IRI")
case("subgraphs-anchors-with-all", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--all", "--anchor-class", "http://hand.example/Person"],
     "not with --all")
case("subgraphs-anchor-class-and-query", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--anchor-class", "http://hand.example/Person",
                                                       "--anchors-query", c.file("q.rq", "SELECT ?e WHERE { ?e a ?c }")], "not both")
case("subgraphs-anchors-query-missing", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--anchors-query", str(c.tmp / "none.rq")],
     "cannot read --anchors-query {tmp}/none.rq")
case("subgraphs-anchor-class-without-members", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--anchor-class",
                                                             "http://hand.example/Nobody"], "class http://hand.example/Nobody lists no entity")

# --- SPARQL endpoints (graph stats / subgraphs --endpoint)
K = "SPARQL endpoints"
case("endpoint-not-a-url", K, lambda c: ["graph", "stats", "--endpoint", "not a url"], "--endpoint: 'not a url' is not an http(s) URL")
case("endpoint-ftp", K, lambda c: ["graph", "stats", "--endpoint", "ftp://example.org/sparql"], "'ftp://example.org/sparql' is not an http(s) URL")
case("endpoint-no-host", K, lambda c: ["graph", "stats", "--endpoint", "http://"], "'http://' is not an http(s) URL")
case("endpoint-bad-port", K, lambda c: ["graph", "stats", "--endpoint", "http://127.0.0.1:99999/query"], "has no valid port number")
case("endpoint-empty", K, lambda c: ["graph", "stats", "--endpoint", ""], "--endpoint: '' is not an http(s) URL")
case("endpoint-refused", K, lambda c: ["graph", "stats", "--endpoint", f"http://127.0.0.1:{_free_port()}/query"], "cannot reach SPARQL endpoint")
case("endpoint-answers-html", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("html", "query")], "did not return SPARQL JSON results")
case("endpoint-answers-500", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("500", "query")], "answered with an error")
case("endpoint-answers-other-json", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("json", "query")], "did not return SPARQL JSON results")
case("endpoint-answers-404", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("404", "query")], "answered with an error")
case("endpoint-graph-uri-not-an-iri", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("json", "query"), "--graph-uri", "my graph"],
     "--graph-uri 'my graph' is not an absolute IRI")
case("endpoint-timeout-0", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("json", "query"), "--timeout", "0"],
     "--timeout 0: give a positive number of seconds")
case("endpoint-answer-cut-at-row-limit", K, lambda c: ["graph", "stats", "--endpoint", c.fakes.url("cut", "query")],
     "cut its answer at its row limit (X-SPARQL-MaxRows: 10000)", "ResultSetMaxRows")
case("subgraphs-endpoint-html", K, lambda c: ["graph", "subgraphs", "--endpoint", c.fakes.url("html", "query"), "--shape", "simple"],
     "did not return SPARQL JSON results")

# --- synth options and graphs
K = "synth options and graphs"


def synth(c: Ctx, *more: str, graph: str | None = None) -> list[str]:
    return ["synth", "--graph", graph or H, "--out", str(c.tmp / "out"), *more]


case("n-negative", K, lambda c: synth(c, "--n", "-5"), "--n -5: dataset.n: Input should be greater than or equal to 1")
case("n-zero", K, lambda c: synth(c, "--n", "0"), "--n 0: dataset.n: Input should be greater than or equal to 1")
case("n-not-a-number", K, lambda c: synth(c, "--n", "abc"), "--n", "valid integer")
case("n-fraction", K, lambda c: synth(c, "--n", "1.5"), "--n", "valid integer")
case("n-huge", K, lambda c: synth(c, "--n", "1000000000", graph=str(DEMO)), "n = 1,000,000,000", "ask for at most", waits_on="lead")
case("seed-not-a-number-synth", K, lambda c: synth(c, "--seed", "x"), "--seed", "valid integer")
case("llm-base-url-not-a-url", K, lambda c: synth(c, "--llm-base-url", "not a url"), "--llm-base-url: 'not a url' is not an http(s) URL")
case("llm-model-without-url", K, lambda c: synth(c, "--llm-model", "gpt"), "--llm-model needs --llm-base-url")
case("llm-endpoint-refused", K, lambda c: synth(c, "--n", "4", "--llm-base-url", REFUSED), "connection refused", "127.0.0.1:9", waits_on="lead+llm")
_NO_RETRIES = "[llm]\nmax_retries = 0\n"
case("llm-answers-500-to-every-call", K, lambda c: synth(c, "--n", "20", "--llm-base-url", c.fakes.url("500", "v1"), "--config", c.file("l.toml", _NO_RETRIES),
                                                         graph=str(DEMO)), "stopped asking the model", "20 calls in a row failed", "HTTP 500")
case("llm-answers-other-json-to-every-call", K, lambda c: synth(c, "--n", "20", "--llm-base-url", c.fakes.url("json", "v1"), "--config",
                                                                c.file("l.toml", _NO_RETRIES), graph=str(DEMO)),
     "stopped asking the model", "20 calls in a row failed", "the reply is not an OpenAI chat completion: it has no 'choices'")
case("graph-missing", K, lambda c: synth(c, graph=str(c.tmp / "none.ttl")), "cannot read {tmp}/none.ttl: no such file or folder")
case("graph-empty", K, lambda c: synth(c, graph=c.file("e.ttl", "")), "e.ttl holds no triples")
case("graph-without-rules", K, lambda c: synth(c, graph=c.file("p.ttl", PREFIXES + PEOPLE)), "no kgs:Rule")
case("rule-without-kind", K, lambda c: synth(c, graph=c.file("r.ttl", rule('kgs:rate 0.1 ; kgs:input [ kgs:role "amount" ; kgs:relation ex:salary ]'))),
     "rule <http://hand.example/bonus>: missing kgs:kind")
case("rule-unknown-kind", K, lambda c: synth(c, graph=c.file("r.ttl", rule(GOOD_RULE.replace("kgs:Arithmetic", "kgs:Magic")))), "<http://hand.example/bonus>", "kgs:kind")
case("rule-rate-not-a-number", K, lambda c: synth(c, graph=c.file("r.ttl", rule(GOOD_RULE.replace("0.1", '"ten"')))), "<http://hand.example/bonus>", "'ten' is not a number")
case("rule-negative-rate", K, lambda c: synth(c, graph=c.file("r.ttl", rule(GOOD_RULE.replace("0.1", "-0.1")))), "<http://hand.example/bonus>", "kgs:rate -0.1",
     waits_on="lead")
case("rule-rate-1e300", K, lambda c: synth(c, graph=c.file("r.ttl", rule(GOOD_RULE.replace("0.1", "1e300")))), "<http://hand.example/bonus>", "kgs:rate", waits_on="lead")
case("subgraphs-rule-negative-rate", K, lambda c: ["graph", "subgraphs", c.file("r.ttl", rule(GOOD_RULE.replace("0.1", "-0.1"))), "--shape", "rule_application"],
     "<http://hand.example/bonus>", "kgs:rate -0.1", waits_on="lead")
case("rule-input-missing-role", K, lambda c: synth(c, graph=c.file("r.ttl", rule('kgs:kind kgs:Arithmetic ; kgs:rate 0.1'))), "<http://hand.example/bonus>")
case("rule-reads-a-missing-predicate", K, lambda c: synth(c, graph=c.file("r.ttl", rule(GOOD_RULE.replace("ex:salary ]", "ex:wage ]")))),
     "<http://hand.example/wage>", "is in no triple", waits_on="lead")
case("labels-all-homonyms", K, lambda c: synth(c, graph=c.file("h.ttl", HOMONYMS)), "every label is shared by another entity", waits_on="lead")
case("out-in-proc", K, lambda c: ["synth", "--graph", H, "--out", "/proc/x"], "/proc/x", waits_on="lead")
case("out-is-a-file", K, lambda c: ["synth", "--graph", H, "--out", c.file("existing_file.txt", "x")], "{tmp}/existing_file.txt is a file", waits_on="lead")
case("out-under-a-file", K, lambda c: ["synth", "--graph", H, "--out", str(Path(c.file("existing_file.txt", "x")) / "sub")],
     "{tmp}/existing_file.txt/sub", "{tmp}/existing_file.txt is a file", waits_on="lead")

# --- config files (synth --config, eval --config)
K = "config files"


def conf(c: Ctx, text: str | bytes, name: str = "c.toml") -> list[str]:
    return ["synth", "--graph", H, "--out", str(c.tmp / "out"), "--config", c.file(name, text)]


case("config-missing", K, lambda c: ["synth", "--config", str(c.tmp / "none.toml")], "cannot read config {tmp}/none.toml")
case("config-is-a-folder", K, lambda c: ["synth", "--config", c.folder("cfg")], "cannot read config {tmp}/cfg: it is a folder")
case("config-binary", K, lambda c: conf(c, bytes(range(256))), "config {tmp}/c.toml is not UTF-8 text")
case("config-nul-bytes", K, lambda c: conf(c, "[dataset]\x00n = 3\n"), "holds NUL bytes")
case("config-bad-toml", K, lambda c: conf(c, "[dataset\nn = 3\n"), "config {tmp}/c.toml does not parse", "line 1")
case("config-toml-duplicate-key", K, lambda c: conf(c, "[dataset]\nn = 3\nn = 4\n"), "does not parse", "line 3")
case("config-bad-yaml", K, lambda c: conf(c, "dataset:\n  n: [1, 2\n", "c.yaml"), "config {tmp}/c.yaml does not parse", "line 3")
case("config-yaml-tabs", K, lambda c: conf(c, "dataset:\n\tn: 3\n", "c.yaml"), "does not parse", "line 2")
case("config-yaml-list", K, lambda c: conf(c, "- 1\n- 2\n", "c.yaml"), "config {tmp}/c.yaml: (top level): Input should be a valid dictionary")
case("config-json-named-toml", K, lambda c: conf(c, '{"dataset": {"n": 3}}'), "does not parse")
case("config-unknown-key", K, lambda c: conf(c, "[dataset]\nn = 10\nsede = 3\n"), "dataset.sede: Extra inputs are not permitted")
case("config-unknown-section", K, lambda c: conf(c, "[llmm]\nbase_url = 'http://x/v1'\n"), "llmm: Extra inputs are not permitted")
case("config-n-wrong-type", K, lambda c: conf(c, '[dataset]\nn = "many"\n'), "dataset.n: Input should be a valid integer")
case("config-n-negative", K, lambda c: conf(c, "[dataset]\nn = -5\n"), "config {tmp}/c.toml: dataset.n: Input should be greater than or equal to 1")
case("config-subgraphs-zero", K, lambda c: conf(c, "[sampling]\nsubgraphs_per_shape = 0\n"), "sampling.subgraphs_per_shape")
case("config-unknown-shape", K, lambda c: conf(c, '[sampling]\nshapes = ["triangle"]\n'), "sampling.shapes.0")
case("config-unknown-language", K, lambda c: conf(c, '[dataset]\nlanguages = ["de"]\n'), "languages must be distinct values out of en, ru")
case("config-duplicate-language", K, lambda c: conf(c, '[dataset]\nlanguages = ["en", "en"]\n'), "languages must be distinct")
case("config-unknown-difficulty", K, lambda c: conf(c, '[dataset]\ndifficulties = ["extreme"]\n'), "dataset.difficulties.0")
case("config-unknown-format", K, lambda c: conf(c, '[dataset]\nformats = ["emoji"]\n'), "dataset.formats.0")
case("config-unknown-filter", K, lambda c: conf(c, '[filters]\norder = ["structure", "vibes"]\n'), "unknown filter 'vibes'")
case("config-llm-filter-without-llm", K, lambda c: conf(c, '[filters]\norder = ["closed_book"]\n'), "filter 'closed_book' needs a model")
case("config-llm-without-endpoint", K, lambda c: conf(c, "[llm]\nconcurrency = 2\n"), "names no endpoint")
case("config-llm-url-not-a-url", K, lambda c: conf(c, '[llm]\nbase_url = "localhost"\n'), "llm.base_url: 'localhost' is not an http(s) URL")
case("config-llm-concurrency-0", K, lambda c: conf(c, '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nconcurrency = 0\n'), "llm.concurrency")
case("config-judge-min-total-13", K, lambda c: conf(c, "[filters.judge]\nmin_total = 13\n"), "filters.judge.min_total")
case("config-entity-threshold-101", K, lambda c: conf(c, "[filters.entity_match]\nthreshold = 101\n"), "filters.entity_match.threshold")
case("config-labels-lack-a-language", K, lambda c: conf(c, '[graph]\nlabel_languages = ["en"]\n'), "label_languages lacks")
case("config-position-unknown", K, lambda c: conf(c, '[dialogue]\nposition = "sideways"\n'), "dialogue.position")
case("config-graph-path-missing", K, lambda c: ["synth", "--out", str(c.tmp / "o"), "--config", c.file("c.toml", f'[graph]\npaths = ["{c.tmp}/none.ttl"]\n')],
     "cannot read {tmp}/none.ttl: no such file or folder")
case("eval-config-unknown-key", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[modle]\nmodel = 'x'\n")), "modle: Extra inputs are not permitted")
case("eval-config-is-a-synth-config", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[dataset]\nn = 3\n")), "dataset: Extra inputs are not permitted")
case("eval-config-probes-without-oracle", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config('baselines = ["closed_book"]\n')), "probes need the oracle")
case("eval-config-rendering-unknown", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config('rendering = "html"\n')), "rendering")
case("eval-config-targets-descending", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[length_sweep]\ntargets = [2000, 1000]\n")), "ascending")
case("eval-config-depth-above-1", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[position_sweep]\ndepths = [0.0, 1.5]\n")), "position_sweep.depths")
case("eval-config-temperature-3", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[model]\ntemperature = 3\n")), "model.temperature")
case("eval-config-context-10", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[model]\ncontext_tokens = 10\n")), "model.context_tokens")
case("eval-config-bootstrap-5", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("bootstrap = 5\n")), "bootstrap")
case("eval-config-confidence-1.5", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("confidence = 1.5\n")), "confidence")
case("eval-config-url-not-a-url", K, lambda c: ["eval", "--dataset", c.dataset(), "--out", str(c.tmp / "e"), "--config", c.eval_config('[model]\nbase_url = "nope"\n')],
     "model.base_url: 'nope' is not an http(s) URL")
case("eval-config-binary", K, lambda c: _eval(c, c.dataset(), "--config", c.file("eval.toml", b"\x89PNG\r\n\x1a\n\x00\x00")), "is not UTF-8 text")
case("eval-config-sweep-too-long", K, lambda c: _eval(c, c.dataset(), "--config", c.eval_config("[model]\ncontext_tokens = 1000\n[position_sweep]\ntarget_tokens = 4000\n")),
     "does not fit model.context_tokens")

# --- eval options
K = "eval options"
case("concurrency-0", K, lambda c: _eval(c, c.dataset(), "--concurrency", "0"), "--concurrency 0: model.concurrency: Input should be greater than or equal to 1")
case("concurrency-negative", K, lambda c: _eval(c, c.dataset(), "--concurrency", "-3"), "--concurrency -3: model.concurrency")
case("concurrency-not-a-number", K, lambda c: _eval(c, c.dataset(), "--concurrency", "lots"), "--concurrency", "valid integer")
case("limit-0", K, lambda c: _eval(c, c.dataset(), "--limit", "0"), "--limit 0: limit: Input should be greater than or equal to 1")
case("limit-negative-eval", K, lambda c: _eval(c, c.dataset(), "--limit", "-2"), "--limit -2: limit")
case("base-url-not-a-url", K, lambda c: ["eval", "--dataset", c.dataset(), "--base-url", "not a url", "--out", str(c.tmp / "e")],
     "--base-url: 'not a url' is not an http(s) URL")
case("base-url-missing", K, lambda c: ["eval", "--dataset", c.dataset(), "--out", str(c.tmp / "e")], "no endpoint for the model under evaluation")
case("base-url-refused", K, lambda c: _eval(c, c.dataset()), "connection refused", "127.0.0.1:9", waits_on="llm")
case("base-url-answers-html", K, lambda c: ["eval", "--dataset", c.dataset(), "--base-url", c.fakes.url("html", "v1"), "--out", str(c.tmp / "e"), "--config",
                                            c.eval_config("[model]\nmax_retries = 0\n")], "/html/v1", waits_on="llm")
case("base-url-answers-500", K, lambda c: ["eval", "--dataset", c.dataset(), "--base-url", c.fakes.url("500", "v1"), "--out", str(c.tmp / "e"), "--config",
                                           c.eval_config("[model]\nmax_retries = 0\n")], "/500/v1", "500")
case("out-is-a-file-eval", K, lambda c: ["eval", "--dataset", c.dataset(), "--base-url", REFUSED, "--out", c.file("existing_file.txt", "x")],
     "--out {tmp}/existing_file.txt is a file, not a folder")
case("out-under-a-file-eval", K, lambda c: ["eval", "--dataset", c.dataset(), "--base-url", REFUSED, "--out", str(Path(c.file("existing_file.txt", "x")) / "sub")],
     "{tmp}/existing_file.txt is a file, so nothing can be written under it")
case("out-in-proc-eval", K, lambda c: ["eval", "--dataset", c.dataset(), "--base-url", REFUSED, "--out", "/proc/x"], "--out /proc/x: cannot create the folder")
case("out-holds-another-run", K, lambda c: after(_unfinished_other_run(c.tmp / "eval-out"), _eval(c, c.dataset())),
     "holds an unfinished evaluation with another config or dataset")

# --- datasets given to eval
K = "datasets (eval --dataset)"
ITEMS = "items.jsonl"


def damaged(c: Ctx, damage: Callable[[Path], object]) -> list[str]:
    return _eval(c, c.dataset(damage))


case("dataset-missing", K, lambda c: _eval(c, str(c.tmp / "none")), "{tmp}/none does not exist")
case("dataset-is-a-file", K, lambda c: _eval(c, c.file("existing_file.txt", "x")), "{tmp}/existing_file.txt is a file, not a folder")
case("dataset-empty-folder", K, lambda c: _eval(c, c.folder("d")), "is not a kgsynth dataset: {tmp}/d/items.jsonl is missing")
case("dataset-no-manifest", K, lambda c: damaged(c, lambda d: (d / "manifest.json").unlink()), "{tmp}/dataset/manifest.json is missing")
case("dataset-items-is-a-folder", K, lambda c: damaged(c, lambda d: ((d / ITEMS).unlink(), (d / ITEMS).mkdir())), "{tmp}/dataset/items.jsonl is not a file")
case("manifest-broken-json", K, lambda c: damaged(c, lambda d: (d / "manifest.json").write_text('{"items": 4,')), "manifest.json is not valid JSON", "line 1")
case("manifest-a-list", K, lambda c: damaged(c, lambda d: (d / "manifest.json").write_text("[]")), "manifest.json is not a kgsynth manifest")
case("manifest-without-files", K, lambda c: damaged(c, lambda d: _edit_json(d / "manifest.json", lambda m: m.pop("files"))), "is not a kgsynth manifest")
case("manifest-count-changed", K, lambda c: damaged(c, lambda d: _edit_json(d / "manifest.json", lambda m: m.update(items=146))),
     "items.jsonl holds 4 rows", "records 146")
case("manifest-hash-changed", K, lambda c: damaged(c, lambda d: _edit_json(d / "manifest.json", lambda m: m["files"].update({ITEMS: "0" * 64}))),
     "items.jsonl does not match", "000000000000... recorded")
case("items-empty", K, lambda c: damaged(c, lambda d: (d / ITEMS).write_bytes(b"")), "items.jsonl holds 0 rows", "records 4")
case("items-broken-json-line", K, lambda c: damaged(c, lambda d: _rewrite_lines(d / ITEMS, lambda ls: [ls[0], b'{"id": "x", \n', *ls[1:]])),
     "{tmp}/dataset/items.jsonl line 2: not valid JSON")
case("items-blank-line", K, lambda c: damaged(c, lambda d: _rewrite_lines(d / ITEMS, lambda ls: [ls[0], b"\n", *ls[1:]])), "items.jsonl line 2: not valid JSON")
case("items-row-missing-answer-format", K, lambda c: damaged(c, lambda d: _edit_row(d / ITEMS, 3, lambda r: r.pop("answer_format"))),
     "{tmp}/dataset/items.jsonl line 3: the field 'answer_format' is missing")
case("items-row-missing-question", K, lambda c: damaged(c, lambda d: _edit_row(d / ITEMS, 1, lambda r: r.pop("question"))), "items.jsonl line 1: question: is missing")
case("items-row-wrong-type", K, lambda c: damaged(c, lambda d: _edit_row(d / ITEMS, 2, lambda r: r.update(dialogue="hello"))), "items.jsonl line 2: dialogue")
case("items-row-a-list", K, lambda c: damaged(c, lambda d: _rewrite_lines(d / ITEMS, lambda ls: [b"[1, 2]\n", *ls[1:]])), "items.jsonl line 1: not a JSON object")
case("items-cut-mid-line", K, lambda c: damaged(c, lambda d: (d / ITEMS).write_bytes((d / ITEMS).read_bytes()[:-40])),
     "{tmp}/dataset/items.jsonl is cut off in line 4")
case("items-cut-at-a-line-end", K, lambda c: damaged(c, lambda d: _rewrite_lines(d / ITEMS, lambda ls: ls[:3])), "items.jsonl holds 3 rows", "records 4")
case("items-row-repeated", K, lambda c: damaged(c, lambda d: _rewrite_lines(d / ITEMS, lambda ls: [*ls, ls[-1]])), "items.jsonl holds 5 rows")
case("items-edited-in-place", K, lambda c: damaged(c, lambda d: _edit_row(d / ITEMS, 1, lambda r: r.update(question=r["question"] + " (edited)"))),
     "items.jsonl does not match {tmp}/dataset/manifest.json: sha256")
case("items-not-utf8", K, lambda c: damaged(c, lambda d: _rewrite_lines(d / ITEMS, lambda ls: [ls[0], b'{"q": "caf\xe9"}\n', *ls[2:]])), "items.jsonl line 2: not UTF-8")
case("rules-edited-rules-given", K, lambda c: _eval(c, c.dataset(lambda d: (d / "private/rules.jsonl").write_text("{}\n")), "--config",
                                                   c.eval_config('rules = "given"\n')), "private/rules.jsonl line 1: the field 'rule_iri' is missing")
case("rules-changed-rules-given", K, lambda c: _eval(c, c.dataset(lambda d: _edit_row(d / "private/rules.jsonl", 1, lambda r: r.update(rule_iri="http://x/other"))),
                                                    "--config", c.eval_config('rules = "given"\n')), "private/rules.jsonl does not match")
case("rules-missing-rules-given", K, lambda c: _eval(c, c.dataset(lambda d: (d / "private/rules.jsonl").unlink()), "--config", c.eval_config('rules = "given"\n')),
     "rules = 'given' needs {tmp}/dataset/private/rules.jsonl")

# --- results folders given to report
K = "results folders (report)"
case("report-a-file", K, lambda c: ["report", c.file("existing_file.txt", "x")], "{tmp}/existing_file.txt is a file, not a folder")
case("report-missing", K, lambda c: ["report", str(c.tmp / "none")], "{tmp}/none does not exist")
case("report-empty-folder", K, lambda c: ["report", c.folder("r")], "is not a finished kgsynth eval run: {tmp}/r/run.json is missing")
case("report-unfinished", K, lambda c: ["report", c.results(lambda r: (r / ".work").mkdir())], "holds an unfinished kgsynth eval run")
case("report-run-broken-json", K, lambda c: ["report", c.results(lambda r: (r / "run.json").write_text('{"config": {\n"x": '))], "run.json is not valid JSON", "line 2")
case("report-run-a-list", K, lambda c: ["report", c.results(lambda r: (r / "run.json").write_text("[1]"))], "run.json is not a kgsynth eval run record")
case("report-run-bad-config", K, lambda c: ["report", c.results(lambda r: _edit_json(r / "run.json", lambda j: j["config"].update(rendering="html")))],
     "run.json: config.rendering")
case("report-no-results", K, lambda c: ["report", c.results(lambda r: (r / "results.jsonl").unlink())], "{tmp}/results/results.jsonl is missing")
case("report-results-empty", K, lambda c: ["report", c.results(lambda r: (r / "results.jsonl").write_bytes(b""))], "holds no answered item")
case("report-results-broken-line", K, lambda c: ["report", c.results(lambda r: _rewrite_lines(r / "results.jsonl", lambda ls: [*ls[:2], b"{oops\n", *ls[2:]]))],
     "{tmp}/results/results.jsonl line 3: not valid JSON")
case("report-results-row-missing-field", K, lambda c: ["report", c.results(lambda r: _edit_row(r / "results.jsonl", 1, lambda row: row.pop("correct")))],
     "results.jsonl line 1: correct: is missing")
case("report-results-cut-mid-line", K, lambda c: ["report", c.results(lambda r: (r / "results.jsonl").write_bytes((r / "results.jsonl").read_bytes()[:5000]))],
     "results.jsonl is cut off in line")
case("report-results-unknown-condition", K, lambda c: ["report", c.results(lambda r: _edit_row(r / "results.jsonl", 2, lambda row: row.update(condition="vibes")))],
     "results.jsonl line 2: condition")

# --- kgsynth ingest's options and config (a bad document is a line of the run's report: tests/test_ingest.py)
K = "ingest options"


def ingest(c: Ctx, *more: str, out: str = "g.trig") -> list[str]:
    return ["ingest", c.file("a.txt", "Anna Petrova works at Zarechye Bank."), "--out", str(c.tmp / out), *more]


def ingest_config(c: Ctx, text: str) -> list[str]:
    return ingest(c, "--config", c.file("c.toml", text))


case("ingest-missing-docs", K, lambda c: ["ingest", str(c.tmp / "none"), "--out", str(c.tmp / "g.trig")], "cannot read {tmp}/none: no such file or folder")
case("ingest-out-not-trig", K, lambda c: ingest(c, out="g.ttl"), "{tmp}/g.ttl: give the graph a .trig or .nq name")
case("ingest-no-model", K, lambda c: ingest(c), "ingest needs a model: set extraction.base_url in the config or pass --llm-base-url")
case("ingest-llm-url-ftp", K, lambda c: ingest(c, "--llm-base-url", "ftp://x"), "--llm-base-url: 'ftp://x' is not an http(s) URL")
case("ingest-wikidata-not-url", K, lambda c: ingest(c, "--wikidata", "query.wikidata.org"), "--wikidata: 'query.wikidata.org' is not an http(s) URL")
case("ingest-property-not-an-id", K, lambda c: ingest_config(c, '[wikidata.properties]\n"founder of" = "founder"\n'),
     "wikidata.properties: not a property id (P112, or ^P112 read backwards): 'founder of' = 'founder'")
case("ingest-tolerance-100-percent", K, lambda c: ingest_config(c, "[wikidata]\nquantity_tolerance = 1\n"),
     "wikidata.quantity_tolerance: Input should be less than 1")
case("ingest-config-typo", K, lambda c: ingest_config(c, '[wikidata]\nendpoit = "http://127.0.0.1:1/sparql"\n'),
     "config {tmp}/c.toml: wikidata.endpoit: Extra inputs are not permitted")

# --- kgsynth pressure's inputs: claims files, policy files, options and config
K = "pressure"
_CLAIM = ('{"id":"c1","setting":"world_knowledge","language":"en","speaker":"Alex","question":"What is the nationality of '
          'Jean Dupont?","format_instruction":"Answer with at most 4 words.","answer_format":"short_text","true_value":"France",'
          '"false_value":"Italy","claim":"the nationality of Jean Dupont is Italy","claim_value":"Italy","kind":"entity",'
          '"confusability":"high","how":"another object of nationality","triple":"<x:s> <x:r> <x:o> ."}\n')


def pressure(c: Ctx, command: str, *more: str, claims: str = _CLAIM) -> list[str]:
    return ["pressure", command, "--claims", c.file("claims.jsonl", claims), "--base-url", "http://127.0.0.1:9/v1", *more]


case("pressure-claims-nothing-to-read", K, lambda c: ["pressure", "claims", "--out", str(c.tmp / "c.jsonl")],
     "give --dataset (in-context claims), --world (world-knowledge claims) or both")
case("pressure-claims-world-missing", K, lambda c: ["pressure", "claims", "--world", str(c.tmp / "none.nt"), "--out", str(c.tmp / "c.jsonl")],
     "none.nt")
case("pressure-claims-file-missing", K, lambda c: ["pressure", "run", "--claims", str(c.tmp / "none.jsonl"), "--base-url", "http://127.0.0.1:9/v1"],
     "{tmp}/none.jsonl: no such claims file (write one with kgsynth pressure claims)")
case("pressure-claims-line-not-json", K, lambda c: pressure(c, "run", claims=_CLAIM + "{not json\n"), "claims.jsonl:2: not a claim")
case("pressure-claims-line-missing-field", K, lambda c: pressure(c, "train", claims=_CLAIM.replace('"setting":"world_knowledge",', "")),
     "claims.jsonl:1: not a claim (setting: Field required)")
case("pressure-claims-empty", K, lambda c: pressure(c, "run", claims="\n"), "claims.jsonl holds no claims")
case("pressure-no-endpoint", K, lambda c: ["pressure", "train", "--claims", c.file("claims.jsonl", _CLAIM)],
     "no endpoint for the model under evaluation: pass --base-url or set model.base_url")
case("pressure-base-url-ftp", K, lambda c: pressure(c, "run", "--base-url", "ftp://x"), "--base-url: 'ftp://x' is not an http(s) URL")
case("pressure-policy-missing", K, lambda c: pressure(c, "run", "--policy", str(c.tmp / "p.json")),
     "{tmp}/p.json: no such policy file (write one with kgsynth pressure train)")
case("pressure-policy-garbage", K, lambda c: pressure(c, "run", "--policy", c.file("p.json", "{}")),
     "{tmp}/p.json: not a policy kgsynth pressure train wrote (KeyError")
case("pressure-config-typo", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "max_step = 3\n")),
     "config {tmp}/p.toml: max_step: Extra inputs are not permitted")
case("pressure-learner-unknown", K, lambda c: pressure(c, "train", "--config", c.file("p.toml", 'learner = "ppo"\n')),
     "learner: Input should be 'thompson' or 'q'")
case("pressure-endpoint-down", K, lambda c: pressure(c, "run"), "127.0.0.1:9")
case("pressure-every-episode-failed", K, lambda c: pressure(c, "run", "--base-url", c.fakes.url("500", "v1"), "--config",
                                                             c.file("p.toml", 'policies = ["farm", "random"]\n[model]\nmax_retries = 0\n')),
     "all 2 episodes failed, the first with", "HTTP 500", "run the same command again")
case("ingest-out-is-a-folder", K, lambda c: after(c.folder("outdir"), ingest(c, out="outdir")),
     "--out {tmp}/outdir is a folder: give a file path, e.g. {tmp}/outdir/graph.trig")
case("pressure-report-empty-log", K, lambda c: after(c.file("r/episodes.jsonl", ""), ["pressure", "report", str(c.tmp / "r")]),
     "{tmp}/r/episodes.jsonl is empty, not a log kgsynth pressure run wrote")
case("pressure-report-log-cut-off", K, lambda c: after(c.file("r/episodes.jsonl", '{"run": "x"}\n{"case_id": "c1", "pol'),
                                                       ["pressure", "report", str(c.tmp / "r")]),
     "{tmp}/r/episodes.jsonl is cut off in its last line (a run was killed while writing it)")
case("pressure-report-without-run-json", K, lambda c: after(c.file("r/episodes.jsonl", '{"run": "x"}\n'), ["pressure", "report", str(c.tmp / "r")]),
     "{tmp}/r has no run.json: the run has not finished")
case("pressure-report-no-run", K, lambda c: ["pressure", "report", str(c.tmp)], "{tmp}: no episodes.jsonl (write it with kgsynth pressure run)")

# ---------------------------------------------------------------------------- the five newer commands
# kgsynth ingest, release, rules suggest, pressure and every command's --endpoint: each fault
# a server or a proxy answers, through each command that talks to one, then inputs case by case.

# --- every command that reads a SPARQL endpoint, against every fault of FAULTS
K = "endpoints x commands"
ENDPOINT_COMMANDS: dict[str, Callable[[Ctx, str], list[str]]] = {
    "stats": lambda c, url: ["graph", "stats", "--endpoint", url, "--retries", "0"],
    "subgraphs": lambda c, url: ["graph", "subgraphs", "--endpoint", url, "--shape", "simple", "--retries", "0", "--out", str(c.tmp / "s.jsonl")],
    "rules": lambda c, url: ["rules", "suggest", "--endpoint", url, "--retries", "0", "--out", str(c.tmp / "rules.ttl")],
    "synth": lambda c, url: ["synth", "--endpoint", url, "--n", "4", "--out", str(c.tmp / "out"), "--config",
                             c.file("retries.toml", "[graph]\nretries = 0\n")],
}
ENDPOINT_ANSWERS = {  # fault -> what the one line says
    "html": ("did not return SPARQL JSON results: it sent text/html: <!doctype html>",),
    "500": ("answered with an error: HTTP 500", "internal server error"),
    "502": ("answered with an error: HTTP 502 Bad Gateway",),
    "json": ('did not return SPARQL JSON results: it sent application/json: {"hello": "world"}',),
    "cut": ("cut its answer at its row limit (X-SPARQL-MaxRows: 10000)",),
    "renamed": ("with the variables ?thing: the server did not run the query as sent",),
    "renamedxml": ("with the variables ?thing: the server did not run the query as sent",),
    "empty": ("did not return SPARQL JSON results: it sent an empty application/sparql-results+json answer",),
    "halfjson": ('it sent application/sparql-results+json: {"head": {"vars": ["n"]}, "results": {"bind',),
    "nonutf8": ("it sent application/sparql-results+json that is not UTF-8 text",),
    "boolean": ("it sent a yes/no answer, as to an ASK query",),
    "bindingsdict": ("with the variables ?n: the server did not run the query as sent",),
    "xmlgarbage": ("did not return SPARQL XML results: Expecting <sparql> tag, found <html>",),
    "csv": ("it sent text/csv: n",),
    "401": ("HTTP 401", "no user name and password were given: set KGSYNTH_SPARQL_USER and KGSYNTH_SPARQL_PASSWORD"),
    "bearer": ("HTTP 401", "it asks for Bearer authentication; kgsynth answers only HTTP Basic or Digest"),
    "403": ("answered with an error: HTTP 403 Forbidden",),
    "404": ("answered with an error: HTTP 404 Not Found",),
    "405": ("answered with an error: HTTP 405 Method Not Allowed",),
    "429": ("answered with an error: HTTP 429 Too Many Requests",),
    "prose": ('it sent application/json: {"id": "x", "object": "chat.completion"',),
}
_EARLIER = {("stats", k) for k in ("html", "500", "json", "404", "cut")} | {("subgraphs", "html")}  # cases of the first corpus
for _fault, _said in ENDPOINT_ANSWERS.items():
    for _command, _argv in ENDPOINT_COMMANDS.items():
        if (_command, _fault) not in _EARLIER:
            case(f"endpoint-{_fault}-{_command}", K, lambda c, a=_argv, f=_fault: a(c, c.fakes.url(f, "query")),
                 f"SPARQL endpoint http://127.0.0.1:", f"/{_fault}/query", *_said)
for _command, _argv in ENDPOINT_COMMANDS.items():
    case(f"endpoint-refused-{_command}", K, lambda c, a=_argv: a(c, f"http://127.0.0.1:{_free_port()}/query"), "cannot reach SPARQL endpoint")
    if _command != "stats":
        case(f"endpoint-not-a-url-{_command}", K, lambda c, a=_argv: a(c, "localhost:7878/query"), "'localhost:7878/query' is not an http(s) URL")
        case(f"endpoint-password-in-url-{_command}", K, lambda c, a=_argv: a(c, "http://alice:S3cretPw@127.0.0.1:9/sparql"),
             "--endpoint: http://127.0.0.1:9/sparql: a user name or password in the URL is refused")
case("rules-endpoint-graph-uri-not-an-iri", K, lambda c: [*ENDPOINT_COMMANDS["rules"](c, c.fakes.url("json", "query")), "--graph-uri", "g"],
     "--graph-uri 'g' is not an absolute IRI")
case("rules-endpoint-timeout-0", K, lambda c: [*ENDPOINT_COMMANDS["rules"](c, c.fakes.url("json", "query")), "--timeout", "0"],
     "--timeout 0: give a positive number of seconds")
case("subgraphs-endpoint-timeout-negative", K, lambda c: [*ENDPOINT_COMMANDS["subgraphs"](c, c.fakes.url("json", "query")), "--timeout", "-1"],
     "--timeout -1: give a positive number of seconds")
case("synth-endpoint-and-graph", K, lambda c: ["synth", "--endpoint", c.fakes.url("json", "query"), "--graph", H, "--out", str(c.tmp / "o")],
     "give --graph or --endpoint, not both")
case("synth-graph-uri-without-endpoint", K, lambda c: ["synth", "--graph", H, "--graph-uri", "http://x/g", "--out", str(c.tmp / "o")],
     "--graph-uri needs --endpoint: graph files are read as one graph")
case("synth-config-graph-retries-negative", K, lambda c: ["synth", "--endpoint", c.fakes.url("json", "query"), "--out", str(c.tmp / "o"),
                                                          "--config", c.file("r.toml", "[graph]\nretries = -1\n")],
     "graph.retries: Input should be greater than or equal to 0")
case("release-endpoint-in-config", K, lambda c: ["release", "--out", str(c.tmp / "rel"), "--config",
                                                 c.file("r.toml", f'[graph]\nendpoint = "{c.fakes.url("json", "query")}"\n')],
     "a release records every fact of its graph for the next one's diff: give graph files (--graph), not an endpoint")

# --- every command that asks a model, against every fault of FAULTS
K = "models x commands"
_TWO_CLAIMS = _CLAIM + _CLAIM.replace('"id":"c1"', '"id":"c2"').replace("Jean Dupont", "Anne Martin")
MODEL_COMMANDS: dict[str, Callable[[Ctx, str], list[str]]] = {
    "ingest": lambda c, url: ["ingest", c.file("a.txt", "Anna Petrova works at Zarechye Bank."), "--out", str(c.tmp / "g.trig"),
                              "--llm-base-url", url, "--config", c.file("i.toml", "[extraction]\nmax_retries = 0\n")],
    "pressure-train": lambda c, url: ["pressure", "train", "--claims", c.file("claims.jsonl", _TWO_CLAIMS * 3), "--base-url", url,
                                      "--out", str(c.tmp / "policy"), "--config",
                                      c.file("p.toml", "train_share = 0.9\n[model]\nmax_retries = 0\n")],
    "pressure-run": lambda c, url: ["pressure", "run", "--claims", c.file("claims.jsonl", _CLAIM), "--base-url", url, "--out",
                                    str(c.tmp / "run"), "--config", c.file("p.toml", 'policies = ["farm"]\n[model]\nmax_retries = 0\n')],
    "eval": lambda c, url: ["eval", "--dataset", c.dataset(), "--base-url", url, "--out", str(c.tmp / "e"), "--config",
                            c.eval_config("[model]\nmax_retries = 0\n")],
    "synth": lambda c, url: ["synth", "--graph", H, "--n", "4", "--llm-base-url", url, "--out", str(c.tmp / "o"), "--config",
                             c.file("s.toml", '[dataset]\ndifficulties = ["easy"]\n[llm]\nmax_retries = 0\n')],
}
MODEL_ANSWERS = {  # fault -> what the one line says
    "html": ("the reply is not an OpenAI chat completion: <!doctype html>",),
    "500": ("HTTP 500: internal server error",),
    "502": ("HTTP 502: <html><body><h1>502 Bad Gateway",),
    "json": ("the reply is not an OpenAI chat completion: it has no 'choices'",),
    "empty": ("the reply is not JSON: an empty body",),
    "halfjson": ('the reply is not JSON: {"head": {"vars": ["n"]}',),
    "nonutf8": ("the reply is not UTF-8 text",),
    "csv": ("the reply is not an OpenAI chat completion: n 1",),
    "401": ("HTTP 401: authentication required (the server refused the API key: set OPENAI_API_KEY",),
    "bearer": ("HTTP 401", "invalid_token", "the server refused the API key"),
    "403": ("HTTP 403", "the server refused the API key"),
    "404": ("HTTP 404: not found (no chat completions there: give the API root as base_url",),
    "405": ("HTTP 405: method not allowed (no chat completions there",),
    "429": ("HTTP 429", "rate limited"),
    "nochoices": ("the reply has no message content",),
    "nullcontent": ("the reply has no message content",),
}
_EARLIER = {("eval", "html"), ("eval", "500")}
for _fault, _said in MODEL_ANSWERS.items():
    for _command, _argv in MODEL_COMMANDS.items():
        if (_command, _fault) not in _EARLIER:
            case(f"model-{_fault}-{_command}", K, lambda c, a=_argv, f=_fault: a(c, c.fakes.url(f, "v1")), f"/{_fault}/v1", *_said)
for _command, _argv in MODEL_COMMANDS.items():
    if _command != "eval":
        case(f"model-refused-{_command}", K, lambda c, a=_argv: a(c, REFUSED), "connection refused", "127.0.0.1:9")

# --- kgsynth ingest: the documents (a bad one is named with its reason; when none is left, one line)
K = "ingest documents"


def ingest_docs(c: Ctx, source: str, *more: str) -> list[str]:
    """``ingest`` of ``source`` against a model that refuses the connection: a document that
    gets as far as the model fails there, one the reader refuses never does."""
    return ["ingest", source, "--out", str(c.tmp / "g.trig"), "--llm-base-url", REFUSED, *more]


def jsonl(*rows: object) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n" for row in rows)


_NO_DOC = "no document was ingested: "
case("ingest-empty-folder", K, lambda c: ingest_docs(c, c.folder("docs")), "no documents in {tmp}/docs: expected .txt or .md files")
case("ingest-folder-of-pdfs", K, lambda c: after(c.file("docs/a.pdf", b"%PDF-1.7"), c.file("docs/b.docx", b"PK\x03\x04"), ingest_docs(c, str(c.tmp / "docs"))),
     "no documents in {tmp}/docs", "it holds a.pdf, b.docx")
case("ingest-folder-of-hidden-files", K, lambda c: after(c.file("docs/.a.txt", "Anna works at Zarechye Bank."), ingest_docs(c, str(c.tmp / "docs"))),
     "no documents in {tmp}/docs: expected .txt or .md files")
case("ingest-folder-of-gzipped-text", K, lambda c: after(c.file("docs/a.txt.gz", gzip.compress(b"Anna works at Zarechye Bank.")),
                                                      ingest_docs(c, str(c.tmp / "docs"))), "no documents in {tmp}/docs", "a.txt.gz")
case("ingest-empty-txt", K, lambda c: ingest_docs(c, c.file("a.txt", "")), _NO_DOC + "a: empty: no text to extract facts from")
case("ingest-blank-txt", K, lambda c: ingest_docs(c, c.file("a.txt", " \n\t\n")), _NO_DOC + "a: empty")
case("ingest-binary-txt", K, lambda c: ingest_docs(c, c.file("a.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")), _NO_DOC + "a: binary content (NUL bytes), not text")
case("ingest-latin1-txt", K, lambda c: ingest_docs(c, c.file("a.txt", "Café Zürich gehört Anna.".encode("latin-1"))),
     _NO_DOC + "a: not UTF-8 text (byte 0xe9 at offset 3)")
case("ingest-utf16-txt", K, lambda c: ingest_docs(c, c.file("a.txt", "Anna works at Zarechye Bank.".encode("utf-16"))), _NO_DOC + "a: binary content")
case("ingest-german-txt", K, lambda c: ingest_docs(c, c.file("a.txt", "Die Zarechye Bank wurde 1994 in Moskau gegründet und hat heute "
                                                                      "mehr als zweitausend Mitarbeiter in ganz Russland.")),
     _NO_DOC + "a: language 'de' (read from its letters) is not one of en, ru (documents.languages)")
case("ingest-french-md", K, lambda c: ingest_docs(c, c.file("a.md", "# Banque\n\nLa banque Zarechye a été fondée en 1994 à Moscou et emploie "
                                                                    "aujourd'hui plus de deux mille personnes dans toute la Russie.")),
     _NO_DOC + "a: language 'fr' (read from its letters) is not one of en, ru")
case("ingest-chinese-txt", K, lambda c: ingest_docs(c, c.file("a.txt", "扎列奇耶银行成立于一九九四年。")), _NO_DOC + "a: language 'unknown'")
case("ingest-only-digits", K, lambda c: ingest_docs(c, c.file("a.txt", "1994 2001 2024\n")), _NO_DOC + "a: language 'unknown'")
case("ingest-ukrainian-not-configured", K, lambda c: ingest_docs(c, c.file("a.txt", "Банк «Заріччя» заснований у 1994 році в Києві; "
                                                                                     "у ньому працює понад дві тисячі людей.")),
     _NO_DOC + "a: language 'uk' (read from its letters) is not one of en, ru")
case("ingest-over-max-mb", K, lambda c: ingest_docs(c, c.file("a.txt", "Anna works at Zarechye Bank. " * 400), "--config",
                                                    c.file("i.toml", "[documents]\nmax_mb = 0.01\n")),
     _NO_DOC + "a: 0.0 MB, over the 0.01 MB limit (documents.max_mb): split it")
case("ingest-html-file", K, lambda c: ingest_docs(c, c.file("a.html", "<p>Anna</p>")),
     "cannot read documents from {tmp}/a.html: give a folder of .txt/.md files, one such file, or a .jsonl")
case("ingest-json-not-jsonl", K, lambda c: ingest_docs(c, c.file("docs.json", '[{"id": "a", "text": "Anna"}]')),
     "cannot read documents from {tmp}/docs.json")
case("ingest-csv-file", K, lambda c: ingest_docs(c, c.file("docs.csv", "id,text\na,Anna\n")), "cannot read documents from {tmp}/docs.csv")
case("ingest-jsonl-empty", K, lambda c: ingest_docs(c, c.file("d.jsonl", "")), "no documents in {tmp}/d.jsonl: it holds no line")
case("ingest-jsonl-blank-lines", K, lambda c: ingest_docs(c, c.file("d.jsonl", "\n\n  \n")), "no documents in {tmp}/d.jsonl: it holds no line")
case("ingest-jsonl-not-json", K, lambda c: ingest_docs(c, c.file("d.jsonl", "{id: a}\n")), _NO_DOC + "d.jsonl line 1: not JSON")
case("ingest-jsonl-a-list", K, lambda c: ingest_docs(c, c.file("d.jsonl", '["a", "Anna"]\n')), _NO_DOC + "d.jsonl line 1: (the line): Input should be")
case("ingest-jsonl-no-text", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "a"}))), _NO_DOC + "a (d.jsonl line 1): text: Field required")
case("ingest-jsonl-no-id", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"text": "Anna works at Zarechye Bank."}))),
     _NO_DOC + "d.jsonl line 1: id: Field required")
case("ingest-jsonl-empty-id", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "", "text": "Anna works at Zarechye Bank."}))),
     _NO_DOC + "d.jsonl line 1: id: String should have at least 1 character")
case("ingest-jsonl-text-a-number", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "a", "text": 42}))), _NO_DOC + "a (d.jsonl line 1): text")
case("ingest-jsonl-bad-date", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "a", "text": "Anna works here.", "date": "31/12/2024"}))),
     _NO_DOC + "a (d.jsonl line 1): date")
case("ingest-jsonl-unknown-field", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "a", "text": "Anna works here.", "author": "x"}))),
     _NO_DOC + "a (d.jsonl line 1): author: Extra inputs are not permitted")
case("ingest-jsonl-lang-not-configured", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "a", "text": "Anna works here.", "lang": "de"}))),
     _NO_DOC + "a: language 'de' (given) is not one of en, ru")
case("ingest-jsonl-duplicate-id", K, lambda c: ingest_docs(c, c.file("d.jsonl", jsonl({"id": "a", "text": ""}, {"id": "a", "text": "Anna"}))),
     _NO_DOC + "a: empty", "and 1 more")
case("ingest-jsonl-not-utf8-line", K, lambda c: ingest_docs(c, c.file("d.jsonl", b'{"id": "a", "text": "caf\xe9"}\n')),
     _NO_DOC + "d.jsonl line 1: not UTF-8 text")
case("ingest-jsonl-cut-mid-line", K, lambda c: ingest_docs(c, c.file("d.jsonl", '{"id": "a", "text": "Anna wor')), _NO_DOC + "d.jsonl line 1: not JSON")
case("ingest-mixed-folder-all-refused", K, lambda c: after(c.file("docs/a.pdf", b"%PDF"), c.file("docs/b.txt", ""), c.file("docs/c.csv", "x"),
                                                           ingest_docs(c, str(c.tmp / "docs"))),
     _NO_DOC + "a.pdf: a .pdf file is not read: convert it to plain text (.txt or .md) first", "(and 2 more, each with its reason in {tmp}/g.trig.report.json)")
case("ingest-good-document-model-refused", K, lambda c: ingest_docs(c, c.file("a.txt", "Anna Petrova works at Zarechye Bank.")),
     "connection refused", "127.0.0.1:9")

# --- kgsynth ingest: options and config
K = "ingest options and config"

case("ingest-out-under-a-file", K, lambda c: after(c.file("existing_file.txt", "x"), ingest(c, out="existing_file.txt/g.trig")),
     "{tmp}/existing_file.txt is a file, so nothing can be written under it")
case("ingest-out-nq-accepted-trig-typo", K, lambda c: ingest(c, out="g.trg"), "{tmp}/g.trg: give the graph a .trig or .nq name")
case("ingest-model-empty-name", K, lambda c: ingest(c, "--llm-model", "", "--llm-base-url", REFUSED),
     "--llm-model '': extraction.model: String should have at least 1 character")
case("ingest-config-missing", K, lambda c: ingest(c, "--config", str(c.tmp / "none.toml")), "cannot read config {tmp}/none.toml")
case("ingest-config-broken-toml", K, lambda c: ingest_config(c, "[extraction\nmodel = 'x'\n"), "{tmp}/c.toml", "line 1")
case("ingest-config-synth-section", K, lambda c: ingest_config(c, "[dataset]\nn = 4\n"),
     "config {tmp}/c.toml: dataset: Extra inputs are not permitted")
case("ingest-config-languages-empty", K, lambda c: ingest_config(c, "[documents]\nlanguages = []\n"), "documents.languages")
case("ingest-config-chunk-too-small", K, lambda c: ingest_config(c, "[documents]\nchunk_chars = 10\n"), "documents.chunk_chars")
case("ingest-config-overlap-too-large", K, lambda c: ingest_config(c, "[documents]\nchunk_chars = 1000\noverlap_chars = 600\n"),
     "overlap_chars (600) must be under half of chunk_chars (1000)")
case("ingest-config-max-mb-0", K, lambda c: ingest_config(c, "[documents]\nmax_mb = 0\n"), "documents.max_mb")
case("ingest-config-evidence-score-too-low", K, lambda c: ingest_config(c, "[extraction]\nevidence_score = 10\n"),
     "extraction.evidence_score: Input should be greater than or equal to 50")
case("ingest-config-max-tokens-8", K, lambda c: ingest_config(c, "[extraction]\nmax_tokens = 8\n"),
     "extraction.max_tokens: Input should be greater than or equal to 16")
case("ingest-config-timeout-0", K, lambda c: ingest_config(c, "[extraction]\ntimeout_s = 0\n"), "extraction.timeout_s")
case("ingest-config-failures-in-a-row-0", K, lambda c: ingest_config(c, "[extraction]\nmax_failures_in_a_row = 0\n"),
     "extraction.max_failures_in_a_row: Input should be greater than or equal to 1")
case("ingest-config-base-url-not-url", K, lambda c: ingest_config(c, '[extraction]\nbase_url = "127.0.0.1:8001"\n'),
     "extraction.base_url")
case("ingest-config-namespace-not-iri", K, lambda c: ingest_config(c, 'namespace = "my graph"\n'), "namespace")
case("ingest-config-yaml-a-list", K, lambda c: ingest(c, "--config", c.file("c.yaml", "- a\n- b\n")), "{tmp}/c.yaml")
case("ingest-config-wikidata-check-without-endpoint", K, lambda c: ingest_config(c, "[wikidata]\ncheck = true\nendpoint = ''\n"),
     "wikidata")

# --- kgsynth release
K = "release"


def release(c: Ctx, *more: str, out: str = "rel") -> list[str]:
    return ["release", "--graph", H, "--n", "4", "--out", str(c.tmp / out), *more]


def manifest_edit(edit: Callable[[dict], object]) -> Callable[[Path], object]:
    return lambda folder: _edit_json(folder / "manifest.json", edit)


case("release-out-missing", K, lambda c: ["release", "--graph", H], "Missing option '--out'", code=2)
case("release-out-is-a-file", K, lambda c: after(c.file("existing_file.txt", "x"), release(c, out="existing_file.txt")),
     "--out {tmp}/existing_file.txt is a file, not a folder")
case("release-out-holds-another-release", K, lambda c: ["release", "--graph", H, "--version", "2.0.0", "--out", c.release()],
     "{tmp}/release holds release 1.0.0: write release 2.0.0 to another folder")
case("release-out-is-the-previous", K, lambda c: ["release", "--graph", H, "--previous", c.release(), "--out", str(c.tmp / "release")],
     "overwrite the previous")
case("release-out-holds-another-run", K, lambda c: after(_unfinished_other_run(c.tmp / "rel"), release(c)), "holds an unfinished")
case("release-graph-missing", K, lambda c: ["release", "--graph", str(c.tmp / "none.ttl"), "--out", str(c.tmp / "rel")], "{tmp}/none.ttl")
case("release-graph-broken", K, lambda c: ["release", "--graph", c.file("g.ttl", "@prefix ex: <http://x/> .\nex:a ex:p .\n"), "--out", str(c.tmp / "rel")],
     "syntax error in {tmp}/g.ttl at line 2")
case("release-n-0", K, lambda c: release(c, "--n", "0"), "--n 0")
case("release-n-negative", K, lambda c: release(c, "--n", "-5"), "--n -5")
case("release-version-v-prefix", K, lambda c: release(c, "--version", "v1.0.0"), "version 'v1.0.0' is neither semantic (X.Y.Z, e.g. 1.2.0) nor dated")
case("release-version-two-parts", K, lambda c: release(c, "--version", "1.0"), "version '1.0' is neither semantic")
case("release-version-leading-zero", K, lambda c: release(c, "--version", "01.2.3"), "version '01.2.3' is neither semantic")
case("release-version-month-13", K, lambda c: release(c, "--version", "2026.13"), "version '2026.13' is neither semantic")
case("release-version-prerelease", K, lambda c: release(c, "--version", "1.0.0-beta"), "version '1.0.0-beta' is neither semantic")
case("release-version-empty", K, lambda c: release(c, "--version", ""), "version '' is neither semantic")
case("release-version-not-newer", K, lambda c: release(c, "--previous", c.release(), "--version", "1.0.0"),
     "version 1.0.0 is not greater than 1.0.0, the version of the previous release {tmp}/release")
case("release-version-older", K, lambda c: release(c, "--previous", c.release(), "--version", "0.9.0"), "version 0.9.0 is not greater than 1.0.0")
case("release-previous-missing", K, lambda c: release(c, "--previous", str(c.tmp / "none")),
     "the previous release {tmp}/none is missing: give the folder kgsynth release wrote")
case("release-previous-a-file", K, lambda c: release(c, "--previous", c.file("existing_file.txt", "x")), "the previous release {tmp}/existing_file.txt is a file")
case("release-previous-empty-folder", K, lambda c: release(c, "--previous", c.folder("prev")), "{tmp}/prev is not a kgsynth release: it has no manifest.json")
case("release-previous-a-synth-dataset", K, lambda c: release(c, "--previous", c.dataset()), "{tmp}/dataset is not a kgsynth release", "no 'release' section")
case("release-previous-manifest-broken", K, lambda c: release(c, "--previous", c.release(lambda d: (d / "manifest.json").write_text('{"release": '))),
     "cannot read {tmp}/release/manifest.json")
case("release-previous-manifest-a-list", K, lambda c: release(c, "--previous", c.release(lambda d: (d / "manifest.json").write_text("[]"))),
     "{tmp}/release is not a kgsynth release", "no 'release' section")
case("release-previous-version-a-number", K, lambda c: release(c, "--previous", c.release(manifest_edit(lambda m: m["release"].update(version=1)))),
     "no 'release' section")
case("release-previous-version-malformed", K, lambda c: release(c, "--previous", c.release(manifest_edit(lambda m: m["release"].update(version="one", releases=["one"])))),
     "version 'one' is neither semantic")
case("release-previous-releases-a-string", K, lambda c: release(c, "--previous", c.release(manifest_edit(lambda m: m["release"].update(releases="1.0.0")))),
     "release.releases in {tmp}/release/manifest.json is not the list of versions up to 1.0.0")
case("release-previous-releases-empty", K, lambda c: release(c, "--previous", c.release(manifest_edit(lambda m: m["release"].update(releases=[])))),
     "release.releases", "is not the list of versions up to 1.0.0 (found [])")
case("release-previous-releases-other-last", K, lambda c: release(c, "--previous", c.release(manifest_edit(lambda m: m["release"].update(releases=["0.1.0"])))),
     "is not the list of versions up to 1.0.0")
case("release-previous-history-missing", K, lambda c: release(c, "--previous", c.release(lambda d: (d / "private/history.jsonl").unlink())),
     "the previous release {tmp}/release lacks private/history.jsonl")
case("release-previous-history-edited", K, lambda c: release(c, "--previous", c.release(lambda d: (d / "private/history.jsonl").write_text("{}\n"))),
     "{tmp}/release/private/history.jsonl does not match {tmp}/release/manifest.json")
case("release-previous-facts-edited", K, lambda c: release(c, "--previous", c.release(lambda d: _rewrite_lines(d / "private/facts.txt", lambda ls: ls[1:]))),
     "{tmp}/release/private/facts.txt does not match")
case("release-previous-files-not-a-dict", K, lambda c: release(c, "--previous", c.release(manifest_edit(lambda m: m.update(files=[])))),
     "no 'release' section")
case("release-previous-of-another-graph", K, lambda c: ["release", "--graph", c.file("o.nt", '<http://o.example/a> <http://o.example/p> "1" .\n'),
                                                         "--previous", c.release(), "--out", str(c.tmp / "rel")],
     "the previous release {tmp}/release was made from another graph")
case("release-config-typo", K, lambda c: release(c, "--config", c.file("r.toml", '[release]\nnmae = "x"\n')), "release.nmae: Extra inputs are not permitted")
case("release-config-license-empty", K, lambda c: release(c, "--config", c.file("r.toml", '[release]\nlicense = ""\n')), "release.license")
case("release-config-name-empty", K, lambda c: release(c, "--config", c.file("r.toml", '[release]\nname = ""\n')), "release.name")
case("release-config-llm-without-endpoint", K, lambda c: release(c, "--config", c.file("r.toml", "[llm]\nmax_retries = 0\n")),
     "the [llm] section names no endpoint")
case("release-config-binary", K, lambda c: release(c, "--config", c.file("r.toml", b"\x00\x01\xff")), "is not UTF-8 text")

# --- kgsynth rules suggest
K = "rules suggest"


DATED = PREFIXES + "".join(f'ex:p{i} ex:birthDate "{year}-0{i + 3}-1{i}"^^xsd:date .\n' for i, year in enumerate((1911, 1957, 1988)))


def rules(c: Ctx, *more: str, graph: str = H) -> list[str]:
    return ["rules", "suggest", graph, "--out", str(c.tmp / "rules.ttl"), "--min-entities", "1", *more]


case("rules-out-missing", K, lambda c: ["rules", "suggest", H], "Missing option '--out'", code=2)
case("rules-no-graph-and-no-endpoint", K, lambda c: ["rules", "suggest", "--out", str(c.tmp / "r.ttl")], "re:(graph|endpoint)")
case("rules-graph-missing", K, lambda c: rules(c, graph=str(c.tmp / "none.ttl")), "{tmp}/none.ttl")
case("rules-graph-broken", K, lambda c: rules(c, graph=c.file("g.ttl", "@prefix ex: <http://x/> .\nex:a ex:p\n")), "syntax error in {tmp}/g.ttl")
case("rules-graph-empty", K, lambda c: rules(c, graph=c.file("g.nt", "")), "{tmp}/g.nt holds no triples")
case("rules-graph-only-labels", K, lambda c: rules(c, graph=c.file("g.nt", '<http://x/a> <http://www.w3.org/2000/01/rdf-schema#label> "A"@en .\n')),
     "no rule of the rule library applies to the embedded store of {tmp}/g.nt", "it has no relations besides types and labels")
case("rules-min-entities-too-high", K, lambda c: ["rules", "suggest", H, "--out", str(c.tmp / "r.ttl"), "--min-entities", "1000"],
     "no rule of the rule library covers 1,000 or more entities", "give a smaller --min-entities")
case("rules-min-entities-0", K, lambda c: rules(c, "--min-entities", "0"), "Invalid value for '--min-entities': Input should be greater than or equal to 1")
case("rules-min-entities-not-a-number", K, lambda c: rules(c, "--min-entities", "many"), "Invalid value for '--min-entities'", "valid integer")
case("rules-base-not-an-iri", K, lambda c: rules(c, "--base", "rules"), "--base 'rules' is not an absolute IRI")
case("rules-base-with-space", K, lambda c: rules(c, "--base", "http://x.example/my rules/"), "is not an absolute IRI")
case("rules-base-empty", K, lambda c: rules(c, "--base", ""), "--base '' is not an absolute IRI")
case("rules-out-is-a-folder", K, lambda c: ["rules", "suggest", H, "--out", c.folder("outdir")], "--out {tmp}/outdir is a folder")
case("rules-out-under-a-file", K, lambda c: ["rules", "suggest", H, "--out", str(Path(c.file("existing_file.txt", "x")) / "r.ttl")],
     "{tmp}/existing_file.txt is a file, so nothing can be written under it")
case("rules-out-in-proc", K, lambda c: ["rules", "suggest", c.file("g.ttl", DATED), "--out", "/proc/rules.ttl", "--min-entities", "1"],
     "cannot write /proc/rules.ttl")
case("rules-every-rule-left-out", K, lambda c: rules(c), "every rule of the rule library that covers 1 or more entities of the embedded "
     "store of", "is left out: 'number of values: knows': 100% of its 1 answers are 2: a model would answer by guessing the usual value")
case("rules-nan-values", K, lambda c: rules(c, graph=c.file("g.ttl", PREFIXES + "".join(
    f'ex:c{i} ex:area "NaN"^^xsd:double ; ex:population "{1000 + i}"^^xsd:integer .\n' for i in range(30)))),
     "no rule of the rule library applies", "(looked at 2 relations: area, population)")
case("rules-lang-empty", K, lambda c: rules(c, "--lang", ""), "--lang")
case("rules-graph-a-folder-without-rdf", K, lambda c: after(c.file("g/notes.txt", "x"), rules(c, graph=str(c.tmp / "g"))), "{tmp}/g")

# --- kgsynth pressure: claims files, policies, options
K = "pressure inputs"


def claim(**edits: object) -> str:
    row = json.loads(_CLAIM)
    row.update(edits)
    return json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n"


case("pressure-claim-false-is-true", K, lambda c: pressure(c, "run", claims=claim(false_value="France", claim_value="France")),
     "claims.jsonl:1: not a claim", "false_value 'France' is a true answer: the claim is not false")
case("pressure-claim-false-is-true-other-case", K, lambda c: pressure(c, "run", claims=claim(false_value=" france ")), "false_value ' france ' is a true answer")
case("pressure-claim-false-is-an-alias", K, lambda c: pressure(c, "run", claims=claim(true_aliases=["Italy"])), "false_value 'Italy' is a true answer")
case("pressure-claim-bad-setting", K, lambda c: pressure(c, "run", claims=claim(setting="gossip")), "claims.jsonl:1: not a claim (setting")
case("pressure-claim-bad-kind", K, lambda c: pressure(c, "run", claims=claim(kind="person")), "claims.jsonl:1: not a claim (kind")
case("pressure-claim-bad-answer-format", K, lambda c: pressure(c, "run", claims=claim(answer_format="essay")), "(answer_format")
case("pressure-claim-bad-confusability", K, lambda c: pressure(c, "run", claims=claim(confusability="extreme")), "(confusability")
case("pressure-claim-extra-field", K, lambda c: pressure(c, "run", claims=claim(note="x")), "(note: Extra inputs are not permitted")
case("pressure-claim-true-value-a-number", K, lambda c: pressure(c, "run", claims=claim(true_value=5)), "(true_value")
case("pressure-claim-a-list", K, lambda c: pressure(c, "run", claims="[1, 2]\n"), "claims.jsonl:1: not a claim")
case("pressure-claim-second-line-broken", K, lambda c: pressure(c, "run", claims=_CLAIM + _CLAIM[:40] + "\n"), "claims.jsonl:2: not a claim")
case("pressure-claims-not-utf8", K, lambda c: ["pressure", "run", "--claims", c.file("claims.jsonl", _CLAIM.encode().replace(b"Jean", b"J\xe9an")), "--base-url", REFUSED],
     "{tmp}/claims.jsonl:1: not UTF-8 text (byte 0xe9 at column")
case("pressure-claims-a-folder", K, lambda c: ["pressure", "run", "--claims", c.folder("claims"), "--base-url", REFUSED],
     "{tmp}/claims: no such claims file")
case("pressure-run-out-is-a-file", K, lambda c: pressure(c, "run", "--out", c.file("existing_file.txt", "x")),
     "--out {tmp}/existing_file.txt is a file, not a folder")
case("pressure-train-out-under-a-file", K, lambda c: pressure(c, "train", "--out", str(Path(c.file("existing_file.txt", "x")) / "p")),
     "{tmp}/existing_file.txt is a file, so nothing can be written under it")
case("pressure-run-out-holds-another-run", K, lambda c: after(c.file("run/episodes.jsonl", '{"run": "0000000000000000"}\n'),
                                                              pressure(c, "run", "--out", str(c.tmp / "run"))),
     "{tmp}/run holds episodes of another model, seed, max_steps or policy: use a new --out or delete it")
case("pressure-run-out-holds-a-damaged-log", K, lambda c: after(c.file("run/episodes.jsonl", b'{"run": "\xff"}\n'),
                                                               pressure(c, "run", "--out", str(c.tmp / "run"))),
     "{tmp}/run/episodes.jsonl:1: not UTF-8 text (byte 0xff at column 10)")
case("pressure-only-learned-without-policy", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", 'policies = ["learned"]\n')),
     "policies = ['learned'] needs --policy")
case("pressure-policy-not-json", K, lambda c: pressure(c, "run", "--policy", c.file("p.json", "{oops")), "{tmp}/p.json: not a policy kgsynth pressure train wrote")
case("pressure-policy-empty", K, lambda c: pressure(c, "run", "--policy", c.file("p.json", "")), "{tmp}/p.json: not a policy")
case("pressure-policy-a-folder", K, lambda c: pressure(c, "run", "--policy", c.folder("p")), "{tmp}/p")


def policy(c: Ctx, **settings: object) -> str:
    """A policy file as kgsynth pressure train writes it (untrained), for a config of ``settings``."""
    from kgsynth.pressure.config import PressureConfig
    from kgsynth.pressure.run import _idle_env, _learner

    cfg = PressureConfig.model_validate(settings)
    learner = _learner(cfg, _idle_env(cfg))
    return c.file("policy.json", json.dumps({"kgsynth": "0", "learner": cfg.learner, "model": "local", "seed": cfg.seed,
                                             "max_steps": cfg.max_steps, "trained_on": [], "maintained_at_turn_0": [], "episodes": 0,
                                             "returns": [], "calls": 0, "state": learner.state()}))


case("pressure-policy-of-another-learner", K, lambda c: pressure(c, "run", "--policy", policy(c, learner="q")),
     "{tmp}/policy.json was trained with another config: learner 'q' (this run: 'thompson')", "train again")
case("pressure-policy-of-other-steps", K, lambda c: pressure(c, "run", "--policy", policy(c, max_steps=6)), "max_steps 6 (this run: 4)")
case("pressure-policy-of-another-seed", K, lambda c: pressure(c, "run", "--policy", policy(c, seed=3)), "seed 3 (this run: 0)")
case("pressure-policy-state-damaged", K, lambda c: pressure(c, "run", "--policy", after(p := policy(c), _edit_json(Path(p), lambda j: j.update(state={})), p)),
     "{tmp}/policy.json: not a policy kgsynth pressure train wrote")
case("pressure-claims-dataset-of-another-graph", K, lambda c: ["pressure", "claims", "--dataset", c.simple_dataset(), "--graph", H,
                                                               "--out", str(c.tmp / "c.jsonl")],
     "none of the dataset's", "simple items' facts is in embedded store of", "the dataset was made from another graph; give that one (--graph)")
case("pressure-claims-dataset-missing", K, lambda c: ["pressure", "claims", "--dataset", str(c.tmp / "none"), "--graph", H, "--out", str(c.tmp / "c.jsonl")],
     "{tmp}/none does not exist")
case("pressure-claims-dataset-without-simple-items", K, lambda c: ["pressure", "claims", "--dataset", c.dataset(), "--graph", H, "--out", str(c.tmp / "c.jsonl")],
     "no claim could be made")
case("pressure-claims-world-broken", K, lambda c: ["pressure", "claims", "--world", c.file("w.nt", "<a> <b> .\n"), "--out", str(c.tmp / "c.jsonl")],
     "{tmp}/w.nt at line 1")
case("pressure-claims-world-without-facts", K, lambda c: ["pressure", "claims", "--world", c.file("w.nt", ""), "--out", str(c.tmp / "c.jsonl")],
     "{tmp}/w.nt holds no triples")
case("pressure-claims-out-is-a-folder", K, lambda c: ["pressure", "claims", "--world", H, "--out", c.folder("outdir")], "--out {tmp}/outdir is a folder")
case("pressure-claims-seed-not-a-number", K, lambda c: ["pressure", "claims", "--world", H, "--seed", "x"], "Invalid value for '--seed'")
case("pressure-claims-config-typo", K, lambda c: ["pressure", "claims", "--world", H, "--config", c.file("p.toml", "[claims]\nworld = 3\n")],
     "claims.world: Extra inputs are not permitted")
case("pressure-config-max-steps-0", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "max_steps = 0\n")), "max_steps: Input should be greater than or equal to 1")
case("pressure-config-max-steps-9", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "max_steps = 9\n")), "max_steps: Input should be less than or equal to 8")
case("pressure-config-train-share-1", K, lambda c: pressure(c, "train", "--config", c.file("p.toml", "train_share = 1\n")), "train_share: Input should be less than 1")
case("pressure-config-policy-unknown", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", 'policies = ["farm", "gaslight"]\n')), "policies.1")
case("pressure-config-bootstrap-10", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "bootstrap = 10\n")), "bootstrap")
case("pressure-config-confidence-low", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "confidence = 0.4\n")), "confidence")
case("pressure-config-episodes-0", K, lambda c: pressure(c, "train", "--config", c.file("p.toml", "train_episodes = 0\n")), "train_episodes")
case("pressure-config-model-max-tokens-0", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "[model]\nmax_tokens = 0\n")), "model.max_tokens")
case("pressure-config-failures-in-a-row-0", K, lambda c: pressure(c, "run", "--config", c.file("p.toml", "[model]\nmax_failures_in_a_row = 0\n")),
     "model.max_failures_in_a_row: Input should be greater than or equal to 1")
case("pressure-config-model-url-bad", K, lambda c: ["pressure", "run", "--claims", c.file("claims.jsonl", _CLAIM), "--config",
                                                    c.file("p.toml", '[model]\nbase_url = "localhost:8001"\n')], "model.base_url")
case("pressure-config-a-yaml-list", K, lambda c: pressure(c, "run", "--config", c.file("p.yaml", "- 1\n")), "{tmp}/p.yaml")
case("pressure-model-empty-name", K, lambda c: pressure(c, "run", "--model", ""), "--model '': model.model: String should have at least 1 character")

# --- kgsynth pressure report: folders a run wrote, damaged
K = "pressure report folders"


def pressure_folder(c: Ctx, episodes: str | bytes, run: str | None = '{"config": {}}') -> list[str]:
    c.file("r/episodes.jsonl", episodes)
    if run is not None:
        c.file("r/run.json", run)
    return ["pressure", "report", str(c.tmp / "r")]


case("pressure-report-a-file", K, lambda c: ["pressure", "report", c.file("existing_file.txt", "x")], "{tmp}/existing_file.txt")
case("pressure-report-missing", K, lambda c: ["pressure", "report", str(c.tmp / "none")], "{tmp}/none")
case("pressure-report-log-middle-line-broken", K, lambda c: pressure_folder(c, '{"run": "x"}\n{oops\n{"run": "x"}\n'), "{tmp}/r/episodes.jsonl:2: not an episode kgsynth pressure run wrote")
case("pressure-report-log-not-utf8", K, lambda c: pressure_folder(c, b'{"run": "x"}\n{"case_id": "\xe9"}\n'), "{tmp}/r/episodes.jsonl:2: not UTF-8 text (byte 0xe9")
case("pressure-report-run-json-broken", K, lambda c: pressure_folder(c, '{"run": "x"}\n', run='{"config": '), "{tmp}/r/run.json")
case("pressure-report-run-json-a-list", K, lambda c: pressure_folder(c, '{"run": "x"}\n', run="[]"), "{tmp}/r/run.json: not a run.json kgsynth pressure run wrote (a JSON list, not an object)")
case("pressure-report-episode-missing-field", K, lambda c: pressure_folder(c, '{"run": "x"}\n{"case_id": "c1"}\n'), "{tmp}/r/episodes.jsonl:2: not an episode", "policy: Field required")

# --- malformed command lines: exit 2, one line naming the help to read
K = "command lines (usage, exit 2)"
case("unknown-command", K, lambda c: ["frobnicate"], "No such command 'frobnicate'", "see kgsynth --help", code=2)
case("unknown-graph-command", K, lambda c: ["graph", "frob"], "No such command 'frob'", "see kgsynth graph --help", code=2)
case("unknown-option", K, lambda c: ["synth", "--foo"], "No such option: --foo", "see kgsynth synth --help", code=2)
case("extra-argument", K, lambda c: ["synth", "extra"], "unexpected extra argument", code=2)
case("option-without-value", K, lambda c: ["synth", "--n"], "'--n' requires an argument", code=2)
case("eval-without-dataset", K, lambda c: ["eval", "--base-url", REFUSED], "Missing option '--dataset'", code=2)
case("report-without-folder", K, lambda c: ["report"], "Missing argument", code=2)
case("subgraphs-without-shape", K, lambda c: ["graph", "subgraphs", H], "Missing option '--shape'", "see kgsynth graph subgraphs --help", code=2)

# --- odd but valid: accepted
K = "odd but valid (accepted)"
CRLF_TTL = "@prefix ex: <http://x/> .\r\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\r\nex:a rdfs:label \"A\"@en ; ex:p ex:b .\r\n"
case("unicode-path-with-space", K, lambda c: stats(c, "граф файл.ttl", CRLF_TTL, "--json"), code=0)
case("crlf-turtle", K, lambda c: stats(c, "g.ttl", CRLF_TTL, "--json"), code=0)
case("gzipped-turtle", K, lambda c: stats(c, "g.ttl.gz", gzip.compress(CRLF_TTL.encode()), "--json"), code=0)
case("folder-with-a-readme", K, lambda c: after(c.file("f/g.nt", "<http://x/a> <http://x/p> <http://x/b> .\n"), c.file("f/README.md", "# notes"),
                                                ["graph", "stats", str(c.tmp / "f")]), code=0)
case("ill-typed-literal", K, lambda c: stats(c, "g.ttl", '@prefix ex: <http://x/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\nex:a ex:p "abc"^^xsd:integer .\n'),
     code=0)
case("lang-with-spaces", K, lambda c: ["graph", "stats", H, "--lang", " en , ru ", "--json"], code=0)
case("lang-without-labels", K, lambda c: ["graph", "stats", H, "--lang", "de", "--json"], code=0)
case("subgraphs-limit-0", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--limit", "0", "--out", str(c.tmp / "s.jsonl")], "wrote 0 simple subgraphs", code=0)
case("subgraphs-out-in-new-folders", K, lambda c: ["graph", "subgraphs", H, "--shape", "simple", "--limit", "2", "--out", str(c.tmp / "a" / "b" / "s.jsonl")],
     "wrote 2 simple subgraphs", code=0)
# n = 4 on the hand-made graph writes 2 items: its easy cell (see tiny_dataset)
case("config-with-bom", K, lambda c: conf(c, "\ufeff[dataset]\nn = 4\n"), "wrote 2 items", code=0)
case("config-with-crlf", K, lambda c: conf(c, "[dataset]\r\nn = 4\r\nseed = 1\r\n"), "wrote 2 items", code=0)
case("config-empty-sections", K, lambda c: conf(c, "[sampling]\n\n[filters]\n\n[dialogue]\n\n[dataset]\nn = 4\n"), "wrote 2 items", code=0)
case("config-empty-yaml", K, lambda c: [*conf(c, "", "c.yaml"), "--n", "4"], "wrote 2 items", code=0)
case("seed-negative", K, lambda c: synth(c, "--n", "4", "--seed", "-1"), "wrote 2 items", code=0)
case("model-prose-eval", K, lambda c: MODEL_COMMANDS["eval"](c, c.fakes.url("prose", "v1")), "accuracy 0.0%", "format valid 0.0%", code=0)
case("model-prose-pressure-run", K, lambda c: MODEL_COMMANDS["pressure-run"](c, c.fakes.url("prose", "v1")), "farm: zero-turn 0.0%", code=0)
case("rules-suggest-three-births", K, lambda c: rules(c, graph=c.file("g.ttl", DATED)), "wrote 2 library rules to {tmp}/rules.ttl", code=0)
case("n-below-the-cells", K, lambda c: ["synth", "--graph", str(DEMO), "--n", "20", "--out", str(c.tmp / "o")], "re:note: n = 20 is below one item per cell",
     code=0, waits_on="lead")


def _fill(fragment: str, ctx: Ctx) -> str:
    return fragment.replace("{tmp}", str(ctx.tmp))


def _matches(fragment: str, text: str) -> bool:
    return bool(re.search(fragment[3:], text)) if fragment.startswith("re:") else fragment in text


def _run_in_process(argv: list[str], capsys) -> tuple[int, str, str]:
    from kgsynth.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


@pytest.fixture
def ctx(tmp_path, tiny_dataset, tiny_release, simple_dataset, fakes, monkeypatch) -> Ctx:
    monkeypatch.chdir(tmp_path)  # a command that writes to its default folder writes here
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no model reply is cached for later runs
    monkeypatch.delenv("COLUMNS", raising=False)
    work = tmp_path / "case"
    work.mkdir()
    return Ctx(work, tiny_dataset, fakes, tiny_release, simple_dataset)


def check_outcome(c: Case, ctx: Ctx, code: int, out: str, err: str) -> None:
    shown = f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    assert "Traceback" not in err and "Traceback" not in out, shown
    assert code == c.code, shown
    lines = [line for line in err.splitlines() if line.strip()]
    if c.code == 0:
        assert not any(line.startswith("error:") for line in lines), shown
        text = out + err
    else:
        assert len(lines) == 1 and err == lines[0] + "\n", shown  # one line, not even a blank one
        assert lines[0].startswith("error: "), shown
        assert out == "", shown
        assert "internal error" not in lines[0], shown  # a catch-all is not an answer to a case
        assert not lines[0].startswith("error: cannot use "), shown  # nor is the bare OSError safety net
        text = lines[0]
    for fragment in c.fragments:
        assert _matches(_fill(fragment, ctx), text), f"{_fill(fragment, ctx)!r} not in:\n{shown}"


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_bad_input(c: Case, ctx: Ctx, capsys):
    if c.root_skips and os.geteuid() == 0:
        pytest.skip("file permissions do not bind root")
    argv = c.argv(ctx)
    capsys.readouterr()  # what building the case printed is not the command's
    code, out, err = _run_in_process(argv, capsys)
    check_outcome(c, ctx, code, out, err)


def test_the_corpus_is_large_and_its_ids_unique():
    assert len(CASES) >= 550 and len({c.id for c in CASES}) == len(CASES)
    assert sum(c.code == 0 for c in CASES) >= 16


# ---------------------------------------------------------------------------- the same through a real process
SUBPROCESS_CASES = ["endpoint-not-a-url", "subgraphs-out-under-a-file", "n-negative", "config-binary", "items-row-missing-answer-format",
                    "items-cut-mid-line", "report-a-file", "unknown-option", "crlf-turtle"]


def _kgsynth(args: list[str], **kw) -> subprocess.Popen | subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(ROOT / "src"), "PYTHONUNBUFFERED": "1"}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "kgsynth", *args], env=env, capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_bad_input_in_a_real_process(case_id, ctx):
    c = next(c for c in CASES if c.id == case_id)
    result = _kgsynth(c.argv(ctx), cwd=ctx.tmp)
    check_outcome(c, ctx, result.returncode, result.stdout, result.stderr)


def test_debug_still_shows_the_traceback(ctx):
    result = _kgsynth(["--debug", "synth", "--config", ctx.file("c.toml", bytes(range(256)))], cwd=ctx.tmp)
    assert result.returncode == 1 and "Traceback" in result.stderr and "KgsynthError" in result.stderr


# ---------------------------------------------------------------------------- Ctrl-C
INTERRUPTED = re.compile(r"^interrupted: ([\d,]+) of ([\d,]+) items kept in (.+/\.work); run the same command to resume$")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_when(command: list[str], cwd: Path, ready: Callable[[], bool], env: dict | None = None) -> subprocess.CompletedProcess:
    env = (env or os.environ) | {"PYTHONPATH": str(ROOT / "src")}
    # SIGINT back to its default in the child: a suite started in the background (`make test &`)
    # ignores it, the child would inherit that, and Python would never see the Ctrl-C
    process = subprocess.Popen([sys.executable, "-m", "kgsynth", *command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and not ready():
        time.sleep(0.02)
    assert process.poll() is None, f"the command ended before it could be interrupted: {process.communicate()}"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_ctrl_c_during_synth_says_where_it_stopped_and_the_same_command_resumes(tmp_path):
    out = tmp_path / "out"
    command = ["synth", "--graph", str(DEMO), "--n", "2400", "--out", str(out)]
    work = out / ".work"  # the items kept so far; interrupted once it holds some

    def some_kept() -> bool:
        return work.is_dir() and sum(f.stat().st_size for f in work.rglob("*") if f.is_file()) > 50_000

    result = _interrupt_when(command, tmp_path, some_kept)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 130, result.stderr
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    match = INTERRUPTED.match(lines[0])
    assert match, lines[0]
    kept, wanted = (int(g.replace(",", "")) for g in match.groups()[:2])
    assert 0 < kept <= wanted and Path(match.group(3)) == work and work.is_dir()
    resumed = _kgsynth(command, cwd=tmp_path)
    assert resumed.returncode == 0 and resumed.stderr.startswith("wrote ") and not work.exists(), resumed.stderr


def test_ctrl_c_during_eval_says_how_many_answers_are_kept(tiny_dataset, tmp_path):
    from llm_fault_injector import FaultInjectingServer

    def slow_reply(body: dict) -> str:
        time.sleep(0.15)
        return "42"

    out = tmp_path / "eval"
    log = out / ".work" / "progress.jsonl"
    with FaultInjectingServer(slow_reply) as server:
        config = tmp_path / "eval.toml"
        config.write_text(f'batch = 1\n[model]\nbase_url = "{server.base_url}"\ncache = "{tmp_path / "cache.sqlite"}"\nconcurrency = 1\n')
        result = _interrupt_when(["eval", "--dataset", str(tiny_dataset), "--config", str(config), "--out", str(out)], tmp_path,
                                 lambda: log.is_file() and log.read_bytes().count(b"\n") >= 3)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 130 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    match = re.match(r"^interrupted: ([\d,]+) answers kept in (.+/\.work); run the same command to resume$", lines[0])
    assert match, lines[0]
    assert int(match.group(1)) == log.read_bytes().count(b"\n") - 1 >= 2  # the header line, then one line per answer



def test_ctrl_c_while_kgsynth_loads_is_one_line(tmp_path):
    """A Ctrl-C in the second or two the command's modules take to load (here when typer
    is imported): one line and exit 130, no import traceback."""
    script = """
import sys
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
from kgsynth.cli import main
main(["graph", "stats", "g.ttl"])
"""
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (130, "interrupted while kgsynth was loading: nothing was done\n"), result.stderr


def test_ctrl_c_while_asyncio_builds_a_loop_still_leaves_one_line(tmp_path):
    # The CI failure this guards against: the Ctrl-C landed inside asyncio.run before its loop
    # had a self-pipe, and at exit the half-built loop's finaliser and the never-awaited
    # coroutine printed two tracebacks under the line. Here that moment is made on purpose.
    script = """
import asyncio, sys
from kgsynth.cli import _app

async def never_awaited():
    pass

def interrupted_inside_asyncio_run(argv):
    global left_behind
    left_behind = (object.__new__(asyncio.SelectorEventLoop), never_awaited())
    return _app._fail("interrupted: 2 answers kept", _app.INTERRUPTED, prefix="")

_app.run = interrupted_inside_asyncio_run
_app.main([])
"""
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 130 and result.stderr == "interrupted: 2 answers kept\n", result.stderr

# ---------------------------------------------------------------------------- the table in docs/reliability.md
def corpus_table() -> str:
    """The corpus by kind with its outcomes, as docs/reliability.md shows it."""
    kinds: dict[str, Counter] = {}
    for c in CASES:
        counts = kinds.setdefault(c.kind, Counter())
        counts["cases"] += 1
        counts[{0: "accepted", 1: "error", 2: "usage"}[c.code]] += 1
        if c.waits_on:
            counts["fixed with"] += 1
    rows = ["| kind | cases | one line, exit 1 | one line, exit 2 | accepted, exit 0 | needed the pipeline / loader / gateway work |",
            "|---|---:|---:|---:|---:|---:|"]
    total = Counter()
    for kind, counts in kinds.items():
        total.update(counts)
        rows.append(f"| {kind} | {counts['cases']} | {counts['error']} | {counts['usage']} | {counts['accepted']} | {counts['fixed with']} |")
    rows.append(f"| **all** | **{total['cases']}** | **{total['error']}** | **{total['usage']}** | **{total['accepted']}** | **{total['fixed with']}** |")
    return "\n".join(rows)


def test_docs_list_the_corpus_with_its_outcome_counts():
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    assert corpus_table() in text, "docs/reliability.md is out of step with the corpus: paste `python tests/test_bad_inputs.py`"


if __name__ == "__main__":
    print(corpus_table())
