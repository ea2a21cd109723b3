"""The haystack (kgsynth.synth.dialogues.haystack): padding to a length with other scenarios' fact
turns, other entities' facts and small talk with numbers leaves every gold where it was,
up to 32k tokens in synthesis and in the eval length sweep; at 128k tokens no line is
said more than a few times and most haystack lines carry numbers; the same seed gives
the same haystack.

"Where it was" is checked three ways, none of them through the haystack's own code: the
dialogue without its distractor turns is the unpadded item's, turn for turn; no
distractor turn holds a label, value, answer or rule number of the item (numbers and
dates compared by value); and a reader who gives a statement without a name to the last
entity named (every entity of the run, found by its writings) meets no statement about a
value of the topic after another entity's name without the topic named again."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from gold_checker import demo_rules_graph, expected_item_answer

from kgsynth.dataset.splits import read_items
from kgsynth.eval import render
from kgsynth.formats.answers import canonical_gold, check_answer, dates_in, has_word, numbers_in
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells, synthesize
from kgsynth.synth.dialogues import haystack
from kgsynth.synth.dialogues.dialogue import DialogueSettings, Turn, count_tokens
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.dialogues.phrases import TALK, YES_NO
from kgsynth.synth.scenarios.rules import rule_numbers

VALUE_KINDS = {"fact", "misstatement", "reask", "restate", "clarify_q", "clarify_a"}
_WORD = re.compile(r"\w+")


def _config(target_tokens: int | None, n: int = 120) -> dict:
    return {"dataset": {"n": n, "seed": 5}, "dialogue": {"confusables": 1.0, "target_tokens": target_tokens}}


@pytest.fixture(scope="module")
def runs(demo_kg, tmp_path_factory):
    """The same run with and without 32k tokens of haystack, and the run's scenarios by id."""
    out = tmp_path_factory.mktemp("haystack")
    padded = SynthConfig.model_validate(_config(32_000))
    synthesize(demo_kg, padded, out / "padded")
    synthesize(demo_kg, SynthConfig.model_validate(_config(None)), out / "plain")
    scenarios = {s.id: s for plan in plan_cells(demo_kg, padded, load_rules(demo_kg)) for s in plan.scenarios}
    return list(read_items(out / "padded" / "items.jsonl")), list(read_items(out / "plain" / "items.jsonl")), scenarios


class Reader:
    """Finds which entities of the run a text names: each entity's writings (its name in
    every case the wording has), looked up by their first word."""

    def __init__(self, scenarios):
        self.by_first: dict[str, set[tuple[str, str]]] = {}
        for s in scenarios:
            for lang, wording in s.wording.items():
                for w in (wording.entity.name, *wording.entity.cases.values()):
                    words = _WORD.findall(w.casefold())
                    if words:
                        self.by_first.setdefault(words[0], set()).add((w.casefold(), s.entity.value))

    def named(self, text: str) -> set[str]:
        folded = text.casefold()
        return {entity for word in set(_WORD.findall(folded)) for w, entity in self.by_first.get(word, ()) if has_word(folded, w)}


def _forbidden(item, scenario, rules=None):
    """What no distractor turn of ``item`` may say: numbers, dates and words. With ``rules``
    (synthesis), the rule's numbers too (the rule leakage filter would reject the item) and
    the class of the entity (the filters' labels); an evaluation knows neither, and the
    class is a common noun ("страховой случай")."""
    golds = [item.gold] if isinstance(item.gold, str) else list(item.gold)
    values = [*item.metadata.fact_values, *golds, *item.gold_aliases]
    numbers = {n for v in values for n in numbers_in(v)}
    if scenario.rule is not None and rules:
        numbers |= rule_numbers(rules[scenario.rule.iri])
    dates = {d for v in values for d in dates_in(v)}
    yes_no = set(YES_NO[item.language])
    nodes = [scenario.entity, *(n for f in scenario.facts for n in (f.subject, f.object) if n.kind == "iri")]
    labels = scenario.mentioned_texts if rules else {t for n in nodes for t in (n.label, *n.labels.values())}
    words = {w.casefold() for w in (*labels, *values) if len(w) > 1 and w.casefold() not in yes_no}
    return numbers, dates, words


def _about_the_topic(turn, scenario, lang: str) -> bool:
    """Whether a turn states, corrects or asks about a value of the topic (a turn with no
    fact of its own, a re-ask or a slip, counts, unless it names a bridge's fact: "the date
    of birth of Nikolai Vorobyov", the policyholder's, is said with its subject)."""
    topic = scenario.entity.value
    if turn.kind not in VALUE_KINDS:
        return False
    if turn.facts:
        return any(scenario.facts[f].subject.value == topic for f in turn.facts)
    words = scenario.wording[lang].facts
    folded = turn.text.casefold()
    return not any(f.subject.value != topic and words[i].noun_of.casefold() in folded for i, f in enumerate(scenario.facts))


def test_every_gold_holds_at_32k_tokens_with_a_haystack(runs, demo_kg):
    padded, plain, scenarios = runs
    rules, rules_graph = load_rules(demo_kg), demo_rules_graph()
    reader = Reader(scenarios.values())
    unpadded = {(i.metadata.scenario_id, i.language): i for i in plain}
    assert min(i.metadata.token_length for i in padded) >= 32_000
    compared = checked = 0
    kinds: Counter[str] = Counter()
    for item in padded:
        scenario = scenarios[item.metadata.scenario_id]
        own = [t for t in item.dialogue if t.kind != "distractor"]
        assert item.metadata.padding_turns == len(item.dialogue) - len(own) > 1000
        twin = unpadded.get((scenario.id, item.language))
        if twin is not None:  # the same item under its haystack
            assert own == list(twin.dialogue) and (item.question, item.gold) == (twin.question, twin.gold), item.id
            compared += 1
        assert (own[0].kind != "opening" or item.dialogue[0] == own[0]) and (own[-1].kind != "closing" or item.dialogue[-1] == own[-1])
        numbers, dates, words = _forbidden(item, scenario, rules)
        topic = scenario.entity.value
        other_named = None  # the distractor turn that last named another entity, until the topic is named
        for i, turn in enumerate(item.dialogue):
            named = reader.named(turn.text)
            if turn.kind == "distractor":
                assert not numbers & numbers_in(turn.text) and not dates & dates_in(turn.text), (item.id, turn.text)
                folded = turn.text.casefold()
                assert not any(has_word(folded, w) for w in words), (item.id, turn.text)
                assert topic not in named, (item.id, turn.text)
                if named:
                    other_named = i
                kinds["names an entity" if named else "talk"] += 1
                kinds["with a number"] += bool(re.search(r"\d", turn.text))
            elif topic in named:
                other_named = None
            elif _about_the_topic(turn, scenario, item.language):
                assert other_named is None, (item.id, other_named, turn.text)
            elif turn.kind == "confusable":
                other_named = i
        if item.metadata.rule_iri:  # the gold, re-derived by the independent checker from the topic's triples
            answer = canonical_gold(expected_item_answer(item, rules_graph), item.answer_format, item.constraints)
            assert check_answer(answer, item.answer_format, item.gold, item.constraints).correct, item.id
            checked += 1
    assert compared >= len(padded) * 0.9 and checked >= 50
    total = kinds["names an entity"] + kinds["talk"]
    assert kinds["names an entity"] > total * 0.1 and kinds["with a number"] > total * 0.8, kinds


def test_at_128k_tokens_no_line_repeats_much_and_most_carry_numbers(demo_kg):
    config = SynthConfig()
    plans = plan_cells(demo_kg, config, load_rules(demo_kg))
    everyone = [s for plan in plans for s in plan.scenarios]
    others = haystack.Others([], haystack.Pool(everyone, seed=0))
    for scenario, lang in ((everyone[7], "en"), (everyone[500], "ru")):
        item = make_item(scenario, lang, DialogueSettings(target_tokens=128_000), 0, others)
        plain = make_item(scenario, lang, DialogueSettings(), 0, others)
        assert item.metadata.token_length >= 128_000
        assert [t for t in item.dialogue if t.kind != "distractor"] == list(plain.dialogue)
        lines = Counter(t.text for t in item.dialogue)
        assert lines.most_common(1)[0][1] <= 3 and len(lines) / len(item.dialogue) > 0.99, lines.most_common(3)
        padding = [t.text for t in item.dialogue if t.kind == "distractor"]
        assert sum(bool(re.search(r"\d", t)) for t in padding) > 0.8 * len(padding)


def test_the_same_seed_gives_the_same_haystack(demo_kg, demo_dataset):
    plans = plan_cells(demo_kg, SynthConfig(), load_rules(demo_kg))
    everyone = [s for plan in plans for s in plan.scenarios]
    scenario = everyone[42]
    made = [make_item(scenario, "ru", DialogueSettings(target_tokens=3000), seed, haystack.Others([], haystack.Pool(everyone, seed=0)))
            for seed in (0, 0, 1)]
    assert made[0] == made[1] != made[2]
    items = list(read_items(demo_dataset / "items.jsonl"))
    assert render.stretched(items[3], 2000, 0, items) == render.stretched(items[3], 2000, 0, items[::-1][::-1])
    assert render.stretched(items[3], 2000, 0, items) != render.stretched(items[3], 2000, 1, items)


def test_the_length_sweep_keeps_every_gold_and_lends_other_items(demo_kg, demo_dataset):
    items = list(read_items(demo_dataset / "items.jsonl"))
    scenarios = {s.id: s for plan in plan_cells(demo_kg, SynthConfig.model_validate({"dataset": {"n": 40}}), load_rules(demo_kg))
                 for s in plan.scenarios}
    reader = Reader(scenarios.values())
    lent = {t.text: i.id for i in items for t in i.dialogue if t.kind in ("fact", "misstatement", "confusable")}
    borrowed = 0
    for item in items[::3]:
        variant = render.stretched(item, 8000, 0, items)
        assert variant.context_tokens >= 8000
        assert [t for t in variant.turns if t.kind != "distractor"] == list(item.dialogue)
        scenario = scenarios[item.metadata.scenario_id]
        numbers, dates, words = _forbidden(item, scenario)
        topic, other_named = scenario.entity.value, None
        for i, turn in enumerate(variant.turns):
            named = reader.named(turn.text)
            if turn.kind == "distractor":
                assert lent.get(turn.text) != item.id and topic not in named, turn.text
                assert not numbers & numbers_in(turn.text) and not dates & dates_in(turn.text), (item.id, turn.text)
                assert not any(has_word(turn.text.casefold(), w) for w in words), (item.id, turn.text)
                borrowed += turn.text in lent
                other_named = i if named else other_named
            elif topic in named:
                other_named = None
            elif _about_the_topic(turn, scenario, item.language):
                assert other_named is None, (item.id, other_named, turn.text)
            elif turn.kind == "confusable":
                other_named = i
    assert borrowed > 100


def test_the_position_sweep_never_splits_a_borrowed_block(demo_dataset):
    items = list(read_items(demo_dataset / "items.jsonl"))
    owner = {t.text: i.id for i in items for t in i.dialogue if t.kind in ("fact", "misstatement")}
    for item in items[:12]:
        n = len(item.dialogue)
        for depth in (0.1, 0.25, 0.5, 0.75, 0.9):
            turns = render.placed(item, 3000, depth, 0, items).turns
            start = turns.index(item.dialogue[0])
            assert turns[start : start + n] == item.dialogue
            before = [owner.get(t.text) for t in turns[:start] if t.text in owner]
            after = [owner.get(t.text) for t in turns[start + n :] if t.text in owner]
            assert not (before and after and before[-1] == after[0]), (item.id, depth)


def test_a_unit_naming_another_entity_goes_only_where_the_topic_is_named_next():
    """Turn 3 states a value without naming the topic: nothing naming another entity may
    go between the name (turn 1) and it; after turn 4, which names the topic, anything."""
    said = [("opening", "Hi."), ("fact", "Let's talk about Claim CL-1. The amount is 5."), ("ack", "Got it."),
            ("fact", "The deductible is 7."), ("fact", "Back to Claim CL-1: the limit is 9."), ("closing", "Bye.")]
    turns = [Turn(speaker="AB"[i % 2], role="r", text=text, kind=kind) for i, (kind, text) in enumerate(said)]

    class Others(haystack.Source):
        def block(self, rng):
            return haystack.Unit(("Next is Claim CL-2.", "Its amount is 3."), 8, names=True)

        def fact(self, rng):
            return haystack.Unit(("For comparison, the amount of Claim CL-3 is 4.",), 11, names=True)

    guard = haystack.Guard.of(["claim cl-1"], ["5", "7", "9"])
    later = 0  # runs with a block after turn 3
    for seed in range(20):
        out, added = haystack.fill(turns, 600, Others("en", guard), random.Random(seed), lambda t: "Claim CL-1" in t.text)
        assert [t for t in out if t.kind != "distractor"] == turns and added == len(out) - len(turns)
        assert out[0] == turns[0] and out[-1] == turns[-1]  # the opening stays first, the closing last
        assert all(a.speaker != b.speaker for a, b in zip(out, out[1:], strict=False))
        between = out[out.index(turns[1]) + 1 : out.index(turns[3])]
        assert between and not any("Claim" in t.text or "Its amount" in t.text for t in between)
        later += any("CL-2" in t.text for t in out[out.index(turns[3]):])
        for t in out:
            if t.kind == "distractor":
                assert not {5, 7, 9} & numbers_in(t.text), t.text
    assert later >= 15


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_small_talk_knows_its_numbers(lang):
    """Each talk sentence's numbers, taken from its slots, cover what the filters read in it;
    the bank has no sentence twice and every template in it."""
    talk = haystack.Talk(lang)
    assert len({s.text for s in talk.bank}) == len(talk.bank) and {s.template for s in talk.bank} == set(range(len(TALK[lang])))
    for s in talk.bank:
        assert numbers_in(s.text) <= s.numbers, s.text
        assert s.tokens == count_tokens(s.text) and not re.search(r"%|процент|percent", s.text)
    guard = haystack.Guard.of([], ["15", "March 14, 2026" if lang == "en" else "14 марта 2026 г."])
    rng, said, recent = random.Random(0), set(), []
    lines = [talk.line(rng, guard, None, said, recent)[0] for _ in range(2000)]
    assert len(set(lines)) == len(lines)
    assert not any(15 in numbers_in(x) for x in lines)
    assert not any(("March 14" if lang == "en" else "14 марта") in x for x in lines)


def test_russian_talk_agrees_with_its_numbers():
    forms = {"минуту": (1,), "минуты": (2, 3, 4), "минут": (0, 5, 6, 7, 8, 9), "человека": (2, 3, 4), "лет": (0, 5, 6, 7, 8, 9)}
    for s in haystack.Talk("ru").bank:
        for m in re.finditer(r"(\d+) (минуту|минуты|минут|человека|лет)\b", s.text):
            n = int(m.group(1))
            last = n % 10 if not 11 <= n % 100 <= 14 else 0
            assert last in forms[m.group(2)], s.text
