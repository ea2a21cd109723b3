"""bench/webnlg_graph.py: WebNLG 2020's DBpedia triples as a graph (third-party data in
../shared/external/webnlg2020; the tests that read it skip when it is absent)."""

from __future__ import annotations

import gzip
import json
import sys
from urllib.parse import unquote

import pyoxigraph as ox
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from webnlg_graph import DBO, DBR, WEBNLG, distinct_triples, object_term, rdf_triples, texts, write  # noqa: E402

from kgsynth.kg import KnowledgeGraph  # noqa: E402

needs_webnlg = pytest.mark.skipif(not (WEBNLG / "train_en.jsonl.gz").exists(),
                                  reason="../shared/external/webnlg2020 is not present")
TEXTS = 300
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, str, str]]:
    """The distinct triples of the first 300 English texts, read here without the script."""
    found = []
    with gzip.open(WEBNLG / "train_en.jsonl.gz", "rt", encoding="utf-8") as f:
        for _, line in zip(range(TEXTS), f, strict=False):
            found += [tuple(t) for t in json.loads(line)["triples"]]
    return sorted(set(found))


@pytest.fixture(scope="module")
def graph(corpus, tmp_path_factory) -> list[ox.Triple]:
    """The script's graph of the first 300 English texts, written to N-Triples and read back."""
    out = tmp_path_factory.mktemp("webnlg") / "webnlg.nt.gz"
    write(rdf_triples(distinct_triples(texts("en", TEXTS))), out)
    with gzip.open(out, "rb") as f:
        return list(ox.parse(f, format=ox.RdfFormat.N_TRIPLES))


def name(node: ox.NamedNode, base: str) -> str:
    assert node.value.startswith(base), node
    return unquote(node.value.removeprefix(base))


@needs_webnlg
def test_every_corpus_triple_is_in_the_graph_once(corpus, graph):
    data = [t for t in graph if t.predicate.value != LABEL]
    assert len(data) == len(set(data)) == len(corpus) > 100
    read_back = set()
    for t in data:
        obj = t.object
        read_back.add((name(t.subject, DBR), name(t.predicate, DBO),
                       obj.value if isinstance(obj, ox.Literal) else name(obj, DBR)))
        if isinstance(obj, ox.Literal):
            assert obj.datatype.value == XSD_STRING and obj.language is None  # the corpus writes no datatype
    # a quoted object is a literal of the text inside the quotes, an unquoted one keeps its text
    expected = {(s, p, o[1:-1] if len(o) > 1 and o[0] == o[-1] == '"' else o) for s, p, o in corpus}
    assert read_back == expected


@needs_webnlg
def test_objects_are_entities_or_literals_as_the_corpus_marks_them(corpus, graph):
    objects = {(name(t.subject, DBR), name(t.predicate, DBO)): set() for t in graph if t.predicate.value != LABEL}
    for t in graph:
        if t.predicate.value != LABEL:
            objects[name(t.subject, DBR), name(t.predicate, DBO)].add(t.object)
    for s, p, o in corpus:
        terms = objects[s, p]
        if o.startswith('"'):  # quoted: a literal, never an entity
            assert ox.Literal(o[1:-1] if o.endswith('"') else o) in terms, (s, p, o)
        elif "_" in o or not (" " in o or any(c.isdigit() for c in o)):  # a DBpedia name
            assert ox.NamedNode(DBR + o.replace(" ", "%20").replace('"', "%22")) in terms, (s, p, o)
        else:  # a number, a date, a value with its unit (or a name like 3XN)
            assert ox.Literal(o) in terms or ox.NamedNode(DBR + o) in terms, (s, p, o)
    # the first text: a quoted city name, a string literal, not an entity
    assert ox.Literal("Aarhus, Denmark") in objects["Aarhus_Airport", "cityServed"]
    assert ox.NamedNode(DBR + "Aarhus") in objects["Aarhus_Airport", "cityServed"]
    numbers = [o for s, p, o in corpus if p == "runwayLength"]
    assert numbers and all(ox.Literal(o) in objects[s, p] for s, p, o in corpus if p == "runwayLength")


@needs_webnlg
def test_every_entity_has_its_english_label_and_nothing_else_has_one(corpus, graph):
    labels: dict[str, list[ox.Literal]] = {}
    for t in graph:
        if t.predicate.value == LABEL:
            labels.setdefault(t.subject.value, []).append(t.object)
    entities = {t.subject.value for t in graph} | {t.object.value for t in graph if isinstance(t.object, ox.NamedNode)}
    assert set(labels) == {e for e in entities if e.startswith(DBR)}
    for entity, found in labels.items():
        assert found == [ox.Literal(unquote(entity.removeprefix(DBR)).replace("_", " "), language="en")]
    assert labels[DBR + "Aarhus_Airport"] == [ox.Literal("Aarhus Airport", language="en")]
    predicates = {t.predicate.value for t in graph}
    assert not predicates & set(labels)  # relations stay unlabelled
    assert predicates - {LABEL} == {DBO + p for _, p, _ in corpus}  # no rdf:type, no owl:sameAs


@needs_webnlg
def test_kgsynth_reads_the_graph(graph, tmp_path):
    out = tmp_path / "webnlg.nt"
    write(graph, out)
    kg = KnowledgeGraph.load(out)
    assert kg.find("Aarhus Airport", lang="en")


@needs_webnlg
def test_max_triples_caps_the_corpus_triples():
    capped = rdf_triples(distinct_triples(texts("en", TEXTS)), max_triples=10)
    assert sum(1 for t in capped if t.predicate.value != LABEL) == 10


def test_objects_the_corpus_writes_oddly():
    assert object_term('"1932-03-15"') == ox.Literal("1932-03-15")  # a quoted date: a plain string
    assert object_term("1793-10-23") == ox.Literal("1793-10-23")  # an unquoted date: the same
    assert object_term("597.0") == ox.Literal("597.0")
    assert object_term("1.2 (litres)") == ox.Literal("1.2 (litres)")
    assert object_term('"52.0"(minutes)') == ox.Literal('"52.0"(minutes)')  # not one quoted string: as written
    double = ox.NamedNode("http://www.w3.org/2001/XMLSchema#double")
    assert object_term('"1.8"^^xsd:double') == ox.Literal("1.8", datatype=double)
    km2 = "http://dbpedia.org/datatype/squareKilometre"
    assert object_term(f'"5000.0"^^<{km2}>') == ox.Literal("5000.0", datatype=ox.NamedNode(km2))
    assert object_term("<http://www.ghampara.gov.lk/>") == ox.NamedNode("http://www.ghampara.gov.lk/")
    assert object_term("3XN") == ox.NamedNode(DBR + "3XN")
    assert object_term("2014–15_Serie_A") == ox.NamedNode(DBR + "2014–15_Serie_A")
    assert object_term('Officer\'s_Star_"Parasol"') == ox.NamedNode(DBR + "Officer's_Star_%22Parasol%22")
    assert object_term("Al_Anderson_(NRBQ band)") == ox.NamedNode(DBR + "Al_Anderson_(NRBQ%20band)")
