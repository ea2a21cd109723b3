"""The offline filters on real demo items with one turn added: each writing of the gold or
of the rule's numbers is caught, and numbers that are neither pass."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kgsynth.filters import AnswerStatedFilter, ClosedBookFilter, RuleLeakageFilter
from kgsynth.filters.closed_book import closed_book_messages
from kgsynth.formats import locale
from kgsynth.formats.answers import AnswerFormat, parse_number
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells
from kgsynth.synth.dialogues.dialogue import DialogueSettings, Turn
from kgsynth.synth.dialogues.item import Item, make_item
from kgsynth.synth.scenarios.rules import rule_numbers


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
            # not a 100% payout: its answer is the claimed amount, stated as a fact on purpose
            if scenario.answer_format is AnswerFormat.currency and scenario.rule.iri not in seen_rules and not scenario.answer_in_dialogue:
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


@pytest.fixture(scope="module")
def class_items(demo_kg, rules) -> list[Item]:
    """Items whose gold is a rule's class label, with the class's short forms as aliases."""
    plans = plan_cells(demo_kg, SynthConfig(), rules)
    by_rule: dict[str, list] = {}
    for scenario in (s for plan in plans for s in plan.scenarios if s.constraints.choices is not None):
        by_rule.setdefault(scenario.rule.iri, []).append(scenario)
    items = [make_item(s, lang, DialogueSettings(), 0) for group in by_rule.values() for s in group[:10]
             for lang in ("en", "ru")]
    assert any(len(alias) == 1 for item in items for alias in item.gold_aliases)
    return items


def test_a_class_answer_is_caught_as_whole_words_only(class_items):
    for item in class_items:
        assert AnswerStatedFilter().reason(item) is None, (item.gold, item.transcript)
        assert AnswerStatedFilter().reason(_with_turn(item, f"I'd say {item.gold}, then."))
        inside = _with_turn(item, f"I'd say x{item.gold}x, then.")  # not the class: another word
        assert AnswerStatedFilter().reason(inside) is None, item.gold


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


# ---------------------------------------------------------------- entity match (real spaCy, natasha)
@pytest.fixture(scope="module")
def entity_match(demo_kg):
    from kgsynth.filters import EntityMatchFilter

    return EntityMatchFilter(demo_kg.all_labels(), demo_kg.vocabulary())


@pytest.fixture(scope="module")
def all_shape_items(demo_kg, rules) -> list[Item]:
    config = SynthConfig.model_validate({"sampling": {"shapes": ["rule_application", "simple", "set", "conditional", "multihop", "comparison"]}})
    plans = sorted(plan_cells(demo_kg, config, rules), key=lambda p: p.key)  # every third cell: all shapes
    return [make_item(p.scenarios[0], lang, DialogueSettings(), 0) for p in plans[::3] for lang in ("en", "ru")]


def test_template_items_of_every_shape_pass_entity_match(entity_match, all_shape_items):
    assert len({i.metadata.shape for i in all_shape_items}) == 6
    assert entity_match.reasons(all_shape_items) == [None] * len(all_shape_items)


@pytest.mark.parametrize(("language", "foreign"), [
    ("en", "Yesterday Angela Merkel called me from Berlin."),
    ("ru", "Вчера мне звонил Владимир Потанин из Норильска."),
])
def test_a_foreign_named_entity_is_caught(entity_match, all_shape_items, language, foreign):
    items = [_with_turn(i, foreign) for i in all_shape_items if i.language == language][:6]
    assert all(r and "which is not one of its entities" in r for r in entity_match.reasons(items))


def test_another_entity_of_the_graph_is_caught_by_the_ruler(entity_match, all_shape_items, demo_kg):
    labels = demo_kg.all_labels()
    vocabulary = demo_kg.vocabulary()
    for item in all_shape_items[:8]:
        own = " ".join(item.metadata.source_triples)
        other = next(ls[0] for iri, ls in labels.items()
                     if iri not in vocabulary and f"<{iri}>" not in own and len(ls[0]) > 6 and not ls[0].casefold() in item.transcript.casefold())
        reason = entity_match.reason(_with_turn(item, f"That reminds me of {other}."))
        assert reason and other.casefold() in reason.casefold(), (other, reason)


def _without(text: str, labels: list[str]) -> str:
    """``text`` without any word of the labels, in any case it is declined in ("заказу ORD-1")."""
    from kgsynth.formats.morph import lemma_key

    words = {w for label in labels for w in lemma_key(label).split()}
    return " ".join("it" if lemma_key(w).strip("«».,?!:;") in words else w for w in text.casefold().split())


def test_an_item_that_loses_its_entity_is_caught(entity_match, all_shape_items):
    from kgsynth.filters.entity_match import item_nodes

    for item in all_shape_items[:10]:
        entities, _ = item_nodes(item)
        labels = entity_match.labels[entities[0]]

        dialogue = tuple(t.model_copy(update={"text": _without(t.text, labels)}) for t in item.dialogue)
        stripped = item.model_copy(update={"dialogue": dialogue, "question": _without(item.question, labels)})
        assert entity_match.reason(stripped) == f"the item does not mention {labels[0]!r}"


# ---------------------------------------------------------------- near-duplicates (real MiniLM)
def test_a_near_duplicate_of_a_kept_item_is_dropped_and_others_pass(all_shape_items):
    from kgsynth.filters import NearDuplicateFilter

    near = NearDuplicateFilter(threshold=0.95)
    first, second = all_shape_items[0], all_shape_items[2]
    assert near.reasons([first, second]) == [None, None]
    near.remember([first, second])
    again = _with_turn(first, "Okay.")
    reason = near.reasons([again])[0]
    assert reason and reason.startswith(f"near-duplicate of item {first.id}")
    english_only = next(i for i in all_shape_items if i.language == "ru")
    assert near.reasons([english_only]) == [None]  # compared within its language only


# ---------------------------------------------------------------- closed book (unit: the decision)
def test_closed_book_counts_free_text_by_similarity_and_never_guesses_yes_no(all_shape_items):
    from llm_fault_injector import FaultInjectingServer

    from kgsynth.llm import LLMGateway, ModelConfig

    text_item = next(i for i in all_shape_items if i.answer_format in (AnswerFormat.one_token, AnswerFormat.short_text))
    closed_book = ClosedBookFilter([], similarity=90)
    assert closed_book.knows(str(text_item.gold), text_item)
    assert closed_book.knows(str(text_item.gold)[:-1], text_item)  # a typo still knows it (ratio >= 90)
    assert not closed_book.knows("something else entirely", text_item)
    assert closed_book.knows(f"I believe it is {text_item.gold}.", text_item)
    assert not closed_book.knows(f"I believe it is {text_item.gold}x.", text_item)
    assert not ClosedBookFilter([], similarity=100).knows(str(text_item.gold)[:-1], text_item)
    yes_no = [i for i in all_shape_items if i.answer_format is AnswerFormat.yes_no][:2]
    with FaultInjectingServer(lambda body: "yes") as server:
        gateway = LLMGateway(ModelConfig(base_url=server.base_url, model="guesser"))
        assert ClosedBookFilter([gateway]).reasons(yes_no) == [None, None]
    assert yes_no and server.requests == []


# ---------------------------------------------------------------- judge (unit: parsing, thresholds)
def test_the_judge_keeps_its_scores_on_passing_items_and_a_failed_call_rejects(all_shape_items, rules):
    import json

    from llm_fault_injector import FaultInjectingServer

    from kgsynth.filters import JudgeFilter, apply_filters
    from kgsynth.filters.judge import RUBRIC
    from kgsynth.llm import LLMGateway, ModelConfig

    scores = dict(zip(RUBRIC, [2, 2, 2, 1, 2, 2], strict=True))
    reply = json.dumps({name: {"rationale": f"because {name}", "score": s} for name, s in scores.items()})
    items = all_shape_items[:3]

    def fails_on_the_last_item(body: dict) -> str | None:  # every attempt, in whatever order they arrive
        return "500" if items[2].question in body["messages"][-1]["content"] else None

    with FaultInjectingServer(lambda body: reply, fault_for=fails_on_the_last_item) as server:
        gateway = LLMGateway(ModelConfig(base_url=server.base_url, model="judge", max_retries=1, backoff_s=0.01))
        result = apply_filters(items, [JudgeFilter(gateway, rules, min_total=11, min_each=1)])
    assert [i.id for i in result.kept] == [i.id for i in items[:2]]
    assert [r.item_id for r in result.rejected] == [items[2].id] and result.rejected[0].reason.startswith("the judge failed")
    # retried: twice at least (a 500 before any reply came back may also be read as a refused output form)
    assert sum(fails_on_the_last_item(body) is not None for body in server.requests) >= 2
    for item in result.kept:
        assert item.review.total == 11 and [c.score for c in item.review.criteria] == list(scores.values())
        assert item.review.criteria[3].rationale == "because dialogue_suffices"
    strict = JudgeFilter(LLMGateway(gateway.config), rules, min_total=12)
    assert strict._verdict(result.kept[0].review) == "judge: total 11 below 12"
    assert JudgeFilter(gateway, rules, min_each=2)._verdict(result.kept[0].review).startswith("judge: dialogue_suffices scored 1")


def test_the_judge_states_a_rule_without_statements_by_its_label(currency_items, rules):
    from kgsynth.filters.judge import judge_messages

    item = currency_items[1]
    rule = rules[item.metadata.rule_iri]
    bare = rule.model_copy(update={"statements": {}})
    prompt = judge_messages(item, bare)[-1]["content"]
    assert rule.labels[item.language] in prompt and rule.statements[item.language] not in prompt
    assert rule.statements[item.language] in judge_messages(item, rule)[-1]["content"]
