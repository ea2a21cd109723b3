"""Difficulty from reasoning: a level is a band of reasoning steps (inputs, joins at bridges,
additions, the operation, corrections, confusable turns), counted here again from each
subgraph's own facts; fact turns carry inputs; ``links`` is the realised count; multi-hop
depth maps to the levels; the manifest reports the configured grid's unfillable cells and
any shortfall against ``n``."""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict

import pytest
from conftest import ROOT

from kgsynth.filters import StructureFilter
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig, load_config
from kgsynth.pipeline.run import _Confusables, plan_cells, synthesize
from kgsynth.synth.dialogues.dialogue import DialogueSettings, build_dialogue
from kgsynth.synth.dialogues.item import item_from_dialogue, item_rng, make_item
from kgsynth.synth.scenarios.scenario import (
    DIFFICULTY,
    MAX_CORRECTIONS,
    MAX_DISTRACTORS,
    Difficulty,
    Scenario,
    said_by_name,
)


@pytest.fixture(scope="module")
def plans(demo_kg):
    config = load_config(ROOT / "configs" / "all_shapes.toml")
    return plan_cells(demo_kg, config, load_rules(demo_kg))


@pytest.fixture(scope="module")
def scenarios(plans):
    return [s for plan in plans for s in plan.scenarios]


def _expected_base(s: Scenario) -> int:
    """The graph's steps of a scenario, from its facts alone: each fact; for a rule, a join
    for each fact on a bridge, the additions of a summed input (several values of one
    relation of one subject) and the rule; a join for
    each hop after the first of a chain; the comparison or the two conditions' intersection."""
    facts = len(s.facts)
    shape = s.shape.value
    if shape == "rule_application":  # a fact on a bridge (kgs:via) is reached through a join too
        per_relation = Counter((f.subject.value, f.relation.value) for f in s.facts)
        bridged = sum(f.subject.value != s.entity.value for f in s.facts)
        return facts + bridged + sum(k - 1 for k in per_relation.values()) + 1
    if shape == "multihop":
        hops = int(s.variant.split("-")[0])
        assert hops == facts
        return 2 * hops - 1
    if shape in ("comparison", "conditional"):
        return facts + 1
    if shape == "multihop_set":
        start = s.entity.value
        return facts + sum(start not in (f.subject.value, f.object.value) for f in s.facts)
    return facts  # simple, set


def test_the_levels_are_contiguous_bands_within_the_methods_turn_ranges():
    bands = [DIFFICULTY[d].steps for d in Difficulty]
    assert bands[0][0] == 1 and bands[-1][1] is None
    assert all(high + 1 == low for (_, high), (low, _) in zip(bands, bands[1:], strict=False))
    assert [DIFFICULTY[d].turns for d in Difficulty] == [(4, 6), (6, 10), (10, 15)]
    # the method's table, 2/3/4 fact-bearing turns joined by 1/2/3 links, falls in easy/medium/hard
    assert [d for steps in (3, 5, 7) for d in Difficulty if DIFFICULTY[d].holds(steps)] == list(Difficulty)


def test_every_scenario_counts_its_steps_and_sits_in_its_band(scenarios):
    assert {s.shape.value for s in scenarios} >= {"rule_application", "simple", "set", "conditional", "multihop", "comparison"}
    for s in scenarios:
        r, spec = s.reasoning, DIFFICULTY[s.cell.difficulty]
        assert r.base == _expected_base(s), (s.shape, s.variant, r)
        assert spec.holds(r.steps), (s.cell.key, r)
        assert r.corrections <= MAX_CORRECTIONS and r.distractors <= MAX_DISTRACTORS
        if r.corrections or r.distractors:  # knobs only to reach the level, never beyond its least steps
            assert r.base < spec.steps[0] == r.steps


def test_a_subgraph_fills_several_levels_only_by_adding_real_steps(scenarios):
    by_subgraph: dict[tuple[str, str], list[Scenario]] = defaultdict(list)
    for s in scenarios:
        by_subgraph[(s.subgraph_id, s.cell.answer_format.value)].append(s)
    several = 0
    for group in by_subgraph.values():
        steps = sorted((list(Difficulty).index(s.cell.difficulty), s.reasoning.steps) for s in group)
        assert [n for _, n in steps] == sorted({n for _, n in steps}), group[0].subgraph_id  # more steps at each level up
        several += len(group) > 1
    assert several > 100


def test_multihop_depth_maps_to_the_levels(scenarios):
    lowest: dict[str, set[str]] = defaultdict(set)
    for s in scenarios:
        if s.shape.value == "multihop":
            if not (s.reasoning.corrections or s.reasoning.distractors):
                lowest[s.variant].add(s.cell.difficulty.value)
            if s.variant == "4-hop":
                assert s.cell.difficulty is Difficulty.hard  # never easy, nor medium
    assert lowest == {"2-hop": {"easy"}, "3-hop": {"medium"}, "4-hop": {"hard"}}


def test_sums_and_many_inputs_are_never_easy(scenarios):
    for s in scenarios:
        if s.cell.difficulty is Difficulty.easy:
            assert s.reasoning.steps <= 3 and not s.reasoning.summed and not s.reasoning.bridged > 1, s.cell.key
        if s.reasoning.summed >= 2:  # three purchases against a limit or more
            assert s.cell.difficulty is Difficulty.hard


def test_every_fact_turn_carries_an_input_and_the_name_rides_in_the_first(scenarios):
    for s in scenarios:
        assert all(p.facts for p in s.pieces)
        assert sorted(i for p in s.pieces for i in p.facts) == list(range(len(s.facts)))
        assert not any(p.name or p.entity_class for p in s.pieces[1:])
        stated = [f for f in s.facts if not said_by_name(f)]  # a value a name says rides with the name's turn
        if len(stated) <= DIFFICULTY[s.cell.difficulty].turns[1] - 3 - s.reasoning.corrections - s.reasoning.distractors:
            assert len(s.pieces) == len(stated)  # one input per turn while the envelope has room


def _sample(scenarios, count=400):
    return random.Random(0).sample(scenarios, min(count, len(scenarios)))


def test_items_realise_their_levels_with_lent_entities(plans, scenarios):
    """With other entities to lend confusable facts (as the wording phase gives them), an
    item holds its level's corrections and confusable turns, ``links`` counts them, and the
    chance knobs, all turned up, never take an item out of its level."""
    lend = _Confusables(plans, seed=0)
    busy = DialogueSettings(corrections=1.0, confusables=1.0, reasks=1.0, clarifications=1.0)
    realised = Counter()
    for s in _sample(scenarios):
        for settings in (DialogueSettings(), busy):
            item = make_item(s, "en", settings, 0, lend(s))
            m = item.metadata
            kinds = Counter(t.kind for t in item.dialogue)
            assert m.links == s.reasoning.base + kinds["misstatement"] + kinds["confusable"]
            assert (m.inputs, m.bridged, m.summed) == (s.reasoning.inputs, s.reasoning.bridged, s.reasoning.summed)
            if kinds["misstatement"] >= s.reasoning.corrections and kinds["confusable"] >= s.reasoning.distractors:
                realised[s.reasoning.corrections + s.reasoning.distractors > 0] += 1
                assert DIFFICULTY[s.cell.difficulty].holds(m.links), (s.cell.key, m.links)
                assert StructureFilter().reason(item) is None
            else:
                realised["short"] += 1
                assert "reasoning steps" in StructureFilter().reason(item)
    assert realised[True] > 50 and realised["short"] <= realised[True] // 10, realised


def test_an_item_left_short_of_its_level_is_rejected(scenarios):
    """No lent entity: a scenario that needs confusable turns cannot reach its level."""
    needy = [s for s in scenarios if s.reasoning.distractors][:20]
    assert needy
    for s in needy:
        item = make_item(s, "ru", DialogueSettings(confusables=0), 0)
        assert item.metadata.links < DIFFICULTY[s.cell.difficulty].steps[0]
        assert "reasoning steps" in StructureFilter().reason(item)


def test_a_slip_never_says_a_confusable_value(plans, scenarios):
    """A misstated value is never another entity's value said in the same dialogue (the
    slip would read as a mix-up of the two entities, not a misremembered value)."""
    lend = _Confusables(plans, seed=0)
    checked = 0
    for s in [s for s in scenarios if s.reasoning.corrections and s.reasoning.distractors][:150]:
        for seed in range(3):
            dialogue = build_dialogue(s, "en", DialogueSettings(corrections=1.0), item_rng(seed, s, "en"), lend(s))
            slips = [re.search(r" is (.+?)(?:, as far as I know)?\.$", t.text)[1] for t in dialogue.turns if t.kind == "misstatement"]
            confusables = [t.text for t in dialogue.turns if t.kind == "confusable"]
            assert item_from_dialogue(s, "en", dialogue, seed).metadata.corrections == len(slips) >= s.reasoning.corrections
            assert not any(re.search(rf"\b{re.escape(slip)}\b", text) for slip in slips for text in confusables), (slips, confusables)
            checked += bool(confusables)
    assert checked > 100


def test_the_manifest_reports_the_grid_and_the_shortfall(demo_kg, tmp_path):
    config = SynthConfig.model_validate({"dataset": {"n": 500}})
    result = synthesize(demo_kg, config, tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    shortfall, cells = manifest["shortfall"], manifest["cells"]
    empty = [key for key, cell in cells.items() if cell["scenarios"] == 0]
    assert empty and set(empty) <= set(result.unfillable_cells)  # cells no scenario fills are in the grid, unfillable
    assert {key.split("/")[1] for key in cells} == {"easy", "medium", "hard"}
    pairs = {(key.split("/")[0], key.split("/")[2]) for key in cells}
    assert len(cells) == len(pairs) * 3 == shortfall["grid_cells"]  # every category and format at every level
    assert shortfall["items"] == result.items == 500 - shortfall["missing"]
    assert shortfall["missing"] == shortfall["rounding"] + shortfall["unfilled"] > 0
    assert shortfall["unfillable_cells"] == len(result.unfillable_cells) and shortfall["cells_without_scenarios"] == len(empty)
    assert any(note.startswith(f"wrote {result.items:,} of n = 500 items") for note in result.notes)
    assert any(f"{len(empty)} without any scenario" in note for note in result.notes)
