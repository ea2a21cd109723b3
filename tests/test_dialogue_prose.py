"""The template dialogues read as a conversation: no line twice, no speaker twice in a row,
noise that fits the domain and can carry nothing of the scenario, a slip only about what
has been introduced and only where it cannot be confused with another value, and an
entity's class never said again when its name already says it. Checked over every
scenario of every shape the demo graph gives, in both languages."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal

import pyoxigraph as ox
import pytest
from conftest import ROOT

from kgsynth.kg import load_rules
from kgsynth.pipeline.config import load_config
from kgsynth.pipeline.run import plan_cells
from kgsynth.synth.dialogues.dialogue import DialogueSettings, build_dialogue, render_value
from kgsynth.synth.dialogues.haystack import pad_dialogue
from kgsynth.synth.dialogues.item import item_rng
from kgsynth.synth.dialogues.phrases import NOISE, NOISE_LINES, PAUSES, PHRASES
from kgsynth.synth.dialogues.statements import STATEMENTS
from kgsynth.synth.scenarios.scenario import DIFFICULTY

LANGS = ("en", "ru")
# knobs turned up so that every kind of turn occurs often
BUSY = DialogueSettings(noise=0.6, clarifications=1.0, reasks=1.0, corrections=1.0)


@pytest.fixture(scope="module")
def scenarios(demo_kg):
    config = load_config(ROOT / "configs" / "all_shapes.toml")
    plans = plan_cells(demo_kg, config, load_rules(demo_kg))
    return [s for plan in plans for s in plan.scenarios[:12]]


@pytest.fixture(scope="module")
def dialogues(scenarios):
    return [(s, lang, build_dialogue(s, lang, BUSY, item_rng(seed, s, lang)))
            for s in scenarios for lang in LANGS for seed in (0, 1)]


def test_the_scenarios_cover_every_shape(scenarios):
    assert {s.shape.value for s in scenarios} >= {"rule_application", "simple", "set", "conditional", "multihop", "multihop_set",
                                                  "comparison"}


def test_no_line_twice_and_no_speaker_twice_in_a_row(dialogues):
    for _, _, dialogue in dialogues:
        texts = [t.text for t in dialogue.turns]
        assert len(set(texts)) == len(texts), dialogue.text
        assert all(a.speaker != b.speaker for a, b in zip(dialogue.turns, dialogue.turns[1:], strict=False)), dialogue.text


def test_padding_keeps_speakers_alternating(scenarios):
    for scenario in scenarios[::25]:
        for lang in LANGS:
            rng = item_rng(0, scenario, lang)
            dialogue = pad_dialogue(build_dialogue(scenario, lang, DialogueSettings(), rng), scenario, lang, 600, rng)
            assert dialogue.padding_turns > 0
            assert all(a.speaker != b.speaker for a, b in zip(dialogue.turns, dialogue.turns[1:], strict=False)), dialogue.text


def test_noise_carries_no_digit_and_no_label_of_the_scenario(dialogues):
    noise = 0
    for scenario, _, dialogue in dialogues:
        for turn in dialogue.turns:
            if turn.kind == "noise":
                noise += 1
                folded = turn.text.casefold()
                assert not re.search(r"\d", turn.text)
                assert not any(re.search(rf"(?<!\w){re.escape(t)}(?!\w)", folded) for t in scenario.mentioned_texts), turn.text
    assert noise > 1000


def test_noise_fits_the_domain_of_the_entity(dialogues):
    """Retrieval items ("episodic") get their domain from the entity's class: a hotel
    booking's dialogue may mention the airline, never the payroll system."""
    own = {lang: {domain: set(pauses + remarks) for domain, (pauses, remarks) in by_domain.items() if domain != "general"}
           for lang, by_domain in NOISE_LINES.items()}
    seen: Counter[str] = Counter()
    for scenario, lang, dialogue in dialogues:
        domain = scenario.cell.domain if scenario.cell.domain in own[lang] else scenario.wording[lang].entity.domain
        for turn in dialogue.turns:
            for other, lines in own[lang].items():
                if turn.kind == "noise" and turn.text in lines:
                    assert other == domain, (turn.text, domain)
                    seen[other] += 1
    assert set(seen) == {"payroll", "insurance", "retail", "travel", "geography"}


def test_a_slip_comes_after_what_it_is_about_is_introduced(dialogues):
    slips = 0
    for scenario, _, dialogue in dialogues:
        kinds = [t.kind for t in dialogue.turns]
        if "misstatement" not in kinds:
            continue
        slips += 1
        slip = kinds.index("misstatement")
        assert "fact" in kinds[:slip], dialogue.text  # never before the first fact-bearing turn
        # a later turn corrects it, saying that it is a correction
        assert _corrections(dialogue.turns[slip:]), dialogue.text
    assert slips > 100


_CORRECTION_OPENINGS = tuple(
    p.split("{")[0] for lang in LANGS for kind in ("correction_self", "correction_other") for p in STATEMENTS[lang][kind]
)


def _corrections(turns) -> list[str]:
    """The sentences of fact turns that correct a value."""
    return [sentence for t in turns if t.kind == "fact"
            for sentence in re.split(r"(?<=[.?!])\s+(?=[A-ZА-ЯЁ])", t.text) if sentence.startswith(_CORRECTION_OPENINGS)]


def test_no_slip_or_reask_about_one_of_several_values(dialogues):
    """A card's monthly purchases: "the monthly purchase is 21,758" could be any of them, and
    the next purchase after a correction would read as another correction."""
    checked = 0
    for scenario, lang, dialogue in dialogues:
        keys = Counter((f.subject.value, f.relation.value) for f in scenario.facts)
        several = {i for i, f in enumerate(scenario.facts) if keys[(f.subject.value, f.relation.value)] > 1}
        if not several:
            continue
        checked += 1
        values = {dialogue.fact_values[i] for i in several}
        # a re-ask or a correction names what it is about; a restate says only the value it gives
        asked = [t.text for t in dialogue.turns if t.kind == "reask"] + _corrections(dialogue.turns)
        assert not [text for text in asked if _about(scenario, lang, text) & several], dialogue.text
        restated = [t.text for t in dialogue.turns if t.kind == "restate"]
        assert not [text for text in restated if any(v in text for v in values)], dialogue.text
    assert checked > 20


def _about(scenario, lang: str, text: str) -> set[int]:
    """The facts a re-ask or a correction is about: those whose noun with its subject it says
    ("the category of Wireless headphones"), else the topic's facts whose noun alone it says
    ("the monthly purchase", once the card is named). A value of one fact may be the subject
    of another (a member of a multi-hop set and its category): naming it is no re-ask of it."""
    words, folded = scenario.wording[lang].facts, text.casefold()
    named = {i for i, w in enumerate(words) if w.noun_of.casefold() in folded}
    return named or {i for i, (f, w) in enumerate(zip(scenario.facts, words, strict=True))
                     if f.subject.value == scenario.entity.value and w.short.casefold() in folded}


def test_about_finds_a_reask_of_one_of_several_values(scenarios):
    """The check above sees a re-ask of a several-valued fact, in either of its wordings."""
    found = 0
    for scenario in scenarios:
        keys = Counter((f.subject.value, f.relation.value) for f in scenario.facts)
        for i, fact in enumerate(scenario.facts):
            if keys[(fact.subject.value, fact.relation.value)] > 1:
                found += 1
                for lang in LANGS:
                    words = scenario.wording[lang].facts[i]
                    for noun in {words.noun_of, *([words.short] if fact.subject.value == scenario.entity.value else [])}:
                        assert i in _about(scenario, lang, STATEMENTS[lang]["reask"][0].format(the_noun=noun, which="какой"))
    assert found > 20


def test_a_class_the_name_gives_is_not_said_again(dialogues):
    named = 0
    for scenario, lang, dialogue in dialogues:
        entity = scenario.wording[lang].entity
        if not (entity.cls and entity.cls_in_name and scenario.entity_class):
            continue
        named += 1
        # the name and the relations' nouns may hold the class word ("the order total"); a turn saying it besides may not
        said = [entity.name, *entity.cases.values(), *(w.noun for w in scenario.wording[lang].facts)]
        for turn in dialogue.turns:
            text = turn.text.casefold()
            for words in sorted(said, key=len, reverse=True):
                text = text.replace(words.casefold(), " ")
            assert entity.cls.casefold() not in text, turn.text
    assert named > 50


def test_free_turns_answer_what_came_before(dialogues):
    """An opening is answered, noise is answered as a pause or a remark, a prompt never ends a dialogue."""
    for _, lang, dialogue in dialogues:
        turns = dialogue.turns
        for before, turn in zip(turns, turns[1:], strict=False):
            if turn.kind == "reply":
                if before.kind == "opening":
                    assert turn.text in PHRASES[lang]["reply_opening"]
                else:
                    assert before.kind == "noise"
                    pool = "reply_pause" if before.text in PAUSES[lang] else "reply_remark"
                    assert turn.text in PHRASES[lang][pool], (before.text, turn.text)
        assert turns[-1].kind not in ("prompt", "opening"), dialogue.text


# ---------------------------------------------------------------------------- the banks themselves
def test_phrase_banks_have_no_digit_and_no_slot():
    for lang in LANGS:
        lines = [line for pool in NOISE[lang].values() for line in pool] + [line for pool in PHRASES[lang].values() for line in pool]
        assert not [line for line in lines if re.search(r"\d|\{", line)]


def test_noise_names_no_rule_and_no_class_a_rule_answers_with(demo_kg):
    """The rule-leakage filter rejects a dialogue that names its rule, and the answer-stated
    filter one that holds a class answer ("gold", "budget") anywhere, even inside a word."""
    rules = load_rules(demo_kg).values()
    phrases = {t.casefold() for r in rules for t in (*r.labels.values(), *r.statements.values())}
    classes = {b.class_iri for r in rules for b in r.brackets}
    labels = demo_kg.labels([ox.NamedNode(c) for c in classes])
    phrases |= {label.casefold() for by_lang in labels.values() for label in by_lang.values()}
    for lang in LANGS:
        for line in {line for pool in NOISE[lang].values() for line in pool}:
            assert not [p for p in phrases if p in line.casefold()], line


def test_pools_are_large_enough_that_no_line_repeats_in_a_dialogue():
    longest = max(spec.turns[1] for spec in DIFFICULTY.values())
    for lang in LANGS:
        for domain, pool in NOISE[lang].items():
            assert len(set(pool)) == len(pool) >= 45, (lang, domain)
        for kind in ("ack", "prompt", "reply_pause", "reply_remark", "closing", "reply_opening", "opening"):
            assert len(set(PHRASES[lang][kind])) == len(PHRASES[lang][kind]) >= (5 if kind in ("closing", "reply_opening") else 7)
        # free turns of one kind at most every other turn of the longest dialogue
        assert len(PHRASES[lang]["ack"]) >= longest // 2


_ANOTHER = {"en": "another", "ru": "ещё"}


def test_a_further_value_of_a_relation_says_it_is_another_one(dialogues):
    """Two items of one order, stated as "the item of Order X is A" and "the item of Order X
    is B", read as a contradiction; the second says it is another one, whoever's it is."""
    checked = 0
    for scenario, lang, dialogue in dialogues:
        first: dict[tuple[str, str], int] = {}
        for i, fact in enumerate(scenario.facts):
            key = (fact.subject.value, fact.relation.value)
            if first.setdefault(key, i) == i or isinstance(fact.object.python, bool):
                continue
            checked += 1
            turn = next(t for t in dialogue.turns if t.kind == "fact" and i in t.facts)
            value = dialogue.fact_values[i]
            sentences = re.split(r"(?<=[.?!])\s+(?=[A-ZА-ЯЁ])", turn.text)
            assert any(value in s and _ANOTHER[lang] in s.casefold() for s in sentences), turn.text
    assert checked > 20


_NUMBER = re.compile(r"-?\d[\d\s\u00a0.,]*\d|\d")


def _unit_after_number(text: str) -> str:
    """What follows a value's last number in a turn: "roubles" of "… is 86,000 roubles.", "" of "… is 4."."""
    numbers = list(_NUMBER.finditer(text))
    return text[numbers[-1].end():].strip(" \u00a0.,;!?") if numbers else ""


def test_another_entitys_value_is_said_in_the_unit_the_topic_uses(scenarios):
    """A confusable turn states a value of the topic's relation as the topic's turns state it:
    "86,000 roubles" beside "279,000 roubles", never beside a bare "279,000"."""
    settings = DialogueSettings(confusables=1.0)
    checked = Counter()
    for scenario in scenarios:
        numeric = [(f, w) for f, w in zip(scenario.facts, scenario.wording["en"].facts, strict=True)
                   if f.object.kind == "literal" and type(f.object.python) in (int, Decimal)
                   and f.subject.value == scenario.entity.value]
        if not numeric:
            continue
        for lang in LANGS:
            own = {w.noun.casefold(): f for f, w in zip(scenario.facts, scenario.wording[lang].facts, strict=True)
                   if any(f is g for g, _ in numeric)}
            dialogue = build_dialogue(scenario, lang, settings, item_rng(0, scenario, lang), others=scenarios)
            for turn in dialogue.turns:
                if turn.kind != "confusable":
                    continue
                for noun, fact in own.items():
                    if noun in turn.text.casefold():
                        unit = _unit_after_number(render_value(fact, scenario, lang))
                        assert _unit_after_number(turn.text) == unit, (render_value(fact, scenario, lang), turn.text)
                        checked[bool(unit)] += 1
    assert checked[True] >= 10 and checked[False] >= 10, checked
