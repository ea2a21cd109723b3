"""The rule engine: exact gold values for every operation, worked examples typed by hand,
one-line errors naming the rule, and every rule application of the demo graph evaluated."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal

import pyoxigraph as ox
import pytest

from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import XSD, Comparison, Operation, Rule, RuleKind, RuleOrigin
from kgsynth.queries import sample_subgraphs
from kgsynth.synth.scenarios.rules import RuleEvaluationError, RuleOutcome, evaluate, evaluate_subgraph, plain

V = "http://v.example/"
DEMO = "https://kgsynth.example/demo/"

# Hand-written rules for the worked examples (independent of docs/ and data/demo/).
RULES_TTL = """@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix ex: <http://v.example/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:income-tax a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentOf ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:monthlySalary ] ;
    kgs:rate "0.13"^^xsd:decimal ; kgs:rounding 0 ; kgs:unit "RUB" .
ex:exact-tax a kgs:Rule ; kgs:kind kgs:Arithmetic ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:monthlySalary ] ;
    kgs:rate "0.13"^^xsd:decimal .
ex:overlimit a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentOfExcess ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:purchaseAmount ; kgs:aggregate kgs:Sum ] ,
              [ kgs:role "limit" ; kgs:relation ex:monthlyLimit ] ;
    kgs:rate "0.10"^^xsd:decimal ; kgs:unit "RUB" .
ex:overlimit-kopecks a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentOfExcess ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:purchaseAmount ; kgs:aggregate kgs:Sum ] ;
    kgs:threshold "50000"^^xsd:decimal ; kgs:rate "0.10"^^xsd:decimal ; kgs:rounding 2 .
ex:bonus a kgs:Rule ; kgs:kind kgs:Arithmetic ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:orderTotal ] ;
    kgs:rate "0.05"^^xsd:decimal ; kgs:rounding 0 ; kgs:unit "points" .
ex:deductible a kgs:Rule ; kgs:kind kgs:Threshold ; kgs:comparison kgs:GreaterThan ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:claimAmount ] ,
              [ kgs:role "threshold" ; kgs:relation ex:deductible ] .
ex:free-delivery a kgs:Rule ; kgs:kind kgs:Threshold ; kgs:comparison kgs:GreaterOrEqual ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:orderTotal ] ;
    kgs:threshold "3000"^^xsd:decimal .
ex:residency-tax a kgs:Rule ; kgs:kind kgs:Conditional ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:monthlySalary ] ,
              [ kgs:role "condition" ; kgs:relation ex:taxResident ] ;
    kgs:case [ kgs:when true ; kgs:rate "0.13"^^xsd:decimal ] ;
    kgs:defaultRate "0.30"^^xsd:decimal ; kgs:rounding 0 ; kgs:unit "RUB" .
ex:cashback a kgs:Rule ; kgs:kind kgs:Conditional ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:annualSpend ] ,
              [ kgs:role "condition" ; kgs:relation ex:membership ] ;
    kgs:case [ kgs:when ex:premium ; kgs:rate "0.05"^^xsd:decimal ] ,
             [ kgs:when ex:club ; kgs:rate "0.03"^^xsd:decimal ] ,
             [ kgs:when 2 ; kgs:rate "0.02"^^xsd:decimal ] .
ex:return-window a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:WithinDays ; kgs:maxDays 14 ;
    kgs:input [ kgs:role "start" ; kgs:relation ex:purchaseDate ] ,
              [ kgs:role "end" ; kgs:relation ex:returnDate ] .
ex:stay-nights a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:DaysBetween ; kgs:unit "nights" ;
    kgs:input [ kgs:role "start" ; kgs:relation ex:checkIn ] ,
              [ kgs:role "end" ; kgs:relation ex:checkOut ] .
ex:invoice-due a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:Deadline ; kgs:maxDays 10 ;
    kgs:input [ kgs:role "start" ; kgs:relation ex:checkOut ] .
ex:loyalty-tier a kgs:Rule ; kgs:kind kgs:Classification ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:annualSpend ] ;
    kgs:bracket [ kgs:upperBound 100000 ; kgs:class ex:bronze ] ,
                [ kgs:lowerBound 100000 ; kgs:upperBound 500000 ; kgs:class ex:silver ] ,
                [ kgs:lowerBound 500000 ; kgs:class ex:gold ] .
ex:gappy-tier a kgs:Rule ; kgs:kind kgs:Classification ;
    kgs:input [ kgs:role "amount" ; kgs:relation ex:annualSpend ] ;
    kgs:bracket [ kgs:lowerBound 0 ; kgs:upperBound 100 ; kgs:class ex:low ] ,
                [ kgs:lowerBound 200 ; kgs:upperBound 300 ; kgs:class ex:high ] ,
                [ kgs:lowerBound 250 ; kgs:upperBound 400 ; kgs:class ex:higher ] .
"""


@pytest.fixture(scope="module")
def rules(tmp_path_factory) -> dict[str, Rule]:
    path = tmp_path_factory.mktemp("rules") / "rules.ttl"
    path.write_text(RULES_TTL, encoding="utf-8")
    return {iri.removeprefix(V): rule for iri, rule in load_rules(KnowledgeGraph.load(path)).items()}


def dec(text: str) -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(XSD + "decimal"))


def typed(text: str, datatype: str) -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(XSD + datatype))


def day(text: str) -> ox.Literal:
    return typed(text, "date")


def iri(local: str) -> ox.NamedNode:
    return ox.NamedNode(V + local)


# ------------------------------------------------------------------------------ worked examples
def test_income_tax_13_percent_of_120000_is_15600(rules):
    outcome = evaluate(rules["income-tax"], {"amount": [dec("120000")]})
    assert outcome.value == Decimal("15600") and str(outcome.value) == "15600"
    assert (outcome.operation, outcome.kind, outcome.unit) == (Operation.percent_of, RuleKind.arithmetic, "RUB")
    assert outcome.rate == Decimal("0.13") and outcome.inputs == {"amount": Decimal("120000")}
    assert outcome.steps == ("120000 x 0.13 = 15600",)


def test_exact_result_is_plain_not_scientific(rules):
    outcome = evaluate(rules["exact-tax"], {"amount": [dec("120000")]})
    assert str(outcome.value) == "15600"  # not 1.56E+4, not 15600.00
    outcome = evaluate(rules["exact-tax"], {"amount": [dec("0.0000001")]})
    assert outcome.value == Decimal("0.000000013") and outcome.value.as_tuple().exponent == -9
    assert outcome.steps == ("0.0000001 x 0.13 = 0.000000013",)  # steps are fixed-point, never 1.3E-8
    plains = [str(plain(Decimal(t))) for t in ("1.56E+4", "270.000", "0.00", "-0", "12.50")]
    assert plains == ["15600", "270", "0", "0", "12.5"]


def test_overlimit_penalty_on_summed_purchases_is_270(rules):
    values = {"amount": [dec("46500"), dec("6200")], "limit": [dec("50000")]}
    outcome = evaluate(rules["overlimit"], values)
    assert outcome.value == Decimal("270") and str(outcome.value) == "270"
    assert outcome.inputs == {"amount": Decimal("52700"), "limit": Decimal("50000")}
    assert outcome.rate == Decimal("0.10")
    # the store keeps 0.10 as its canonical 0.1
    assert outcome.steps == (
        "amount = 46500 + 6200 = 52700",
        "excess = max(0, 52700 - 50000) = 2700",
        "2700 x 0.1 = 270",
    )


def test_excess_below_limit_is_zero_and_constant_threshold_counts(rules):
    outcome = evaluate(rules["overlimit-kopecks"], {"amount": [dec("46500")]})
    assert outcome.value == 0 and str(outcome.value) == "0.00"
    assert outcome.inputs == {"amount": Decimal("46500"), "threshold": Decimal("50000")}
    assert outcome.steps[0] == "amount = 46500"  # a kgs:Sum input with one value


def test_rounding_is_half_up_to_declared_places(rules):
    # 1162.745 -> 1162.75 (banker's rounding would give 1162.74)
    values = {"amount": [dec("23168"), dec("38459.45")]}
    outcome = evaluate(rules["overlimit-kopecks"], values)
    assert outcome.value == Decimal("1162.75") and str(outcome.value) == "1162.75"
    assert outcome.steps[-2:] == ("11627.45 x 0.1 = 1162.745", "round half-up to 2 places: 1162.745 -> 1162.75")
    # 58.5 -> 59 (banker's rounding would give 58); 59.5 -> 60
    assert evaluate(rules["bonus"], {"amount": [dec("1170")]}).value == Decimal("59")
    assert evaluate(rules["bonus"], {"amount": [dec("1190")]}).value == Decimal("60")


def test_arithmetic_is_exact_beyond_float_and_default_precision(rules):
    # 0.1 as xsd:double is read from its lexical form, never through float
    outcome = evaluate(rules["exact-tax"], {"amount": [typed("0.1", "double")]})
    assert outcome.value == Decimal("0.013")
    # 30 significant digits (13 x 12345678901234567890.123456789 = 160493825716049382571.604938257,
    # then /100): the default 28-digit context would round this
    big = evaluate(rules["exact-tax"], {"amount": [dec("12345678901234567890.123456789")]})
    assert big.value == Decimal("1604938257160493825.71604938257")
    assert evaluate(rules["exact-tax"], {"amount": [typed("1", "integer")]}).value == Decimal("0.13")


@pytest.mark.parametrize(
    ("claim", "comparison", "expected"),
    [
        ("7000", Comparison.greater_than, True),
        ("5000", Comparison.greater_than, False),
        ("5000", Comparison.greater_or_equal, True),
        ("4999.99", Comparison.greater_or_equal, False),
        ("4999.99", Comparison.less_than, True),
        ("5000", Comparison.less_or_equal, True),
    ],
)
def test_threshold_yes_no(rules, claim, comparison, expected):
    rule = rules["deductible"].model_copy(update={"comparison": comparison})
    outcome = evaluate(rule, {"amount": [dec(claim)], "threshold": [dec("5000")]})
    assert outcome.value is expected
    assert outcome.inputs == {"amount": Decimal(claim), "threshold": Decimal("5000")}
    assert outcome.kind is RuleKind.threshold and outcome.rate is None


def test_threshold_steps_and_constant(rules):
    outcome = evaluate(rules["deductible"], {"amount": [dec("7000")], "threshold": [dec("5000")]})
    assert outcome.steps == ("7000 > 5000 = true",)
    outcome = evaluate(rules["free-delivery"], {"amount": [dec("3000")]})
    assert outcome.value is True and outcome.inputs == {"amount": Decimal("3000"), "threshold": Decimal("3000")}


def test_return_on_day_14_is_within_and_day_15_is_not(rules):
    within = evaluate(rules["return-window"], {"start": [day("2024-03-01")], "end": [day("2024-03-15")]})
    assert within.value is True
    assert within.inputs == {"start": dt.date(2024, 3, 1), "end": dt.date(2024, 3, 15)}
    assert within.steps == ("days = 2024-03-15 - 2024-03-01 = 14", "14 <= 14 = true")
    late = evaluate(rules["return-window"], {"start": [day("2024-03-01")], "end": [day("2024-03-16")]})
    assert late.value is False
    same_day = evaluate(rules["return-window"], {"start": [day("2024-03-01")], "end": [day("2024-03-01")]})
    assert same_day.value is True


def test_days_between_and_deadline(rules):
    nights = evaluate(rules["stay-nights"], {"start": [day("2024-02-27")], "end": [day("2024-03-02")]})
    assert nights.value == 4 and type(nights.value) is int and nights.unit == "nights"
    due = evaluate(rules["invoice-due"], {"start": [day("2024-02-20")]})
    assert due.value == dt.date(2024, 3, 1)  # leap year: 29 February counts
    assert due.steps == ("2024-02-20 + 10 days = 2024-03-01",) and due.inputs == {"start": dt.date(2024, 2, 20)}


def test_datetime_uses_its_date_and_date_may_carry_a_timezone(rules):
    values = {"start": [typed("2024-03-01T23:30:00+03:00", "dateTime")], "end": [typed("2024-03-15Z", "date")]}
    outcome = evaluate(rules["return-window"], values)
    assert outcome.inputs == {"start": dt.date(2024, 3, 1), "end": dt.date(2024, 3, 15)}
    assert outcome.value is True


@pytest.mark.parametrize(
    ("spend", "tier"),
    [
        ("0", "bronze"), ("99999.99", "bronze"), ("-5", "bronze"),
        ("100000", "silver"), ("499999", "silver"), ("500000", "gold"),
    ],
)
def test_classification_boundary_goes_to_the_upper_bracket(rules, spend, tier):
    outcome = evaluate(rules["loyalty-tier"], {"amount": [dec(spend)]})
    assert outcome.value == V + tier and outcome.kind is RuleKind.classification


def test_classification_steps(rules):
    assert evaluate(rules["loyalty-tier"], {"amount": [dec("100000")]}).steps == (
        f"100000 in [100000, 500000) -> <{V}silver>",
    )
    assert evaluate(rules["loyalty-tier"], {"amount": [dec("700000")]}).steps == (
        f"700000 in [500000, +inf) -> <{V}gold>",
    )
    assert evaluate(rules["loyalty-tier"], {"amount": [dec("7")]}).steps == (f"7 in (-inf, 100000) -> <{V}bronze>",)


def test_resident_and_non_resident_rates(rules):
    resident = evaluate(rules["residency-tax"], {"amount": [dec("120000")], "condition": [ox.Literal(True)]})
    assert resident.value == Decimal("15600") and resident.rate == Decimal("0.13")
    assert resident.inputs == {"amount": Decimal("120000"), "condition": f'"true"^^<{XSD}boolean>'}
    assert resident.steps == (f'condition = "true"^^<{XSD}boolean> -> rate 0.13', "120000 x 0.13 = 15600")
    non_resident = evaluate(rules["residency-tax"], {"amount": [dec("120000")], "condition": [ox.Literal(False)]})
    assert non_resident.value == Decimal("36000") and non_resident.rate == Decimal("0.30")
    assert non_resident.steps[0] == f'condition = "false"^^<{XSD}boolean> matches no case -> default rate 0.3'


def test_cases_compare_by_value_not_spelling(rules):
    one = evaluate(rules["residency-tax"], {"amount": [dec("100")], "condition": [typed("1", "boolean")]})
    assert one.rate == Decimal("0.13")
    zero = evaluate(rules["residency-tax"], {"amount": [dec("100")], "condition": [typed("0", "boolean")]})
    assert zero.rate == Decimal("0.30")
    premium = evaluate(rules["cashback"], {"amount": [dec("200000")], "condition": [iri("premium")]})
    assert (premium.value, premium.rate) == (Decimal("10000"), Decimal("0.05"))
    two = evaluate(rules["cashback"], {"amount": [dec("100")], "condition": [dec("2.0")]})
    assert two.rate == Decimal("0.02")  # "2.0"^^xsd:decimal equals 2 (xsd:integer)
    # a string "2" is not the number 2
    with pytest.raises(RuleEvaluationError):
        evaluate(rules["cashback"], {"amount": [dec("100")], "condition": [ox.Literal("2")]})


def test_roles_the_operation_does_not_read_are_ignored(rules):
    outcome = evaluate(rules["income-tax"], {"amount": [dec("1000")], "end": [day("2024-01-01")]})
    assert outcome.inputs == {"amount": Decimal("1000")}


def test_outcome_is_frozen_and_strict():
    outcome = RuleOutcome(
        value=True, operation=Operation.compare, kind=RuleKind.threshold, unit=None, inputs={}, steps=()
    )
    with pytest.raises(ValueError):
        outcome.value = False  # type: ignore[misc]
    with pytest.raises(ValueError):
        RuleOutcome(value=1, operation="Compare", kind="threshold", unit=None, inputs={}, steps=(), extra=1)


# ------------------------------------------------------------------------------ errors
ERRORS = [
    ("income-tax", {}, "missing a value for role 'amount'"),
    ("income-tax", {"amount": []}, "missing a value for role 'amount'"),
    ("income-tax", {"amount": [dec("1"), dec("2")]}, "role 'amount' has 2 values but its input is not kgs:Sum"),
    ("income-tax", {"amount": [ox.Literal("120000")]}, "role 'amount' value \"120000\" is not a number"),
    ("income-tax", {"amount": [iri("x")]}, f"role 'amount' value <{V}x> is not a number"),
    ("income-tax", {"amount": [dec("abc")]}, "is not a number"),
    ("income-tax", {"amount": [typed("NaN", "double")]}, "is not a number"),
    ("overlimit", {"amount": [dec("1")]}, "missing a value for role 'limit'"),
    ("overlimit", {"amount": [dec("1")], "limit": [day("2024-01-01")]}, "role 'limit' value"),
    ("deductible", {"amount": [dec("1")], "threshold": [dec("1"), dec("2")]}, "role 'threshold' has 2 values"),
    ("return-window", {"start": [day("2024-01-01")]}, "missing a value for role 'end'"),
    ("return-window", {"start": [dec("5")], "end": [day("2024-01-01")]}, "role 'start' value \"5\"^^"),
    ("return-window", {"start": [day("2024-01-01")], "end": [ox.Literal("05/01/2024")]},
     "is not an xsd:date or xsd:dateTime"),
    ("return-window", {"start": [day("2024-01-01")], "end": [day("2024-13-45")]}, "is not an xsd:date or xsd:dateTime"),
    ("return-window", {"start": [day("2024-01-10")], "end": [day("2024-01-01")]},
     "end 2024-01-01 is before start 2024-01-10"),
    ("stay-nights", {"start": [day("2024-01-10")], "end": [day("2024-01-01")]}, "is before start"),
    ("invoice-due", {"start": [day("2024-01-01"), day("2024-01-02")]}, "role 'start' has 2 values"),
    ("residency-tax", {"amount": [dec("1")]}, "missing a value for role 'condition'"),
    ("cashback", {"amount": [dec("1")], "condition": [iri("gold")]},
     "matches no kgs:case and there is no kgs:defaultRate"),
    ("loyalty-tier", {"amount": [ox.Literal(True)]}, "is not a number"),
    ("gappy-tier", {"amount": [dec("150")]}, "no kgs:bracket contains the amount 150"),
    ("gappy-tier", {"amount": [dec("-1")]}, "no kgs:bracket contains the amount -1"),
    ("gappy-tier", {"amount": [dec("260")]}, "the amount 260 falls in 2 overlapping kgs:bracket"),
]


@pytest.mark.parametrize(("name", "values", "message"), ERRORS)
def test_error_messages_name_the_rule_in_one_line(rules, name, values, message):
    with pytest.raises(RuleEvaluationError) as info:
        evaluate(rules[name], values)
    text = str(info.value)
    assert text.startswith(f"rule <{V}{name}>: ") and message in text and "\n" not in text


def test_error_is_a_kgsynth_error():
    from kgsynth.errors import KgsynthError

    assert issubclass(RuleEvaluationError, KgsynthError)


def test_hand_built_rule_missing_parameters(rules):
    no_cmp = rules["deductible"].model_copy(update={"comparison": None})
    with pytest.raises(RuleEvaluationError, match="needs kgs:comparison"):
        evaluate(no_cmp, {"amount": [dec("1")], "threshold": [dec("1")]})
    no_days = rules["invoice-due"].model_copy(update={"max_days": None})
    with pytest.raises(RuleEvaluationError, match="needs kgs:maxDays"):
        evaluate(no_days, {"start": [day("2024-01-01")]})


# ------------------------------------------------------------------------------ the demo graph
RESULT_TYPES = {
    Operation.percent_of: Decimal,
    Operation.percent_of_excess: Decimal,
    Operation.case_rate: Decimal,
    Operation.compare: bool,
    Operation.within_days: bool,
    Operation.days_between: int,
    Operation.deadline: dt.date,
    Operation.bracket_class: str,
}


@pytest.fixture(scope="module")
def demo_applications(demo_kg):
    return load_rules(demo_kg), list(sample_subgraphs(demo_kg, "rule_application", limit=10_000, per_anchor=100))


def test_every_demo_rule_application_evaluates(demo_applications):
    """Every invented rule of the demo answers every entity it applies to (a library rule
    may not: the century of a year 2000 birth has no single answer, tests/test_rule_operations.py)."""
    rules, subgraphs = demo_applications
    rules = {iri: rule for iri, rule in rules.items() if rule.origin is RuleOrigin.invented}
    outcomes: Counter[str] = Counter()
    errors: list[str] = []
    for subgraph in subgraphs:
        rule = rules.get(subgraph.rule.value)
        if rule is None:
            continue
        try:
            outcome = evaluate_subgraph(rule, subgraph)
        except RuleEvaluationError as error:
            assert rule.iri in str(error)
            errors.append(str(error))
            continue
        outcomes[rule.iri] += 1
        assert type(outcome.value) is RESULT_TYPES[rule.operation]
        assert not any(isinstance(v, float) for v in (outcome.value, outcome.rate, *outcome.inputs.values()))
        if rule.rounding is not None and isinstance(outcome.value, Decimal):
            assert outcome.value.as_tuple().exponent == -rule.rounding
    assert errors == [], f"{len(errors)} of {len(subgraphs)} demo rule applications failed: {errors[:5]}"
    assert set(outcomes) == set(rules) and len(rules) == 25


def test_demo_card_001_overlimit_penalty_is_270(demo_applications):
    rules, subgraphs = demo_applications
    (subgraph,) = [
        s
        for s in subgraphs
        if s.rule.value == DEMO + "rule-overlimit-penalty" and s.mention[0].value == DEMO + "card-001"
    ]
    outcome = evaluate_subgraph(rules[DEMO + "rule-overlimit-penalty"], subgraph)
    assert outcome.value == Decimal("270") and str(outcome.value) == "270.00"  # kgs:rounding 2
    assert outcome.inputs == {"amount": Decimal("52700"), "limit": Decimal("50000")}
    assert outcome.steps[:2] == ("amount = 46500 + 6200 = 52700", "excess = max(0, 52700 - 50000) = 2700")


def test_subgraph_of_another_rule_is_refused(demo_applications):
    rules, subgraphs = demo_applications
    subgraph = next(s for s in subgraphs if s.rule.value == DEMO + "rule-income-tax")
    expected = r"rule <.*rule-agent-commission>: the subgraph is for rule <.*rule-income-tax>"
    with pytest.raises(RuleEvaluationError, match=expected):
        evaluate_subgraph(rules[DEMO + "rule-agent-commission"], subgraph)
