"""Every network request has an overall deadline, and an endpoint that cannot be reached
fails fast in one line.

The servers here are FAULT INJECTORS for error-handling tests only: a SPARQL "endpoint"
that drips its answer one byte at a time (``SlowDripSparqlServer``), the LLM fault
injector's "drip" reply, and a port nothing listens on. The bounds on time are generous
(a 1 s deadline must end well under 10 s): they prove a deadline fires, not how fast.
The real SPARQL engine runs in test_endpoint.py, against the same code path.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Self

import pytest
from conftest import ROOT, _free_port
from llm_fault_injector import FaultInjectingServer

from kgsynth.errors import EndpointError, KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.kg._backends import EndpointBackend
from kgsynth.llm import LLMGateway, LLMUnreachableError, ModelConfig, Request

_ANSWER = json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://x/a"}}]}}).encode()


class SlowDripSparqlServer:
    """FAULT INJECTOR (error-handling tests only): a TCP server that reads an HTTP request
    and answers a correct SPARQL JSON result, but one byte every ``drip_s`` seconds: in
    the status line and headers (``phase="headers"``) or only in the body (``"body"``), or
    nothing at all (``"silent"``). No single socket read ever waits long; only a deadline on
    the whole request can end it. ``phase="fast"`` answers at once (the same bytes)."""

    def __init__(self, phase: str, drip_s: float = 0.2):
        self.phase, self.drip_s = phase, drip_s
        self.requests = 0
        self._closing = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)  # so that the accept loop sees the server stop
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/query"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            self.requests += 1
            headers = (f"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
                       f"Content-Length: {len(_ANSWER)}\r\nConnection: close\r\n\r\n").encode()
            if self.phase == "fast":
                conn.sendall(headers + _ANSWER)
                return
            if self.phase == "silent":
                self._closing.wait(30)
                return
            if self.phase == "body":
                conn.sendall(headers)
            drip = headers + _ANSWER if self.phase == "headers" else _ANSWER
            try:
                for i in range(len(drip)):
                    if self._closing.wait(self.drip_s):
                        return
                    conn.sendall(drip[i : i + 1])
            except OSError:  # the client gave up
                return


# ---------------------------------------------------------------------------- SPARQL
@pytest.mark.parametrize("phase", ["headers", "body", "silent"])
def test_a_dripping_sparql_endpoint_fails_at_the_deadline_in_one_line(phase):
    with SlowDripSparqlServer(phase) as server:
        backend = EndpointBackend(server.url, timeout=1, retries=0)  # one attempt: test_endpoint_options.py retries
        started = time.monotonic()
        with pytest.raises(EndpointError) as caught:
            list(backend.select("SELECT ?s WHERE { ?s ?p ?o }"))
        elapsed = time.monotonic() - started
    assert str(caught.value) == f"SPARQL endpoint {server.url} sent no complete answer within 1 s"
    assert elapsed < 10  # not forever: the drip alone would take ~20 s, the answer's bytes x 0.2 s


def test_the_deadline_is_what_from_endpoint_is_given_and_a_fast_answer_passes():
    with SlowDripSparqlServer("fast") as fast:
        kg = KnowledgeGraph.from_endpoint(fast.url, timeout=1)
        assert [row[0].value for row in kg.select("SELECT ?s WHERE { ?s ?p ?o }")] == ["http://x/a"]
        assert kg.backend.timeout == 1.0
    with SlowDripSparqlServer("body") as slow, pytest.raises(EndpointError, match=r"sent no complete answer within 0.5 s$"):
        KnowledgeGraph.from_endpoint(slow.url, timeout=0.5, retries=0)  # its probe query fails there, in one line


def test_graph_stats_takes_the_deadline_from_the_command_line(capsys):
    from kgsynth.cli._app import run

    with SlowDripSparqlServer("body") as server:
        code = run(["graph", "stats", "--endpoint", server.url, "--timeout", "0.5", "--retries", "1"])
    assert code == 1  # each attempt has the whole deadline
    assert capsys.readouterr().err == f"error: SPARQL endpoint {server.url} sent no complete answer within 0.5 s (gave up after 2 attempts)\n"


def test_a_refused_sparql_endpoint_still_says_so():
    with pytest.raises(EndpointError, match=r"^cannot reach SPARQL endpoint http://127\.0\.0\.1:\d+/query: .*Connection refused$"):
        list(EndpointBackend(f"http://127.0.0.1:{_free_port()}/query", timeout=1).select("SELECT * WHERE { ?s ?p ?o }"))


# ---------------------------------------------------------------------------- LLM
def _gateway(base_url: str, **fields) -> LLMGateway:
    config = {"base_url": base_url, "model": "test", "timeout_s": 1, "max_retries": 1, "backoff_s": 0.01} | fields
    return LLMGateway(ModelConfig(**config))


def test_a_dripping_model_reply_fails_at_the_deadline():
    """The reply's bytes come 0.2 s apart: no read times out; the 1 s deadline per request does."""
    with FaultInjectingServer(lambda body: "a reply long enough to drip for many seconds " * 4, script=["drip", "drip"]) as server:
        gateway = _gateway(server.base_url)
        started = time.monotonic()
        [result] = gateway.complete_all([Request([{"role": "user", "content": "hi"}], stage="t")])
        elapsed = time.monotonic() - started
    assert result.error == f"test at {server.base_url}: no complete reply within 1 s (timeout_s)"
    assert result.attempts == 2 and gateway.usage["t"].calls == 2  # each was a real HTTP exchange
    assert elapsed < 10


def test_a_refused_model_endpoint_fails_fast_naming_it_and_counts_no_calls():
    base_url = f"http://127.0.0.1:{_free_port()}/v1"
    gateway = _gateway(base_url, max_retries=4, backoff_s=0.5, concurrency=2)
    started = time.monotonic()
    results = gateway.complete_all([Request([{"role": "user", "content": str(i)}], stage="t") for i in range(6)])
    elapsed = time.monotonic() - started
    assert {r.error for r in results} == {f"test at {base_url}: connection refused"}
    usage = gateway.usage["t"]
    assert usage.calls == 0 and usage.failures == 6
    assert 1 <= usage.unreachable <= 2 * 2  # the first requests in flight tried twice; the rest not at all
    assert elapsed < 5  # not the whole backoff (0.5 + 1 + 2 + 4 s per request)


def test_a_gateway_asked_to_raises_one_line_when_the_endpoint_is_unreachable():
    base_url = f"http://127.0.0.1:{_free_port()}/v1"
    gateway = LLMGateway(ModelConfig(base_url=base_url, model="test"), raise_unreachable=True)
    with pytest.raises(LLMUnreachableError) as caught:
        gateway.complete_all([Request([{"role": "user", "content": "hi"}])])
    assert isinstance(caught.value, KgsynthError)
    assert str(caught.value) == f"cannot reach the model test at {base_url}: connection refused"
    unknown = LLMGateway(ModelConfig(base_url="http://no-such-host.invalid/v1", model="test"), raise_unreachable=True)
    with pytest.raises(LLMUnreachableError, match=r"^cannot reach the model test at http://no-such-host\.invalid/v1: cannot resolve the host name"):
        unknown.complete_all([Request([{"role": "user", "content": "hi"}])])


def test_eval_against_a_refused_endpoint_is_one_line(demo_dataset, tmp_path):
    """One line that names the endpoint and says why, not a failure row per request."""
    base_url = f"http://127.0.0.1:{_free_port()}/v1"
    (tmp_path / "eval.toml").write_text(f'[model]\ncache = "{tmp_path / "cache.sqlite"}"\n')
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "kgsynth.cli", "eval", "--dataset", str(demo_dataset), "--base-url", base_url,
                          "--config", str(tmp_path / "eval.toml"), "--out", str(tmp_path / "out"), "--limit", "2"],
                         env=env, capture_output=True, text=True, check=False)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 1 and len(lines) == 1, run.stderr
    assert lines[0].startswith("error: ") and f"{base_url}: connection refused" in lines[0]
    assert time.monotonic() - started < 30  # the interpreter's start included
