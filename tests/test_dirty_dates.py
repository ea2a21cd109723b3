"""Dates and years as real graphs mistype them: under a misspelt datatype (xsd:dat, xsd:Date,
XMLSchema/date, xsd:datetime) or as strings ("1923-05-12", "1923"@en). The reader reads them,
`kgsynth rules suggest` proposes the calendar and interval rules for them and says how it read
them, and synthesis computes their golds. Every gold is recomputed here from the dates written
into the graph, never typed by hand."""

from __future__ import annotations

import calendar
import datetime as dt
import json
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgsynth.cli._app import run
from kgsynth.kg._terms import DATE_TEXT, YEAR_TEXT, date_or_year, text_matches

XSD = "http://www.w3.org/2001/XMLSchema#"
EX = "http://dirty.example/"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
DATE = dt.date(1923, 5, 12)


def _typed(text: str, datatype: str) -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(datatype))


READ = [
    (_typed("1923-05-12", XSD + "dat"), DATE),
    (_typed("1923-05-12", XSD + "Date"), DATE),
    (_typed("1923-05-12", "http://www.w3.org/2001/XMLSchema/date"), DATE),
    (_typed("1923-05-12T10:30:00", XSD + "datetime"), DATE),
    (_typed("1923-05-12T10:30:00Z", XSD + "dateTimee"), DATE),
    (_typed("1923", XSD + "gyear"), 1923),
    (_typed("1923", XSD + "gYer"), 1923),
    (ox.Literal("1923-05-12"), DATE),
    (ox.Literal(" 1923-05-12 10:30+02:00 "), DATE),
    (_typed("1923-05-12", XSD + "string"), DATE),
    (ox.Literal("1923-05-12", language="en"), DATE),
    (ox.Literal("1923"), 1923),
    (_typed("1923", XSD + "string"), 1923),
    (ox.Literal("1923", language="en"), 1923),
    (_typed("1923", XSD + "integer"), 1923),
    (_typed("1912.66666667", XSD + "decimal"), 1912),
    (_typed("1923-05-12", XSD + "date"), DATE),
    (_typed("1923", XSD + "gYear"), 1923),
]
NOT_READ = [
    ox.Literal("12"), ox.Literal("862"), ox.Literal("3000"), ox.Literal("1923 AD"), ox.Literal("05/12/1923"),
    ox.Literal("12 May 1923", language="en"), ox.Literal("1923-02-30"), ox.Literal("1923-05-12T25:00"),
    ox.Literal("19230512"), ox.Literal("١٩٢٣"),
    _typed("1923-05-12", "http://dirty.example/date"),  # a datatype of another vocabulary
    _typed("1923-05-12", XSD + "time"),  # three edits from "date": another type
    _typed("1923-05-12", XSD + "Name"), _typed("1923", XSD + "duration"),
]


@pytest.mark.parametrize(("term", "value"), READ, ids=[str(t) for t, _ in READ])
def test_a_mistyped_date_or_year_is_read(term, value):
    assert date_or_year(term) == value and type(date_or_year(term)) is type(value)


@pytest.mark.parametrize("term", NOT_READ, ids=[str(t) for t in NOT_READ])
def test_a_text_that_is_no_date_or_year_is_not_read(term):
    assert date_or_year(term) is None


def test_the_query_filter_keeps_every_text_the_reader_reads():
    """rules suggest and the rule check narrow values in SPARQL first: a text the reader reads
    must pass the filter; of the texts it does not read, only those out of its range or
    calendar do (the reader refuses them)."""
    texts = [t for t, _ in READ] + NOT_READ
    store = ox.Store()
    values = " ".join(str(ox.Literal(t.value)) for t in texts)
    condition = f"{text_matches('o', DATE_TEXT)} || {text_matches('o', YEAR_TEXT)}"
    kept = {row[0].value for row in store.query(f"SELECT ?o WHERE {{ VALUES ?o {{ {values} }} FILTER({condition}) }}")}
    from_text = [t for t, v in READ if t.datatype.value not in (XSD + "integer", XSD + "decimal")]
    assert {t.value for t in from_text} <= kept
    unread = {t.value for t in NOT_READ if t.datatype.value in (XSD + "string", RDF_LANG_STRING)}
    assert unread & kept == {"3000", "1923-02-30", "1923-05-12T25:00"}  # the reader's range and calendar


# ---------------------------------------------------------------------------- a dirty graph
BIRTH_FORMS = [  # how each person's date of birth is written, in turn, and how rules suggest says it read it
    (f"typed <{XSD}dat>", '"{}"^^xsd:dat'),
    ("typed <http://www.w3.org/2001/XMLSchema/date>", '"{}"^^<http://www.w3.org/2001/XMLSchema/date>'),
    (f"typed <{XSD}Date>", '"{}"^^xsd:Date'),
    ("from strings", '"{}"'),
    ("from strings", '"{}"^^xsd:string'),
    ("from strings", '"{}"@en'),
]
FIRST = ["Anna", "Boris", "Clara", "Denis", "Elena", "Fyodor", "Galina", "Igor", "Kira", "Lev", "Maria", "Nikita",
         "Olga", "Pavel", "Rosa", "Semyon", "Tamara", "Uliana", "Vadim", "Yana", "Zakhar", "Alla", "Gleb", "Inna",
         "Oleg"]


def _people() -> dict[str, tuple[dt.date, dt.datetime]]:
    """25 people, each born and dead on a known day (no birth in a year ending in 00)."""
    people = {}
    for i, name in enumerate(FIRST):
        born = dt.date(1705 + 10 * i + i % 3, 1 + i % 12, 1 + 7 * i % 28)
        died = dt.datetime(born.year + 20 + 13 * i % 64, 1 + 5 * i % 12, 1 + 3 * i % 28, 8, 30)
        people[f"{EX}{name.lower()}"] = born, died
    return people


def _turtle(people: dict[str, tuple[dt.date, dt.datetime]]) -> str:
    forms = [form for _, form in BIRTH_FORMS]
    lines = ["@prefix ex: <http://dirty.example/> .", "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .",
             "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
             'ex:bornOn rdfs:label "date of birth"@en . ex:diedOn rdfs:label "date of death"@en .',
             'ex:bornIn rdfs:label "year of birth"@en .']
    for i, (person, (born, died)) in enumerate(people.items()):
        year = f'"{born.year}"@en' if i % 2 else f'"{born.year}"'
        lines.append(f'<{person}> rdfs:label "{FIRST[i]} Dirty"@en ; ex:bornOn {forms[i % len(forms)].format(born)} ; '
                     f'ex:diedOn "{died.isoformat()}"^^xsd:datetime ; ex:bornIn {year} .')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def dirty(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("dirty")
    people = _people()
    (folder / "facts.ttl").write_text(_turtle(people), encoding="utf-8")
    return folder, people


@pytest.fixture(scope="module")
def suggested(dirty) -> Path:
    folder, _ = dirty
    assert run(["rules", "suggest", str(folder / "facts.ttl"), "--out", str(folder / "rules.ttl")]) == 0
    return folder / "rules.ttl"


def _blocks(turtle: str) -> dict[str, str]:
    """Each rule's last IRI segment -> the comment lines right above it."""
    blocks, comment = {}, []
    for line in turtle.splitlines():
        if line.startswith("#"):
            comment.append(line)
        elif line.startswith("<https://w3id.org/kgsynth/library/rule/"):
            blocks[line.split(">", 1)[0].rsplit("/", 1)[1]] = "\n".join(comment)
        if not line.startswith("#"):
            comment = []
    return blocks


def test_rules_suggest_proposes_age_and_century_and_says_how_it_read(suggested, dirty):
    _, people = dirty
    blocks = _blocks(suggested.read_text(encoding="utf-8"))
    age = blocks["age-at-death-from-bornOn-to-diedOn"]
    births = Counter(BIRTH_FORMS[i % len(BIRTH_FORMS)][0] for i in range(len(people)))
    for source, n in births.items():
        read = f"{n:,} values read as dates {source}"
        assert read in age and read in blocks["century-of-bornOn"], (read, age)
    died = f"{len(people):,} values read as dates typed <{XSD}datetime>"
    assert died in age and died not in blocks["century-of-bornOn"]
    assert f"{len(people):,} values read as years from strings" in blocks["decade-of-bornIn"]


def test_a_well_typed_graph_gets_no_word_on_reading(tmp_path, capsys):
    """The same people with xsd:date and xsd:dateTime: nothing was read from text."""
    people = _people()
    lines = ["@prefix ex: <http://dirty.example/> .", "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> ."]
    lines += [f'<{p}> ex:bornOn "{b}"^^xsd:date ; ex:diedOn "{d.isoformat()}"^^xsd:dateTime .'
              for p, (b, d) in people.items()]
    (tmp_path / "facts.ttl").write_text("\n".join(lines), encoding="utf-8")
    assert run(["rules", "suggest", str(tmp_path / "facts.ttl"), "--out", str(tmp_path / "rules.ttl")]) == 0
    assert "age-at-death-from-bornOn-to-diedOn" in (tmp_path / "rules.ttl").read_text(encoding="utf-8")
    assert "values read as" not in (tmp_path / "rules.ttl").read_text(encoding="utf-8")
    assert "mistyped" not in capsys.readouterr().err


def test_rules_suggest_says_once_how_many_relations_it_read_from_mistyped_values(dirty, tmp_path, capsys):
    folder, _ = dirty
    assert run(["rules", "suggest", str(folder / "facts.ttl"), "--out", str(tmp_path / "rules.ttl")]) == 0
    err = capsys.readouterr().err
    assert err.count("mistyped") == 1
    assert "read the dates or years of 3 relations from mistyped values" in err and "bornIn, bornOn, diedOn" in err


# ---------------------------------------------------------------------------- synthesis
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# each relation's value as the graph above wrote it, from a person's birth and death
WHEN = {"bornOn": lambda born, died: born, "diedOn": lambda born, died: died.date(),
        "bornIn": lambda born, died: born.year}


def _synth(dirty, suggested, out: Path, *graph: str) -> list[dict]:
    folder, _ = dirty
    # every rule of each person: with 2 a person, the age rules would not fill their cells
    (folder / "sampling.toml").write_text("[sampling]\nper_anchor = 20\n", encoding="utf-8")
    source = list(graph) or ["--graph", str(folder / "facts.ttl"), "--graph", str(suggested)]
    config = ["--config", str(folder / "sampling.toml"), "--n", "120", "--seed", "0", "--out", str(out)]
    assert run(["synth", *source, *config]) == 0
    return [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def items(dirty, suggested) -> list[dict]:
    return _synth(dirty, suggested, dirty[0] / "items")


def _expected(rule: str, born: dt.date, died: dt.datetime, language: str) -> str | None:
    """The gold from the dates written into the graph (None: not checked in this language)."""
    operation, relations = rule.rsplit("-of-", 1) if "-of-" in rule else ("age", rule)
    if operation == "age":
        if "bornIn" in relations:  # a year on one side: the later year minus the earlier
            return str(died.year - born.year)
        before = (died.month, died.day) < (born.month, born.day)
        return str(died.year - born.year - before)
    when = WHEN[relations](born, died)
    year = when if isinstance(when, int) else when.year
    if operation == "century":
        return str((year - 1) // 100 + 1)
    if operation == "decade":
        return str(year - year % 10)
    if operation == "leap-year":
        return "yes" if calendar.isleap(year) else "no"
    return WEEKDAYS[when.weekday()] if language == "en" else None  # day-of-week


def test_synthesis_computes_every_gold_from_the_values_as_written(items, dirty):
    _, people = dirty
    checked = Counter()
    for item in items:
        rule = item["metadata"]["rule_iri"].rsplit("/", 1)[1]
        person = item["source_triples"][0].split(" ", 1)[0].strip("<>")
        expected = _expected(rule, *people[person], item["language"])
        if expected is not None:
            assert item["gold"] == expected, (rule, person, item["gold"], expected)
            checked[rule] += 1
    wanted = {"age-at-death-from-bornOn-to-diedOn", "age-at-death-from-bornIn-to-diedOn", "century-of-bornOn",
              "decade-of-bornIn", "leap-year-of-bornIn", "day-of-week-of-bornOn"}
    assert wanted <= set(checked), checked


def test_source_triples_carry_each_value_as_read(items, dirty):
    """A date as an xsd:date, a year as an xsd:gYear, whatever the graph wrote."""
    _, people = dirty
    for item in items:
        for triple in item["source_triples"]:
            subject, relation, value = triple.removesuffix(" .").split(" ", 2)
            when = WHEN[relation.strip("<>").rsplit("/", 1)[1]](*people[subject.strip("<>")])
            datatype = "gYear" if isinstance(when, int) else "date"
            assert value == f'"{when if isinstance(when, int) else when.isoformat()}"^^<{XSD}{datatype}>', triple


def _served(engine: str, server, *paths: Path) -> str:
    """The query URL of ``server`` holding just these files."""
    if engine == "virtuoso_server":
        return server.load(f"urn:kgsynth:test:dirty-{len(paths)}", *paths)
    server.clear()
    for path in paths:
        server.load(path)
    return server.query_url


@pytest.mark.parametrize("engine", ["oxigraph_server", "virtuoso_server"])
def test_an_endpoint_gives_the_same_rules_and_items(engine, request, dirty, suggested, items, tmp_path):
    """Virtuoso tells a language-tagged literal's datatype in its own way: the same file and
    the same items all the same."""
    folder, _ = dirty
    server = request.getfixturevalue(engine)
    url = _served(engine, server, folder / "facts.ttl")
    assert run(["rules", "suggest", "--endpoint", url, "--out", str(tmp_path / "rules.ttl")]) == 0
    rules = (tmp_path / "rules.ttl").read_text(encoding="utf-8")
    assert rules.split("@prefix", 1)[1] == suggested.read_text(encoding="utf-8").split("@prefix", 1)[1]
    url = _served(engine, server, folder / "facts.ttl", suggested)
    assert _synth(dirty, suggested, tmp_path / "items", "--endpoint", url) == items


@pytest.mark.parametrize(("rule", "message"), [
    ("kgs:Century ; kgs:input [ kgs:role \"date\" ; kgs:relation ex:motto ]",
     "its 'date' relation <http://dirty.example/motto> has langString, string values, not dates or years"),
    ("kgs:DayOfWeek ; kgs:input [ kgs:role \"date\" ; kgs:relation ex:bornIn ]",  # years have no weekday
     "its 'date' relation <http://dirty.example/bornIn> has langString, string values, not dates"),
])
def test_a_rule_on_texts_it_cannot_read_is_refused_in_one_line(dirty, tmp_path, capsys, rule, message):
    folder, _ = dirty
    facts = folder / "facts.ttl"
    (tmp_path / "more.ttl").write_text('<http://dirty.example/anna> <http://dirty.example/motto> "Carpe diem"@en .\n'
                                       '<http://dirty.example/boris> <http://dirty.example/motto> "1923 AD" .\n')
    prefixes = "@prefix kgs: <https://w3id.org/kgsynth/vocab#> . @prefix ex: <http://dirty.example/> .\n"
    (tmp_path / "rule.ttl").write_text(f"{prefixes}ex:r-bad a kgs:Rule ; kgs:kind kgs:Calendar ; kgs:operation {rule} .")
    args = ["--graph", str(facts), "--graph", str(tmp_path / "more.ttl"), "--graph", str(tmp_path / "rule.ttl")]
    assert run(["synth", *args, "--n", "10", "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err.strip() == f"error: rule <http://dirty.example/r-bad>: {message}"
