"""The offline filters on real demo items with one turn added: each writing of the gold or
of the rule's numbers is caught, and numbers that are neither pass."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kgsynth.filters import AnswerStatedFilter, ClosedBookFilter, RuleLeakageFilter
from kgsynth.filters.closed_book import closed_book_messages
from kgsynth.filters.leakage import rule_numbers
from kgsynth.kg import load_rules
from kgsynth.synth import locale
from kgsynth.synth.config import SynthConfig
from kgsynth.synth.dialogue import DialogueSettings, Turn
from kgsynth.synth.formats import AnswerFormat, parse_number
from kgsynth.synth.item import Item, make_item
from kgsynth.synth.pipeline import plan_cells


@pytest.fixture(scope="module")
def rules(demo_kg):
    return load_rules(demo_kg)


@pytest.fixture(scope="module")
def currency_items(demo_kg, rules) -> list[Item]:
    """Items of currency cells that pass both filters as generated, one per rule, in both languages."""
    plans = plan_cells(demo_kg, SynthConfig(), rules)
    items, seen_rules = [], set()
    for plan in plans:
        for scenario in plan.scenarios:
            if scenario.answer_format is AnswerFormat.currency and scenario.rule.iri not in seen_rules:
                made = [make_item(scenario, lang, DialogueSettings(), 0) for lang in ("en", "ru")]
                if all(f.reason(i) is None for f in (AnswerStatedFilter(), RuleLeakageFilter(rules)) for i in made):
                    seen_rules.add(scenario.rule.iri)
                    items += made
    assert len(items) >= 4
    return items


def _with_turn(item: Item, text: str) -> Item:
    turn = Turn(speaker=item.dialogue[0].speaker, role=item.dialogue[0].role, text=text, kind="noise")
    return item.model_copy(update={"dialogue": (*item.dialogue, turn)})


def test_every_writing_of_the_gold_is_caught(currency_items):
    for item in currency_items:
        gold = parse_number(item.gold)
        unit = item.constraints.unit
        writings = {
            locale.format_money(gold, unit, "en"),
            locale.format_money(gold, unit, "ru"),
            locale.format_number(gold, "en"),
            locale.format_number(gold, "ru"),
            f"{gold:.2f}",  # 15600.00
            f"{gold:,}",  # 15,600
        }
        for written in writings:
            assert AnswerStatedFilter().reason(_with_turn(item, f"So it comes to {written} then.")), (item.gold, written)


def test_other_numbers_pass_the_answer_filter(currency_items):
    for item in currency_items:
        gold = parse_number(item.gold)
        for other in (gold + 1, gold * 10, gold / 10):
            if other not in (Decimal(0),):
                text = f"Not {locale.format_number(other, item.language)}, I think."
                assert AnswerStatedFilter().reason(_with_turn(item, text)) is None, (item.gold, text)


def test_the_rules_numbers_and_labels_are_caught(currency_items, rules):
    leakage = RuleLeakageFilter(rules)
    for item in currency_items:
        rule = rules[item.metadata.rule_iri]
        for number in rule_numbers(rule):
            written = locale.format_number(number, item.language)
            assert leakage.reason(_with_turn(item, f"Remember {written} from last time.")), (rule.iri, written)
        label = rule.labels.get(item.language)
        if label:
            assert leakage.reason(_with_turn(item, f"As the {label} says.")), (rule.iri, label)


@pytest.mark.parametrize("said", ["It went up by some Percent.", "That is 5 % more.", "Пара ПРОЦЕНТОВ сверху.", "per cent, roughly"])
def test_percentage_talk_is_caught_in_any_case(currency_items, rules, said):
    assert RuleLeakageFilter(rules).reason(_with_turn(currency_items[0], said)) == "the dialogue talks about percentages"


def test_the_closed_book_prompt_holds_the_question_but_no_dialogue(currency_items):
    for item in currency_items:
        (message,) = closed_book_messages(item)
        assert item.question in message["content"] and item.format_instruction in message["content"]
        assert not any(turn.text in message["content"] for turn in item.dialogue)


def test_a_guesser_that_keeps_failing_drops_nothing(currency_items):
    from llm_fault_injector import FaultInjectingServer

    from kgsynth.llm import LLMGateway, ModelConfig

    with FaultInjectingServer(lambda body: "", script=["500"] * 100) as server:
        config = ModelConfig(base_url=server.base_url, model="guesser", max_retries=1, backoff_s=0.01, timeout_s=1)
        gateway = LLMGateway(config)
        assert ClosedBookFilter([gateway]).reasons(currency_items[:3]) == [None] * 3
    assert gateway.usage["closed_book"].failures == 3 and len(server.requests) == 6
