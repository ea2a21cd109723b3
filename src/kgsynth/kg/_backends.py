"""Where SPARQL runs: the embedded Oxigraph store, or a remote endpoint (SPARQLWrapper
builds the request; urllib sends it under an overall deadline)."""

from __future__ import annotations

import functools
import http.client
import io
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import pyoxigraph as ox
from SPARQLWrapper import JSON, POST, SELECT, SPARQLWrapper

from kgsynth.errors import EndpointError, QueryError
from kgsynth.kg._terms import Term


@dataclass(frozen=True)
class Rows:
    """The result of a SELECT: variable names and an iterator of term tuples (None = unbound)."""

    variables: tuple[str, ...]
    rows: Iterator[tuple[Term | None, ...]]

    def __iter__(self) -> Iterator[tuple[Term | None, ...]]:
        return self.rows


class Backend(Protocol):
    description: str

    def select(self, query: str) -> Rows: ...


class OxigraphBackend:
    """The embedded store. Named graphs are queried as one union default graph."""

    def __init__(self, store: ox.Store, description: str = "embedded Oxigraph store"):
        self.store = store
        self.description = description

    def select(self, query: str) -> Rows:
        try:
            solutions = self.store.query(query, use_default_graph_as_union=True)
        except SyntaxError as e:
            raise QueryError(f"invalid SPARQL: {e}") from None
        except OSError as e:
            raise QueryError(f"query failed: {e}") from None
        variables = tuple(v.value for v in solutions.variables)
        return Rows(variables, (tuple(solution) for solution in solutions))


class EndpointBackend:
    """A remote SPARQL endpoint over HTTP. Results are converted to pyoxigraph terms.

    ``timeout`` (seconds) is the deadline of each query's whole HTTP exchange: connecting,
    sending, the status line and headers, and the last byte of the results. A server that
    stalls or sends a byte now and then fails there with ``EndpointError``, not later.
    """

    def __init__(self, url: str, timeout: float = 60.0):
        if not timeout > 0:
            raise ValueError(f"the endpoint timeout must be positive, not {timeout}")
        parts = urllib.parse.urlsplit(url)
        if parts.username or parts.password:  # urllib would not send them, and outputs would hold them
            shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
            raise EndpointError(f"SPARQL endpoint {shown}: a user name or password in the URL is not supported")
        self.url = url
        self.description = f"SPARQL endpoint {url}"
        self.timeout = float(timeout)

    def select(self, query: str) -> Rows:
        client = SPARQLWrapper(self.url, returnFormat=JSON)
        client.setMethod(POST)
        client.setQuery(query)
        client.queryType = SELECT  # its regex guess reads template comments ("describes") as DESCRIBE
        request = client._createRequest()  # SPARQLWrapper's request (headers, form encoding), sent below
        deadline = _Deadline(self.timeout)
        opener = urllib.request.build_opener(_DeadlineHTTPHandler(deadline), _DeadlineHTTPSHandler(deadline))
        late = f"{self.description} sent no complete answer within {self.timeout:g} s"
        try:
            with opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = _body_line(e)
            if e.code == 400:
                raise QueryError(f"{self.description} rejected the query: HTTP 400{detail}") from None
            raise EndpointError(f"{self.description} answered with an error: HTTP {e.code} {e.reason}{detail}") from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                raise EndpointError(late) from None
            raise EndpointError(f"cannot reach {self.description}: {e.reason}") from None
        except TimeoutError:
            raise EndpointError(late) from None
        except (http.client.HTTPException, OSError) as e:  # the connection dropped mid-answer
            raise EndpointError(f"{self.description} broke off its answer: {_first_line(e)}") from None
        try:
            result = json.loads(raw)
            variables = tuple(result["head"]["vars"])
            bindings = result["results"]["bindings"]
        except (ValueError, KeyError, TypeError):
            raise EndpointError(f"{self.description} did not return SPARQL JSON results") from None
        return Rows(variables, (tuple(_term(b.get(v)) for v in variables) for b in bindings))


_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
_CANONICAL_BOOLEAN = {"1": "true", "0": "false"}
_NOT_IN_LABEL = re.compile(r"[^A-Za-z0-9_\-]")


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _body_line(error: urllib.error.HTTPError, limit: int = 300) -> str:
    """': <the first line of the error body>', or '' when there is none (or no time left to read it)."""
    try:
        body = error.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""
    line = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return f": {line if len(line) <= limit else line[:limit] + '…'}" if line else ""


# ---------------------------------------------------------------------------- the deadline
# urllib's timeout bounds each socket operation; a server that sends one byte now and then
# never trips it. Here every read (status line, headers, body) and the connect get the time
# left until the deadline as their timeout, and none starts after it.
class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the deadline passed")
        return left


class _DeadlineReader(io.RawIOBase):
    """The socket's own reader (``makefile``), each read waiting at most until the deadline."""

    def __init__(self, sock: socket.socket, deadline: _Deadline):
        super().__init__()
        self._sock, self._raw, self._deadline = sock, sock.makefile("rb", buffering=0), deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        self._sock.settimeout(self._deadline.remaining())
        return self._raw.readinto(buffer)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()  # the socket closes once every reader of it has
        super().close()


class _Reader:
    """What ``HTTPResponse`` asks of its socket: ``makefile("rb")``, here deadline-bound."""

    def __init__(self, sock: socket.socket, deadline: _Deadline):
        self._sock, self._deadline = sock, deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args, deadline: _Deadline, **kwargs):
        super().__init__(_Reader(sock, deadline), *args, **kwargs)


class _DeadlineConnection:
    """Mixed into ``HTTPConnection``/``HTTPSConnection``: connect in the time left, and
    read the response (a proxy's CONNECT answer too) through ``_DeadlineResponse``."""

    def __init__(self, *args, deadline: _Deadline, **kwargs):
        super().__init__(*args, **kwargs)
        self._deadline = deadline
        self.response_class = functools.partial(_DeadlineResponse, deadline=deadline)

    def connect(self) -> None:
        self.timeout = self._deadline.remaining()
        super().connect()
        self.sock.settimeout(self._deadline.remaining())  # sending the request


class _DeadlineHTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _DeadlineHTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    pass


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline):
        super().__init__()
        self._deadline = deadline

    def http_open(self, req):
        return self.do_open(functools.partial(_DeadlineHTTPConnection, deadline=self._deadline), req)


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline):
        super().__init__()
        self._deadline = deadline

    def https_open(self, req):
        return self.do_open(functools.partial(_DeadlineHTTPSConnection, deadline=self._deadline), req, context=self._context)


def _term(binding: dict | None) -> Term | None:
    if binding is None:
        return None
    kind, value = binding["type"], binding["value"]
    if kind == "uri":
        return ox.NamedNode(value)
    if kind == "bnode":
        try:
            return ox.BlankNode(value)
        except ValueError:  # Virtuoso names them "nodeID://b10006", not a valid blank node label
            return ox.BlankNode(_NOT_IN_LABEL.sub("_", value))
    if "xml:lang" in binding:
        return ox.Literal(value, language=binding["xml:lang"])
    if "datatype" in binding:
        datatype = binding["datatype"]
        if datatype == _BOOLEAN:  # Virtuoso stores booleans as 1 / 0
            value = _CANONICAL_BOOLEAN.get(value, value)
        return ox.Literal(value, datatype=ox.NamedNode(datatype))
    return ox.Literal(value)
