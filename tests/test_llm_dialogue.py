"""The LLM verbaliser's code checks on real demo drafts, with handmade rewordings: a value
moved, dropped or respaced, a question that loses its entity or names the bridge."""

from __future__ import annotations

import datetime as dt

import pytest

from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells
from kgsynth.queries import Shape
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.dialogues.llm_dialogue import (
    Draft,
    LLMVerbaliser,
    WrittenDialogue,
    messages,
    placement_problem,
    question_problem,
    written_dialogue_model,
)


@pytest.fixture(scope="module")
def drafts(demo_kg) -> list[Draft]:
    config = SynthConfig.model_validate({"sampling": {"shapes": ["rule_application", "multihop"]}})
    plans = plan_cells(demo_kg, config, load_rules(demo_kg))
    return [Draft(p.scenarios[0], make_item(p.scenarios[0], lang, DialogueSettings(), 0)) for p in plans[::7] for lang in ("en", "ru")]


def _apply(draft: Draft, turns: list[str], question: str | None = None):
    return LLMVerbaliser(gateway=None)._apply(draft, WrittenDialogue(turns=turns, question=question or draft.item.question))


def test_the_plan_copied_back_is_accepted_unchanged(drafts):
    for draft in drafts:
        item = _apply(draft, [t.text for t in draft.item.dialogue])
        assert not isinstance(item, str), item
        assert item.dialogue == draft.item.dialogue and item.metadata == draft.item.metadata


def test_each_value_is_marked_in_the_prompt_and_the_output_has_the_turn_count(drafts):
    for draft in drafts:
        prompt = messages(draft)[1]["content"]
        for value in draft.item.metadata.fact_values:
            assert f"[{value}]" in prompt
        schema = written_dialogue_model(len(draft.item.dialogue)).model_json_schema()
        assert schema["properties"]["turns"]["minItems"] == schema["properties"]["turns"]["maxItems"] == len(draft.item.dialogue)


def test_a_dropped_or_moved_value_is_rejected_with_the_turn(drafts):
    for draft in drafts:
        m = draft.item.metadata
        turns = [t.text for t in draft.item.dialogue]
        turn, value = m.fact_to_turn[0], m.fact_values[0]
        dropped = list(turns)
        dropped[turn] = dropped[turn].replace(value, "something")
        assert placement_problem(dropped, draft.item) == f"turn {turn + 1} must contain {value!r} exactly"
        free = next((k for k, t in enumerate(draft.item.dialogue) if value not in t.text), None)
        if any(c.isdigit() for c in value) and free is not None:
            moved = list(turns)
            moved[free] = f"{moved[free]} By the way, {value}."
            assert placement_problem(moved, draft.item) == f"turn {free + 1} must not contain {value!r}"


def test_a_value_written_with_plain_spaces_is_put_back_as_written(drafts):
    spaced = [d for d in drafts if any("\u00a0" in v or "\u202f" in v for v in d.item.metadata.fact_values)]
    assert spaced, "Russian numbers are grouped with a thin space"
    for draft in spaced:
        turns = [t.text.replace("\u00a0", " ").replace("\u202f", " ") for t in draft.item.dialogue]
        item = _apply(draft, turns)
        assert not isinstance(item, str), item
        assert all(v in item.dialogue[t].text for t, v in zip(item.metadata.fact_to_turn, item.metadata.fact_values, strict=True))


def test_brackets_and_copied_speaker_names_are_removed(drafts):
    draft = drafts[0]
    values = draft.item.metadata.fact_values
    turns = []
    for turn in draft.item.dialogue:
        text = turn.text
        for f in turn.facts:
            text = text.replace(values[f], f"[{values[f]}]")
        turns.append(f"{turn.speaker}: {text}")
    item = _apply(draft, turns)
    assert not isinstance(item, str), item
    assert item.dialogue == draft.item.dialogue


def test_the_question_must_name_its_entity_and_never_the_bridge(drafts):
    multihop = [d for d in drafts if d.scenario.shape is Shape.multihop]
    assert multihop
    for draft in drafts:
        entity = draft.scenario.entity.labels.get(draft.item.language) or draft.scenario.entity.label
        if entity in draft.item.question:
            assert question_problem(draft.item.question.replace(entity, "it"), draft.scenario, draft.item) == f"the question must name {entity!r}"
        assert question_problem(draft.item.question, draft.scenario, draft.item) is None
    for draft in multihop:
        bridge = draft.scenario.hidden[0]
        label = bridge.labels.get(draft.item.language) or bridge.label
        reason = question_problem(f"{draft.item.question} ({label})", draft.scenario, draft.item)
        assert reason == f"the question names {label!r}, which the dialogue must supply"


def test_a_reworded_question_replaces_the_template_one(drafts):
    draft = next(d for d in drafts if d.item.language == "en")
    entity = draft.scenario.entity.labels.get("en") or draft.scenario.entity.label
    question = f"Quick one about {entity}: {draft.item.question}"
    item = _apply(draft, [t.text for t in draft.item.dialogue], question)
    assert item.question == question and item.id != draft.item.id


def test_a_wrong_turn_count_is_rejected(drafts):
    draft = drafts[0]
    turns = [t.text for t in draft.item.dialogue]
    assert _apply(draft, turns[:-1]) == f"{len(turns) - 1} turns instead of {len(turns)}"


def test_a_dialogue_in_the_wrong_language_is_rejected(drafts):
    russian = next(d for d in drafts if d.item.language == "ru")
    english = next(d for d in drafts if d.item.language == "en")
    # values kept, the words in the other language: rejected before any value check
    def values(draft, turn) -> str:
        return " and ".join(draft.item.metadata.fact_values[f] for f in turn.facts)

    in_english = [f"Okay, so the figure is {values(russian, t)}." if t.facts else "Okay, noted, let us go on."
                  for t in russian.item.dialogue]
    assert _apply(russian, in_english, "What does it come to?") == "the dialogue must be in Russian"
    in_russian = [f"Итак, значение — {values(english, t)}." if t.facts else "Хорошо, записано, продолжаем."
                  for t in english.item.dialogue]
    assert _apply(english, in_russian, "Сколько получается?") == "the dialogue must be in English"


def test_a_speaker_name_the_model_put_in_front_is_removed_in_any_script(drafts):
    draft = next(d for d in drafts if d.item.language == "ru")
    turns = [f"Alexey: {t.text}" if k % 2 else t.text for k, t in enumerate(draft.item.dialogue)]
    item = _apply(draft, turns)
    assert not isinstance(item, str), item
    assert item.dialogue == draft.item.dialogue


def test_the_prompt_is_in_the_items_language(drafts):
    for draft in drafts:
        system, user = messages(draft)
        cyrillic = sum("\u0400" <= c <= "\u04ff" for c in user["content"].split("\n\n")[0])
        assert (cyrillic > 50) == (draft.item.language == "ru"), system


def _date_drafts(demo_kg, lang):
    config = SynthConfig.model_validate({"dataset": {"formats": ["date"]}})
    plans = plan_cells(demo_kg, config, load_rules(demo_kg))
    drafts = [Draft(p.scenarios[0], make_item(p.scenarios[0], lang, DialogueSettings(), 0)) for p in plans]
    return [d for d in drafts if any(isinstance(f.object.python, dt.date) for f in d.scenario.facts)]


def test_a_date_written_another_way_is_put_back_as_written(demo_kg):
    import datetime as dt_

    checked = 0
    for lang, writings in (("ru", ("{d.day} {month} {d.year} года", "{d.day}.{d.month:02}.{d.year}")), ("en", ("{d:%Y-%m-%d}",))):
        for draft in _date_drafts(demo_kg, lang):
            m = draft.item.metadata
            for f, (turn, value) in enumerate(zip(m.fact_to_turn, m.fact_values, strict=True)):
                when = draft.scenario.facts[f].object.python
                if not isinstance(when, dt_.date) or draft.item.dialogue[turn].text.count(value) != 1:
                    continue
                month = value.split()[1] if lang == "ru" else ""
                for writing in writings:
                    turns = [t.text for t in draft.item.dialogue]
                    turns[turn] = turns[turn].replace(value, writing.format(d=when, month=month))
                    item = _apply(draft, turns)
                    assert not isinstance(item, str), (writing, item)
                    assert item.dialogue[turn].text == draft.item.dialogue[turn].text
                    checked += 1
    assert checked >= 4


def test_a_number_regrouped_is_put_back_and_an_ambiguous_one_is_not(demo_kg):
    from kgsynth.formats.answers import parse_number

    config = SynthConfig.model_validate({"sampling": {"shapes": ["rule_application", "simple", "comparison"]}})
    plans = plan_cells(demo_kg, config, load_rules(demo_kg))
    checked = 0
    for plan in plans:
        for lang in ("en", "ru"):
            draft = Draft(plan.scenarios[0], make_item(plan.scenarios[0], lang, DialogueSettings(), 0))
            m = draft.item.metadata
            for f, (turn, value) in enumerate(zip(m.fact_to_turn, m.fact_values, strict=True)):
                python = draft.scenario.facts[f].object.python
                plain = f"{python}"
                if parse_number(value) != python or plain == value or draft.item.dialogue[turn].text.count(value) != 1:
                    continue
                turns = [t.text for t in draft.item.dialogue]
                turns[turn] = turns[turn].replace(value, plain)
                item = _apply(draft, turns)
                assert not isinstance(item, str), item
                assert item.dialogue[turn].text == draft.item.dialogue[turn].text
                twice = list(turns)
                twice[turn] = f"{turns[turn]} {plain}?"
                assert _apply(draft, twice) == f"turn {turn + 1} must contain {value!r} exactly"
                checked += 1
    assert checked >= 4
