"""The rule vocabulary: rules read back typed, and incomplete rules named in one line."""

from __future__ import annotations

from decimal import Decimal

import pytest
from conftest import ROOT

from kgsynth.errors import RuleError
from kgsynth.kg import KnowledgeGraph, RuleKind, load_rules
from kgsynth.kg.vocab import Comparison, Operation

PREFIXES = """@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix ex: <http://v.example/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""


def _rules(tmp_path, body: str):
    path = tmp_path / "rules.ttl"
    path.write_text(PREFIXES + body, encoding="utf-8")
    return load_rules(KnowledgeGraph.load(path))


def test_documented_example_reads_back(tmp_path):
    # the Turtle example of docs/vocabulary.md, verbatim
    doc = (ROOT / "docs" / "vocabulary.md").read_text(encoding="utf-8")
    example = doc.split("```turtle\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.ttl"
    path.write_text(example, encoding="utf-8")
    rules = load_rules(KnowledgeGraph.load(path))
    assert {r.kind for r in rules.values()} == set(RuleKind)
    tax = rules["https://kgsynth.example/demo/rule-income-tax"]
    assert (tax.operation, tax.rate, tax.rounding, tax.unit) == (Operation.percent_of, Decimal("0.13"), 0, "RUB")
    assert tax.labels == {"en": "personal income tax", "ru": "НДФЛ"} and tax.relations == ("https://kgsynth.example/demo/monthlySalary",)
    overlimit = rules["https://kgsynth.example/demo/rule-overlimit"]
    assert {(i.role, i.sum_values) for i in overlimit.inputs} == {("amount", True), ("limit", False)}
    assert rules["https://kgsynth.example/demo/rule-deductible"].comparison is Comparison.greater_than
    tier = rules["https://kgsynth.example/demo/rule-loyalty-tier"]
    assert sorted((b.lower, b.upper) for b in tier.brackets if b.lower is not None) == [(100000, 500000), (500000, None)]
    residency = rules["https://kgsynth.example/demo/rule-residency-tax"]
    assert residency.cases[0].when == '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("ex:r a kgs:Rule .", "missing kgs:kind"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Magic .", "is not one of"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] .", "needs kgs:rate"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:rate 0.1 .", "needs inputs with roles ['amount']"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Threshold ; kgs:comparison kgs:GreaterThan ;"
         " kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] .", "needs kgs:threshold or"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Threshold ; kgs:comparison kgs:GreaterThan ; kgs:threshold 5 ;"
         " kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] , [ kgs:role \"limit\" ; kgs:relation ex:q ] .",
         "needs exactly one of kgs:threshold or"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:PercentOf .", "not an operation of kind interval"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:rate \"lots\" ;"
         " kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] .", "is not a number"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Classification ; kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] ;"
         " kgs:bracket [ kgs:class ex:c ] .", "at least two kgs:bracket"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:rate 0.1 ; kgs:input [ kgs:role \"size\" ; kgs:relation ex:p ] .",
         "input role 'size'"),
        # out-of-range constants: a negative rate, a percentage written as a number, absurd magnitudes
        *[(f"ex:r a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:rate {rate} ; kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] .", message)
          for rate, message in [("-0.13", "kgs:rate -0.13 is outside 0..10"), ("13", "kgs:rate 13 is outside 0..10 (a fraction"),
                                ("1e300", "is outside ±1,000,000,000,000,000"), ('"NaN"^^xsd:decimal', "kgs:rate 'NaN' is not a number")]],
        ("ex:r a kgs:Rule ; kgs:kind kgs:Threshold ; kgs:comparison kgs:GreaterThan ; kgs:threshold 1e20 ;"
         " kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] .", "kgs:threshold 100000000000000000000 is outside"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Conditional ; kgs:defaultRate 0.3 ; kgs:case [ kgs:when true ; kgs:rate -1 ] ;"
         " kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] , [ kgs:role \"condition\" ; kgs:relation ex:q ] .",
         "the kgs:rate of the case"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Interval ; kgs:maxDays -3 ; kgs:input [ kgs:role \"start\" ; kgs:relation ex:p ] ,"
         " [ kgs:role \"end\" ; kgs:relation ex:q ] .", "kgs:maxDays -3 is outside 0..36,600"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Interval ; kgs:maxDays \"two weeks\" ; kgs:input [ kgs:role \"start\" ; kgs:relation ex:p ] ,"
         " [ kgs:role \"end\" ; kgs:relation ex:q ] .", "kgs:maxDays 'two weeks' is not a whole number"),
        ("ex:r a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:rate 0.1 ; kgs:rounding 40 ; kgs:input [ kgs:role \"amount\" ; kgs:relation ex:p ] .",
         "kgs:rounding 40 is outside 0..10"),
    ],
)
def test_incomplete_rules_are_named(tmp_path, body, message):
    with pytest.raises(RuleError) as info:
        _rules(tmp_path, body)
    assert "<http://v.example/r>" in str(info.value) and message in str(info.value)
