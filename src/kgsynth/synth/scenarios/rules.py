"""The rule engine: the one place that evaluates a ``kgs:Rule`` on an entity's facts.

Gold answers of rule-application questions come from here, never from an LLM, so the
arithmetic is exact: amounts are :class:`~decimal.Decimal` read from the literal's lexical
form (never ``float``), computed in a context wide enough that ``+``, ``-`` and ``x`` never
round, and rounded only where the rule declares ``kgs:rounding`` (half-up). The formulas
follow the table of operations in ``docs/vocabulary.md``.
"""

from __future__ import annotations

import calendar
import datetime as dt
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_DOWN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    Inexact,
    InvalidOperation,
    localcontext,
)
from functools import lru_cache
from typing import TYPE_CHECKING, NoReturn

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict

from kgsynth.errors import KgsynthError
from kgsynth.kg._terms import (
    DATE_TEXT,
    NUMERIC_TYPES,
    YEAR_TEXT,
    Term,
    date_or_year,
    literal_type,
    local_name,
    reads_from_text,
    text_matches,
    to_python,
)
from kgsynth.kg.vocab import XSD, Bracket, Comparison, Operation, Rule, RuleKind

if TYPE_CHECKING:
    from kgsynth.queries import Subgraph

__all__ = ["RuleEvaluationError", "RuleOutcome", "check_rules", "evaluate", "evaluate_subgraph", "fixed_point", "plain", "rule_numbers"]

# Wide enough that addition, subtraction and multiplication of finite decimals are exact.
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=ROUND_HALF_UP)
# A quotient keeps at least this many significant digits (more when the rounding place is further).
_DIVISION_DIGITS = 60
_GREGORIAN = 1583  # the first full year of the Gregorian calendar
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SYMBOLS = {
    Comparison.greater_than: ">",
    Comparison.greater_or_equal: ">=",
    Comparison.less_than: "<",
    Comparison.less_or_equal: "<=",
}
_COMPARE: dict[Comparison, Callable[[Decimal, Decimal], bool]] = {
    Comparison.greater_than: operator.gt,
    Comparison.greater_or_equal: operator.ge,
    Comparison.less_than: operator.lt,
    Comparison.less_or_equal: operator.le,
}

Value = Decimal | bool | dt.date | int | str
Member = Decimal | dt.date | int | str
InputValue = Member | tuple[Member, ...]  # a tuple: the members of a kgs:All input


class RuleEvaluationError(KgsynthError):
    """A rule cannot be evaluated on the given facts (missing, extra or ill-typed values)."""


class RuleOutcome(BaseModel):
    """The gold value of a rule on one entity, with what it was computed from.

    Attributes:
        value: money/number as Decimal, yes/no as bool, days, years, a count, a weekday
            (1 = Monday), a century or a decade as int, a date as date, a class as the
            class IRI.
        inputs: the resolved value per role actually used (amount after summing, the
            limit/threshold, start, end, the condition as an N-Triples string); a year
            input read at year precision is an int, a day-precise one a date; a kgs:All
            input is the tuple of its members (N-Triples strings for kgs:Count).
        rate: the rate applied (percent rules; the matched case's or the default rate).
        steps: a short, language-neutral derivation.
        boundary: an input sits exactly on the rule's edge (an amount equal to the
            threshold or a bracket's lower bound, a day count equal to the limit), where
            ">" and ">=" give different answers.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: Value
    operation: Operation
    kind: RuleKind
    unit: str | None
    inputs: dict[str, InputValue]
    rate: Decimal | None = None
    steps: tuple[str, ...]
    boundary: bool = False

    @property
    def branch(self) -> str:
        """Which way the rule went, for balancing answers: yes / no, the class, the case's
        rate, the weekday, the century, or zero / non-zero; a deadline and the operations
        that are not conditional (a ratio, a count...) have one way."""
        if isinstance(self.value, bool):
            return "yes" if self.value else "no"
        if self.operation is Operation.bracket_class:
            return local_name(str(self.value))
        if self.operation is Operation.case_rate:
            return f"rate {fixed_point(plain(self.rate))}"
        if self.operation is Operation.day_of_week:
            return _WEEKDAYS[self.value - 1]
        if self.operation is Operation.century:
            return f"century {self.value}"
        if self.operation in _ONE_WAY:
            return "one"
        if isinstance(self.value, Decimal | int):
            return "zero" if self.value == 0 else "non-zero"
        return "one"


# ------------------------------------------------------------------------------ entry points
def evaluate(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """Evaluate ``rule`` on an entity's facts: ``values`` maps a role to its terms.

    Several terms are allowed only for a ``kgs:Sum`` or ``kgs:All`` input; roles the
    operation does not read are ignored.

    Raises:
        RuleEvaluationError: a needed role is missing, has several values without
            ``kgs:Sum``/``kgs:All`` or a value of the wrong type, or the rule has no
            answer for it (a zero denominator, 31 January + 1 month...).
    """
    with localcontext(_EXACT):
        return _OPERATIONS[rule.operation](rule, values)


def evaluate_subgraph(rule: Rule, subgraph: Subgraph) -> RuleOutcome:
    """Evaluate ``rule`` on a rule_application subgraph, its facts grouped by input role."""
    if subgraph.rule is not None and subgraph.rule.value != rule.iri:
        _fail(rule, f"the subgraph is for rule <{subgraph.rule.value}>")
    values: dict[str, list[Term]] = {}
    for fact in subgraph.facts:
        if fact.role is not None:
            values.setdefault(fact.role, []).append(fact.object.term())
    return evaluate(rule, values)


def _fail(rule: Rule, message: str) -> NoReturn:
    """Raise the one-line error every failure goes through, naming the rule."""
    raise RuleEvaluationError(f"rule <{rule.iri}>: {message}")


def _outcome(
    rule: Rule, value: Value, inputs: dict[str, InputValue], steps: list[str], rate: Decimal | None = None,
    boundary: bool = False,
) -> RuleOutcome:
    return RuleOutcome(
        value=value, operation=rule.operation, kind=rule.kind, unit=rule.unit,
        inputs=inputs, rate=rate, steps=tuple(steps), boundary=boundary,
    )


# ------------------------------------------------------------------------------ decimals
def plain(number: Decimal) -> Decimal:
    """``number`` without trailing zeros or a positive exponent: 15600, never 1.56E+4."""
    reduced = number.normalize(_EXACT)
    if reduced.as_tuple().exponent > 0:
        reduced = reduced.quantize(Decimal(1), context=_EXACT)
    return reduced if reduced else Decimal(0)  # also turns -0 into 0


def fixed_point(number: Decimal) -> str:
    """Fixed-point text of a Decimal, never scientific notation (for the steps)."""
    return format(number, "f")


def _round(rule: Rule, exact: Decimal, steps: list[str]) -> Decimal:
    """Apply the rule's declared rounding (half-up), or keep the exact value plain."""
    value = plain(exact)
    if rule.rounding is None:
        return value
    rounded = _half_up(rule, exact)
    if rounded != value:
        steps.append(f"round half-up to {rule.rounding} places: {fixed_point(value)} -> {fixed_point(rounded)}")
    return rounded


def _half_up(rule: Rule, number: Decimal) -> Decimal:
    """``number`` rounded half-up to the rule's places (which must be set)."""
    rounded = number.quantize(Decimal(1).scaleb(-rule.rounding), rounding=ROUND_HALF_UP, context=_EXACT)
    if rule.rounding < 0:  # to tens, hundreds...: keep the plain integer form
        rounded = rounded.quantize(Decimal(1), context=_EXACT)
    return rounded + 0 if not rounded else rounded  # -0.00 -> 0.00


def _divide(rule: Rule, dividend: Decimal, divisor: Decimal, text: str, steps: list[str]) -> Decimal:
    """``dividend / divisor`` (``text``) rounded half-up to the rule's places, exactly.

    The quotient is cut toward zero well past the rounding place, so a cut quotient is on
    the same side of every half-way point as the true one: rounding it gives the same answer.
    """
    if rule.rounding is None:
        _fail(rule, f"kgs:{rule.operation.value} divides, so it needs kgs:rounding")
    digits = max(_DIVISION_DIGITS, dividend.adjusted() - divisor.adjusted() + rule.rounding + 5)
    context = Context(prec=digits, rounding=ROUND_DOWN, Emax=MAX_EMAX, Emin=MIN_EMIN)
    quotient = context.divide(dividend, divisor)
    if not context.flags[Inexact]:
        steps.append(f"{text} = {fixed_point(plain(quotient))}")
        return _round(rule, quotient, steps)
    cut = quotient.quantize(Decimal(1).scaleb(-max(rule.rounding, 0) - 4), rounding=ROUND_DOWN, context=_EXACT)
    shown = f"{fixed_point(cut)}..."
    rounded = _half_up(rule, quotient)
    steps.append(f"{text} = {shown}")
    steps.append(f"round half-up to {rule.rounding} places: {shown} -> {fixed_point(rounded)}")
    return rounded


# ------------------------------------------------------------------------------ reading values
def _terms(rule: Rule, values: Mapping[str, Sequence[Term]], role: str) -> list[Term]:
    """The terms of a role, checking that a role without kgs:Sum or kgs:All has exactly one."""
    terms = list(values.get(role, ()))
    if not terms:
        _fail(rule, f"missing a value for role {role!r}")
    several = any(i.aggregate is not None for i in rule.inputs if i.role == role)
    if len(terms) > 1 and not several:
        expected = "kgs:All" if role == "member" else "kgs:Sum"
        _fail(rule, f"role {role!r} has {len(terms)} values but its input is not {expected}")
    return terms


def _single(rule: Rule, values: Mapping[str, Sequence[Term]], role: str) -> Term:
    """The one term of a role that is never added up (a date, a year)."""
    terms = _terms(rule, values, role)
    if len(terms) > 1:
        _fail(rule, f"role {role!r} has {len(terms)} values")
    return terms[0]


def _decimal(rule: Rule, role: str, term: Term) -> Decimal:
    """A numeric literal as an exact Decimal from its lexical form (xsd:double too)."""
    if isinstance(term, ox.Literal) and term.datatype.value in NUMERIC_TYPES:
        try:
            number = Decimal(term.value.strip())
        except InvalidOperation:
            number = None
        if number is not None and number.is_finite():
            return number
    _fail(rule, f"role {role!r} value {term} is not a number")


def _number(rule: Rule, values: Mapping[str, Sequence[Term]], role: str, steps: list[str]) -> Decimal:
    """A numeric role's value; a kgs:Sum input's values are added (shown as a step)."""
    terms = _terms(rule, values, role)
    numbers = [_decimal(rule, role, t) for t in terms]
    total = plain(sum(numbers, Decimal(0)))
    if any(i.sum_values for i in rule.inputs if i.role == role):
        added = " + ".join(fixed_point(plain(n)) for n in numbers)
        steps.append(f"{role} = {added} = {fixed_point(total)}" if len(numbers) > 1 else f"{role} = {added}")
    return total


def _date(rule: Rule, values: Mapping[str, Sequence[Term]], role: str) -> dt.date:
    """A date role's value: an xsd:date, the date part of an xsd:dateTime, or a date read
    from text (:func:`~kgsynth.kg._terms.date_or_year`)."""
    terms = _terms(rule, values, role)
    if len(terms) > 1:
        _fail(rule, f"date role {role!r} has {len(terms)} values")
    term = terms[0]
    day = date_or_year(term) if isinstance(term, ox.Literal) else None
    if not isinstance(day, dt.date):
        _fail(rule, f"role {role!r} value {term} is not an xsd:date or xsd:dateTime, nor an ISO date as text")
    return day


def _when(rule: Rule, role: str, term: Term) -> dt.date | int:
    """A date-or-year value (:func:`~kgsynth.kg._terms.date_or_year`), or the one-line error."""
    value = date_or_year(term) if isinstance(term, ox.Literal) else None
    if value is None:
        _fail(rule, f"role {role!r} value {term} is not a date or a year")
    return value


def _year(when: dt.date | int) -> int:
    return when.year if isinstance(when, dt.date) else when


def _limit(rule: Rule, values: Mapping[str, Sequence[Term]], inputs: dict, steps: list[str]) -> Decimal:
    """The limit/threshold: from a 'limit' or 'threshold' input, else kgs:threshold."""
    for role in ("limit", "threshold"):
        if any(i.role == role for i in rule.inputs):
            inputs[role] = _number(rule, values, role, steps)
            return inputs[role]
    if rule.threshold is None:
        _fail(rule, "no 'limit'/'threshold' input and no kgs:threshold")
    inputs["threshold"] = plain(rule.threshold)
    return inputs["threshold"]


# ------------------------------------------------------------------------------ operations
def _percent_of(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """amount x rate."""
    steps: list[str] = []
    amount = _number(rule, values, "amount", steps)
    rate = _rate(rule)
    return _outcome(rule, _times(rule, amount, rate, steps), {"amount": amount}, steps, rate)


def _percent_of_excess(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """max(0, amount - limit) x rate."""
    steps: list[str] = []
    inputs: dict[str, InputValue] = {"amount": _number(rule, values, "amount", steps)}
    limit = _limit(rule, values, inputs, steps)
    excess = plain(max(Decimal(0), inputs["amount"] - limit))
    steps.append(f"excess = max(0, {fixed_point(inputs['amount'])} - {fixed_point(limit)}) = {fixed_point(excess)}")
    rate = _rate(rule)
    return _outcome(rule, _times(rule, excess, rate, steps), inputs, steps, rate, boundary=inputs["amount"] == limit)


def _rate(rule: Rule) -> Decimal:
    if rule.rate is None:
        _fail(rule, f"kgs:{rule.operation.value} needs kgs:rate")
    return rule.rate


def _times(rule: Rule, amount: Decimal, rate: Decimal, steps: list[str]) -> Decimal:
    """amount x rate, exact, then the rule's rounding."""
    product = plain(amount * rate)
    steps.append(f"{fixed_point(amount)} x {fixed_point(rate)} = {fixed_point(product)}")
    return _round(rule, product, steps)


def _compare(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """amount <cmp> threshold -> yes/no."""
    if rule.comparison is None:
        _fail(rule, "a threshold rule needs kgs:comparison")
    steps: list[str] = []
    inputs: dict[str, InputValue] = {"amount": _number(rule, values, "amount", steps)}
    threshold = _limit(rule, values, inputs, steps)
    amount = inputs["amount"]
    result = _COMPARE[rule.comparison](amount, threshold)
    symbol = _SYMBOLS[rule.comparison]
    steps.append(f"{fixed_point(amount)} {symbol} {fixed_point(threshold)} = {str(result).lower()}")
    return _outcome(rule, result, inputs, steps, boundary=amount == threshold)


def _case_rate(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """amount x (rate of the case matching the condition, else kgs:defaultRate)."""
    steps: list[str] = []
    amount = _number(rule, values, "amount", steps)
    condition = _terms(rule, values, "condition")
    if len(condition) > 1:
        _fail(rule, f"role 'condition' has {len(condition)} values")
    rate = _case(rule, condition[0], steps)
    inputs: dict[str, InputValue] = {"amount": amount, "condition": str(condition[0])}
    return _outcome(rule, _times(rule, amount, rate, steps), inputs, steps, rate)


def _case(rule: Rule, condition: Term, steps: list[str]) -> Decimal:
    """The rate of the case whose ``when`` equals the condition by value, else the default."""
    key = _term_key(condition)
    rates = sorted({case.rate for case in rule.cases if _when_key(case.when) == key})
    if len(rates) > 1:
        _fail(rule, f"condition {condition} matches cases with different rates {[fixed_point(r) for r in rates]}")
    if rates:
        steps.append(f"condition = {condition} -> rate {fixed_point(rates[0])}")
        return rates[0]
    if rule.default_rate is None:
        _fail(rule, f"condition {condition} matches no kgs:case and there is no kgs:defaultRate")
    steps.append(f"condition = {condition} matches no case -> default rate {fixed_point(rule.default_rate)}")
    return rule.default_rate


def _term_key(term: Term) -> tuple[str, object]:
    """What a term means, for comparison by value: "1"^^xsd:boolean equals true, 1.0 equals 1."""
    if not isinstance(term, ox.Literal):
        return ("iri" if isinstance(term, ox.NamedNode) else "blank", term.value)
    if term.language:
        return ("@" + term.language.lower(), term.value)
    datatype = term.datatype.value
    if datatype in NUMERIC_TYPES:
        try:
            return ("number", Decimal(term.value.strip()))
        except InvalidOperation:
            return (datatype, term.value)
    if datatype == XSD + "boolean" and term.value.strip() in ("true", "false", "1", "0"):
        return ("boolean", term.value.strip() in ("true", "1"))
    return (datatype, to_python(term.value, datatype))


@lru_cache(maxsize=1024)
def _when_key(when: str) -> tuple[str, object]:
    """The value key of a case's ``when``, an N-Triples term as :class:`Case` stores it."""
    triple = f"<urn:kgsynth:s> <urn:kgsynth:p> {when} .".encode()
    try:
        (quad,) = ox.parse(triple, format=ox.RdfFormat.N_TRIPLES)
    except (SyntaxError, ValueError):
        return ("unparsed", when)
    return _term_key(quad.object)


def _within_days(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """(end - start) in days <= maxDays -> yes/no."""
    max_days = _max_days(rule)
    inputs, days, steps = _interval(rule, values)
    result = days <= max_days
    steps.append(f"{days} <= {max_days} = {str(result).lower()}")
    return _outcome(rule, result, inputs, steps, boundary=days == max_days)


def _days_between(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """(end - start) in days."""
    inputs, days, steps = _interval(rule, values)
    return _outcome(rule, days, inputs, steps)


def _interval(rule: Rule, values: Mapping[str, Sequence[Term]]) -> tuple[dict[str, InputValue], int, list[str]]:
    """Start, end and the days between them; an end before the start is an error."""
    start, end = _date(rule, values, "start"), _date(rule, values, "end")
    days = (end - start).days
    if days < 0:
        _fail(rule, f"end {end.isoformat()} is before start {start.isoformat()}")
    return {"start": start, "end": end}, days, [f"days = {end.isoformat()} - {start.isoformat()} = {days}"]


def _deadline(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """start + maxDays days -> a date."""
    max_days = _max_days(rule)
    start = _date(rule, values, "start")
    try:
        deadline = start + dt.timedelta(days=max_days)
    except OverflowError:
        _fail(rule, f"{start.isoformat()} + {max_days} days is not a representable date")
    step = f"{start.isoformat()} + {max_days} days = {deadline.isoformat()}"
    return _outcome(rule, deadline, {"start": start}, [step])


def _max_days(rule: Rule) -> int:
    if rule.max_days is None:
        _fail(rule, f"kgs:{rule.operation.value} needs kgs:maxDays")
    return rule.max_days


def _bracket_class(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The class of the bracket with lower <= amount < upper (a missing bound is open)."""
    steps: list[str] = []
    amount = _number(rule, values, "amount", steps)
    found = [b for b in rule.brackets if _contains(b, amount)]
    if not found:
        _fail(rule, f"no kgs:bracket contains the amount {fixed_point(amount)}")
    if len({b.class_iri for b in found}) > 1:
        _fail(rule, f"the amount {fixed_point(amount)} falls in {len(found)} overlapping kgs:bracket")
    steps.append(f"{fixed_point(amount)} in {_span(found[0])} -> <{found[0].class_iri}>")
    return _outcome(rule, found[0].class_iri, {"amount": amount}, steps, boundary=amount == found[0].lower)


def _contains(bracket: Bracket, amount: Decimal) -> bool:
    above = bracket.lower is None or bracket.lower <= amount
    return above and (bracket.upper is None or amount < bracket.upper)


def _span(bracket: Bracket) -> str:
    lower = "(-inf" if bracket.lower is None else f"[{fixed_point(plain(bracket.lower))}"
    upper = "+inf)" if bracket.upper is None else f"{fixed_point(plain(bracket.upper))})"
    return f"{lower}, {upper}"


# ------------------------------------------------------------------------------ quantities
def _ratio(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """numerator / denominator x factor, rounded; a zero denominator does not apply."""
    steps: list[str] = []
    numerator = _number(rule, values, "numerator", steps)
    denominator = _number(rule, values, "denominator", steps)
    if denominator == 0:
        _fail(rule, "the denominator is 0: the ratio does not apply")
    factor = rule.factor if rule.factor is not None else Decimal(1)
    text = f"ratio = {fixed_point(numerator)} / {fixed_point(denominator)}"
    if rule.factor is not None:
        text += f" x {fixed_point(plain(factor))}"
    value = _divide(rule, numerator * factor, denominator, text, steps)
    return _outcome(rule, value, {"numerator": numerator, "denominator": denominator}, steps)


def _difference(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """to - from (signed), rounded when the rule says so."""
    steps: list[str] = []
    start, end = _number(rule, values, "from", steps), _number(rule, values, "to", steps)
    difference = plain(end - start)
    steps.append(f"difference = {fixed_point(end)} - {fixed_point(start)} = {fixed_point(difference)}")
    return _outcome(rule, _round(rule, difference, steps), {"from": start, "to": end}, steps)


def _percent_change(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """(to - from) / from x 100, rounded; from = 0 does not apply."""
    steps: list[str] = []
    start, end = _number(rule, values, "from", steps), _number(rule, values, "to", steps)
    if start == 0:
        _fail(rule, "'from' is 0: a percent change from 0 does not apply")
    text = f"change = ({fixed_point(end)} - {fixed_point(start)}) / {fixed_point(start)} x 100"
    value = _divide(rule, (end - start) * 100, start, text, steps)
    return _outcome(rule, value, {"from": start, "to": end}, steps)


def _unit_conversion(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """amount x factor / divisor + offset (each optional), rounded when the rule says so."""
    steps: list[str] = []
    amount = _number(rule, values, "amount", steps)
    factor = rule.factor if rule.factor is not None else Decimal(1)
    offset = rule.offset if rule.offset is not None else Decimal(0)
    text = _conversion_text(rule, amount)
    if rule.divisor is None:
        exact = plain(amount * factor + offset)
        steps.append(f"{text} = {fixed_point(exact)}")
        value = _round(rule, exact, steps)
    else:  # one division of the exact numerator, so the rounding stays exact
        value = _divide(rule, amount * factor + offset * rule.divisor, rule.divisor, text, steps)
    return _outcome(rule, value, {"amount": amount}, steps)


def _conversion_text(rule: Rule, amount: Decimal) -> str:
    text = fixed_point(amount)
    if rule.factor is not None:
        text += f" x {fixed_point(plain(rule.factor))}"
    if rule.divisor is not None:
        text += f" / {fixed_point(plain(rule.divisor))}"
    if rule.offset is not None:
        sign = "-" if rule.offset < 0 else "+"
        text += f" {sign} {fixed_point(plain(abs(rule.offset)))}"
    return text


# ------------------------------------------------------------------------------ dates and years
def _years_between(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """Whole years from start to end: completed years between two dates, else end year - start year."""
    start, end = _when(rule, "start", _single(rule, values, "start")), _when(rule, "end", _single(rule, values, "end"))
    if isinstance(start, dt.date) and isinstance(end, dt.date):
        return _completed_years(rule, start, end)
    first, last = _year(start), _year(end)
    if last < first:
        _fail(rule, f"end year {last} is before start year {first}")
    return _outcome(rule, last - first, {"start": first, "end": last}, [f"years = {last} - {first} = {last - first}"])


def _completed_years(rule: Rule, start: dt.date, end: dt.date) -> RuleOutcome:
    """Completed years between two dates: the anniversary day counts as reached."""
    if end < start:
        _fail(rule, f"end {end.isoformat()} is before start {start.isoformat()}")
    leapling = (start.month, start.day) == (2, 29)
    if leapling and not calendar.isleap(end.year) and (end.month, end.day) in ((2, 28), (3, 1)):
        _fail(rule, f"start {start.isoformat()} has no anniversary in the common year {end.year} "
                    f"(28 February or 1 March by custom): no single answer for {end.isoformat()}")
    years = end.year - start.year
    steps = [f"years = {end.year} - {start.year} = {years}"]
    if (end.month, end.day) < (start.month, start.day):
        reached = f"{_month_day(end)} < {_month_day(start)}, the anniversary is not reached"
        steps.append(f"{reached}: {years} - 1 = {years - 1}")
        years -= 1
    boundary = (end.month, end.day) == (start.month, start.day) and end != start
    return _outcome(rule, years, {"start": start, "end": end}, steps, boundary=boundary)


def _month_day(day: dt.date) -> str:
    return f"{day.month:02d}-{day.day:02d}"


def _date_after(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """start + kgs:days days, or the same day kgs:months months later (which must exist)."""
    if (rule.days is None) == (rule.months is None):
        _fail(rule, "kgs:DateAfter needs exactly one of kgs:days or kgs:months")
    start = _date(rule, values, "start")
    if rule.days is not None:
        later, step = _add_days(rule, start, rule.days), f"{start.isoformat()} + {rule.days} days"
    else:
        later, step = _add_months(rule, start, rule.months), f"{start.isoformat()} + {rule.months} months"
    return _outcome(rule, later, {"start": start}, [f"{step} = {later.isoformat()}"])


def _add_days(rule: Rule, start: dt.date, days: int) -> dt.date:
    try:
        return start + dt.timedelta(days=days)
    except OverflowError:
        _fail(rule, f"{start.isoformat()} + {days} days is not a representable date")


def _add_months(rule: Rule, start: dt.date, months: int) -> dt.date:
    year, month = divmod(start.year * 12 + start.month - 1 + months, 12)
    month += 1
    if year > dt.MAXYEAR:
        _fail(rule, f"{start.isoformat()} + {months} months is not a representable date")
    if start.day > calendar.monthrange(year, month)[1]:
        _fail(rule, f"{start.isoformat()} + {months} months: {year:04d}-{month:02d} has no day {start.day}, "
                    "so there is no single answer")
    return dt.date(year, month, start.day)


def _day_of_week(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The ISO weekday (1 = Monday ... 7 = Sunday) of a Gregorian date."""
    day = _date(rule, values, "date")
    if day.year < _GREGORIAN:
        _fail(rule, f"{day.isoformat()} is before {_GREGORIAN}: the Gregorian weekday does not apply")
    weekday = day.isoweekday()
    return _outcome(rule, weekday, {"date": day}, [f"weekday({day.isoformat()}) = {weekday} (1 = Monday)"])


def _calendar_year(rule: Rule, values: Mapping[str, Sequence[Term]]) -> tuple[dict[str, InputValue], int, list[str]]:
    """The 'date' input (a date or a year) and its year, with a step when it was a date."""
    when = _when(rule, "date", _single(rule, values, "date"))
    year = _year(when)
    steps = [f"year({when.isoformat()}) = {year}"] if isinstance(when, dt.date) else []
    return {"date": when}, year, steps


def _century(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The century counted strictly (1901-2000 is the 20th); a year ending in 00 does not apply."""
    inputs, year, steps = _calendar_year(rule, values)
    if year < 1:
        _fail(rule, f"year {year} is before year 1: centuries count from year 1")
    if year % 100 == 0:
        _fail(rule, f"year {year} ends in 00: century {year // 100} counted strictly, "
                    f"{year // 100 + 1} popularly; no single answer")
    century = year // 100 + 1
    steps.append(f"century = {year} // 100 + 1 = {century}")
    return _outcome(rule, century, inputs, steps)


def _decade(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The first year of the decade: 1912 -> 1910."""
    inputs, year, steps = _calendar_year(rule, values)
    if year < 0:
        _fail(rule, f"year {year} is before year 0: the decade does not apply")
    decade = year - year % 10
    steps.append(f"decade = {year} - {year % 10} = {decade}")
    return _outcome(rule, decade, inputs, steps)


def _leap_year(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """Gregorian leap year: divisible by 4, and not by 100 unless by 400."""
    inputs, year, steps = _calendar_year(rule, values)
    if year < _GREGORIAN:
        _fail(rule, f"year {year} is before {_GREGORIAN}: the Gregorian rule does not apply")
    leap = calendar.isleap(year)
    steps.append(f"{year} mod 4 = {year % 4}, mod 100 = {year % 100}, mod 400 = {year % 400} -> {str(leap).lower()}")
    return _outcome(rule, leap, inputs, steps)


# ------------------------------------------------------------------------------ sets
def _count(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """How many different values (compared by value: 1.0 is 1) the member input has."""
    distinct: dict[tuple[str, object], Term] = {}
    for term in _terms(rule, values, "member"):
        distinct.setdefault(_count_key(term), term)
    members = tuple(str(t) for t in distinct.values())
    step = f"count({', '.join(members)}) = {len(members)}"
    return _outcome(rule, len(members), {"member": members}, [step])


def _count_key(term: Term) -> tuple[str, object]:
    key = _term_key(term)
    if key[0] == "number" and not key[1].is_finite():  # NaN never equals itself
        return (term.datatype.value, term.value)
    return key


def _numbers(rule: Rule, values: Mapping[str, Sequence[Term]]) -> tuple[Decimal, ...]:
    return tuple(plain(_decimal(rule, "member", t)) for t in _terms(rule, values, "member"))


def _total(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The sum of the members, rounded when the rule says so."""
    numbers = _numbers(rule, values)
    total = plain(sum(numbers, Decimal(0)))
    steps = [f"total = {' + '.join(fixed_point(n) for n in numbers)} = {fixed_point(total)}"]
    return _outcome(rule, _round(rule, total, steps), {"member": numbers}, steps)


def _maximum(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The largest member (in the rule's rounding format when it has one)."""
    numbers = _numbers(rule, values)
    largest = max(numbers)
    steps = [f"max({', '.join(fixed_point(n) for n in numbers)}) = {fixed_point(largest)}"]
    return _outcome(rule, _round(rule, largest, steps), {"member": numbers}, steps)


def _earliest(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """The earliest member: a date when all are dates, else a year."""
    whens = [_when(rule, "member", t) for t in _terms(rule, values, "member")]
    if all(isinstance(w, dt.date) for w in whens):
        members: tuple[dt.date | int, ...] = tuple(whens)
        shown = [w.isoformat() for w in whens]
    else:
        members = tuple(_year(w) for w in whens)
        shown = [str(y) for y in members]
    earliest = min(members)
    text = earliest.isoformat() if isinstance(earliest, dt.date) else str(earliest)
    return _outcome(rule, earliest, {"member": members}, [f"min({', '.join(shown)}) = {text}"])


# Operations that are not conditional: one branch (zero / non-zero would starve them).
_ONE_WAY = frozenset({
    Operation.ratio, Operation.difference, Operation.percent_change, Operation.unit_conversion,
    Operation.years_between, Operation.date_after, Operation.decade,
    Operation.count, Operation.total, Operation.maximum, Operation.earliest,
})

_OPERATIONS: dict[Operation, Callable[[Rule, Mapping[str, Sequence[Term]]], RuleOutcome]] = {
    Operation.percent_of: _percent_of,
    Operation.percent_of_excess: _percent_of_excess,
    Operation.compare: _compare,
    Operation.case_rate: _case_rate,
    Operation.within_days: _within_days,
    Operation.days_between: _days_between,
    Operation.deadline: _deadline,
    Operation.bracket_class: _bracket_class,
    Operation.ratio: _ratio,
    Operation.difference: _difference,
    Operation.percent_change: _percent_change,
    Operation.years_between: _years_between,
    Operation.date_after: _date_after,
    Operation.day_of_week: _day_of_week,
    Operation.century: _century,
    Operation.decade: _decade,
    Operation.leap_year: _leap_year,
    Operation.unit_conversion: _unit_conversion,
    Operation.count: _count,
    Operation.total: _total,
    Operation.maximum: _maximum,
    Operation.earliest: _earliest,
}


# ------------------------------------------------------------------------------ the rule's numbers
def rule_numbers(rule: Rule) -> set[Decimal]:
    """The numbers a statement of the rule would contain (rates as percentages and
    fractions, constant thresholds, day windows, bracket bounds); 0 and 1 are left out
    (a 100% rate is "1"). No dialogue of the rule's items may say them: the haystack keeps
    clear of them and the rule leakage filter looks for them."""
    rates = [r for r in (rule.rate, rule.default_rate, *(c.rate for c in rule.cases)) if r is not None]
    numbers = {r * 100 for r in rates} | set(rates)
    numbers |= {n for n in (rule.threshold, rule.max_days, rule.days, rule.months, rule.factor, rule.divisor, rule.offset)
                if n is not None}
    numbers |= {b for br in rule.brackets for b in (br.lower, br.upper) if b is not None}
    return {Decimal(n).normalize() for n in numbers} - {Decimal(0), Decimal(1)}


# ------------------------------------------------------------------------------ rules against a graph
_DATES = frozenset({XSD + "date", XSD + "dateTime"})
_NUMBERS = frozenset(NUMERIC_TYPES)
_YEARS = _DATES | {XSD + "gYear"} | _NUMBERS
_DAY_PRECISE = frozenset({Operation.day_of_week, Operation.date_after, Operation.days_between, Operation.within_days,
                          Operation.deadline})
_IRI = "urn:kgsynth:iri"
_LOOKED_AT = 100  # values whose text looks like a date, read to find one the engine reads
_DATATYPES = f"""SELECT ?datatype (COUNT(*) AS ?n) WHERE {{
  ?s ?relation ?o . BIND(IF(isLiteral(?o), {literal_type("o")}, <{_IRI}>) AS ?datatype)
}} GROUP BY ?datatype"""


def check_rules(kg, rules: Mapping[str, Rule], known_units: Iterable[str]) -> None:
    """Refuse, in one line naming the rule, a rule the graph cannot answer at all: an input
    relation (or kgs:via) no triple has, an input whose every value has the wrong type (a date
    rule on an order number; a kgs:via to literals), or a conversion between units nobody
    knows (``known_units``).

    Raises:
        RuleEvaluationError: the first such rule.
    """
    known = frozenset(known_units)
    for rule in rules.values():
        for unit in (rule.source_unit, rule.unit) if rule.operation is Operation.unit_conversion else ():
            if unit not in known:
                _fail(rule, f"unit {unit!r} is not one kgsynth knows ({', '.join(sorted(known))})")
        for rule_input in rule.inputs:
            _check_values(kg, rule, rule_input.role, rule_input.relation, _wanted_types(rule, rule_input.role))
            if rule_input.via is not None:
                _check_values(kg, rule, rule_input.role, rule_input.via, frozenset({_IRI}), "kgs:via relation")


def _check_values(kg, rule: Rule, role: str, relation: str, wanted: frozenset[str] | None, what: str = "relation") -> None:
    # one value of a wanted type is enough, and the engine stops at the first: the full count
    # of the relation's types (a scan of all its triples) runs only to say what is wrong
    if any(True for _ in kg.select(f"SELECT ?o WHERE {{ ?s <{relation}> ?o {_of_type(wanted)} }} LIMIT 1")):
        return
    found = {row[0].value: int(row[1].value) for row in kg.select(_DATATYPES.replace("?relation", f"<{relation}>"))}
    if not found:
        _fail(rule, f"its {role!r} {what} <{relation}> is in no triple of the graph")
    textual = [d for d in found if reads_from_text(d)]
    if wanted in (_DATES, _YEARS) and _reads_some_from_text(kg, relation, textual, wanted):
        return
    kinds = ", ".join(sorted(local_name(d) if d != _IRI else "IRIs" for d in found))
    _fail(rule, f"its {role!r} {what} <{relation}> has {kinds} values, not {_NAMES[wanted]}")


def _reads_some_from_text(kg, relation: str, datatypes: list[str], wanted: frozenset[str]) -> bool:
    """Whether the engine reads a date (or, for ``_YEARS``, a year) from the text of some value
    of these datatypes (strings, a misspelt date type): among the first that look like one."""
    if not datatypes:
        return False
    looks = text_matches("o", DATE_TEXT if wanted == _DATES else f"{DATE_TEXT}|{YEAR_TEXT}")
    types = ", ".join(f"<{d}>" for d in sorted(datatypes))
    query = (f"SELECT ?o WHERE {{ ?s <{relation}> ?o FILTER(isLiteral(?o)) BIND({literal_type('o')} AS ?datatype) "
             f"FILTER(?datatype IN ({types}) && {looks}) }} LIMIT {_LOOKED_AT}")
    read = (date_or_year(term) for (term,) in kg.select(query))
    return any(isinstance(value, dt.date) if wanted == _DATES else value is not None for value in read)


def _of_type(wanted: frozenset[str] | None) -> str:
    if wanted is None:
        return ""
    if wanted == {_IRI}:
        return "FILTER(isIRI(?o))"
    return f"FILTER(isLiteral(?o) && DATATYPE(?o) IN ({', '.join(f'<{d}>' for d in sorted(wanted))}))"


def _wanted_types(rule: Rule, role: str) -> frozenset[str] | None:
    """The datatypes a role's value may have (None: any value, as a condition or a counted member)."""
    if role == "condition" or (role == "member" and rule.operation is Operation.count):
        return None
    if role in ("start", "end", "date") or (role == "member" and rule.operation is Operation.earliest):
        return _DATES if rule.operation in _DAY_PRECISE else _YEARS
    return _NUMBERS


_NAMES = {_DATES: "dates", _YEARS: "dates or years", _NUMBERS: "numbers", frozenset({_IRI}): "IRIs (bridges)"}
