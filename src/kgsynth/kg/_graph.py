"""KnowledgeGraph: one API over the embedded Oxigraph store and remote SPARQL endpoints."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyoxigraph as ox

from kgsynth.errors import GraphLoadError, KgsynthError
from kgsynth.kg import _load
from kgsynth.kg._backends import Backend, Credentials, EndpointBackend, OxigraphBackend, Rows
from kgsynth.kg._terms import NUMERIC_TYPES, REGION_MARK, Term, bind_values, readable_name, to_python
from kgsynth.kg.vocab import FACT_OBJECT, FACT_SUBJECT, KGS, LABEL_PATH, LABEL_PREDICATES

if TYPE_CHECKING:
    import networkx as nx
    import rdflib

    from kgsynth.kg._stats import GraphStats

T = TypeVar("T")

_LABEL_BATCH = 1000
# One UNION branch per predicate: Oxigraph joins a VALUES list of predicates with the
# bound entities 50x slower than this (0.47 s vs 0.009 s for 1,000 entities).
_LABELS_QUERY = "SELECT ?e ?p ?l WHERE {\n  #VALUES\n  %s\n  FILTER(isLiteral(?l))\n}" % " UNION ".join(
    f"{{ ?e <{p}> ?l . BIND(<{p}> AS ?p) }}" for p in LABEL_PREDICATES
)
_ALL_LABELS_QUERY = f"SELECT ?e ?label WHERE {{ ?e {LABEL_PATH} ?label . FILTER(isIRI(?e) && isLiteral(?label)) }}"
_VOCABULARY_QUERY = f"""SELECT DISTINCT ?v WHERE {{
  {{ ?x a ?v }} UNION {{ ?s ?v ?o }} UNION {{ ?v a <{KGS}Rule> }}
  UNION {{ ?s ?p ?v . FILTER(STRSTARTS(STR(?p), "{KGS}") && ?p NOT IN (<{FACT_SUBJECT}>, <{FACT_OBJECT}>)) }}
  FILTER(isIRI(?v))
}}"""
_FIND_QUERY = f"SELECT DISTINCT ?e WHERE {{\n  #VALUES\n  ?e {LABEL_PATH} ?label .\n}}"
_TAKEN_QUERY = f"SELECT DISTINCT ?l WHERE {{\n  #VALUES\n  ?e {LABEL_PATH} ?l .\n}}"


class KnowledgeGraph:
    """A knowledge graph of facts and rules, queried with SPARQL.

    Build one with :meth:`load` (files, folders, ``.gz``), :meth:`open` (an on-disk
    store), :meth:`from_endpoint` (a remote SPARQL endpoint) or :meth:`from_rdflib`.

    Args:
        backend: where queries run; an empty in-memory Oxigraph store by default.
        lang: label languages in order of preference (``""`` = no language tag).
    """

    def __init__(self, backend: Backend | None = None, *, lang: Sequence[str] = ("en",)):
        self.backend = backend if backend is not None else OxigraphBackend(ox.Store())
        self.lang = tuple(lang)
        # what the graph was read from, when known (files: their contents' sha256), so a
        # resumed or finished run can tell an edited graph of the same size from its own
        self.fingerprint: str | None = None
        self._memo: dict[Hashable, Any] = {}

    # ----------------------------------------------------------------- construction
    @classmethod
    def load(
        cls,
        *paths: str | os.PathLike[str],
        lang: Sequence[str] = ("en",),
        store_path: str | os.PathLike[str] | None = None,
    ) -> KnowledgeGraph:
        """Load RDF files or folders into a new embedded store.

        Turtle, N-Triples, N-Quads, TriG, JSON-LD, N3 and RDF/XML are recognised by
        extension, each optionally gzipped. Named graphs are merged into the union
        default graph. ``store_path`` keeps the store on disk (reopen it with :meth:`open`).

        Raises:
            GraphLoadError: a path is unreadable, a file does not parse (with line and
                column), or the files hold no triples.
        """
        if not paths:
            raise GraphLoadError("no graph files given")
        files = [f for p in paths for f in _load.rdf_files(Path(p))]
        store = ox.Store(str(store_path)) if store_path is not None else ox.Store()
        for file in files:
            _load.load_file(store, file)
        if len(store) == 0:
            raise GraphLoadError(f"{', '.join(str(p) for p in paths)} holds no triples")
        kg = cls(OxigraphBackend(store, f"embedded store of {', '.join(str(p) for p in paths)}"), lang=lang)
        kg.fingerprint = _load.fingerprint(files)
        return kg

    @classmethod
    def demo(cls, *, lang: Sequence[str] = ("en",)) -> KnowledgeGraph:
        """The demo graph shipped with kgsynth (what ``kgsynth synth`` reads when given no graph)."""
        kg = cls.load(_load.demo_graph_path(), lang=lang)
        kg.backend.description = "the kgsynth demo graph"  # not this machine's install path: manifests are shared
        return kg

    @classmethod
    def open(cls, store_path: str | os.PathLike[str], *, lang: Sequence[str] = ("en",)) -> KnowledgeGraph:
        """Open an on-disk store written earlier by ``load(..., store_path=...)``."""
        if not Path(store_path).is_dir():
            raise GraphLoadError(f"cannot open store {store_path}: no such folder")
        try:
            store = ox.Store.read_only(str(store_path))
        except OSError as e:
            raise GraphLoadError(f"cannot open store {store_path}: {e}") from None
        return cls(OxigraphBackend(store, f"store {store_path}"), lang=lang)

    @classmethod
    def from_endpoint(
        cls,
        url: str,
        *,
        lang: Sequence[str] = ("en",),
        timeout: float = 60.0,
        graph_uri: str | None = None,
        auth: Credentials | tuple[str, str] | None = None,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> KnowledgeGraph:
        """A read-only graph behind a SPARQL endpoint: its default graph, or the graph
        ``graph_uri`` (sent as the SPARQL protocol's ``default-graph-uri``).

        ``timeout`` is the deadline of each attempt; an attempt that fails with HTTP 429 or
        5xx, a timeout or a dropped connection is made again up to ``retries`` times, after
        ``backoff`` seconds doubling (see :class:`EndpointBackend`), so one query can take up
        to ``(retries + 1) * timeout`` and the waits. ``auth`` is a user name and password for
        HTTP Basic or Digest (``Credentials.from_env()`` reads ``KGSYNTH_SPARQL_USER`` and
        ``KGSYNTH_SPARQL_PASSWORD``). One probe query runs here, so a down endpoint fails now.
        """
        backend = EndpointBackend(url, timeout, graph_uri=graph_uri, auth=auth, retries=retries, backoff=backoff)
        kg = cls(backend, lang=lang)
        kg.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")  # fail here, not mid-job, if it is down
        return kg

    @classmethod
    def from_rdflib(cls, graph: rdflib.Graph, *, lang: Sequence[str] = ("en",)) -> KnowledgeGraph:
        """Copy an rdflib Graph or Dataset into a new embedded store."""
        store = ox.Store()
        if graph.context_aware:
            store.bulk_load(graph.serialize(format="nquads", encoding="utf-8"), format=ox.RdfFormat.N_QUADS)
        else:
            store.bulk_load(graph.serialize(format="nt", encoding="utf-8"), format=ox.RdfFormat.N_TRIPLES)
        return cls(OxigraphBackend(store, "embedded store (from rdflib)"), lang=lang)

    def to_rdflib(self) -> rdflib.Dataset:
        """Copy the embedded store into an rdflib Dataset (named graphs kept)."""
        import rdflib

        data = self._store().dump(format=ox.RdfFormat.N_QUADS)
        dataset = rdflib.Dataset()
        dataset.parse(data=data, format="nquads")
        return dataset

    def add(self, *paths: str | os.PathLike[str]) -> None:
        """Load more files into the embedded store (e.g. rules kept beside a data graph)."""
        store = self._store()
        self._memo.clear()
        for file in [f for p in paths for f in _load.rdf_files(Path(p))]:
            _load.load_file(store, file)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, run once per key and kept until :meth:`add` changes the graph
        (for derived data that costs a full scan, such as anchor populations)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def _store(self) -> ox.Store:
        if not isinstance(self.backend, OxigraphBackend):
            raise KgsynthError(f"{self.backend.description} is read-only; this needs the embedded store")
        return self.backend.store

    @property
    def is_remote(self) -> bool:
        return isinstance(self.backend, EndpointBackend)

    def __repr__(self) -> str:
        return f"KnowledgeGraph({self.backend.description})"

    # ----------------------------------------------------------------- querying
    def select(
        self,
        query: str,
        values: tuple[Sequence[str], Iterable[Sequence[Term]]] | None = None,
    ) -> Rows:
        """Run a SPARQL SELECT; iterate the result for tuples of pyoxigraph terms.

        ``values=(variables, rows)`` binds terms at the query's ``#VALUES`` line as an
        escaped VALUES block, so no value is ever pasted into query text by hand.
        """
        if values is None:
            return self.backend.select(query)
        variables, rows = values[0], list(values[1])
        result = self.backend.select(bind_values(query, variables, rows))
        return _as_bound(result, variables, rows) if self.is_remote else result

    def __len__(self) -> int:
        (count,) = next(iter(self.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")))
        return int(count.value)

    # ----------------------------------------------------------------- labels
    def labels(self, terms: Iterable[Term]) -> dict[Term, dict[str, str]]:
        """All labels of each term by language tag (``""`` for none); literals map to {}.

        Per language the first label predicate in LABEL_PREDICATES wins, then the
        smallest label, so the choice does not depend on store order.
        """
        nodes = sorted({t for t in terms if not isinstance(t, ox.Literal)}, key=str)
        found: dict[Term, dict[str, tuple[int, str]]] = {}
        rank = {p: i for i, p in enumerate(LABEL_PREDICATES)}
        for start in range(0, len(nodes), _LABEL_BATCH):
            batch = [(n,) for n in nodes[start : start + _LABEL_BATCH] if isinstance(n, ox.NamedNode)]
            if not batch:
                continue
            for entity, predicate, label in self.select(_LABELS_QUERY, (("e",), batch)):
                key = (rank[predicate.value], label.value)
                by_lang = found.setdefault(entity, {})
                lang = label.language or ""
                if lang not in by_lang or key < by_lang[lang]:
                    by_lang[lang] = key
        chosen = {t: {lang: v[1] for lang, v in sorted(found.get(t, {}).items())} for t in terms}
        return self._without_region_marks(chosen)

    def _without_region_marks(self, chosen: dict[Term, dict[str, str]]) -> dict[Term, dict[str, str]]:
        """``chosen`` with each English label that has its region glued on said without it
        ("Actor-GB" as "Actor"), unless some entity's label is the name without it: FB15k-237
        has both "Batman" and "Batman-US", which must stay two names."""
        marked = {(term, lang): label[:m.start()] for term, by_lang in chosen.items() for lang, label in by_lang.items()
                  if lang.split("-")[0] in ("", "en") and (m := REGION_MARK.search(label))
                  and any(c.islower() for c in label[:m.start()])}  # words, not a code ("ORD-GB")
        if not marked:
            return chosen
        names = sorted({(name, lang) for (_, lang), name in marked.items()})
        literals = [(ox.Literal(name, language=lang) if lang else ox.Literal(name),) for name, lang in names]
        literals += [(ox.Literal(name),) for name, lang in names if lang]  # the same name untagged
        taken: set[str] = set()
        for start in range(0, len(literals), _LABEL_BATCH):
            taken |= {label.value for (label,) in self.select(_TAKEN_QUERY, (("l",), literals[start:start + _LABEL_BATCH]))}
        for (term, lang), name in marked.items():
            if name not in taken:
                chosen[term][lang] = name
        return chosen

    def all_labels(self) -> dict[str, list[str]]:
        """Every IRI's labels (all languages, sorted): what an entity ruler or a fuzzy
        mention check needs."""
        found: dict[str, set[str]] = {}
        for entity, label in self.select(_ALL_LABELS_QUERY):
            found.setdefault(entity.value, set()).add(label.value)
        return {iri: sorted(labels) for iri, labels in sorted(found.items())}

    def vocabulary(self) -> set[str]:
        """IRIs of the graph's schema rather than its entities: classes (objects of
        rdf:type), properties, rules, and whatever rule descriptions point to (domains,
        categories, kinds)."""
        rows = self.select(_VOCABULARY_QUERY)
        return {row[0].value for row in rows}

    def pick_label(self, term: Term, labels: dict[str, str], lang: Sequence[str] | None = None) -> str:
        """The label to show for ``term``: preferred language, else untagged, else any, else its
        IRI's last segment made readable (:func:`readable_name`)."""
        if isinstance(term, ox.Literal):
            return term.value
        for code in (*(lang or self.lang), ""):
            if code in labels:
                return labels[code]
        if labels:
            return labels[min(labels)]
        return readable_name(term.value) if isinstance(term, ox.NamedNode) else str(term)

    def label(self, term: Term, lang: Sequence[str] | None = None) -> str:
        """The display label of one term (see :meth:`pick_label`)."""
        return self.pick_label(term, self.labels([term])[term], lang)

    def find(self, label: str, lang: str | None = None) -> list[ox.NamedNode]:
        """Entities whose label is exactly ``label`` (in ``lang``, or untagged/any when None)."""
        candidates = [ox.Literal(label, language=lang)] if lang else [ox.Literal(label)] + [
            ox.Literal(label, language=code) for code in self.lang if code
        ]
        rows = self.select(_FIND_QUERY, (("label",), [(c,) for c in candidates]))
        return sorted((e for (e,) in rows if isinstance(e, ox.NamedNode)), key=str)

    @staticmethod
    def value(term: Term) -> object:
        """A literal's typed Python value (Decimal, int, date, ...); an IRI's string."""
        if isinstance(term, ox.Literal):
            return to_python(term.value, term.datatype.value)
        return term.value

    # ----------------------------------------------------------------- views
    def stats(self, top: int = 10, *, sample: int | None = None, anchor_class: str | None = None) -> GraphStats:
        """Counts of triples, entities, relations, literal types and the degree distribution.

        With ``sample=N`` they cover N entities and the facts out of them instead of the
        whole graph (a server too large to scan): the first N members of ``anchor_class``
        (an IRI) or else the first N subjects, in the server's order; ``scope`` says which.
        """
        from kgsynth.kg._stats import compute_stats

        return compute_stats(self, top, sample, anchor_class)

    def to_networkx(self, include_literals: bool = True) -> nx.MultiDiGraph:
        """The whole graph as a networkx MultiDiGraph (for notebook-sized graphs)."""
        from kgsynth.kg._networkx import whole_graph

        return whole_graph(self, include_literals)

    def neighborhood(self, entity: Term | str, hops: int = 1, max_edges: int = 500) -> nx.MultiDiGraph:
        """The entities within ``hops`` edges of ``entity`` (both directions), as networkx."""
        from kgsynth.kg._networkx import neighborhood

        node = ox.NamedNode(entity) if isinstance(entity, str) else entity
        return neighborhood(self, node, hops, max_edges)

    def draw(self, graph, ax=None, **kwargs):
        """Draw a networkx view or anything with ``to_networkx()`` (e.g. a Subgraph)."""
        from kgsynth.kg._networkx import draw

        return draw(graph.to_networkx() if hasattr(graph, "to_networkx") else graph, ax=ax, **kwargs)


def _as_bound(result: Rows, variables: Sequence[str], bound: list[Sequence[Term]]) -> Rows:
    """``result`` with each bound literal as it was bound: a server may hand it back in its
    own form (Virtuoso: ``"59390"^^xsd:decimal`` as ``59390`` an xsd:integer, ``"1.50"`` as
    ``"1.5"``), and sampling must see the same terms on every engine. A value bound in two
    forms at once is left as the server gave it."""
    restore: list[tuple[int, dict[tuple, Term]]] = []
    for position, variable in enumerate(variables):
        if variable not in result.variables:
            continue
        forms: dict[tuple, set[Term]] = {}
        for row in bound:
            if isinstance(row[position], ox.Literal):
                forms.setdefault(_value_key(row[position]), set()).add(row[position])
        table = {key: terms.pop() for key, terms in forms.items() if len(terms) == 1}
        if table:
            restore.append((result.variables.index(variable), table))
    if not restore:
        return result

    def as_bound(row: tuple[Term | None, ...]) -> tuple[Term | None, ...]:
        row = list(row)
        for i, table in restore:
            if isinstance(row[i], ox.Literal):
                row[i] = table.get(_value_key(row[i]), row[i])
        return tuple(row)

    return Rows(result.variables, map(as_bound, result.rows))


def _value_key(literal: ox.Literal) -> tuple:
    """What a literal means, whatever its lexical form: numbers of any numeric type compare by value."""
    datatype = literal.datatype.value
    return (literal.language, "number" if datatype in NUMERIC_TYPES else datatype, to_python(literal.value, datatype))
