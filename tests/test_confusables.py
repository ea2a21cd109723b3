"""Confusable turns (other entities' facts in the dialogue) leave every gold where it was,
up to 32k tokens of padding, and the attribution filter catches a dialogue that would
give a topic's fact to another entity."""

from __future__ import annotations

import json

import pytest
from gold_checker import demo_rules_graph, expected_item_answer

from kgsynth.dataset.splits import read_items
from kgsynth.filters import AttributionFilter
from kgsynth.formats.answers import canonical_gold, check_answer
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize
from kgsynth.synth.dialogues import dialogue


def _config(confusables: float, target_tokens: int | None = None, n: int = 240, filters: tuple[str, ...] | None = None) -> SynthConfig:
    return SynthConfig.model_validate({
        "dataset": {"n": n, "seed": 3},
        "dialogue": {"confusables": confusables, "target_tokens": target_tokens},
        "filters": {"order": list(filters)} if filters else {},
    })


@pytest.fixture(scope="module")
def padded_items(demo_kg, tmp_path_factory):
    out = tmp_path_factory.mktemp("confusables") / "out"
    synthesize(demo_kg, _config(1.0, target_tokens=32_000, n=120), out)
    return list(read_items(out / "items.jsonl"))


def test_every_gold_holds_at_32k_tokens_with_confusables(padded_items):
    rules = demo_rules_graph()
    confusable = [i for i in padded_items if i.metadata.confusable_turns]
    assert len(confusable) >= len(padded_items) // 2
    assert min(i.metadata.token_length for i in padded_items) >= 32_000
    checked = 0
    for item in padded_items:
        own_values = set(item.metadata.fact_values)
        for turn in item.dialogue:
            if turn.kind in ("confusable", "distractor"):  # no turn but the topic's own states its values
                assert not any(v in turn.text.split() or f" {v}." in turn.text for v in own_values), (item.id, turn.text)
        if item.metadata.rule_iri:  # the gold, re-derived by the independent checker from the topic's triples
            answer = canonical_gold(expected_item_answer(item, rules), item.answer_format, item.constraints)
            assert check_answer(answer, item.answer_format, item.gold, item.constraints).correct, item.id
            checked += 1
    assert checked >= 50


def test_the_attribution_filter_catches_a_topic_fact_left_to_another_entity(demo_kg, tmp_path, monkeypatch):
    """A writer that forgets to name the topic again after another entity's fact: the
    filter rejects those items (and passes every item of the writer that does not forget)."""
    only_structure = ("structure", "attribution")
    synthesize(demo_kg, _config(1.0, filters=only_structure), tmp_path / "right")
    right = json.loads((tmp_path / "right" / "filter_report.json").read_text())
    assert right["stages"]["attribution"]["in"] > 0 and right["stages"]["attribution"]["rejected"] == 0

    confusable = dialogue._Writer._confusable

    def forgetful(self, *said):
        named = self.named
        text = confusable(self, *said)
        self.named = named  # the topic stays "named": its next fact is said without the name
        return text

    monkeypatch.setattr(dialogue._Writer, "_confusable", forgetful)
    synthesize(demo_kg, _config(1.0, filters=only_structure), tmp_path / "forgetful")
    rejected = [json.loads(line) for line in (tmp_path / "forgetful" / "rejections.jsonl").read_text().splitlines()]
    reasons = [r["reason"] for r in rejected if r["filter"] == AttributionFilter.name]
    assert reasons and all("without naming it" in r for r in reasons)


def test_confusable_turns_name_another_entity_with_another_value(demo_kg, tmp_path):
    synthesize(demo_kg, _config(1.0, n=120), tmp_path / "out")
    items = list(read_items(tmp_path / "out" / "items.jsonl"))
    turns = [(i, t) for i in items for t in i.dialogue if t.kind == "confusable"]
    assert len(turns) >= len(items)
    for item, turn in turns:
        assert turn.facts == ()
        assert not any(v == turn.text.rstrip(".").rsplit(" ", 1)[-1] for v in item.metadata.fact_values), turn.text
    none = SynthConfig.model_validate({"dataset": {"n": 120, "seed": 3}, "dialogue": {"confusables": 0}})
    synthesize(demo_kg, none, tmp_path / "none")
    assert not any(i.metadata.confusable_turns for i in read_items(tmp_path / "none" / "items.jsonl"))
