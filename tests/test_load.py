"""Loading every format, typed literals, labels, rdflib interop, and bad input."""

from __future__ import annotations

import datetime as dt
import gzip
from decimal import Decimal
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from conftest import DATA

from kgsynth.errors import GraphLoadError
from kgsynth.kg import KnowledgeGraph

TURTLE = """@prefix ex: <http://load.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:anna rdfs:label "Anna Petrova"@en, "Анна Петрова"@ru ; ex:salary "120000.50"^^xsd:decimal ;
    ex:hired "2021-03-01"^^xsd:date ; ex:born "1990"^^xsd:gYear ; ex:children 2 ; ex:resident true .
"""
NTRIPLES = '<http://load.example/a> <http://load.example/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
NQUADS = '<http://load.example/a> <http://load.example/p> <http://load.example/b> <http://load.example/g1> .\n'
TRIG = "@prefix ex: <http://load.example/> .\nex:g2 { ex:c ex:p ex:d . }\n"
JSONLD = '{"@context": {"ex": "http://load.example/"}, "@id": "ex:e", "ex:p": {"@id": "ex:f"}}'


def _write(path: Path, text: str, gz: bool = False) -> Path:
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "text", "triples"),
    [("g.ttl", TURTLE, 7), ("g.nt", NTRIPLES, 1), ("g.nq", NQUADS, 1), ("g.trig", TRIG, 1), ("g.jsonld", JSONLD, 1)],
)
@pytest.mark.parametrize("gz", [False, True])
def test_each_format_plain_and_gzipped(tmp_path, name, text, triples, gz):
    path = _write(tmp_path / (name + (".gz" if gz else "")), text, gz)
    assert len(KnowledgeGraph.load(path)) == triples


def test_folder_merges_files_and_named_graphs_into_one_union(tmp_path):
    for name, text in [("a.ttl", TURTLE), ("b.nq", NQUADS), ("sub/c.trig", TRIG), ("README.md", "not rdf")]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        _write(tmp_path / name, text)
    kg = KnowledgeGraph.load(tmp_path)
    assert len(kg) == 9  # 7 + 1 (graph g1) + 1 (graph g2): named graphs are queried as one


def test_typed_literals_stay_typed(tmp_path):
    kg = KnowledgeGraph.load(_write(tmp_path / "g.ttl", TURTLE))
    values = {p.value.rsplit("/", 1)[1]: kg.value(o) for _, p, o in kg.select("SELECT ?s ?p ?o WHERE { ?s ?p ?o }")}
    assert values["salary"] == Decimal("120000.50") and isinstance(values["salary"], Decimal)
    assert values["hired"] == dt.date(2021, 3, 1)
    assert values["born"] == 1990 and values["children"] == 2 and values["resident"] is True


def test_labels_follow_language_preference_and_fall_back_to_local_name(tmp_path):
    path = _write(tmp_path / "g.ttl", TURTLE + "ex:nolabel ex:p ex:anna .\n")
    anna, nolabel = ox.NamedNode("http://load.example/anna"), ox.NamedNode("http://load.example/nolabel")
    assert KnowledgeGraph.load(path, lang=("ru", "en")).label(anna) == "Анна Петрова"
    kg = KnowledgeGraph.load(path, lang=("en",))
    assert kg.label(anna) == "Anna Petrova"
    assert kg.label(anna, lang=("de",)) == "Anna Petrova"  # no German: any language rather than an IRI
    assert kg.label(nolabel) == "nolabel"
    assert kg.labels([anna])[anna] == {"en": "Anna Petrova", "ru": "Анна Петрова"}


def test_rdflib_round_trip_keeps_triples_and_named_graphs(tmp_path):
    graph = rdflib.Graph().parse(data=TURTLE, format="turtle")
    kg = KnowledgeGraph.from_rdflib(graph)
    assert len(kg) == len(graph) == 7
    back = kg.to_rdflib()

    def values(triples):  # Oxigraph stores "120000.50"^^xsd:decimal as "120000.5": same value
        return {(s, p, o.toPython() if isinstance(o, rdflib.Literal) else o) for s, p, o in triples}

    assert values(back.triples((None, None, None))) == values(graph)
    kg.add(_write(tmp_path / "g.nq", NQUADS))
    assert {str(c.identifier) for c in kg.to_rdflib().graphs() if len(c)} >= {"http://load.example/g1"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('@prefix ex: <http://x/> .\nex:a ex:b ex:c .\nex:a foo:b "x" .\n', "at line 3, column 6: The prefix foo: has not been declared"),
        ('@prefix ex: <http://x/> .\nex:a ex:b "unterminated .\n', "at line 2"),
        ("<http://x/a> <http://x/b> <http://x/c>\n", "at line"),
    ],
)
def test_syntax_errors_name_file_line_and_column(tmp_path, content, expected):
    path = _write(tmp_path / "bad.ttl", content)
    with pytest.raises(GraphLoadError) as info:
        KnowledgeGraph.load(path)
    assert str(path) in str(info.value) and expected in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: p / "missing.ttl", "no such file or folder"),
        (lambda p: _write(p / "empty.ttl", "# nothing\n"), "holds no triples"),
        (lambda p: _write(p / "g.csv", "a,b"), "cannot tell the RDF format"),
        (lambda p: (p / "only-text").mkdir() or _write(p / "only-text" / "x.txt", "hi").parent, "no RDF files in folder"),
        (lambda p: _write(p / "g.ttl.gz", "not gzip"), "not a valid gzip file"),
        (lambda p: _write(p / "g.jsonld", '{"@context": "https://schema.org/", "name": "x"}'), "remote @context"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, make, expected):
    with pytest.raises(GraphLoadError) as info:
        KnowledgeGraph.load(make(tmp_path))
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_open_reads_a_store_kept_on_disk(tmp_path):
    KnowledgeGraph.load(DATA / "handmade.ttl", store_path=tmp_path / "store")
    assert len(KnowledgeGraph.open(tmp_path / "store")) == len(KnowledgeGraph.load(DATA / "handmade.ttl"))
    with pytest.raises(GraphLoadError, match="no such folder"):
        KnowledgeGraph.open(tmp_path / "nope")


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_byte_order_mark_is_read_past(tmp_path, gzipped):
    data = "\ufeff@prefix ex: <http://x/> .\nex:a ex:p ex:b .\n".encode()
    path = tmp_path / ("g.ttl.gz" if gzipped else "g.ttl")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    assert KnowledgeGraph.load(path).stats().triples == 1


def test_a_region_glued_to_an_english_label_is_not_said_unless_it_tells_two_names_apart(tmp_path):
    # FB15k-237 writes 161 labels so ("Actor-GB", "Mountain Time Zone-US"), and has both "Batman" and "Batman-US"
    path = tmp_path / "regions.ttl"
    path.write_text("""@prefix ex: <https://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:actor rdfs:label "Actor-GB"@en .
ex:zone rdfs:label "Mountain Time Zone-US"@en .
ex:film rdfs:label "Batman"@en .
ex:series rdfs:label "Batman-US"@en .
ex:comedy rdfs:label "Comedy" .
ex:genre rdfs:label "Comedy-GB"@en .
ex:code rdfs:label "ORD-GB" ; rdfs:label "Хью-US"@ru .
""", encoding="utf-8")
    kg = KnowledgeGraph.load(str(path))
    terms = [ox.NamedNode(f"https://example.org/{n}") for n in ("actor", "zone", "film", "series", "genre", "code")]
    said = {t.value.rsplit("/", 1)[1]: labels for t, labels in kg.labels(terms).items()}
    assert said == {"actor": {"en": "Actor"}, "zone": {"en": "Mountain Time Zone"}, "film": {"en": "Batman"},
                    "series": {"en": "Batman-US"}, "genre": {"en": "Comedy-GB"}, "code": {"": "ORD-GB", "ru": "Хью-US"}}
