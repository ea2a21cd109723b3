"""What the graph says about its relations, read with a few aggregate SPARQL queries.

Two queries profile every relation at once (how many entities have one value or several,
which datatypes, how many numbers and texts look like years or dates); the values themselves
are read in one more query, only for the relations a library rule can use, and one more finds
the links to bridges with a date (a film's one composer, who has a date of birth).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pyoxigraph as ox

from kgsynth.kg import KnowledgeGraph, local_name
from kgsynth.kg._terms import DATE_TEXT, YEAR_TEXT, literal_type, reads_from_text, text_matches
from kgsynth.kg.vocab import SCHEMA, is_fact_relation

QUDT = "http://qudt.org/schema/qudt/"
# Schema predicates say what other things are; they are never facts a rule reads.
_UNIT_PREDICATES = (SCHEMA + "unitText", SCHEMA + "unitCode", "https://schema.org/unitText",
                    "https://schema.org/unitCode", QUDT + "unit", QUDT + "hasUnit")

_SHAPE = """SELECT ?p (COUNT(*) AS ?subjects) (SUM(IF(?n = 1, 1, 0)) AS ?single)
  (SUM(IF(?n >= %d && ?n <= %d, 1, 0)) AS ?multi)
WHERE { { SELECT ?p ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ?s } }
GROUP BY ?p"""
# isNumeric first: && does not compare a non-number (false && error is false); COALESCE: a
# comparison with NaN is an error on Oxigraph, which would leave the whole sum unbound.
# ?dates and ?yeartexts: the texts that look like a date or a year (kept for the datatypes
# read from text, strings and misspelt date types); bound in WHERE, as a pattern's braces in
# the projection would end it for a reader of the query's variables.
_DATATYPES = f"""SELECT ?p ?dt (COUNT(*) AS ?n) (SUM(COALESCE(IF(isNumeric(?o) && ?o >= %d && ?o <= %d, 1, 0), 0)) AS ?years)
  (SUM(?date) AS ?dates) (SUM(?year) AS ?yeartexts)
WHERE {{
  ?s ?p ?o . BIND({literal_type("o")} AS ?dt)
  BIND(IF(isLiteral(?o) && !isNumeric(?o) && {text_matches("o", DATE_TEXT)}, 1, 0) AS ?date)
  BIND(IF(isLiteral(?o) && !isNumeric(?o) && {text_matches("o", YEAR_TEXT)}, 1, 0) AS ?year)
}}
GROUP BY ?p ?dt"""
_UNITS = f"SELECT ?p ?unit WHERE {{ ?p {'|'.join(f'<{p}>' for p in _UNIT_PREDICATES)} ?unit }}"
_VALUES = "SELECT ?p ?s ?o WHERE {\n  #VALUES\n  ?s ?p ?o .\n  FILTER(%s(?o))\n}"  # isLiteral or isIRI
_CLASSES = "SELECT ?p ?class (COUNT(DISTINCT ?s) AS ?n) WHERE {\n  #VALUES\n  ?s ?p ?o .\n  ?s a ?class .\n} GROUP BY ?p ?class"

# The entity's only value of ?p is ?b, an IRI other than itself with a value of a dated
# relation: the bridge a kgs:via input reads (one per entity, as the engine requires).
_LINKS = """SELECT DISTINCT ?p ?s ?b WHERE {
  #VALUES
  ?b ?dated [] .
  FILTER(isIRI(?b))
  ?s ?p ?b .
  FILTER(?s != ?b)
  FILTER NOT EXISTS { ?s ?p ?other . FILTER(?other != ?b) }
}"""

# How many entities have each number of values (within the member range) of a relation.
_COUNTS = """SELECT ?p ?n (COUNT(*) AS ?subjects) WHERE {
  { SELECT ?p ?s (COUNT(*) AS ?n) WHERE {
      #VALUES
      ?s ?p ?o .
    } GROUP BY ?p ?s }
  FILTER(?n >= %d && ?n <= %d)
} GROUP BY ?p ?n"""

# relation -> subject -> its literal values
Values = Mapping[str, Mapping[ox.NamedNode | ox.BlankNode, list[ox.Literal]]]
# link relation -> entity -> its one value, the bridge
Links = Mapping[str, Mapping[ox.NamedNode | ox.BlankNode, ox.NamedNode]]


@dataclass(frozen=True)
class RelationProfile:
    """One relation: who has it, how many values, of which datatypes."""

    iri: str
    subjects: int  # entities with at least one value
    single: int  # entities with exactly one value
    multi: int  # entities with a number of values in the library's member range
    datatypes: Mapping[str | None, int]  # datatype IRI (None: an IRI or a blank node) -> values
    years: int  # numbers within the library's year range
    dates_as_text: int  # strings and values of a misspelt date datatype whose text looks like a date
    years_as_text: int  # ... like a year
    labels: Mapping[str, str]  # language tag ("" for none) -> label
    declared_units: tuple[str, ...]  # schema:unitCode and the like, as written (an IRI's local name)

    @property
    def values(self) -> int:
        return sum(self.datatypes.values())

    def count(self, datatypes: Iterable[str | None]) -> int:
        """The values with one of these datatypes."""
        return sum(self.datatypes.get(d, 0) for d in datatypes)

    def part(self, values: int) -> float:
        """The share of its values that ``values`` is."""
        return values / self.values if self.values else 0.0

    def share(self, datatypes: Iterable[str | None]) -> float:
        """The share of the values with one of these datatypes."""
        return self.part(self.count(datatypes))


def profile_relations(kg: KnowledgeGraph, member_range: tuple[int, int],
                      year_range: tuple[int, int]) -> list[RelationProfile]:
    """Every fact relation of the graph (not rdf:, rdfs:, owl:, kgs: or a label), by IRI."""
    shapes = {p.value: (int(n.value), int(one.value), int(many.value))
              for p, n, one, many in kg.select(_SHAPE % member_range) if _is_fact(p)}
    datatypes: dict[str, Counter] = defaultdict(Counter)
    years, texts = Counter(), defaultdict(Counter)
    for p, datatype, n, in_range, dates, year_texts in kg.select(_DATATYPES % year_range):
        if p.value in shapes:
            datatypes[p.value][datatype.value if datatype is not None else None] += int(n.value)
            years[p.value] += int(in_range.value)
            if datatype is not None and reads_from_text(datatype.value):
                texts[p.value].update(dates=int(dates.value), years=int(year_texts.value))
    units: dict[str, list[str]] = defaultdict(list)
    for p, unit in kg.select(_UNITS):
        units[p.value].append(local_name(unit.value) if isinstance(unit, ox.NamedNode) else unit.value)
    nodes = [ox.NamedNode(iri) for iri in shapes]
    labels = kg.labels(nodes)
    return [
        RelationProfile(iri=node.value, subjects=shapes[node.value][0], single=shapes[node.value][1],
                        multi=shapes[node.value][2], datatypes=dict(datatypes[node.value]),
                        years=years[node.value], dates_as_text=texts[node.value]["dates"],
                        years_as_text=texts[node.value]["years"], labels=labels[node],
                        declared_units=tuple(sorted(units[node.value])))
        for node in sorted(nodes, key=lambda n: n.value)
    ]


def _is_fact(predicate: ox.NamedNode) -> bool:
    return is_fact_relation(predicate.value)


def read_values(kg: KnowledgeGraph, relations: Iterable[str]) -> Values:
    """The literal values of these relations, by relation and subject (one query)."""
    found: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    rows = [(ox.NamedNode(iri),) for iri in sorted(set(relations))]
    if rows:
        for p, s, o in kg.select(_VALUES % "isLiteral", (("p",), rows)):
            found[p.value][s].append(o)
    return found


def read_links(kg: KnowledgeGraph, dated: Iterable[str], relations: Iterable[str]) -> Links:
    """Each entity whose only value of one of ``relations`` is an IRI other than itself that
    has a value of one of the ``dated`` relations: link -> entity -> that bridge (one query)."""
    found: dict[str, dict] = defaultdict(dict)
    rows = [(ox.NamedNode(iri),) for iri in sorted(set(dated))]
    wanted = set(relations)
    if rows and wanted:
        for p, s, b in kg.select(_LINKS, (("dated",), rows)):
            if p.value in wanted:
                found[p.value][s] = b
    return found


def main_classes(kg: KnowledgeGraph, relations: Iterable[str]) -> dict[str, str]:
    """The label of the class most subjects of each relation have (none when untyped)."""
    rows = [(ox.NamedNode(iri),) for iri in sorted(set(relations))]
    if not rows:
        return {}
    counts: dict[str, Counter] = defaultdict(Counter)
    for p, class_, n in kg.select(_CLASSES, (("p",), rows)):
        counts[p.value][class_] += int(n.value)
    best = {p: min(c.items(), key=lambda kv: (-kv[1], str(kv[0])))[0] for p, c in counts.items()}
    labels = kg.labels(best.values())
    return {p: kg.pick_label(class_, labels[class_]) for p, class_ in best.items()}


def value_counts(kg: KnowledgeGraph, relations: Iterable[str], member_range: tuple[int, int]) -> dict[str, Counter]:
    """Per relation, how many entities have each number of its values in ``member_range``:
    the answers of a count over it (one query)."""
    found: dict[str, Counter] = defaultdict(Counter)
    rows = [(ox.NamedNode(iri),) for iri in sorted(set(relations))]
    if rows:
        for p, n, subjects in kg.select(_COUNTS % member_range, (("p",), rows)):
            found[p.value][int(n.value)] = int(subjects.value)
    return found


def nested_values(kg: KnowledgeGraph, relations: Iterable[str], containments: Iterable[str]) -> dict[str, int]:
    """Per relation, the entities two of whose values one of the ``containments`` joins (a
    city and its country, both places of release of a film): two queries, the join here
    (a SPARQL join of each value pair with each containment took 50 s on FB15k-237)."""
    links = [(ox.NamedNode(iri),) for iri in sorted(set(containments))]
    rows = [(ox.NamedNode(iri),) for iri in sorted(set(relations))]
    if not links or not rows:
        return {}
    holds: dict[ox.NamedNode, set] = defaultdict(set)
    for _, a, b in kg.select(_VALUES % "isIRI", (("p",), links)):
        holds[a].add(b)
    values: dict[str, dict] = defaultdict(lambda: defaultdict(set))
    for p, subject, o in kg.select(_VALUES % "isIRI", (("p",), rows)):
        values[p.value][subject].add(o)
    return {p: sum(1 for objects in by_subject.values() if any((holds.get(a, set()) & objects) - {a} for a in objects))
            for p, by_subject in values.items()}
