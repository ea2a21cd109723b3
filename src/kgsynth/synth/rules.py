"""The rule engine: the one place that evaluates a ``kgs:Rule`` on an entity's facts.

Gold answers of rule-application questions come from here, never from an LLM, so the
arithmetic is exact: amounts are :class:`~decimal.Decimal` read from the literal's lexical
form (never ``float``), computed in a context wide enough that ``+``, ``-`` and ``x`` never
round, and rounded only where the rule declares ``kgs:rounding`` (half-up). The formulas
follow the table of operations in ``docs/vocabulary.md``.
"""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext
from functools import lru_cache
from typing import TYPE_CHECKING, NoReturn

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict

from kgsynth.errors import KgsynthError
from kgsynth.kg._terms import NUMERIC_TYPES, Term, local_name, to_python
from kgsynth.kg.vocab import XSD, Bracket, Comparison, Operation, Rule, RuleKind

if TYPE_CHECKING:
    from kgsynth.queries import Subgraph

__all__ = ["RuleEvaluationError", "RuleOutcome", "evaluate", "evaluate_subgraph", "fixed_point", "plain"]

# Wide enough that addition, subtraction and multiplication of finite decimals are exact.
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=ROUND_HALF_UP)
_DATE = re.compile(r"(-?\d{4,}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})?")
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
InputValue = Decimal | dt.date | str


class RuleEvaluationError(KgsynthError):
    """A rule cannot be evaluated on the given facts (missing, extra or ill-typed values)."""


class RuleOutcome(BaseModel):
    """The gold value of a rule on one entity, with what it was computed from.

    Attributes:
        value: money/number as Decimal, yes/no as bool, days as int, a deadline as date,
            a class as the class IRI.
        inputs: the resolved value per role actually used (amount after summing, the
            limit/threshold, start, end, the condition as an N-Triples string).
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
        rate, or zero / non-zero; a deadline has one way."""
        if isinstance(self.value, bool):
            return "yes" if self.value else "no"
        if self.operation is Operation.bracket_class:
            return local_name(str(self.value))
        if self.operation is Operation.case_rate:
            return f"rate {fixed_point(plain(self.rate))}"
        if isinstance(self.value, Decimal | int):
            return "zero" if self.value == 0 else "non-zero"
        return "one"


# ------------------------------------------------------------------------------ entry points
def evaluate(rule: Rule, values: Mapping[str, Sequence[Term]]) -> RuleOutcome:
    """Evaluate ``rule`` on an entity's facts: ``values`` maps a role to its terms.

    Several terms are allowed only for a ``kgs:Sum`` input; roles the operation does not
    read are ignored.

    Raises:
        RuleEvaluationError: a needed role is missing, has several values without
            ``kgs:Sum`` or a value of the wrong type, or the rule has no answer for it.
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
    rounded = exact.quantize(Decimal(1).scaleb(-rule.rounding), rounding=ROUND_HALF_UP, context=_EXACT)
    if rule.rounding < 0:  # to tens, hundreds...: keep the plain integer form
        rounded = rounded.quantize(Decimal(1), context=_EXACT)
    rounded = rounded + 0 if not rounded else rounded  # -0.00 -> 0.00
    if rounded != value:
        steps.append(f"round half-up to {rule.rounding} places: {fixed_point(value)} -> {fixed_point(rounded)}")
    return rounded


# ------------------------------------------------------------------------------ reading values
def _terms(rule: Rule, values: Mapping[str, Sequence[Term]], role: str) -> list[Term]:
    """The terms of a role, checking that a role without kgs:Sum has exactly one."""
    terms = list(values.get(role, ()))
    if not terms:
        _fail(rule, f"missing a value for role {role!r}")
    summed = any(i.sum_values for i in rule.inputs if i.role == role)
    if len(terms) > 1 and not summed:
        _fail(rule, f"role {role!r} has {len(terms)} values but its input is not kgs:Sum")
    return terms


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
    """A date role's value: an xsd:date, or the date part of an xsd:dateTime."""
    terms = _terms(rule, values, role)
    if len(terms) > 1:
        _fail(rule, f"date role {role!r} has {len(terms)} values")
    term = terms[0]
    if isinstance(term, ox.Literal) and term.datatype.value in (XSD + "date", XSD + "dateTime"):
        day = _parse_date(term.value, term.datatype.value)
        if day is not None:
            return day
    _fail(rule, f"role {role!r} value {term} is not an xsd:date or xsd:dateTime")


def _parse_date(lexical: str, datatype: str) -> dt.date | None:
    """The calendar date as written (a timezone is not applied), or None if ill-typed."""
    if datatype == XSD + "dateTime":
        value = to_python(lexical, datatype)
        return value.date() if isinstance(value, dt.datetime) else None
    match = _DATE.fullmatch(lexical.strip())
    try:
        return dt.date.fromisoformat(match.group(1)) if match else None
    except ValueError:
        return None


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


_OPERATIONS: dict[Operation, Callable[[Rule, Mapping[str, Sequence[Term]]], RuleOutcome]] = {
    Operation.percent_of: _percent_of,
    Operation.percent_of_excess: _percent_of_excess,
    Operation.compare: _compare,
    Operation.case_rate: _case_rate,
    Operation.within_days: _within_days,
    Operation.days_between: _days_between,
    Operation.deadline: _deadline,
    Operation.bracket_class: _bracket_class,
}
