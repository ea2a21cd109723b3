"""Where SPARQL runs: the embedded Oxigraph store, or a remote endpoint (SPARQLWrapper
builds the request; urllib sends it under an overall deadline)."""

from __future__ import annotations

import base64
import datetime
import email.utils
import functools
import http.client
import io
import json
import math
import os
import random
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pyoxigraph as ox
from SPARQLWrapper import POST, SELECT, XML, SPARQLWrapper

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


USER_ENV = "KGSYNTH_SPARQL_USER"
PASSWORD_ENV = "KGSYNTH_SPARQL_PASSWORD"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Virtuoso's header on an answer it cut at ResultSetMaxRows (sent only then)
_ROWS_CUT = "X-SPARQL-MaxRows"
_REDACTED = "[REDACTED]"
_MIN_SECRET = 4  # a shorter password is not replaced in error text: it would mangle ordinary words


@dataclass(frozen=True)
class Credentials:
    """A user name and password for HTTP Basic or Digest authentication. The password is in
    no repr, and :class:`EndpointBackend` takes it out of every error message it makes."""

    user: str
    password: str = field(repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Credentials | None:
        """``KGSYNTH_SPARQL_USER`` and ``KGSYNTH_SPARQL_PASSWORD``, or None when neither is set
        (an empty password is a password; one variable without the other is an error)."""
        environ = os.environ if environ is None else environ
        user, password = environ.get(USER_ENV) or None, environ.get(PASSWORD_ENV)
        if user is None and not password:
            return None
        if user is None:
            raise EndpointError(f"{PASSWORD_ENV} is set but {USER_ENV} is not: set both for HTTP authentication, or neither")
        if password is None:
            raise EndpointError(f"{USER_ENV} is set but {PASSWORD_ENV} is not: set both for HTTP authentication, or neither")
        return cls(user, password)

    def secrets(self) -> tuple[str, ...]:
        """The forms the password can take in a server's echo: as is, URL-encoded, and inside
        a Basic ``Authorization`` header."""
        basic = base64.b64encode(f"{self.user}:{self.password}".encode()).decode("ascii")
        forms = {self.password, urllib.parse.quote(self.password, safe=""), urllib.parse.quote_plus(self.password, safe=""), basic}
        return tuple(sorted((f for f in forms if len(f) >= _MIN_SECRET), key=len, reverse=True))


class _Transient(Exception):
    """An attempt failed in a way that another attempt may not (HTTP 429 or 5xx, a timeout,
    a connection reset); ``retry_after`` is the server's Retry-After in seconds, if it sent one."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class EndpointBackend:
    """A remote SPARQL endpoint over HTTP. Results are converted to pyoxigraph terms.

    Args:
        url: the query URL; a user name or password in it is refused (outputs would hold it).
        timeout: seconds, the deadline of each attempt's whole HTTP exchange: connecting,
            sending, the status line and headers, and the last byte of the results (an
            authentication challenge and its answer included). A server that stalls or sends
            a byte now and then fails the attempt there, not later.
        graph_uri: the graph to query as the default graph, sent as the SPARQL protocol's
            ``default-graph-uri``; None queries the endpoint's default graph, or the
            ``default-graph-uri`` the URL already carries (a different one here is an error).
        auth: user name and password for HTTP Basic or Digest authentication, whichever the
            server's 401 challenge asks for (:meth:`Credentials.from_env` reads them from the
            environment); sent only to the URL's host and path, never in a message.
        retries: how many more attempts a query gets after HTTP 429, 500, 502, 503 or 504, a
            timeout, or a connection reset or cut short. HTTP 400 (a bad query), other HTTP
            errors, a refused connection and an answer that is not SPARQL JSON fail at once.
        backoff: the wait before the first retry in seconds, doubled for each next one; each
            wait is drawn between half and all of that (jitter from a generator seeded with
            ``seed``: the same schedule every run) and is at most ``max_backoff``. A
            ``Retry-After`` header (seconds or an HTTP date) replaces the drawn wait, also
            capped at ``max_backoff``.
        user_agent: the User-Agent header (None: SPARQLWrapper's own); public services such as
            Wikidata's ask for one that names the tool and how to reach its user.

    The deadline is per attempt, so one :meth:`select` can take up to ``(retries + 1) *
    timeout`` plus the waits between attempts: with the defaults (3 retries, 0.5 s) four
    timeouts and at most 3.5 s of waits, or four timeouts and 3 x ``max_backoff`` when the
    server asks for longer. Once the last attempt fails, one ``EndpointError`` line says what
    failed, where, and after how many attempts.
    """

    def __init__(
        self,
        url: str,
        timeout: float = 60.0,
        *,
        graph_uri: str | None = None,
        auth: Credentials | tuple[str, str] | None = None,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        seed: int = 0,
        user_agent: str | None = None,
    ):
        if not timeout > 0:
            raise ValueError(f"the endpoint timeout must be positive, not {timeout}")
        if retries < 0 or not backoff >= 0 or not max_backoff >= 0:
            raise ValueError(f"retries, backoff and max_backoff must not be negative, not {retries}, {backoff}, {max_backoff}")
        parts = urllib.parse.urlsplit(url)
        if parts.username or parts.password:  # urllib would not send them, and outputs would hold them
            shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
            raise EndpointError(f"SPARQL endpoint {shown}: a user name or password in the URL is not supported")
        in_url = urllib.parse.parse_qs(parts.query).get("default-graph-uri", [])
        if graph_uri is not None:
            try:
                ox.NamedNode(graph_uri)
            except ValueError:
                raise EndpointError(f"SPARQL endpoint {url}: the graph {graph_uri!r} is not an absolute IRI") from None
            if in_url and in_url != [graph_uri]:
                raise EndpointError(f"SPARQL endpoint {url} names the default graph {' '.join(in_url)} (default-graph-uri), "
                                    f"and the graph to query is {graph_uri}: name it in one place")
        self.url = url
        self.graph_uri = graph_uri if graph_uri is not None else (in_url[0] if len(in_url) == 1 else None)
        self._send_graph = graph_uri is not None and not in_url  # one in the URL is sent as it is
        self.description = f"SPARQL endpoint {url}" + (f" (graph <{graph_uri}>)" if self._send_graph else "")
        self.timeout = float(timeout)
        self.auth = Credentials(*auth) if isinstance(auth, tuple) else auth
        self.retries, self.backoff, self.max_backoff = int(retries), float(backoff), float(max_backoff)
        self._jitter = random.Random(seed)
        self.user_agent = user_agent

    def __repr__(self) -> str:
        return (f"EndpointBackend({self.url!r}, timeout={self.timeout:g}, graph_uri={self.graph_uri!r}, "
                f"auth={self.auth!r}, retries={self.retries})")

    def select(self, query: str) -> Rows:
        attempt = 1
        while True:
            try:
                raw, content_type = self._attempt(query)
                break
            except _Transient as e:
                if attempt > self.retries:
                    raise EndpointError(f"{e}{f' (gave up after {attempt} attempts)' if attempt > 1 else ''}") from None
                time.sleep(self._wait(attempt, e.retry_after))
                attempt += 1
        if content_type == _XML:
            rows = self._xml_rows(raw)
        else:
            try:
                result = json.loads(raw)
                variables = tuple(result["head"]["vars"])
                bindings = result["results"]["bindings"]
                if not all(isinstance(v, str) for v in variables) or not all(isinstance(b, dict) for b in bindings):
                    raise TypeError("not SPARQL JSON results")
            except (ValueError, KeyError, TypeError):
                raise EndpointError(f"{self.description} did not return SPARQL JSON results: it sent "
                                    f"{_what_came(raw, content_type, self._scrub)}") from None
            rows = Rows(variables, self._rows(variables, bindings))
        asked = projected_variables(query)
        if asked is not None and set(rows.variables) != set(asked):
            raise EndpointError(f"{self.description} answered a query for {_names(asked)} with the variables "
                                f"{_names(rows.variables)}: the server did not run the query as sent")
        return rows

    def _xml_rows(self, raw: bytes) -> Rows:
        """SPARQL XML results, parsed by pyoxigraph (Virtuoso writes XML 5x faster than JSON),
        blank node ids made valid labels and booleans written 1 / 0 made true / false first."""
        raw = _XML_BNODE.sub(lambda m: b"<bnode>" + _blank_label(m[1].decode()).encode() + b"</bnode>", raw)
        raw = _XML_BOOLEAN.sub(lambda m: m[1] + (b"true" if m[2] == b"1" else b"false") + b"</literal>", raw)
        try:
            solutions = ox.parse_query_results(raw, format=ox.QueryResultsFormat.XML)
            variables = tuple(v.value for v in solutions.variables)
        except (SyntaxError, ValueError, AttributeError) as e:
            raise EndpointError(f"{self.description} did not return SPARQL XML results: {_first_line(e)}") from None

        def rows() -> Iterator[tuple[Term | None, ...]]:
            try:
                yield from (tuple(solution) for solution in solutions)
            except (SyntaxError, ValueError) as e:  # an IRI with a space, a malformed tag: one line, not a traceback
                raise EndpointError(f"{self.description} returned a term kgsynth cannot read: {_first_line(e)}") from None

        return Rows(variables, rows())

    def _rows(self, variables: tuple[str, ...], bindings: list) -> Iterator[tuple[Term | None, ...]]:
        for binding in bindings:
            row = []
            for variable in variables:
                value = binding.get(variable)
                try:
                    row.append(_term(value))
                except (ValueError, KeyError, TypeError) as e:
                    shown = json.dumps(value, ensure_ascii=False)
                    shown = shown if len(shown) <= 200 else shown[:200] + "…"
                    raise EndpointError(f"{self.description} returned a term kgsynth cannot read, ?{variable} = {shown}: "
                                        f"{_first_line(e)}") from None
            yield tuple(row)

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        delay = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        return delay * (0.5 + 0.5 * self._jitter.random())

    def _attempt(self, query: str) -> tuple[bytes, str]:
        """One HTTP exchange under its own deadline: the raw answer and its content type, or ``_Transient`` for a
        failure worth another attempt, or ``EndpointError`` / ``QueryError`` for one that is not."""
        client = SPARQLWrapper(self.url, returnFormat=XML)  # its format parameter: Virtuoso heeds it over Accept
        if self.user_agent:
            client.agent = self.user_agent
        client.setMethod(POST)
        client.setQuery(query)
        client.queryType = SELECT  # its regex guess reads template comments ("describes") as DESCRIBE
        if self._send_graph:
            client.addParameter("default-graph-uri", self.graph_uri)
        request = client._createRequest()  # SPARQLWrapper's request (headers, form encoding), sent below
        request.add_header("Accept", _ACCEPT)
        deadline = _Deadline(self.timeout)
        handlers: list[urllib.request.BaseHandler] = [_DeadlineHTTPHandler(deadline), _DeadlineHTTPSHandler(deadline)]
        if self.auth is not None:  # answered only to the server's 401 challenge; Digest goes first where both are offered
            passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
            passwords.add_password(None, self.url, self.auth.user, self.auth.password)
            handlers += [urllib.request.HTTPDigestAuthHandler(passwords), urllib.request.HTTPBasicAuthHandler(passwords)]
        opener = urllib.request.build_opener(*handlers)
        late = f"{self.description} sent no complete answer within {self.timeout:g} s"
        try:
            with opener.open(request, timeout=self.timeout) as response:
                if cap := response.headers.get(_ROWS_CUT):
                    raise EndpointError(f"{self.description} cut its answer at its row limit ({_ROWS_CUT}: {cap}): the "
                                        "sample would silently miss facts; raise the server's limit (Virtuoso: "
                                        "ResultSetMaxRows in virtuoso.ini) or restrict the anchors")
                return response.read(), response.headers.get_content_type()
        except urllib.error.HTTPError as e:
            detail = _body_line(e, self._scrub)
            if e.code == 400:
                raise QueryError(f"{self.description} rejected the query: HTTP 400{detail}") from None
            message = f"{self.description} answered with an error: HTTP {e.code} {self._scrub(str(e.reason))}{detail}"
            if e.code in RETRY_STATUSES:
                raise _Transient(message, _retry_after(e.headers)) from None
            if e.code == 401:
                message += _unauthorized_hint(e.headers.get("WWW-Authenticate") or "", self.auth is not None)
            raise EndpointError(message) from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                raise _Transient(late) from None
            if isinstance(e.reason, _DROPPED):
                raise _Transient(f"{self.description} broke off the exchange: {_first_line(e.reason)}") from None
            raise EndpointError(f"cannot reach {self.description}: {e.reason}") from None
        except TimeoutError:
            raise _Transient(late) from None
        except _DROPPED as e:  # the connection dropped mid-answer
            raise _Transient(f"{self.description} broke off its answer: {_first_line(e)}") from None
        except (http.client.HTTPException, OSError) as e:
            raise EndpointError(f"{self.description} broke off its answer: {_first_line(e)}") from None
        except ValueError as e:  # urllib's Digest handler, challenged with a scheme it does not know
            if self.auth is None:
                raise
            raise EndpointError(f"{self.description} asks for an authentication other than HTTP Basic or Digest: "
                                f"{self._scrub(_first_line(e))}") from None

    def _scrub(self, text: str) -> str:
        """``text`` without the password, in any form a server may echo it back."""
        for secret in self.auth.secrets() if self.auth is not None else ():
            text = text.replace(secret, _REDACTED)
        return text


_SELECT = re.compile(r"\bSELECT\s+(?:DISTINCT\s+|REDUCED\s+)?(?P<projection>.*?)\s*(?:\bWHERE\b|\{|\bFROM\b)", re.IGNORECASE | re.DOTALL)
_INNERMOST = re.compile(r"\([^()]*\)")


def projected_variables(query: str) -> tuple[str, ...] | None:
    """The variables the outer SELECT of ``query`` projects, in order; None for ``SELECT *``
    or a query that is not a SELECT."""
    match = _SELECT.search(re.sub(r"(?m)(?:^|(?<=\s))#.*$", "", query))  # comments out; a "#" inside an IRI stays
    if match is None or match["projection"].strip() == "*":
        return None
    projection, names = match["projection"], []
    for alias in re.finditer(r"\(.*?\bAS\s+[?$](\w+)\s*\)", projection, re.IGNORECASE | re.DOTALL):
        names.append((alias.start(), alias[1]))
    while _INNERMOST.search(projection):  # (expr AS ?x) groups, nested ones too, out
        projection = _INNERMOST.sub(lambda m: " " * len(m[0]), projection)
    names += [(m.start(), m[1]) for m in re.finditer(r"[?$](\w+)", projection)]
    return tuple(name for _, name in sorted(names))


def _names(variables: Sequence[str]) -> str:
    return ", ".join(f"?{v}" for v in variables) or "none"


_DROPPED = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.IncompleteRead)


_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
_XML = "application/sparql-results+xml"
_ACCEPT = f"{_XML}, application/sparql-results+json;q=0.9"
_XML_BNODE = re.compile(rb"<bnode>([^<]*)</bnode>")
_XML_BOOLEAN = re.compile(rb'(<literal datatype="http://www\.w3\.org/2001/XMLSchema#boolean">)\s*([01])\s*</literal>')
_CANONICAL_BOOLEAN = {"1": "true", "0": "false"}
_ESCAPED = "esc_"  # how every blank node label made by _blank_label's escaping starts


def _retry_after(headers) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait (a number or an HTTP date), or None."""
    value = (headers.get("Retry-After") or "").strip() if headers is not None else ""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        seconds = (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _what_came(raw: bytes, content_type: str, scrub: Callable[[str], str], limit: int = 120) -> str:
    """What an answer that is not SPARQL JSON results holds, for its one line: its type and
    its first line, scrubbed before it is cut."""
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError as e:
        return f"{content_type} that is not UTF-8 text (byte {e.start + 1})"
    if not text:
        return f"an empty {content_type} answer"
    if text.startswith("{") and '"boolean"' in text[:200]:
        return "a yes/no answer, as to an ASK query"
    return f"{content_type}: {_cut(scrub(text.splitlines()[0].strip()), limit)}"


def _unauthorized_hint(challenge: str, credentials_given: bool) -> str:
    """Why an HTTP 401 happened: credentials missing, refused, or of a scheme kgsynth does not send."""
    scheme = challenge.split(" ", 1)[0].strip()
    if scheme and scheme.lower() not in ("basic", "digest"):
        return (f" (it asks for {scheme} authentication; kgsynth answers only HTTP Basic or Digest, with "
                f"{USER_ENV} and {PASSWORD_ENV})")
    if credentials_given:
        return " (the user name and password given were refused)"
    return f" (no user name and password were given: set {USER_ENV} and {PASSWORD_ENV})"


def _body_line(error: urllib.error.HTTPError, scrub: Callable[[str], str], limit: int = 300) -> str:
    """': <the first line of the error body>', scrubbed before it is cut (no part of a secret
    is left at the cut), or '' when there is none (or no time left to read it)."""
    try:
        body = error.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""
    line = scrub(next((line.strip() for line in body.splitlines() if line.strip()), ""))
    return f": {_cut(line, limit)}" if line else ""


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit] + "…"


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
    """One value of SPARQL JSON results (the W3C form, and the ``typed-literal`` of older
    servers such as Virtuoso) as a pyoxigraph term. ValueError for what a pyoxigraph term
    cannot hold: an IRI with a space, a malformed language tag, an RDF-star ``triple``."""
    if binding is None:
        return None
    kind, value = binding["type"], binding["value"]
    if kind == "uri":
        return ox.NamedNode(value)
    if kind == "bnode":
        return ox.BlankNode(_blank_label(value))
    if kind not in ("literal", "typed-literal"):
        raise ValueError(f"a term of type {kind!r}, not an IRI, a blank node or a literal")
    if binding.get("xml:lang"):  # an empty tag is none
        return ox.Literal(value, language=binding["xml:lang"])
    if "datatype" in binding:
        datatype = binding["datatype"]
        if datatype == _BOOLEAN:  # Virtuoso stores booleans as 1 / 0
            value = _CANONICAL_BOOLEAN.get(value, value)
        return ox.Literal(value, datatype=ox.NamedNode(datatype))
    return ox.Literal(value)


def _blank_label(value: str) -> str:
    """A valid blank node label for the server's ``value``, one to one. A valid label that
    does not start with ``esc_`` is kept as it is; any other (Virtuoso's ``nodeID://b10006``)
    becomes ``esc_`` and the value with every character but an ASCII letter or digit written
    as ``_<hex code point>_``: ``esc_nodeID_3a__2f__2f_b10006``. So one id always gives the
    same label (within a query and across queries), and two different ids never give the same.
    """
    if not value.startswith(_ESCAPED):
        try:
            ox.BlankNode(value)
            return value
        except ValueError:
            pass
    return _ESCAPED + "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):x}_" for c in value)
