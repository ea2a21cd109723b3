"""Documents to graph (kgsynth.ingest): reading documents and their bad input, chunks, typed
values, the code checks of a proposed triple, the retry's bookkeeping, the graph with
provenance (loaded and sampled by the existing shapes), and a run against the FAULT INJECTOR
(garbage JSON, a stalled reply: reported, the run goes on, a rerun redoes only that)."""

from __future__ import annotations

import ast
import datetime as dt
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import rdflib
from llm_fault_injector import FaultInjectingServer
from rapidfuzz import fuzz

from kgsynth.errors import KgsynthError
from kgsynth.ingest import Document, IngestConfig, Problem, ProposedTriple, ingest, read_documents
from kgsynth.ingest.documents import chunks, language_of
from kgsynth.ingest.extraction import Checker, ChunkResult, Extraction, Rejection, Triple, _settle
from kgsynth.ingest.extraction import _proposed as proposed_of
from kgsynth.ingest.graph import DocumentFacts, write_graph
from kgsynth.ingest.resolution import Mention, Pick, identifier_like, relation_names, resolve
from kgsynth.ingest.values import date_of, number_of
from kgsynth.kg import KnowledgeGraph
from kgsynth.llm import LLMResult
from kgsynth.queries import sample_subgraphs

LANGS = ("en", "ru")


def _read(source: Path, max_mb: float = 2.0) -> list[Document | Problem]:
    return list(read_documents(source, LANGS, max_mb))


# ----------------------------------------------------------------------------- documents
def test_a_folder_of_text_and_markdown_files_is_read_in_order_with_titles_and_languages(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.txt").write_text("Anna Petrova works in Kazan.", encoding="utf-8")
    (tmp_path / "b" / "c.md").write_text("# Заголовок\n\nАнна Петрова работает в Казани.", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.txt").write_text("A hidden folder is not read.", encoding="utf-8")
    docs = _read(tmp_path)
    assert [(d.id, d.lang, d.title) for d in docs] == [("a", "en", None), ("b/c", "ru", "Заголовок")]


def test_every_file_of_a_folder_that_is_not_read_is_named_with_why(tmp_path):
    (tmp_path / "a.txt").write_text("Anna Petrova works in Kazan.", encoding="utf-8")
    for name in ("page.html", "paper.pdf", "letter.docx", "table.csv", "old.txt.gz", "README"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / ".DS_Store").write_bytes(b"\x00")
    reasons = {d.document: d.reason for d in _read(tmp_path) if isinstance(d, Problem)}
    assert reasons == {
        "page.html": "a .html file is not read: convert it to plain text (.txt or .md) first",
        "paper.pdf": "a .pdf file is not read: convert it to plain text (.txt or .md) first",
        "letter.docx": "a .docx file is not read: convert it to plain text (.txt or .md) first",
        "old.txt.gz": "a compressed .txt.gz file is not read: unpack it into the folder",
        "table.csv": "a .csv is not read: only .txt and .md files of a folder are documents (records go in a .jsonl of id, text)",
        "README": "a file without an extension is not read: only .txt and .md files of a folder are documents (records go in a "
                  ".jsonl of id, text)",
    }


def test_a_folder_without_text_files_or_an_empty_jsonl_is_one_error_saying_what_is_there(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "paper.pdf").write_bytes(b"%PDF")
    with pytest.raises(KgsynthError, match=r"no documents in .*docs: expected .txt or .md files, or give a .jsonl file; it holds paper.pdf$"):
        _read(tmp_path / "docs")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(KgsynthError, match=r"no documents in .*empty.jsonl: it holds no line"):
        _read(tmp_path / "empty.jsonl")


def test_every_bad_document_is_one_problem_naming_it_and_the_others_are_read(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.txt").write_text("Anna Petrova works in Kazan.", encoding="utf-8")
    (folder / "empty.txt").write_text("  \n", encoding="utf-8")
    (folder / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00binary")
    (folder / "latin1.txt").write_bytes("Café in Zürich".encode("latin-1"))
    (folder / "ukrainian.txt").write_text("Київ є столицею України, і його населення зростає.", encoding="utf-8")
    (folder / "huge.txt").write_text("Anna works in Kazan. " * 250_000, encoding="utf-8")  # 5 MB
    found = {(d.document if isinstance(d, Problem) else d.id): d for d in _read(folder)}
    assert isinstance(found["good"], Document)
    reasons = {name: d.reason for name, d in found.items() if isinstance(d, Problem)}
    assert reasons["empty.txt" if "empty.txt" in reasons else "empty"].startswith("empty")
    assert "binary" in reasons["binary"] and "NUL" in reasons["binary"]
    assert reasons["latin1"] == "not UTF-8 text (byte 0xe9 at offset 3)"
    assert "'uk'" in reasons["ukrainian"] and "documents.languages" in reasons["ukrainian"]
    assert reasons["huge"].startswith("5.0 MB, over the 2 MB limit")


def test_a_jsonl_line_that_is_not_a_document_is_a_problem_with_its_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"id": "n1", "date": "2026-01-05", "lang": "ru", "title": "Новости", "text": "Анна Петрова работает в Казани."}),
        "{not json",
        json.dumps({"id": "n2", "date": "yesterday", "text": "x"}),
        json.dumps({"id": "n1", "text": "Again the first id."}),
        json.dumps({"id": "n3", "lang": "de", "text": "Anna arbeitet in Kasan."}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs = _read(path)
    assert docs[0] == Document(id="n1", date=dt.date(2026, 1, 5), lang="ru", title="Новости", text="Анна Петрова работает в Казани.")
    assert [(p.document, p.reason.split(" (")[0].split(":")[0]) for p in docs[1:]] == [
        ("docs.jsonl line 2", "not JSON"), ("n2 (docs.jsonl line 3)", "date"), ("n1 (docs.jsonl line 4)", "a second document with this id"),
        ("n3", "language 'de'"),
    ]


def test_language_is_told_by_letters():
    assert [language_of(t) for t in ("Anna works.", "Анна работает.", "Ганна працює у Києві, її родина теж.", "東京", "123")] == [
        "en", "ru", "uk", "unknown", "unknown"]


@pytest.mark.parametrize(("text", "lang"), [
    ("Die Firma Zarechye wurde 1994 in Kasan gegründet; ihr Geschäftsführer ist Pavel Orlov.", "de"),
    ("La banque Zarechye a été fondée à Kazan en 1994 ; son directeur général est Pavel Orlov.", "fr"),
    ("El banco Zarechye fue fundado en Kazán en 1994 y su director general es Pavel Orlov.", "es"),
    ("Zarechye Bank was founded in Kazan in 1994; its chief executive is Pavel Orlov.", "en"),
    ("Pavel Orlov, CEO.", "en"),  # too short to tell: the Latin script's default
])
def test_a_latin_script_document_is_told_apart_by_its_language(text, lang, tmp_path):
    assert language_of(text) == lang
    (tmp_path / "doc.txt").write_text(text, encoding="utf-8")
    [read] = _read(tmp_path / "doc.txt")
    assert isinstance(read, Document) if lang == "en" else read.reason == f"language {lang!r} (read from its letters) is not one of en, ru (documents.languages)"


def test_chunks_cover_the_text_cut_at_sentence_ends_and_overlap():
    text = " ".join(f"Sentence number {i} says something about entity {i}." for i in range(60))
    spans = chunks(text, 300, 60)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:], strict=False):
        assert e1 - s1 <= 300 and s2 < e1 and s2 > s1  # each overlaps the one before, and moves on
        assert text[e1 - 2] == "." and text[s2 - 1] == " "  # cut after a sentence, restart at one
    assert chunks("short", 300, 60) == [(0, 5)]


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize(("text", "lang", "value", "unit"), [
    ("$15.6 million", "en", "15600000", "USD"),
    ("15,6 млн руб.", "ru", "15600000", "RUB"),
    ("1 234,5", "ru", "1234.5", None),
    ("15,600", "en", "15600", None),
    ("1,5", "ru", "1.5", None),
    ("2,5 миллиарда долларов", "ru", "2500000000", "USD"),
    ("12%", "en", "12", "%"),
    ("3992.88", "en", "3992.88", None),
    ("45 floors", "en", "45", "floors"),
])
def test_numbers_as_documents_write_them(text, lang, value, unit):
    assert number_of(text, lang) == (Decimal(value), unit)


@pytest.mark.parametrize("text", ["about 300", "08/26", "ORAA", "$5 million more than before"])
def test_what_is_not_a_plain_number_is_none(text):
    assert number_of(text, "en") is None


@pytest.mark.parametrize(("text", "lang", "expected"), [
    ("5 января 2026 г.", "ru", dt.date(2026, 1, 5)),
    ("January 5, 2026", "en", dt.date(2026, 1, 5)),
    ("05.01.2026", "ru", dt.date(2026, 1, 5)),
    ("в 1930 году", "ru", 1930),
    ("1985", "en", 1985),
    ("March 2019", "en", None),
    ("вчера", "ru", None),  # relative dates are not read: the fact would depend on the day of reading
])
def test_dates_and_years(text, lang, expected):
    assert date_of(text, lang) == expected


# ----------------------------------------------------------------------------- checks
TEXT = ("Zarechye Bank was founded in Kazan on 5 March 1994. Its chief executive is Pavel Orlov. "
        "In 2023 the bank earned $15.6 million.")


def _proposed(**fields) -> ProposedTriple:
    base = {"subject": "Zarechye Bank", "subject_type": "bank", "relation": "founded in", "object": "Kazan",
            "object_kind": "entity", "object_type": "city", "evidence": "Zarechye Bank was founded in Kazan on 5 March 1994."}
    return ProposedTriple(**(base | fields))


def _check(**fields) -> Triple | Rejection:
    return Checker("en", 90, 80).check(_proposed(**fields), TEXT, offset=100)


def test_a_triple_stated_by_its_evidence_passes_with_the_documents_own_words_and_offset():
    checked = _check(evidence="zarechye bank was founded in kazan on 5 march 1994")
    assert isinstance(checked, Triple)
    assert checked.evidence == "Zarechye Bank was founded in Kazan on 5 March 1994"  # as the document writes it
    assert checked.evidence_start == 100


@pytest.mark.parametrize(("fields", "code"), [
    ({"evidence": "Zarechye Bank was founded in Moscow in 1990."}, "evidence_not_found"),
    ({"subject": "Pavel Orlov", "relation": "works at"}, "subject_not_in_evidence"),
    ({"object": "Moscow"}, "object_not_in_evidence"),
    ({"subject": "it"}, "pronoun_subject"),
    ({"object": "Zarechye Bank"}, "same_subject_object"),
    ({"relation": ""}, "empty_field"),
    ({"relation": "was founded in the city of Kazan on a day"}, "relation_too_long"),
    ({"evidence": TEXT}, "evidence_too_long"),
    ({"subject": "bank", "relation": "earnings in 2023", "object": "a lot", "object_kind": "number",
      "evidence": "In 2023 the bank earned $15.6 million."}, "not_a_number"),
    ({"subject": "bank", "relation": "earnings in 2023", "object": "$15.6 million", "object_kind": "date",
      "evidence": "In 2023 the bank earned $15.6 million."}, "not_a_date"),
    ({"relation": "founding date", "object": "Kazan", "object_kind": "number"}, "not_a_number"),
])
def test_a_triple_failing_a_check_is_rejected_with_the_check_and_a_reason(fields, code):
    checked = _check(**fields)
    assert isinstance(checked, Rejection) and checked.code == code and checked.reason


@pytest.mark.parametrize(("obj", "kind", "evidence"), [
    ("$25.6 million", "number", "In 2023 the bank earned $15.6 million."),  # one digit off: close enough to pass a fuzzy match
    ("$15.6 billion", "number", "In 2023 the bank earned $15.6 million."),
    ("15,700,000", "number", "In 2023 the bank earned $15.6 million."),
    ("6 March 1994", "date", "Zarechye Bank was founded in Kazan on 5 March 1994."),
    ("1995", "date", "Zarechye Bank was founded in Kazan on 5 March 1994."),
])
def test_a_value_the_evidence_does_not_state_is_rejected_however_close_its_writing(obj, kind, evidence):
    subject = "bank" if "earned" in evidence else "Zarechye Bank"
    checked = _check(subject=subject, relation="value", object=obj, object_kind=kind, evidence=evidence)
    assert isinstance(checked, Rejection) and checked.code == "value_not_in_evidence", checked
    assert obj in checked.reason and evidence in checked.reason


@pytest.mark.parametrize(("obj", "kind", "evidence", "value"), [
    ("$15.6 million", "number", "In 2023 the bank earned $15.6 million.", "15600000"),
    ("15600000", "number", "In 2023 the bank earned $15.6 million.", "15600000"),  # another writing of the same value
    ("15.6 млн", "number", "In 2023 the bank earned $15.6 million.", "15600000"),
    ("1994-03-05", "date", "Zarechye Bank was founded in Kazan on 5 March 1994.", "1994-03-05"),
    ("1994", "date", "Zarechye Bank was founded in Kazan on 5 March 1994.", 1994),
])
def test_a_value_the_evidence_states_in_another_writing_passes(obj, kind, evidence, value):
    subject = "bank" if "earned" in evidence else "Zarechye Bank"
    checked = _check(subject=subject, relation="value", object=obj, object_kind=kind, evidence=evidence)
    assert isinstance(checked, Triple) and checked.value == value, checked


def test_the_evidence_is_cut_from_the_document_where_it_stands_whatever_its_spacing():
    text = "Intro.\n\n  Zarechye  Bank was founded\nin Kazan on 5 March 1994.  More."
    checked = Checker("en", 90, 80).check(_proposed(), text, offset=1000)
    assert checked.evidence == "Zarechye  Bank was founded\nin Kazan on 5 March 1994."
    assert text[checked.evidence_start - 1000 :].startswith(checked.evidence)


def test_numbers_and_dates_become_values():
    money = _check(subject="bank", relation="earnings in 2023", object="$15.6 million", object_kind="number",
                   evidence="In 2023 the bank earned $15.6 million.")
    founded = _check(relation="founding date", object="5 March 1994", object_kind="date")
    assert (money.value, money.unit) == ("15600000", "USD") and founded.value == "1994-03-05"


def test_the_retry_keeps_corrections_rejects_what_stays_wrong_and_counts_each_triple_once():
    checker = Checker("en", 90, 80)
    failed = [checker.check(_proposed(object="Moscow"), TEXT, 0), checker.check(_proposed(subject="Pavel Orlov", relation="chief of"), TEXT, 0),
              checker.check(_proposed(relation="chief", subject="it"), TEXT, 0)]
    assert all(isinstance(r, Rejection) for r in failed)
    result = ChunkResult(start=0, end=len(TEXT), proposed=3)
    corrected = Extraction(triples=[
        _proposed(),  # the first, fixed
        _proposed(subject="Pavel Orlov", relation="chief of", evidence="Its chief executive is Pavel Orlov."),  # still no bank named
        _proposed(subject="Pavel Orlov", relation="chief executive of", object="Zarechye Bank", evidence="Zarechye Bank was founded in Kazan on 5 March 1994. "
                  "Its chief executive is Pavel Orlov."),  # a new triple
    ])
    _settle(result, checker, failed, LLMResult(text="{}", value=corrected, attempts=1), TEXT)
    assert [t.object for t in result.triples] == ["Kazan", "Zarechye Bank"]
    assert [(r.code, r.triple.subject) for r in result.rejections] == [("object_not_in_evidence", "Pavel Orlov"), ("pronoun_subject", "it")]
    assert result.proposed == 4 and result.calls == 1  # the new triple is a proposal; each failure ends once


def test_a_failed_retry_rejects_the_failures_with_both_reasons():
    checker = Checker("en", 90, 80)
    failed = [checker.check(_proposed(object="Moscow"), TEXT, 0)]
    result = ChunkResult(start=0, end=len(TEXT), proposed=1)
    _settle(result, checker, failed, LLMResult(error="local at http://x: no JSON object in the reply", attempts=3), TEXT)
    (rejection,) = result.rejections
    assert rejection.code == "object_not_in_evidence" and rejection.reason.endswith("the retry failed: local at http://x: no JSON object in the reply")


# ----------------------------------------------------------------------------- graph
def _facts(doc_id: str, lang: str, rows: list[tuple], date: dt.date | None = None) -> DocumentFacts:
    text = " ".join(row[-1] for row in rows)
    triples = []
    for subject, s_type, relation, obj, kind, o_type, value, unit, evidence in rows:
        triples.append(Triple(subject=subject, subject_type=s_type, relation=relation, object=obj, object_kind=kind,
                              object_type=o_type, evidence=evidence, evidence_start=text.index(evidence), value=value, unit=unit))
    return DocumentFacts(document=Document(id=doc_id, lang=lang, text=text, date=date, title=f"Title {doc_id}"), model="m", triples=triples)


BANKS = [
    _facts("news/1", "en", [
        ("Zarechye Bank", "bank", "headquarters city", "Kazan", "entity", "city", None, None, "Zarechye Bank is based in Kazan."),
        ("Zarechye Bank", "bank", "chief executive", "Pavel Orlov", "entity", "person", None, None, "Pavel Orlov runs Zarechye Bank."),
        ("Zarechye Bank", "bank", "revenue", "$15.6 million", "number", "", "15600000", "USD", "Zarechye Bank earned $15.6 million."),
        ("Zarechye Bank", "bank", "founding date", "5 March 1994", "date", "", "1994-03-05", None, "Zarechye Bank opened on 5 March 1994."),
        ("Kazan", "city", "country", "Russia", "entity", "country", None, None, "Kazan is in Russia."),
    ], date=dt.date(2026, 1, 5)),
    _facts("news/2", "en", [
        ("Volga Credit", "bank", "headquarters city", "Samara", "entity", "city", None, None, "Volga Credit is based in Samara."),
        ("Volga Credit", "bank", "revenue", "9.1 million roubles", "number", "", "9100000", "RUB", "Volga Credit earned 9.1 million roubles."),
        ("Volga Credit", "bank", "founding date", "1 June 2001", "date", "", "2001-06-01", None, "Volga Credit opened on 1 June 2001."),
        ("Samara", "city", "country", "Russia", "entity", "country", None, None, "Samara is in Russia."),
        ("Pavel Orlov", "person", "birth year", "1970", "date", "", 1970, None, "Pavel Orlov was born in 1970."),
        ("Jordan", "country", "capital", "Amman", "entity", "city", None, None, "The capital of Jordan is Amman."),
    ]),
    _facts("news/3", "en", [
        ("Jordan", "person", "employer", "Volga Credit", "entity", "bank", None, None, "Jordan works for Volga Credit."),
    ]),
]


def test_the_graph_has_one_named_graph_per_document_and_provenance_per_fact(tmp_path):
    built = write_graph(tmp_path / "g.trig", "https://example.org/kg/", BANKS)
    assert built.facts == built.statements == 12
    # Russia, Pavel Orlov and Volga Credit are named in two documents; the person Jordan is not the country
    assert built.merged == 3 and [d.decision for d in built.decisions if d.name == "Jordan"] == ["kept apart"]
    kg = KnowledgeGraph.load(tmp_path / "g.trig")
    rows = kg.select("""PREFIX kgs: <https://w3id.org/kgsynth/vocab#>
        SELECT ?g ?id ?date ?evidence WHERE { GRAPH ?g { ?f kgs:factObject ?o ; kgs:evidence ?evidence ; kgs:statedIn ?g .
        ?g kgs:sourceId ?id . OPTIONAL { ?g kgs:sourceDate ?date } } FILTER(isLiteral(?o) && DATATYPE(?o) = <http://www.w3.org/2001/XMLSchema#decimal>) }
        ORDER BY ?id""")
    assert [(r[1].value, r[2].value if r[2] else None, r[3].value) for r in rows] == [
        ("news/1", "2026-01-05", "Zarechye Bank earned $15.6 million."), ("news/2", None, "Volga Credit earned 9.1 million roubles.")]
    # revenue comes in two units: one relation per unit, each named with it
    labels = {r[0].value for r in kg.select("SELECT ?l WHERE { ?r <http://www.w3.org/2000/01/rdf-schema#label> ?l "
                                            "FILTER(STRSTARTS(STR(?r), 'https://example.org/kg/relation/')) }")}
    assert {"revenue (USD)", "revenue (RUB)", "founding date", "headquarters city"} <= labels
    assert "https://example.org/kg/entity/russia" not in kg.vocabulary()  # provenance pointers are no schema


def test_the_same_documents_give_the_same_file(tmp_path):
    write_graph(tmp_path / "a.trig", "https://example.org/kg/", BANKS)
    write_graph(tmp_path / "b.trig", "https://example.org/kg/", BANKS)
    assert (tmp_path / "a.trig").read_bytes() == (tmp_path / "b.trig").read_bytes()


def test_the_existing_shapes_sample_from_an_ingested_graph(tmp_path):
    write_graph(tmp_path / "g.nq", "https://example.org/kg/", BANKS)
    kg = KnowledgeGraph.load(tmp_path / "g.nq")
    for shape in ("simple", "set", "multihop", "comparison"):
        found = list(sample_subgraphs(kg, shape, limit=20, seed=0))
        assert found, shape
        relations = {f.relation.value for s in found for f in s.facts}
        assert not any(r.startswith("https://w3id.org/kgsynth/vocab#") for r in relations), shape


def test_relations_that_read_alike_are_one_and_those_that_differ_by_a_preposition_stay_two():
    found = [("headquarters city", "a"), ("headquarters city", "b"), ("headquarter city", "c"), ("is located in", "a"),
             ("located in", "b"), ("founded in", "a"), ("founded by", "b"), ("является владельцем", "r"), ("владелец", "r")]
    names, decisions = relation_names(found, (), 90)
    assert names["headquarter city"] == "headquarters city" and names["is located in"] == "located in"
    assert names["founded in"] == "founded in" and names["founded by"] == "founded by"
    assert names["является владельцем"] == "является владельцем"  # another form of the noun: not merged by letters
    assert {(d.name, d.documents[0]) for d in decisions} == {("headquarter city", "c"), ("is located in", "a")}
    names, _ = relation_names([("HQ city", "a"), ("headquarter city", "c")], ("headquarters city", "place of birth"), 90)
    assert names == {"HQ city": "HQ city", "headquarter city": "headquarters city"}


def test_the_graph_writes_relations_under_the_vocabularys_names(tmp_path):
    renamed = [BANKS[0].model_copy(update={"triples": [t.model_copy(update={"relation": "headquarter city"}) if t.relation == "headquarters city"
                                                       else t for t in BANKS[0].triples]}), BANKS[1]]
    built = write_graph(tmp_path / "g.trig", "https://example.org/kg/", renamed, ["headquarters city"])
    kg = KnowledgeGraph.load(tmp_path / "g.trig")
    cities = kg.select("SELECT ?s WHERE { ?s <https://example.org/kg/relation/headquarters-city> ?o }")
    assert len(list(cities)) == 2 and any(d.name == "headquarter city" for d in built.decisions)


# ----------------------------------------------------------------------------- a run (FAULT INJECTOR)
GOOD = {"triples": [{"subject": "Anna Petrova", "subject_type": "person", "relation": "employer", "object": "Zarechye Bank",
                     "object_kind": "entity", "object_type": "bank", "evidence": "Anna Petrova works at Zarechye Bank."}]}


def _docs(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    rows = [{"id": f"d{i}", "lang": "en", "text": f"Anna Petrova works at Zarechye Bank. Document {i}."} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _config(server: FaultInjectingServer, tmp_path: Path) -> IngestConfig:
    return IngestConfig.model_validate({"extraction": {"base_url": server.base_url, "timeout_s": 1.0, "max_retries": 1,
                                                       "concurrency": 1, "cache": str(tmp_path / "cache.sqlite")}})


def test_garbage_and_a_stalled_reply_are_reported_per_document_and_a_rerun_redoes_only_them(tmp_path):
    broken = {"Document 1.": "not_json", "Document 2.": "stall"}

    def fault_for(request: dict) -> str | None:
        text = request["messages"][-1]["content"]
        return next((fault for marker, fault in broken.items() if marker in text), "ok")

    docs, out = _docs(tmp_path), tmp_path / "out" / "g.trig"
    with FaultInjectingServer(lambda request: json.dumps(GOOD), fault_for=fault_for, stall_s=3.0) as server:
        first = ingest(docs, out, _config(server, tmp_path))
        problems = {d.id: d.problem for d in first.per_document if d.problem}
        assert set(problems) == {"d1", "d2"} and "JSON" in problems["d1"] and "chunk 1 of 1" in problems["d2"]
        assert first.finished == 1 and first.kept == 1
        calls_before = len(server.requests)
        broken.clear()  # the stall was passing; garbage is cached as the model's answer and stays
        second = ingest(docs, out, _config(server, tmp_path))
        asked = [r["messages"][-1]["content"] for r in server.requests[calls_before:]]
    assert all("Document 2." in text for text in asked) and asked  # only the stalled document is asked again
    assert {d.id for d in second.per_document if d.problem} == {"d1"} and second.finished == 2
    assert json.loads((tmp_path / "out" / "g.trig.report.json").read_text())["finished"] == 2


def test_the_command_reports_problems_in_one_line_each_and_exits_1(tmp_path):
    docs = _docs(tmp_path)
    with FaultInjectingServer(lambda request: json.dumps(GOOD), fault_for=lambda r: "not_json" if "Document 0." in r["messages"][-1]["content"] else "ok") as server:
        config = tmp_path / "ingest.toml"
        config.write_text(f'[extraction]\ncache = "{tmp_path / "c.sqlite"}"\nmax_retries = 0\n', encoding="utf-8")
        result = _kgsynth("ingest", str(docs), "--out", str(tmp_path / "g.trig"), "--config", str(config), "--llm-base-url", server.base_url)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert any(line.strip().startswith("d0: 1 chunk(s) failed") for line in lines)
    assert lines[-1] == "error: 1 of 3 documents not fully ingested (listed above); fix or remove them, or rerun to retry what failed"
    assert "wrote 1 fact about 2 entities (1 relation; 2 statements with provenance) from 2 of 3 documents" in result.stderr


def test_no_model_configured_is_one_line(tmp_path):
    result = _kgsynth("ingest", str(_docs(tmp_path)), "--out", str(tmp_path / "g.trig"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["error: ingest needs a model: set extraction.base_url in the config "
                                                      "or pass --llm-base-url"]


def _kgsynth(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from kgsynth.cli import main; sys.argv[0] = 'kgsynth'; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_ingest_reaches_down_to_kg_and_llm_only():
    allowed = ("kgsynth.ingest", "kgsynth.kg", "kgsynth.llm", "kgsynth.errors", "kgsynth._config", "kgsynth._folders")
    package = Path(__file__).resolve().parent.parent / "src" / "kgsynth" / "ingest"
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in getattr(node, "names", [])] \
                if isinstance(node, ast.Import) else []
            for name in names:
                version_only = name == "kgsynth" and [a.name for a in node.names] == ["__version__"]  # for the User-Agent
                if name.startswith("kgsynth") and not version_only:
                    assert name.startswith(allowed), f"{path.name} imports {name}"


# ----------------------------------------------------------------------------- names that differ
def _mention(name: str, kind: str, document: str, lang: str = "en") -> Mention:
    return Mention(name=name, kind=kind, document=document, lang=lang, subject=True, context=f"{name} is named in {document}.")


def judge_by_table(table: dict[str, str | None]):
    """The model's decisions as a table (name asked about -> the candidate it picks, or None),
    to test what is done with them; tests/test_ingest_local.py asks a real model."""
    asked = []

    def judge(questions):
        asked.extend(questions)
        return [Pick(index=[c.name for c in q.candidates].index(table[q.name]) if table.get(q.name) else None) for q in questions]

    return judge, asked


def test_names_spelt_alike_go_to_the_model_and_its_pick_joins_the_entity_in_more_documents():
    mentions = [_mention("Мария Лопес", "человек", "d1", "ru"), _mention("Мария Лопес", "человек", "d2", "ru"),
                _mention("Марии Лопес", "человек", "d3", "ru"), _mention("Мария Лопес Фонд", "организация", "d3", "ru"),
                _mention("Kazan", "city", "d1"), _mention("Samara", "city", "d2")]
    judge, asked = judge_by_table({"Марии Лопес": "Мария Лопес", "Мария Лопес": "Марии Лопес"})
    entities, assignment, decisions = resolve(mentions, judge=judge)
    assert {q.name for q in asked} == {"Мария Лопес", "Марии Лопес"}  # not the foundation (another kind), not the cities
    assert len(entities) == 4 and assignment[0] == assignment[1] == assignment[2] != assignment[3]
    person = entities[assignment[2]]
    assert person.labels == {"ru": "Мария Лопес"} and person.documents == ["d1", "d2", "d3"]
    merged = [d for d in decisions if d.decision.startswith("merged into")]
    assert [(d.name, d.decision) for d in merged] == [("Марии Лопес", "merged into 'Мария Лопес'")]  # once, though asked from both sides
    assert merged[0].score == pytest.approx(fuzz.WRatio("марии лопес", "мария лопес"))


def test_codes_are_merged_on_their_exact_name_only_and_the_model_is_not_asked():
    mentions = [_mention("SR-2023-052", "report", "d1"), _mention("SR-2023-053", "report", "d2"), _mention("SR-2023-052", "report", "d3")]
    judge, asked = judge_by_table({})
    entities, assignment, decisions = resolve(mentions, judge=judge)
    assert asked == [] and len(entities) == 2 and assignment == [0, 1, 0]
    apart = [d for d in decisions if d.decision == "kept apart"]
    assert {d.name for d in apart} == {"SR-2023-052", "SR-2023-053"} and all("identifier-like" in d.reason for d in apart)
    assert identifier_like("IBM") and identifier_like("Boeing 737") and not identifier_like("Lopez Bakery")


def test_no_chain_of_merges_joins_names_never_compared():
    mentions = [_mention("Lopez Bakery", "company", "d1"), _mention("Lopez Bakery", "company", "d2"),
                _mention("Lopez Bakery Inc.", "company", "d3"), _mention("Lopez Bakery Inc. Texas", "company", "d4")]
    # the model says Inc. is the bakery, and "Inc. Texas" is Inc. (not the bakery itself)
    judge, _ = judge_by_table({"Lopez Bakery Inc.": "Lopez Bakery", "Lopez Bakery Inc. Texas": "Lopez Bakery Inc."})
    entities, assignment, decisions = resolve(mentions, judge=judge)
    assert assignment[0] == assignment[2] != assignment[3] and len(entities) == 2
    assert any(d.name == "Lopez Bakery Inc. Texas" and "chain" in d.reason for d in decisions)


def test_an_unusable_answer_merges_nothing_and_says_why(tmp_path):
    mentions = [_mention("Lopez Bakery", "company", "d1"), _mention("Lopez Bakery Inc.", "company", "d2")]
    entities, _, decisions = resolve(mentions, judge=lambda questions: [Pick(error="the reply was not JSON") for _ in questions])
    assert len(entities) == 2
    assert {d.reason for d in decisions} == {"the model's answer could not be used: the reply was not JSON"}


def test_items_cite_the_documents_that_state_their_facts(tmp_path):
    from kgsynth.dataset.splits import read_items
    from kgsynth.pipeline.config import load_config
    from kgsynth.pipeline.run import synthesize

    write_graph(tmp_path / "g.trig", "https://example.org/kg/", BANKS)
    config = load_config(Path(__file__).parents[1] / "configs" / "from_documents.toml")  # the README's command
    synthesize(KnowledgeGraph.load(tmp_path / "g.trig"), config, tmp_path / "out")
    items = list(read_items(tmp_path / "out" / "items.jsonl"))
    # independently: the documents whose named graph holds the fact itself (rdflib, not the statement nodes)
    dataset = rdflib.Dataset()
    dataset.parse(tmp_path / "g.trig", format="trig")
    source_id = rdflib.URIRef("https://w3id.org/kgsynth/vocab#sourceId")
    stated: dict[str, set[str]] = {}
    for graph in dataset.graphs():
        ids = [str(o) for o in graph.objects(graph.identifier, source_id)]
        for s, p, o in graph:
            stated.setdefault(f"{s.n3()} {p.n3()} {o.n3()} .", set()).update(ids)
    assert items and all(i.metadata.sources for i in items)
    for item in items:
        assert list(item.metadata.sources) == sorted(set().union(*(stated[t] for t in item.metadata.source_triples))), item.id


def test_a_reply_cut_short_gives_its_complete_triples_once_each_and_says_so():
    cut = ('{"triples": [' + json.dumps(GOOD["triples"][0]) + ", " + json.dumps(GOOD["triples"][0])
           + ', {"subject": "Anna Petrova", "subject_type": "person", "relation": "employ')  # max_tokens ran out here
    result = ChunkResult(start=0, end=10)
    reply = LLMResult(error="no JSON object in the reply", text=cut)
    assert proposed_of(reply, result) == [ProposedTriple.model_validate(GOOD["triples"][0])] and result.cut_short == 1
    assert proposed_of(LLMResult(error="no JSON object in the reply", text='{"triples": [{"subject": "An'), result) is None
    assert proposed_of(LLMResult(error="timed out"), result) is None and result.cut_short == 1


def test_a_hub_name_is_joined_once_so_two_names_never_compared_stay_apart():
    mentions = [_mention("Won-yong", "person", "d1"), _mention("Won-yong", "person", "d2"),
                _mention("Kang Won-yong", "person", "d3"), _mention("Kim Won-yong", "person", "d4")]
    judge, _ = judge_by_table({"Kang Won-yong": "Won-yong", "Kim Won-yong": "Won-yong", "Won-yong": "Kang Won-yong"})
    entities, assignment, decisions = resolve(mentions, judge=judge)
    assert len(entities) == 2 and assignment[2] != assignment[3] and assignment[0] in (assignment[2], assignment[3])
    assert any("merges do not chain" in d.reason for d in decisions)
