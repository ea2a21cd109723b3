"""`kgsynth rules suggest`: the rule library proposed for a graph's own relations.

Coverage counts are checked against plain Python passes over the graph's triples (and, on
FB15k-237, against the rule engine itself), never against numbers typed here.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from decimal import Decimal

import pyoxigraph as ox
import pytest
from conftest import FB15K

from kgsynth.cli._app import run
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import RuleOrigin
from kgsynth.queries import Shape, sample_subgraphs
from kgsynth.rulebook import DEFAULT_BASE, load_library, suggest

EX = "https://people.example/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD = "http://www.w3.org/2001/XMLSchema#"
_SLOT = re.compile(r"\{(\w+)(?::[\w+]+)?\}")


# ---------------------------------------------------------------------------- a hand-made graph
def _literal(value: object) -> ox.Literal:
    if isinstance(value, dt.date):
        return ox.Literal(value.isoformat(), datatype=ox.NamedNode(XSD + "date"))
    if isinstance(value, Decimal):
        return ox.Literal(str(value), datatype=ox.NamedNode(XSD + "decimal"))
    return ox.Literal(str(value), datatype=ox.NamedNode(XSD + "integer"))


def _people_and_cities() -> list[tuple[str, str, object]]:
    """40 people (birth and death dates, a height in metres, spoken languages, bonuses paid,
    visits) and 25 cities (population, area in km²), with the edge cases a rule must leave
    out: a birth in 1900
    (no single century), one in 1550 (before the Gregorian calendar), a person with two
    birth dates, a death before a birth, a city of area 0."""
    facts: list[tuple[str, str, object]] = []
    for i in range(40):
        person = f"person-{i}"
        born = dt.date(1890 + 3 * i, 1 + i % 12, 1 + i % 28)
        born = {0: dt.date(1900, 6, 1), 1: dt.date(1550, 3, 3)}.get(i, born)
        facts.append((person, "birthDate", born))
        if i == 2:
            facts.append((person, "birthDate", dt.date(1897, 2, 2)))
        if i < 25:
            died = dt.date(1880, 1, 1) if i == 3 else born.replace(year=born.year + 40 + (i % 7) * 5)
            facts.append((person, "deathDate", died))
        if i < 30:
            facts.append((person, "heightMetres", Decimal("1.50") + Decimal(i) / 60))
        for k in range(i % 4 if i < 35 else 0):
            facts.append((person, "speaks", ox.NamedNode(f"{EX}language-{(i + k) % 6}")))
        for k in range(2 + i % 3 if i < 15 else 0):
            facts.append((person, "bonusPaid", Decimal(1000 * (i + 1) + 250 * k)))
            facts.append((person, "visitDate", dt.date(2020 + k, 1 + i % 12, 10)))
    for i in range(25):
        facts.append((f"city-{i}", "population", 20_000 + 7_919 * i))
        facts.append((f"city-{i}", "areaKm2", Decimal(0) if i == 0 else Decimal(i * 13) / 10))
    return facts


def _write_graph(path, facts) -> None:
    quads = [ox.Quad(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o if isinstance(o, ox.NamedNode) else _literal(o))
             for s, p, o in facts]
    names = {s for s, _, _ in facts} | {f"language-{k}" for k in range(6)}
    quads += [ox.Quad(ox.NamedNode(EX + n), ox.NamedNode(RDFS_LABEL), ox.Literal(n.replace("-", " ").title(), language="en"))
              for n in sorted(names)]
    # deathDate and population have no label: suggest writes them one
    quads += [ox.Quad(ox.NamedNode(EX + p), ox.NamedNode(RDFS_LABEL), ox.Literal(label, language="en"))
              for p, label in (("birthDate", "date of birth"), ("heightMetres", "height in metres"), ("areaKm2", "area"),
                               ("speaks", "spoken language"))]
    path.write_bytes(ox.serialize(quads, format=ox.RdfFormat.N_TRIPLES))


def _read_facts(path) -> dict[str, dict[str, list[ox.Literal | ox.NamedNode]]]:
    """relation local name -> subject -> objects: a plain pass over the file's triples."""
    facts: dict = defaultdict(lambda: defaultdict(list))
    for quad in ox.parse(path=str(path), format=ox.RdfFormat.N_TRIPLES):
        facts[quad.predicate.value.removeprefix(EX)][quad.subject.value].append(quad.object)
    return facts


def _one(facts, relation: str) -> dict[str, ox.Literal]:
    return {s: objects[0] for s, objects in facts[relation].items() if len(objects) == 1}


def _date(term: ox.Literal) -> dt.date:
    return dt.date.fromisoformat(term.value)


def _expected(facts) -> dict[str, int]:
    """Each rule the library should propose here, by IRI, with the entities it covers."""
    expected = {}
    for relation in ("birthDate", "deathDate"):
        days = [_date(t) for t in _one(facts, relation).values()]
        answers = {
            "century": [d.year // 100 + 1 for d in days if d.year % 100],
            "decade": [d.year // 10 for d in days],
            "leap-year": [d.year % 4 == 0 and (d.year % 100 != 0 or d.year % 400 == 0) for d in days if d.year >= 1583],
            "day-of-week": [d.weekday() for d in days if d.year >= 1583],
        }
        expected |= {f"{name}-of-{relation}": len(found) for name, found in answers.items() if len(set(found)) > 1}
    births, deaths = _one(facts, "birthDate"), _one(facts, "deathDate")
    expected["age-at-death-from-birthDate-to-deathDate"] = sum(
        1 for s in births.keys() & deaths.keys() if _date(deaths[s]) >= _date(births[s]))
    expected["heightMetres-in-feet"] = len(_one(facts, "heightMetres"))
    areas = _one(facts, "areaKm2")
    expected["areaKm2-in-square-miles"] = len(areas)
    expected["population-density-of-population-per-areaKm2"] = sum(
        1 for s in _one(facts, "population") if s in areas and Decimal(areas[s].value) != 0)
    sets = {relation: sum(1 for objects in facts[relation].values() if 2 <= len(objects) <= 30)
            for relation in ("speaks", "bonusPaid", "visitDate")}
    expected |= {f"{name}-of-{relation}": sets[relation]
                 for name, relation in (("count", "speaks"), ("count", "bonusPaid"), ("total", "bonusPaid"),
                                        ("maximum", "bonusPaid"), ("count", "visitDate"), ("earliest", "visitDate"))}
    return expected


@pytest.fixture(scope="module")
def hand_made(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules-suggest") / "people.nt"
    _write_graph(path, _people_and_cities())
    return path


def test_hand_made_graph_gets_the_library_rules_with_their_coverage(hand_made):
    suggestion = suggest(KnowledgeGraph.load(hand_made), min_entities=10)
    found = {iri.removeprefix(DEFAULT_BASE): p.coverage for iri, p in zip(suggestion.iris, suggestion.proposals)}
    assert found == _expected(_read_facts(hand_made))


def test_rules_file_loads_back_with_words_for_every_rule(hand_made, tmp_path, capsys):
    out = tmp_path / "rules.ttl"
    assert run(["rules", "suggest", str(hand_made), "--out", str(out), "--min-entities", "10"]) == 0
    shown = capsys.readouterr().out
    expected = _expected(_read_facts(hand_made))
    rules = load_rules(KnowledgeGraph.load(hand_made, out))
    assert {iri.removeprefix(DEFAULT_BASE) for iri in rules} == set(expected)
    text = out.read_text(encoding="utf-8")
    for name, coverage in expected.items():
        assert f"covers {coverage:,} entities" in text.split(f"<{DEFAULT_BASE}{name}>")[0].rsplit("\n\n", 1)[-1]
        assert name[:20] in shown  # the summary table names every rule
    for rule in rules.values():
        assert rule.origin is RuleOrigin.library and rule.source
        assert set(rule.labels) == set(rule.statements) == set(rule.questions) == {"en", "ru"}
        roles = {i.role for i in rule.inputs}
        for question in rule.questions.values():
            assert {m.group(1) for m in _SLOT.finditer(question)} <= roles | {"entity"}, question


def test_unlabelled_relations_get_labels(hand_made, tmp_path):
    out = tmp_path / "rules.ttl"
    assert run(["rules", "suggest", str(hand_made), "--out", str(out), "--min-entities", "10"]) == 0
    kg = KnowledgeGraph.load(hand_made, out, lang=("en", "ru"))
    labels = kg.labels([ox.NamedNode(EX + p) for p in ("deathDate", "population", "birthDate")])
    assert labels[ox.NamedNode(EX + "deathDate")] == {"en": "date of death", "ru": "дата смерти"}
    assert labels[ox.NamedNode(EX + "population")] == {"en": "population", "ru": "население"}
    assert labels[ox.NamedNode(EX + "birthDate")] == {"en": "date of birth"}  # its own, kept as it is


def test_same_graph_same_file(hand_made, tmp_path):
    outs = [tmp_path / "first" / "rules.ttl", tmp_path / "second" / "rules.ttl"]
    for out in outs:
        assert run(["rules", "suggest", str(hand_made), "--out", str(out), "--min-entities", "10"]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()


def test_graph_without_dates_or_quantities_is_one_line_error(tmp_path, capsys):
    graph = tmp_path / "codes.ttl"
    graph.write_text('@prefix ex: <https://codes.example/> .\n'
                     'ex:a ex:code "A-1" ; ex:knows ex:b .\nex:b ex:code "B-2" ; ex:size 3 .\n', encoding="utf-8")
    out = tmp_path / "rules.ttl"
    assert run(["rules", "suggest", str(graph), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and not out.exists()
    (line,) = captured.err.splitlines()
    assert line.startswith("error: no rule of the rule library applies") and "looked at 3 relations: code, knows, size" in line


def test_too_small_a_graph_names_its_best_rule(hand_made, tmp_path, capsys):
    assert run(["rules", "suggest", str(hand_made), "--out", str(tmp_path / "r.ttl"), "--min-entities", "1000"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "covers 1,000 or more entities" in line and "--min-entities" in line


def test_base_must_be_an_iri(hand_made, tmp_path, capsys):
    assert run(["rules", "suggest", str(hand_made), "--out", str(tmp_path / "r.ttl"), "--base", "rules here"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: --base 'rules here' is not an absolute IRI")


def test_unreadable_graph_is_the_usual_one_line_error(tmp_path, capsys):
    assert run(["rules", "suggest", str(tmp_path / "missing.ttl"), "--out", str(tmp_path / "r.ttl")]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and "missing.ttl" in line


def test_library_conversions_are_exact_definitions():
    library = load_library()
    by_units = {(c.source_unit, c.unit): c for c in library.conversions}
    assert by_units[("m", "ft")].divisor == Decimal("0.3048")
    assert by_units[("kg", "lb")].divisor == Decimal("0.45359237")
    assert by_units[("km", "mi")].divisor == Decimal("1.609344")
    assert by_units[("km²", "mi²")].divisor == Decimal("1.609344") ** 2
    assert by_units[("m²", "ft²")].divisor == Decimal("0.3048") ** 2
    assert (by_units[("°C", "°F")].factor, by_units[("°C", "°F")].offset) == (Decimal("1.8"), Decimal(32))
    for there, back in ((a, b) for (a, b) in by_units if (b, a) in by_units):  # each way uses one constant
        assert by_units[(there, back)].divisor == by_units[(back, there)].factor or (
            by_units[(there, back)].factor == by_units[(back, there)].divisor)


# ---------------------------------------------------------------------------- FB15k-237
@pytest.fixture(scope="module")
def fb15k(tmp_path_factory):
    if not FB15K.exists():
        pytest.skip("../shared/external/fb15k237 is not present")
    kg = KnowledgeGraph.load(FB15K)
    suggestion = suggest(kg)
    out = tmp_path_factory.mktemp("fb15k-rules") / "rules.ttl"
    out.write_text(suggestion.turtle("FB15k-237 test"), encoding="utf-8")
    kg.add(out)
    return kg, suggestion


FB_RULES = ("century-of-date_of_birth", "decade-of-date_of_birth", "leap-year-of-date_of_birth",
            "age-at-death-from-date_of_birth-to-date_of_death", "height_meters-in-feet",
            "population-density-of-population_number-per-area")


def test_fb15k_gets_calendar_age_height_and_density_rules(fb15k):
    kg, suggestion = fb15k
    rules = load_rules(kg)
    names = {iri.removeprefix(DEFAULT_BASE) for iri in suggestion.iris}
    assert set(FB_RULES) <= names and {DEFAULT_BASE + n for n in names} <= set(rules)
    age = rules[DEFAULT_BASE + "age-at-death-from-date_of_birth-to-date_of_death"]
    assert "Subtract" in age.questions["en"]  # decimal years: the engine subtracts years, the question says so


def test_fb15k_coverage_is_what_the_engine_answers(fb15k):
    """For every rule that reads one value per input, the entities it covers are exactly
    those the engine answers (a plain pass over the literal triples gives each its values)."""
    from kgsynth.synth.rules import RuleEvaluationError, evaluate

    kg, suggestion = fb15k
    rules = load_rules(kg)
    values: dict = defaultdict(lambda: defaultdict(list))
    for s, p, o in kg.select("SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }"):
        values[p.value][s].append(o)
    for proposal, iri in zip(suggestion.proposals, suggestion.iris):
        if proposal.family == "aggregate":
            continue
        rule = rules[iri]
        subjects = set.intersection(*(set(values[i.relation]) for i in rule.inputs))
        answered = 0
        for subject in subjects:
            terms = {i.role: values[i.relation][subject] for i in rule.inputs}
            if all(len(t) == 1 for t in terms.values()):
                try:
                    evaluate(rule, terms)
                    answered += 1
                except RuleEvaluationError:
                    pass
        assert answered == proposal.coverage, iri


def test_fb15k_sampled_rule_items_evaluate(fb15k):
    """Rule-application subgraphs of the proposed aggregate rules (2-30 members) evaluate."""
    from kgsynth.synth.rules import evaluate_subgraph

    kg, suggestion = fb15k
    rules = load_rules(kg)
    aggregates = {iri for iri, p in zip(suggestion.iris, suggestion.proposals) if p.family == "aggregate"}
    evaluated = 0
    for subgraph in sample_subgraphs(kg, Shape.rule_application, limit=1500, seed=0, per_anchor=20):
        if subgraph.rule.value in aggregates and 2 <= len(subgraph.facts) <= 30:
            evaluate_subgraph(rules[subgraph.rule.value], subgraph)
            evaluated += 1
    assert evaluated >= 100
