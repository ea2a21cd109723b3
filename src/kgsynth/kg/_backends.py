"""Where SPARQL runs: the embedded Oxigraph store, or a remote endpoint (SPARQLWrapper)."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import pyoxigraph as ox
from SPARQLWrapper import JSON, POST, SELECT, SPARQLWrapper
from SPARQLWrapper import SPARQLExceptions as sw_errors

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
    """A remote SPARQL endpoint over HTTP. Results are converted to pyoxigraph terms."""

    def __init__(self, url: str, timeout: float = 60.0):
        self.url = url
        self.description = f"SPARQL endpoint {url}"
        self._timeout = timeout

    def select(self, query: str) -> Rows:
        client = SPARQLWrapper(self.url, returnFormat=JSON)
        client.setMethod(POST)
        client.setTimeout(int(self._timeout))
        client.setQuery(query)
        client.queryType = SELECT  # its regex guess reads template comments ("describes") as DESCRIBE
        try:
            raw = client.query().response.read()
        except sw_errors.QueryBadFormed as e:
            raise QueryError(f"{self.description} rejected the query: {_first_line(e)}") from None
        except sw_errors.SPARQLWrapperException as e:
            raise EndpointError(f"{self.description} answered with an error: {_first_line(e)}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise EndpointError(f"cannot reach {self.description}: {reason}") from None
        try:
            result = json.loads(raw)
            variables = tuple(result["head"]["vars"])
            bindings = result["results"]["bindings"]
        except (ValueError, KeyError, TypeError):
            raise EndpointError(f"{self.description} did not return SPARQL JSON results") from None
        return Rows(variables, (tuple(_term(b.get(v)) for v in variables) for b in bindings))


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _term(binding: dict | None) -> Term | None:
    if binding is None:
        return None
    kind, value = binding["type"], binding["value"]
    if kind == "uri":
        return ox.NamedNode(value)
    if kind == "bnode":
        return ox.BlankNode(value)
    if "xml:lang" in binding:
        return ox.Literal(value, language=binding["xml:lang"])
    if "datatype" in binding:
        return ox.Literal(value, datatype=ox.NamedNode(binding["datatype"]))
    return ox.Literal(value)
