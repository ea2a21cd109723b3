"""The rule library's operations (ratios, conversions, calendar, sets): worked examples typed by
hand, every "does not apply" case, and properties against independent implementations
(fractions.Fraction, dateutil, day counting)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from fractions import Fraction

import pyoxigraph as ox
import pytest
from conftest import ROOT
from dateutil.relativedelta import relativedelta
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import XSD, Operation, Rule, RuleKind
from kgsynth.synth.scenarios.rules import RuleEvaluationError, evaluate

V = "http://v.example/"

RULES_TTL = """@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix ex: <http://v.example/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:density a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:Ratio ; kgs:rounding 1 ;
    kgs:input [ kgs:role "numerator" ; kgs:relation ex:population ] ,
              [ kgs:role "denominator" ; kgs:relation ex:area ] .
ex:per-thousand a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:Ratio ; kgs:rounding 2 ;
    kgs:factor 1000 ;
    kgs:input [ kgs:role "numerator" ; kgs:relation ex:doctors ] ,
              [ kgs:role "denominator" ; kgs:relation ex:population ] .
ex:growth a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:Difference ;
    kgs:input [ kgs:role "from" ; kgs:relation ex:before ] , [ kgs:role "to" ; kgs:relation ex:after ] .
ex:growth-rounded a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:Difference ; kgs:rounding 1 ;
    kgs:input [ kgs:role "from" ; kgs:relation ex:before ] , [ kgs:role "to" ; kgs:relation ex:after ] .
ex:change a kgs:Rule ; kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentChange ; kgs:rounding 1 ;
    kgs:input [ kgs:role "from" ; kgs:relation ex:before ] , [ kgs:role "to" ; kgs:relation ex:after ] .
ex:age-at-death a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
    kgs:input [ kgs:role "start" ; kgs:relation ex:born ] , [ kgs:role "end" ; kgs:relation ex:died ] .
ex:due-in-30-days a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:DateAfter ; kgs:days 30 ;
    kgs:input [ kgs:role "start" ; kgs:relation ex:issued ] .
ex:due-next-month a kgs:Rule ; kgs:kind kgs:Interval ; kgs:operation kgs:DateAfter ; kgs:months 1 ;
    kgs:input [ kgs:role "start" ; kgs:relation ex:issued ] .
ex:weekday a kgs:Rule ; kgs:kind kgs:Calendar ;
    kgs:input [ kgs:role "date" ; kgs:relation ex:born ] .
ex:century a kgs:Rule ; kgs:kind kgs:Calendar ; kgs:operation kgs:Century ;
    kgs:input [ kgs:role "date" ; kgs:relation ex:born ] .
ex:decade a kgs:Rule ; kgs:kind kgs:Calendar ; kgs:operation kgs:Decade ;
    kgs:input [ kgs:role "date" ; kgs:relation ex:born ] .
ex:leap a kgs:Rule ; kgs:kind kgs:Calendar ; kgs:operation kgs:LeapYear ;
    kgs:input [ kgs:role "date" ; kgs:relation ex:born ] .
ex:feet a kgs:Rule ; kgs:kind kgs:Conversion ; kgs:divisor "0.3048"^^xsd:decimal ; kgs:rounding 2 ;
    kgs:sourceUnit "m" ; kgs:unit "ft" ; kgs:input [ kgs:role "amount" ; kgs:relation ex:height ] .
ex:fahrenheit a kgs:Conversion ; a kgs:Rule ; kgs:kind kgs:Conversion ; kgs:factor 1.8 ; kgs:offset 32 ;
    kgs:sourceUnit "°C" ; kgs:unit "°F" ; kgs:input [ kgs:role "amount" ; kgs:relation ex:temperature ] .
ex:celsius a kgs:Rule ; kgs:kind kgs:Conversion ; kgs:factor 1 ; kgs:offset "-273.15"^^xsd:decimal ;
    kgs:sourceUnit "K" ; kgs:unit "°C" ; kgs:input [ kgs:role "amount" ; kgs:relation ex:temperature ] .
ex:miles a kgs:Rule ; kgs:kind kgs:Conversion ; kgs:divisor "1.609344"^^xsd:decimal ; kgs:rounding 1 ;
    kgs:sourceUnit "km" ; kgs:unit "mi" ; kgs:input [ kgs:role "amount" ; kgs:relation ex:distance ] .
ex:languages a kgs:Rule ; kgs:kind kgs:Aggregate ;
    kgs:input [ kgs:role "member" ; kgs:relation ex:speaks ; kgs:aggregate kgs:All ] .
ex:total a kgs:Rule ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Total ;
    kgs:input [ kgs:role "member" ; kgs:relation ex:payment ; kgs:aggregate kgs:All ] .
ex:highest a kgs:Rule ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Maximum ;
    kgs:input [ kgs:role "member" ; kgs:relation ex:payment ; kgs:aggregate kgs:All ] .
ex:first a kgs:Rule ; kgs:kind kgs:Aggregate ; kgs:operation kgs:Earliest ;
    kgs:input [ kgs:role "member" ; kgs:relation ex:released ; kgs:aggregate kgs:All ] .
"""


@pytest.fixture(scope="module")
def rules(tmp_path_factory) -> dict[str, Rule]:
    path = tmp_path_factory.mktemp("rules") / "rules.ttl"
    path.write_text(RULES_TTL, encoding="utf-8")
    return {iri.removeprefix(V): rule for iri, rule in load_rules(KnowledgeGraph.load(path)).items()}


@pytest.fixture(scope="module")
def rule(rules):
    return rules.__getitem__


def typed(text: str, datatype: str) -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(XSD + datatype))


def dec(text: str) -> ox.Literal:
    return typed(text, "decimal")


def day(text: str) -> ox.Literal:
    return typed(text, "date")


def year(text: str) -> ox.Literal:
    return typed(text, "gYear")


def refused(rule: Rule, values: dict, message: str) -> str:
    """The one-line error naming the rule, which must contain ``message``."""
    with pytest.raises(RuleEvaluationError) as info:
        evaluate(rule, values)
    text = str(info.value)
    assert text.startswith(f"rule <{rule.iri}>: ") and message in text and "\n" not in text
    return text


# ------------------------------------------------------------------------------ ratio, difference, change
def test_ratio(rule):
    density = evaluate(rule("density"), {"numerator": [dec("150")], "denominator": [dec("4")]})
    assert density.value == Decimal("37.5") and str(density.value) == "37.5"  # exact, one place
    assert density.steps == ("ratio = 150 / 4 = 37.5",)
    assert density.inputs == {"numerator": Decimal("150"), "denominator": Decimal("4")}
    # 2 / 3 = 0.666... -> 0.7 at one place
    assert str(evaluate(rule("density"), {"numerator": [dec("2")], "denominator": [dec("3")]}).value) == "0.7"
    # 7 doctors per 3000 people, per 1000: 7000 / 3000 = 2.333... -> 2.33
    doctors = evaluate(rule("per-thousand"), {"numerator": [dec("7")], "denominator": [dec("3000")]})
    assert str(doctors.value) == "2.33"
    assert doctors.steps == ("ratio = 7 / 3000 x 1000 = 2.333333...", "round half-up to 2 places: 2.333333... -> 2.33")
    # 1 / 8000 x 1000 = 0.125 exactly: half-up gives 0.13 (banker's would give 0.12); -0.125 -> -0.13
    for numerator, expected in (("1", "0.13"), ("-1", "-0.13")):
        outcome = evaluate(rule("per-thousand"), {"numerator": [dec(numerator)], "denominator": [dec("8000")]})
        assert str(outcome.value) == expected
    assert density.branch == "one" and density.kind is RuleKind.arithmetic
    refused(rule("density"), {"numerator": [dec("5")], "denominator": [dec("0.00")]}, "denominator is 0")


def test_difference(rule):
    up = evaluate(rule("growth"), {"from": [dec("120")], "to": [dec("150")]})
    assert (up.value, up.steps, up.inputs) == (Decimal("30"), ("difference = 150 - 120 = 30",),
                                               {"from": Decimal("120"), "to": Decimal("150")})
    assert evaluate(rule("growth"), {"from": [dec("150")], "to": [dec("120")]}).value == Decimal("-30")  # signed
    same = evaluate(rule("growth"), {"from": [dec("7.5")], "to": [dec("7.50")]})
    assert same.value == 0 and same.branch == "one"  # not "zero": the operation has no branches
    # 10.25 - 0 = 10.25 -> 10.3 at one place (half-up)
    assert str(evaluate(rule("growth-rounded"), {"from": [dec("0")], "to": [dec("10.25")]}).value) == "10.3"
    assert str(evaluate(rule("growth-rounded"), {"from": [dec("1")], "to": [dec("3")]}).value) == "2.0"


def test_percent_change(rule):
    # (150 - 120) / 120 x 100 = 25 -> 25.0
    up = evaluate(rule("change"), {"from": [dec("120")], "to": [dec("150")]})
    assert str(up.value) == "25.0" and up.steps == ("change = (150 - 120) / 120 x 100 = 25",)
    # (120 - 150) / 150 x 100 = -20
    assert str(evaluate(rule("change"), {"from": [dec("150")], "to": [dec("120")]}).value) == "-20.0"
    # (4 - 3) / 3 x 100 = 33.333... -> 33.3
    assert str(evaluate(rule("change"), {"from": [dec("3")], "to": [dec("4")]}).value) == "33.3"
    # (9 - 8) / 8 x 100 = 12.5 -> 13 at no places (half-up)
    whole = rule("change").model_copy(update={"rounding": 0})
    assert str(evaluate(whole, {"from": [dec("8")], "to": [dec("9")]}).value) == "13"
    refused(rule("change"), {"from": [dec("0")], "to": [dec("5")]}, "'from' is 0")


def test_division_without_rounding_is_refused(rule):
    loose = rule("density").model_copy(update={"rounding": None})
    refused(loose, {"numerator": [dec("1")], "denominator": [dec("4")]}, "kgs:Ratio divides, so it needs kgs:rounding")


# ------------------------------------------------------------------------------ years between
def test_years_between_dates_counts_completed_years(rule):
    age = rule("age-at-death")
    # born 1879-03-14, died 1955-04-18: 1955 - 1879 = 76, the anniversary (03-14) was reached
    einstein = evaluate(age, {"start": [day("1879-03-14")], "end": [day("1955-04-18")]})
    assert einstein.value == 76 and type(einstein.value) is int and einstein.boundary is False
    assert einstein.inputs == {"start": dt.date(1879, 3, 14), "end": dt.date(1955, 4, 18)}
    assert einstein.steps == ("years = 1955 - 1879 = 76",)
    # the day before the anniversary: 75
    eve = evaluate(age, {"start": [day("1879-03-14")], "end": [day("1955-03-13")]})
    assert eve.value == 75
    assert eve.steps == ("years = 1955 - 1879 = 76", "03-13 < 03-14, the anniversary is not reached: 76 - 1 = 75")
    # on the anniversary: 76, and it is the boundary
    on = evaluate(age, {"start": [day("1879-03-14")], "end": [typed("1955-03-14T08:00:00", "dateTime")]})
    assert on.value == 76 and on.boundary is True and on.branch == "one"
    same = evaluate(age, {"start": [day("2020-05-05")], "end": [day("2020-05-05")]})
    assert same.value == 0 and same.boundary is False


def test_years_between_29_february(rule):
    age = rule("age-at-death")
    leapling = {"start": [day("2000-02-29")]}
    # 2001 is common: 28 February and 1 March both claim the anniversary
    refused(age, leapling | {"end": [day("2001-02-28")]}, "no single answer for 2001-02-28")
    refused(age, leapling | {"end": [day("2001-03-01")]}, "in the common year 2001")
    assert evaluate(age, leapling | {"end": [day("2001-02-27")]}).value == 0  # before either candidate
    assert evaluate(age, leapling | {"end": [day("2001-03-02")]}).value == 1  # after both
    # 2004 is leap: the anniversary exists; 2004-02-28 is the day before it
    assert evaluate(age, leapling | {"end": [day("2004-02-28")]}).value == 3
    on = evaluate(age, leapling | {"end": [day("2004-02-29")]})
    assert on.value == 4 and on.boundary is True


def test_years_between_years(rule):
    age = rule("age-at-death")
    # a year on either side: 1955 - 1879 = 76 whatever the days; the date is read as its year
    mixed = evaluate(age, {"start": [year("1879")], "end": [day("1955-03-13")]})
    assert mixed.value == 76 and mixed.inputs == {"start": 1879, "end": 1955} and mixed.boundary is False
    assert mixed.steps == ("years = 1955 - 1879 = 76",)
    # FB15k-237's decimal years: 1912.66666667 is 1912; 1955 as an integer; 1.9550E3 as a double
    fb = evaluate(age, {"start": [dec("1912.66666667")], "end": [typed("1955", "integer")]})
    assert fb.value == 43 and fb.inputs == {"start": 1912, "end": 1955}
    assert evaluate(age, {"start": [dec("1912.66666667")], "end": [typed("1.9550E3", "double")]}).value == 43
    assert evaluate(age, {"start": [year("1955")], "end": [dec("1955.9")]}).value == 0
    refused(age, {"start": [year("1956")], "end": [day("1955-12-31")]}, "end year 1955 is before start year 1956")
    refused(age, {"start": [day("1956-01-02")], "end": [day("1956-01-01")]}, "end 1956-01-01 is before start")
    refused(age, {"start": [year("1956")], "end": [ox.Literal("1960 AD")]}, "is not a date or a year")  # not all a year
    refused(age, {"start": [dec("-43.5")], "end": [year("2000")]}, "is not a date or a year")  # -43 or -44?
    assert evaluate(age, {"start": [dec("-44.0")], "end": [year("0010")]}).value == 54


# ------------------------------------------------------------------------------ date after
def test_date_after_days(rule):
    due = rule("due-in-30-days")
    # 2024 is leap: January 31 + 29 days = February 29, + 30 = March 1; in 2023, March 2
    leap = evaluate(due, {"start": [day("2024-01-31")]})
    assert leap.value == dt.date(2024, 3, 1) and leap.steps == ("2024-01-31 + 30 days = 2024-03-01",)
    assert leap.inputs == {"start": dt.date(2024, 1, 31)} and leap.branch == "one"
    assert evaluate(due, {"start": [day("2023-01-31")]}).value == dt.date(2023, 3, 2)
    assert evaluate(due, {"start": [day("2024-12-15")]}).value == dt.date(2025, 1, 14)
    refused(due, {"start": [day("9999-12-15")]}, "is not a representable date")
    refused(due, {"start": [year("2024")]}, "is not an xsd:date or xsd:dateTime")  # a year has no day


def test_date_after_months(rule):
    month = rule("due-next-month")
    assert evaluate(month, {"start": [day("2024-01-15")]}).value == dt.date(2024, 2, 15)
    assert evaluate(month, {"start": [day("2024-01-29")]}).value == dt.date(2024, 2, 29)  # leap February
    wrap = evaluate(month, {"start": [day("2024-12-31")]})
    assert wrap.value == dt.date(2025, 1, 31) and wrap.steps == ("2024-12-31 + 1 months = 2025-01-31",)
    refused(month, {"start": [day("2024-01-31")]}, "2024-02 has no day 31")
    refused(month, {"start": [day("2023-01-29")]}, "2023-02 has no day 29")
    refused(month, {"start": [day("2024-03-31")]}, "2024-04 has no day 31")
    year_later = month.model_copy(update={"months": 12})
    assert evaluate(year_later, {"start": [day("2024-02-28")]}).value == dt.date(2025, 2, 28)
    refused(year_later, {"start": [day("2024-02-29")]}, "2025-02 has no day 29")
    refused(month, {"start": [day("9999-12-15")]}, "is not a representable date")
    both = month.model_copy(update={"days": 3})
    refused(both, {"start": [day("2024-01-01")]}, "exactly one of kgs:days or kgs:months")


# ------------------------------------------------------------------------------ calendar
def test_day_of_week(rule):
    weekday = rule("weekday")
    assert weekday.operation is Operation.day_of_week  # the calendar kind's default
    pi_day = evaluate(weekday, {"date": [day("2024-03-14")]})
    assert pi_day.value == 4 and pi_day.branch == "Thursday"
    assert pi_day.steps == ("weekday(2024-03-14) = 4 (1 = Monday)",)
    moon = evaluate(weekday, {"date": [typed("1969-07-20T20:17:40Z", "dateTime")]})
    assert (moon.value, moon.branch) == (7, "Sunday")
    assert evaluate(weekday, {"date": [day("2000-01-01")]}).branch == "Saturday"
    # 1583-01-01 to 2000-01-01: 417 x 365 + 101 leap days = 152306 = 7 x 21758 days, so a Saturday too
    assert evaluate(weekday, {"date": [day("1583-01-01")]}).value == 6
    refused(weekday, {"date": [day("1582-12-31")]}, "before 1583")
    refused(weekday, {"date": [year("2024")]}, "is not an xsd:date or xsd:dateTime")


def test_century(rule):
    century = rule("century")
    born = evaluate(century, {"date": [day("1912-05-03")]})
    assert born.value == 20 and born.branch == "century 20" and born.inputs == {"date": dt.date(1912, 5, 3)}
    assert born.steps == ("year(1912-05-03) = 1912", "century = 1912 // 100 + 1 = 20")
    first = evaluate(century, {"date": [year("1901")]})
    assert (first.value, first.inputs, first.steps) == (20, {"date": 1901}, ("century = 1901 // 100 + 1 = 20",))
    assert evaluate(century, {"date": [year("2001")]}).value == 21
    assert evaluate(century, {"date": [dec("1999.9")]}).value == 20
    assert evaluate(century, {"date": [year("0001")]}).value == 1
    refused(century, {"date": [year("1900")]}, "year 1900 ends in 00: century 19 counted strictly, 20 popularly")
    refused(century, {"date": [day("2000-06-01")]}, "year 2000 ends in 00")
    refused(century, {"date": [year("0000")]}, "before year 1")


def test_decade(rule):
    decade = rule("decade")
    assert evaluate(decade, {"date": [day("1912-05-03")]}).value == 1910
    assert evaluate(decade, {"date": [year("1910")]}).value == 1910
    nine = evaluate(decade, {"date": [typed("2009", "integer")]})
    assert nine.value == 2000 and nine.steps == ("decade = 2009 - 9 = 2000",) and nine.branch == "one"
    assert evaluate(decade, {"date": [dec("1919.99")]}).value == 1910
    assert evaluate(decade, {"date": [year("0000")]}).value == 0
    refused(decade, {"date": [year("-0005")]}, "before year 0")


def test_leap_year(rule):
    leap = rule("leap")
    cases = {"2000": True, "1900": False, "2024": True, "2023": False, "1600": True, "1583": False}
    for text, expected in cases.items():
        outcome = evaluate(leap, {"date": [year(text)]})
        assert outcome.value is expected and outcome.branch == ("yes" if expected else "no")
    assert evaluate(leap, {"date": [year("1900")]}).steps == ("1900 mod 4 = 0, mod 100 = 0, mod 400 = 300 -> false",)
    assert evaluate(leap, {"date": [day("2024-02-29")]}).value is True
    refused(leap, {"date": [year("1582")]}, "before 1583")


# ------------------------------------------------------------------------------ conversion
def test_unit_conversion(rule):
    # 1.80 / 0.3048: 0.3048 x 5.9 = 1.79832, 0.00168 / 0.3048 = 0.0055..., so 5.9055... -> 5.91
    feet = evaluate(rule("feet"), {"amount": [dec("1.80")]})
    assert str(feet.value) == "5.91" and feet.unit == "ft" and feet.kind is RuleKind.conversion
    assert feet.steps == ("1.8 / 0.3048 = 5.905511...", "round half-up to 2 places: 5.905511... -> 5.91")
    # 0 °C -> 0 x 1.8 + 32 = 32 °F; 100 -> 212; 37 -> 98.6; -40 -> -40
    fahrenheit = evaluate(rule("fahrenheit"), {"amount": [dec("0")]})
    assert fahrenheit.value == 32 and fahrenheit.steps == ("0 x 1.8 + 32 = 32",) and fahrenheit.branch == "one"
    temperatures = {"100": "212", "37": "98.6", "-40": "-40"}
    assert {t: str(evaluate(rule("fahrenheit"), {"amount": [dec(t)]}).value) for t in temperatures} == temperatures
    # 300 K -> 300 x 1 - 273.15 = 26.85 °C
    celsius = evaluate(rule("celsius"), {"amount": [dec("300")]})
    assert celsius.value == Decimal("26.85") and celsius.steps == ("300 x 1 - 273.15 = 26.85",)
    # 10 km / 1.609344 = 6.2137... -> 6.2 mi; 1.609344 km -> exactly 1.0
    assert str(evaluate(rule("miles"), {"amount": [dec("10")]}).value) == "6.2"
    exact = evaluate(rule("miles"), {"amount": [dec("1.609344")]})
    assert str(exact.value) == "1.0" and exact.steps == ("1.609344 / 1.609344 = 1",)
    # 1 / 8 = 0.125 exactly -> 0.13 at two places (half-up)
    eighths = rule("feet").model_copy(update={"divisor": Decimal(8)})
    assert str(evaluate(eighths, {"amount": [dec("1")]}).value) == "0.13"
    # divisor and offset: 1 / 8 + 0.005 = 0.13 exactly, no rounding needed
    shifted = eighths.model_copy(update={"offset": Decimal("0.005")})
    assert str(evaluate(shifted, {"amount": [dec("1")]}).value) == "0.13"
    refused(rule("feet"), {"amount": [day("2024-01-01")]}, "is not a number")


# ------------------------------------------------------------------------------ sets
def iri(local: str) -> ox.NamedNode:
    return ox.NamedNode(V + local)


def test_count(rule):
    languages = rule("languages")
    three = evaluate(languages, {"member": [iri("en"), iri("ru"), iri("fr")]})
    assert three.value == 3 and three.branch == "one" and three.kind is RuleKind.aggregate
    assert three.inputs == {"member": (f"<{V}en>", f"<{V}ru>", f"<{V}fr>")}
    assert three.steps == (f"count(<{V}en>, <{V}ru>, <{V}fr>) = 3",)
    # by value: 1 and 1.0 are one number, true and "1"^^xsd:boolean one boolean; the string "1" is not a number
    assert evaluate(languages, {"member": [typed("1", "integer"), dec("1.0")]}).value == 1
    assert evaluate(languages, {"member": [ox.Literal(True), typed("1", "boolean")]}).value == 1
    assert evaluate(languages, {"member": [ox.Literal("1"), typed("1", "integer")]}).value == 2
    assert evaluate(languages, {"member": [iri("en")]}).value == 1
    refused(languages, {"member": []}, "missing a value for role 'member'")


def test_total_and_maximum(rule):
    # 1.5 + 2.25 + 3 = 6.75
    total = evaluate(rule("total"), {"member": [dec("1.5"), dec("2.25"), typed("3", "integer")]})
    assert total.value == Decimal("6.75") and total.steps == ("total = 1.5 + 2.25 + 3 = 6.75",)
    assert total.inputs == {"member": (Decimal("1.5"), Decimal("2.25"), Decimal("3"))} and total.branch == "one"
    # 6.75 -> 6.8 at one place
    rounded = rule("total").model_copy(update={"rounding": 1})
    assert str(evaluate(rounded, {"member": [dec("1.5"), dec("2.25"), dec("3")]}).value) == "6.8"
    assert evaluate(rule("total"), {"member": [dec("-2"), dec("2")]}).value == 0
    highest = evaluate(rule("highest"), {"member": [dec("3"), dec("7.5"), dec("-2")]})
    assert highest.value == Decimal("7.5") and highest.steps == ("max(3, 7.5, -2) = 7.5",)
    assert evaluate(rule("highest"), {"member": [dec("-3"), dec("-1")]}).value == Decimal("-1")
    assert evaluate(rule("highest"), {"member": [typed("1e3", "double"), dec("999.99")]}).value == 1000
    refused(rule("highest"), {"member": [dec("3"), ox.Literal("seven")]}, "value \"seven\" is not a number")


def test_earliest(rule):
    first = rule("first")
    dates = evaluate(first, {"member": [day("1999-03-31"), day("1977-05-25"), day("1980-05-21")]})
    assert dates.value == dt.date(1977, 5, 25) and dates.branch == "one"
    assert dates.steps == ("min(1999-03-31, 1977-05-25, 1980-05-21) = 1977-05-25",)
    # one year among the members: every member is read as its year
    years = evaluate(first, {"member": [day("1977-05-25"), year("1978"), dec("1976.5")]})
    assert years.value == 1976 and type(years.value) is int
    assert years.inputs == {"member": (1977, 1978, 1976)}
    # same year at year precision: 1912 whether 1912-01-01 or 1912.66666667
    assert evaluate(first, {"member": [day("1912-01-01"), dec("1912.66666667")]}).value == 1912
    refused(first, {"member": [day("1977-05-25"), ox.Literal("25/05/1978")]}, "is not a date or a year")  # not ISO


def test_several_values_need_an_aggregate(rule):
    refused(rule("density"), {"numerator": [dec("1"), dec("2")], "denominator": [dec("1")]},
            "role 'numerator' has 2 values but its input is not kgs:Sum")
    plain_input = rule("languages").inputs[0].model_copy(update={"aggregate": None})
    single = rule("languages").model_copy(update={"inputs": (plain_input,)})
    refused(single, {"member": [iri("en"), iri("ru")]}, "role 'member' has 2 values but its input is not kgs:All")
    refused(rule("century"), {"date": [year("1912"), year("1913")]}, "role 'date' has 2 values")


def test_documented_library_examples_evaluate(tmp_path):
    # the rule library examples of docs/vocabulary.md give what their comments say
    doc = (ROOT / "docs" / "vocabulary.md").read_text(encoding="utf-8")
    path = tmp_path / "example.ttl"
    path.write_text(doc.split("```turtle\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    rules = load_rules(KnowledgeGraph.load(path))
    demo = "https://kgsynth.example/demo/"
    assert evaluate(rules[demo + "rule-birth-century"], {"date": [day("1912-05-03")]}).value == 20
    assert str(evaluate(rules[demo + "rule-height-feet"], {"amount": [dec("1.80")]}).value) == "5.91"
    assert evaluate(rules[demo + "rule-language-count"], {"member": [iri("en"), iri("ru")]}).value == 2


def test_outcomes_serialise(rule):
    outcome = evaluate(rule("first"), {"member": [day("1977-05-25"), year("1978")]})
    assert outcome.model_dump(mode="json")["inputs"] == {"member": [1977, 1978]}
    outcome = evaluate(rule("first"), {"member": [day("1977-05-25")]})
    assert outcome.model_dump(mode="json")["inputs"] == {"member": ["1977-05-25"]}


# ------------------------------------------------------------------------------ properties
# Independent implementations: Fraction arithmetic with a hand-written half-up, dateutil's
# relativedelta, day counting from a known Monday, the leap-year rule written out.
FAST = settings(max_examples=150, deadline=None)


def half_up(value: Fraction, places: int) -> Decimal:
    scaled = abs(value) * 10**places
    whole = int(scaled + Fraction(1, 2))  # floor of a positive number: half goes up
    return Decimal(f"{'-' if value < 0 else ''}{whole}E-{places}")  # no context: never rounded


def same_decimal(got: Decimal, expected: Decimal, places: int) -> bool:
    return got == expected and got.as_tuple().exponent == -places


def text(number: Decimal) -> str:
    return format(number, "f")


decimals = st.builds(
    lambda digits, places: Decimal(digits).scaleb(-places),
    st.integers(min_value=-(10**18), max_value=10**18), st.integers(min_value=0, max_value=12),
)
positive = st.builds(
    lambda digits, places: Decimal(digits).scaleb(-places),
    st.integers(min_value=1, max_value=10**12), st.integers(min_value=0, max_value=9),
).filter(lambda d: d <= 10**15)
roundings = st.integers(min_value=0, max_value=10)


@FAST
@given(numerator=decimals, denominator=decimals, factor=st.none() | positive, places=roundings)
@example(numerator=Decimal(1), denominator=Decimal(8), factor=None, places=2)
@example(numerator=Decimal(10**55 + 1), denominator=Decimal(3), factor=None, places=10)  # past 60 digits
def test_ratio_property(rule, numerator, denominator, factor, places):
    ratio = rule("density").model_copy(update={"factor": factor, "rounding": places})
    values = {"numerator": [dec(text(numerator))], "denominator": [dec(text(denominator))]}
    if denominator == 0:
        refused(ratio, values, "denominator is 0")
        return
    expected = half_up(Fraction(numerator) / Fraction(denominator) * Fraction(factor or 1), places)
    assert same_decimal(evaluate(ratio, values).value, expected, places)


@FAST
@given(start=decimals, end=decimals, places=roundings)
@example(start=Decimal(8), end=Decimal(9), places=0)
def test_percent_change_and_difference_property(rule, start, end, places):
    values = {"from": [dec(text(start))], "to": [dec(text(end))]}
    difference = evaluate(rule("growth-rounded").model_copy(update={"rounding": places}), values)
    assert same_decimal(difference.value, half_up(Fraction(end) - Fraction(start), places), places)
    change = rule("change").model_copy(update={"rounding": places})
    if start == 0:
        refused(change, values, "'from' is 0")
        return
    expected = half_up((Fraction(end) - Fraction(start)) / Fraction(start) * 100, places)
    assert same_decimal(evaluate(change, values).value, expected, places)


@FAST
@given(amount=decimals, factor=st.none() | positive, divisor=st.none() | positive,
       offset=st.none() | decimals.filter(lambda d: abs(d) <= 10**15), places=st.none() | roundings)
@example(amount=Decimal("1.80"), factor=None, divisor=Decimal("0.3048"), offset=None, places=2)
@example(amount=Decimal(1), factor=None, divisor=Decimal(8), offset=Decimal("-0.0001"), places=3)
def test_unit_conversion_property(rule, amount, factor, divisor, offset, places):
    if divisor is not None and places is None:
        places = 4  # the vocabulary requires a rounding with a divisor
    update = {"factor": factor, "divisor": divisor, "offset": offset, "rounding": places}
    conversion = rule("feet").model_copy(update=update)
    exact = Fraction(amount) * Fraction(factor or 1) / Fraction(divisor or 1) + Fraction(offset or 0)
    value = evaluate(conversion, {"amount": [dec(text(amount))]}).value
    if places is None:
        assert Fraction(value) == exact
    else:
        assert same_decimal(value, half_up(exact, places), places)


dates = st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31))
# 29 February of a leap year 4n: not a century year (n % 25), or one divisible by 400 (n % 100 == 0)
leaplings = st.integers(min_value=1, max_value=2499).filter(lambda n: n % 25 or n % 100 == 0).map(
    lambda n: dt.date(4 * n, 2, 29))


def completed_years(start: dt.date, end: dt.date) -> int | None:
    """relativedelta's years, or None where the spec refuses (29 February, a common end year,
    end on 28 February or 1 March: relativedelta itself picks 28 February)."""
    if (start.month, start.day) == (2, 29) and (end.month, end.day) in ((2, 28), (3, 1)) and not (
            end.year % 4 == 0 and (end.year % 100 != 0 or end.year % 400 == 0)):
        return None
    return relativedelta(end, start).years


@FAST
@given(start=dates | leaplings, end=dates, near=st.integers(min_value=-3, max_value=3))
@example(start=dt.date(2000, 2, 29), end=dt.date(2001, 2, 28), near=0)
@example(start=dt.date(2000, 2, 29), end=dt.date(2001, 3, 1), near=0)
def test_years_between_dates_property(rule, start, end, near):
    if near and start.year <= 9990:  # often land near an anniversary (for 29 February, near 1 March)
        later = start.year + abs(near) * 3
        anniversary = start.replace(year=later) if (start.month, start.day) != (2, 29) else dt.date(later, 3, 1)
        end = anniversary + dt.timedelta(days=near)
    values = {"start": [day(start.isoformat())], "end": [day(end.isoformat())]}
    if end < start:
        refused(rule("age-at-death"), values, "is before start")
        return
    expected = completed_years(start, end)
    if expected is None:
        refused(rule("age-at-death"), values, "no single answer")
        return
    outcome = evaluate(rule("age-at-death"), values)
    assert outcome.value == expected
    assert outcome.boundary == (end != start and (end.month, end.day) == (start.month, start.day))


def year_term(when: int | dt.date, form: int) -> ox.Literal:
    """A year (or date) written in one of the ways a graph stores it."""
    if isinstance(when, dt.date):
        return day(when.isoformat()) if form % 2 else typed(f"{when.isoformat()}T12:00:00", "dateTime")
    forms = [year(f"{when:04d}"), typed(str(when), "integer"), dec(f"{when}.{form}"), typed(f"{when}.5E0", "double")]
    return forms[form % 4]


years = st.integers(min_value=1, max_value=9999)


@FAST
@given(start=years | dates, end=years, forms=st.tuples(st.integers(0, 7), st.integers(0, 7)))
def test_years_between_years_property(rule, start, end, forms):
    values = {"start": [year_term(start, forms[0])], "end": [year_term(end, forms[1])]}
    first = start.year if isinstance(start, dt.date) else start
    if end < first:
        refused(rule("age-at-death"), values, "is before start year")
        return
    outcome = evaluate(rule("age-at-death"), values)
    assert outcome.value == end - first and outcome.inputs == {"start": first, "end": end}


@FAST
@given(start=dates, months=st.integers(min_value=0, max_value=1200), days=st.integers(min_value=0, max_value=36600))
@example(start=dt.date(2024, 1, 31), months=1, days=0)
def test_date_after_property(rule, start, months, days):
    values = {"start": [day(start.isoformat())]}
    by_months = rule("due-next-month").model_copy(update={"months": months})
    try:
        later = start + relativedelta(months=months)
    except ValueError:  # past year 9999
        later = None
    if later is None:
        refused(by_months, values, "is not a representable date")
    elif later.day != start.day:  # relativedelta clips 31 January + 1 month to 29 February
        refused(by_months, values, "has no day")
    else:
        assert evaluate(by_months, values).value == later
    by_days = rule("due-in-30-days").model_copy(update={"days": days})
    if start.toordinal() + days > dt.date.max.toordinal():
        refused(by_days, values, "is not a representable date")
    else:
        assert evaluate(by_days, values).value == dt.date.fromordinal(start.toordinal() + days)


MONDAY = dt.date(2024, 1, 1)
NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@FAST
@given(when=dates)
def test_day_of_week_property(rule, when):
    values = {"date": [day(when.isoformat())]}
    if when < dt.date(1583, 1, 1):
        refused(rule("weekday"), values, "before 1583")
        return
    expected = (when.toordinal() - MONDAY.toordinal()) % 7 + 1
    outcome = evaluate(rule("weekday"), values)
    assert outcome.value == expected and outcome.branch == NAMES[expected - 1]


@FAST
@given(when=st.integers(min_value=-50, max_value=9999) | dates, form=st.integers(0, 7))
@example(when=1900, form=0)
@example(when=2000, form=2)
def test_calendar_years_property(rule, when, form):
    values = {"date": [year_term(when, form) if isinstance(when, dt.date) or when >= 0 else year(f"-{-when:04d}")]}
    value = when.year if isinstance(when, dt.date) else when
    # century: ceil(year / 100), refused for 00 years and before year 1
    if value < 1 or value % 100 == 0:
        refused(rule("century"), values, "before year 1" if value < 1 else "ends in 00")
    else:
        century = evaluate(rule("century"), values)
        assert century.value == -(-value // 100) and century.branch == f"century {-(-value // 100)}"
    if value < 0:
        refused(rule("decade"), values, "before year 0")
    else:
        assert evaluate(rule("decade"), values).value == int(str(value)[:-1] or "0") * 10
    if value < 1583:
        refused(rule("leap"), values, "before 1583")
    else:
        leap = value % 400 == 0 or (value % 4 == 0 and value % 100 != 0)
        assert evaluate(rule("leap"), values).value is leap


numbers = st.lists(decimals, min_size=1, max_size=8)


@FAST
@given(members=numbers, places=st.none() | roundings)
def test_total_and_maximum_property(rule, members, places):
    values = {"member": [dec(text(m)) if m != m.to_integral_value() else typed(text(m), "integer") for m in members]}
    total = evaluate(rule("total").model_copy(update={"rounding": places}), values).value
    highest = evaluate(rule("highest").model_copy(update={"rounding": places}), values).value
    fractions = [Fraction(m) for m in members]
    if places is None:
        assert Fraction(total) == sum(fractions) and Fraction(highest) == max(fractions)
    else:
        assert same_decimal(total, half_up(sum(fractions), places), places)
        assert same_decimal(highest, half_up(max(fractions), places), places)


member_terms = st.one_of(
    st.sampled_from(["a", "b", "c"]).map(lambda name: ("iri", name)),
    st.integers(min_value=-3, max_value=3).flatmap(
        lambda n: st.sampled_from([("integer", str(n)), ("decimal", f"{n}.0"), ("decimal", f"{n}.00"),
                                   ("double", f"{n}E0")])),
    st.sampled_from(["x", "1"]).map(lambda s: ("string", s)),
)


@FAST
@given(members=st.lists(member_terms, min_size=1, max_size=10))
def test_count_property(rule, members):
    terms = [iri(v) if kind == "iri" else ox.Literal(v) if kind == "string" else typed(v, kind) for kind, v in members]
    meanings = {(kind, v) if kind in ("iri", "string") else ("number", Fraction(v.removesuffix("E0")))
                for kind, v in members}
    assert evaluate(rule("languages"), {"member": terms}).value == len(meanings)


@FAST
@given(members=st.lists(st.tuples(years | dates, st.integers(0, 7)), min_size=1, max_size=6))
def test_earliest_property(rule, members):
    values = {"member": [year_term(when, form) for when, form in members]}
    outcome = evaluate(rule("first"), values)
    whens = [when for when, _ in members]
    if all(isinstance(w, dt.date) for w in whens):
        assert outcome.value == min(whens) and type(outcome.value) is dt.date
    else:
        assert outcome.value == min(w.year if isinstance(w, dt.date) else w for w in whens)
        assert type(outcome.value) is int
