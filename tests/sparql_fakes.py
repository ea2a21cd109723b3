"""FAKES for SPARQL error-handling tests only; neither is a SPARQL engine.

``FakeFlakySparqlServer`` is a FAULT INJECTOR: by script it answers HTTP 429 (with
Retry-After), 400, 500, 502, 503, 504, stalls past the client's deadline, drops the
connection without an answer, or sends JSON that is not SPARQL results; its "ok" answer
is canned (one row). It tests the retry schedule and the one-line errors, never results.

``FakeRateLimitGate`` is a FAULT INJECTOR in front of a real SPARQL server: it answers the
first requests HTTP 429 with a Retry-After, as Wikidata's query service does to a client
that asks too fast, forwards the rest, and records each request's User-Agent.

``FakeAuthGate`` is an HTTP Basic or Digest gate, as a reverse proxy (nginx) or Virtuoso's
``/sparql-auth`` puts in front of an endpoint: it checks the credentials and forwards the
query to a real SPARQL server (the ``oxigraph serve`` fixture), whose answer it passes
back. ``echo=True`` makes it a careless server instead: it answers HTTP 500 with a body
that repeats the Authorization header and the password it decoded, for redaction tests;
``echo=200``, ``401`` or ``500`` answers an HTML page with that status, as a proxy's error
page may, showing the password cut short, then in full HTML-escaped and URL-encoded with
lower-case escapes, and the Authorization header.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

RENAMED_XML = (b'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="thing"/>'
               b'</head><results><result><binding name="thing"><uri>http://x/a</uri></binding></result></results></sparql>')
ANSWER = json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://x/a"}}]}}).encode()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # a client that gave up mid-answer is no news here
        pass


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1, no access log; reads a request's body and writes one whole answer."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer(self, status: int, ctype: str, body: bytes, extra: dict | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client hung up (its deadline passed)
            pass
        self.close_connection = True


class _Served:
    """A ThreadingHTTPServer on 127.0.0.1 in a thread, as a context manager."""

    def _start(self, handler: type[_Handler], path: str) -> None:
        self._closing = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()  # a stalled answer stops waiting
        self._server.shutdown()
        self._server.server_close()


class FakeFlakySparqlServer(_Served):
    """FAULT INJECTOR. ``script``: what each request in turn gets, then ``then`` for every
    later one: "ok" (the canned answer), "429" / "503" (optionally "429:0.2", the
    Retry-After header's value), "400", "500", "502", "504", "stall" (no answer for
    ``stall_s`` seconds, then the canned one), "reset" (the connection closed with no
    answer), "badjson" (200 with JSON that is not SPARQL results), "renamed" and
    "renamed_xml" (SPARQL JSON or XML results of a variable ?thing, whatever was asked). ``times`` holds when each
    request arrived (time.monotonic), ``bodies`` their form bodies."""

    def __init__(self, script: list[str], then: str = "ok", stall_s: float = 3.0):
        self.script, self.then, self.stall_s = list(script), then, stall_s
        self.times: list[float] = []
        self.bodies: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                body = self.body().decode()
                with fake._lock:
                    fake.times.append(time.monotonic())
                    fake.bodies.append(body)
                    action = fake.script.pop(0) if fake.script else fake.then
                fake._act(self, action)

            do_GET = do_POST

        self._start(Handler, "/sparql")

    @property
    def requests(self) -> int:
        return len(self.times)

    def _act(self, handler: _Handler, action: str) -> None:
        kind, _, retry_after = action.partition(":")
        if kind == "reset":  # nothing written: the server closes the connection once the handler returns
            handler.close_connection = True
            return
        if kind == "stall" and self._closing.wait(self.stall_s):
            return
        if kind in ("ok", "stall"):
            handler.answer(200, "application/sparql-results+json", ANSWER)
        elif kind == "renamed":  # SPARQL JSON results, but of other variables than the query's
            handler.answer(200, "application/sparql-results+json", ANSWER.replace(b'"s"', b'"thing"'))
        elif kind == "renamed_xml":
            handler.answer(200, "application/sparql-results+xml", RENAMED_XML)
        elif kind == "badjson":
            handler.answer(200, "application/sparql-results+json", b'{"hello": "world"}')
        elif kind == "400":
            handler.answer(400, "text/plain", b"Parse error: unexpected '}'")
        else:
            extra = {"Retry-After": retry_after} if retry_after else {}
            handler.answer(int(kind), "text/plain", f"fault {kind}".encode(), extra)


_PAIR = re.compile(r'(\w+)=(?:"([^"]*)"|([^\s,]+))')


class FakeAuthGate(_Served):
    """FAKE gate (see the module docstring): ``scheme`` "Basic" or "Digest"; a request with
    the right ``user`` and ``password`` is forwarded to ``upstream`` (a real SPARQL query
    URL); any other gets HTTP 401 with the challenge. ``authorized`` counts forwarded
    requests, ``challenged`` the 401s."""

    REALM = "kgsynth-test"

    def __init__(self, upstream: str, scheme: str, user: str, password: str, echo: bool | int = False):
        self.upstream, self.scheme, self.user, self.password, self.echo = upstream, scheme, user, password, echo
        self.authorized = self.challenged = 0
        self.authorizations: list[str] = []
        gate = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                body = self.body()
                authorization = self.headers.get("Authorization") or ""
                gate.authorizations.append(authorization)
                if not gate._valid(authorization, self.command):
                    gate.challenged += 1
                    self.answer(401, "text/plain", b"authentication required", {"WWW-Authenticate": gate._challenge()})
                    return
                gate.authorized += 1
                if gate.echo is not True and gate.echo:
                    self.answer(gate.echo, "text/html", gate.echo_page(authorization))
                    return
                if gate.echo:
                    echoed = f"upstream failed; you sent Authorization: {authorization} (password {gate.password})".encode()
                    self.answer(500, "text/plain", echoed)
                    return
                status, ctype, answer = _forward(gate.upstream, body, self.headers)
                self.answer(status, ctype, answer)

        self._start(Handler, "/sparql-auth")

    def echo_page(self, authorization: str) -> bytes:
        secret = self.password
        encoded = "".join(f"%{b:02x}" if not chr(b).isalnum() else chr(b) for b in secret.encode())
        return (f"<html><body><p>password {secret[:len(secret) * 2 // 3]}</p><p>{html.escape(secret)}</p>"
                f"<a href='/retry?pw={encoded}&amp;x=1'>retry</a><pre>{html.escape(authorization)}</pre></body></html>").encode()

    def _challenge(self) -> str:
        if self.scheme == "Basic":
            return f'Basic realm="{self.REALM}"'
        return f'Digest realm="{self.REALM}", qop="auth", nonce="{secrets.token_hex(16)}", algorithm=MD5'

    def _valid(self, authorization: str, method: str) -> bool:
        scheme, _, rest = authorization.partition(" ")
        if scheme != self.scheme:
            return False
        if scheme == "Basic":
            try:
                return base64.b64decode(rest).decode() == f"{self.user}:{self.password}"
            except ValueError:
                return False
        fields = {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _PAIR.finditer(rest)}
        try:
            ha1 = _md5(f"{fields['username']}:{self.REALM}:{self.password}")
            ha2 = _md5(f"{method}:{fields['uri']}")
            expected = _md5(f"{ha1}:{fields['nonce']}:{fields['nc']}:{fields['cnonce']}:{fields['qop']}:{ha2}")
        except KeyError:
            return False
        return fields["username"] == self.user and fields.get("response") == expected


class FakeRateLimitGate(_Served):
    """FAULT INJECTOR (see the module docstring): the first ``limited`` requests get HTTP 429
    with ``Retry-After: retry_after``; the others go to ``upstream`` (a real SPARQL query URL)."""

    def __init__(self, upstream: str, limited: int = 1, retry_after: str = "0.2"):
        self.upstream, self.limited, self.retry_after = upstream, limited, retry_after
        self.times: list[float] = []
        self.agents: list[str] = []
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        gate = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                body = self.body()
                with gate._lock:
                    gate.times.append(time.monotonic())
                    gate.agents.append(self.headers.get("User-Agent") or "")
                    limited = len(gate.times) <= gate.limited
                if limited:
                    gate.statuses.append(429)
                    self.answer(429, "text/plain", b"Too Many Requests", {"Retry-After": gate.retry_after})
                    return
                status, ctype, answer = _forward(gate.upstream, body, self.headers)
                gate.statuses.append(status)
                self.answer(status, ctype, answer)

        self._start(Handler, "/sparql")


def _forward(upstream: str, body: bytes, headers) -> tuple[int, str, bytes]:
    """Send a query's form body on to a real SPARQL server; its status, content type and answer."""
    request = urllib.request.Request(upstream, data=body, method="POST", headers={
        "Content-Type": headers.get("Content-Type", "application/x-www-form-urlencoded"),
        "Accept": headers.get("Accept", "application/sparql-results+json"),
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", "text/plain"), e.read()


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()  # noqa: S324 - HTTP Digest's own algorithm, not a safeguard
