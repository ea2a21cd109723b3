"""Every rule-application gold agrees with an independent re-derivation from its source triples."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from decimal import Decimal

import pytest
import rdflib
from gold_checker import KGS, WEEKDAYS, class_label, demo_rules_graph, expected_gold

from kgsynth.formats.answers import AnswerFormat, canonical_gold, check_answer
from kgsynth.kg import load_rules
from kgsynth.queries import sample_subgraphs
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.scenarios.scenario import ScenarioBuilder

TEXT_FORMATS = (AnswerFormat.one_token, AnswerFormat.short_text)


@pytest.fixture(scope="module")
def rules_graph() -> rdflib.Graph:
    return demo_rules_graph()


@pytest.fixture(scope="module")
def rule_items(demo_kg):
    builder = ScenarioBuilder(demo_kg, load_rules(demo_kg))
    subgraphs = sample_subgraphs(demo_kg, "rule_application", limit=10_000, per_anchor=100)
    scenarios = [s for sg in subgraphs for s in builder.build(sg)]
    return [make_item(s, lang, DialogueSettings(), seed=0) for s in scenarios for lang in ("en", "ru")]


def checker_answer(item, rules_graph, triples=None):
    """The checker's answer to ``item`` as text, rendered through the formats module."""
    triples = list(item.metadata.source_triples if triples is None else triples)
    rule = item.metadata.rule_iri
    value = expected_gold(rule, triples, rules_graph)
    if item.answer_format in TEXT_FORMATS and isinstance(value, int):  # a day of the week, 1 = Monday
        value = WEEKDAYS[item.language][value - 1]
    elif item.answer_format in TEXT_FORMATS:
        value = class_label(value, item.language, rules_graph)
    return canonical_gold(value, item.answer_format, item.constraints)


def agrees(item, answer: str) -> bool:
    return check_answer(answer, item.answer_format, item.gold, item.constraints).correct


def test_every_rule_gold_matches_the_independent_checker(rule_items, rules_graph):
    disagreements, checked = [], Counter()
    for item in rule_items:
        answer = checker_answer(item, rules_graph)
        checked[item.metadata.rule_iri] += 1
        if not agrees(item, answer):
            disagreements.append((item.metadata.rule_iri, item.answer_format.value, item.gold, answer,
                                  item.metadata.source_triples))
    print(f"\ngold checker: {sum(checked.values())} items, {len(checked)} rules")
    assert disagreements == [], f"{len(disagreements)} disagreements, first: {disagreements[:3]}"
    all_rules = {str(r) for r in rules_graph.subjects(rdflib.RDF.type, KGS.Rule)}
    assert len(all_rules) >= 33 and set(checked) == all_rules
    assert sum(checked.values()) >= 5000
    # every answer format a rule can be asked in was exercised (no percent: asking which rate
    # applies would ask for the rule's own constant, issue 12)
    assert {i.answer_format for i in rule_items} == {
        AnswerFormat.currency, AnswerFormat.number, AnswerFormat.yes_no,
        AnswerFormat.date, AnswerFormat.one_token, AnswerFormat.short_text,
    }


def _bump(triple: str) -> str:
    """The triple with its literal moved up by one (a number +1, a date +1 day)."""
    m = re.fullmatch(r'(.*) "([^"]*)"\^\^<([^>]*)> \.', triple)
    assert m, triple
    head, text, datatype = m.groups()
    if datatype.endswith("#date"):
        text = (dt.date.fromisoformat(text) + dt.timedelta(days=1)).isoformat()
    else:
        text = str(Decimal(text) + 1)
    return f'{head} "{text}"^^<{datatype}> .'


@pytest.mark.parametrize(
    ("rule", "relation", "fmt"),
    [
        ("rule-payout-over-deductible", "claimAmount", AnswerFormat.currency),  # rate 1: +1 pays 1 more
        ("rule-stay-nights", "checkOutDate", AnswerFormat.number),  # one more night
        ("rule-probation-end", "hireDate", AnswerFormat.date),  # deadline a day later
    ],
)
def test_checker_disagrees_when_a_source_value_changes(rule_items, rules_graph, rule, relation, fmt):
    rule_iri = "https://kgsynth.example/demo/" + rule
    candidates = [i for i in rule_items if i.metadata.rule_iri == rule_iri and i.answer_format is fmt]
    # a payout of 0 stays 0 when the claim is still under the deductible: pick a paid claim
    item = next(i for i in candidates if agrees(i, checker_answer(i, rules_graph)) and i.gold != "0")
    triples = [_bump(t) if f"/{relation}>" in t else t for t in item.metadata.source_triples]
    assert triples != list(item.metadata.source_triples)
    assert not agrees(item, checker_answer(item, rules_graph, triples))


def test_checker_disagrees_when_a_case_condition_flips(rule_items, rules_graph):
    fault = "https://kgsynth.example/demo/rule-fault-payout"
    # the payout follows the rate of the fault case; a zero claim pays 0 under either case
    item = next(i for i in rule_items if i.metadata.rule_iri == fault and i.answer_format is AnswerFormat.currency
                and i.gold != "0")
    flip = {'"true"': '"false"', '"false"': '"true"'}
    triples = [re.sub(r'"(true|false)"', lambda m: flip[m[0]], t) for t in item.metadata.source_triples]
    assert triples != list(item.metadata.source_triples)
    assert agrees(item, checker_answer(item, rules_graph))
    assert not agrees(item, checker_answer(item, rules_graph, triples))
