"""The exact-duplicate filter: an item that repeats a kept item's language, question and
gold is dropped, across cells; in a real run none is left, each drop is in
rejections.jsonl, and a resumed run remembers what the stopped one kept."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kgsynth.dataset.splits import read_items
from kgsynth.filters import ExactDuplicateFilter
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import plan_cells, synthesize
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import Item, make_item
from kgsynth.synth.scenarios.scenario import cell_key, question_key

CONFIG = SynthConfig.model_validate({"dataset": {"n": 300}})
NO_EXACT_DUPLICATE = SynthConfig.model_validate(
    {"dataset": {"n": 300}, "filters": {"order": ["structure", "rule_leakage", "answer_stated", "answer_leak"]}})


@pytest.fixture(scope="module")
def twins(demo_kg) -> tuple[Item, Item, Item]:
    """The easy and the medium item (English) of one subgraph, the same question and gold
    in two dialogues, and the easy one in Russian."""
    by_subgraph: dict[str, dict] = {}
    for plan in plan_cells(demo_kg, CONFIG, load_rules(demo_kg)):
        for s in plan.scenarios:
            by_subgraph.setdefault((s.subgraph_id, s.answer_format), {})[s.cell.difficulty.value] = s
    easy, medium = next((d["easy"], d["medium"]) for d in by_subgraph.values() if {"easy", "medium"} <= set(d))
    first, second = (make_item(s, "en", DialogueSettings(), 0) for s in (easy, medium))
    assert first.question == second.question and first.gold == second.gold and first.dialogue != second.dialogue
    return first, second, make_item(easy, "ru", DialogueSettings(), 0)


def test_an_item_repeating_a_kept_one_is_dropped_with_the_kept_ones_id(twins):
    first, second, russian = twins
    duplicates = ExactDuplicateFilter()
    assert duplicates.reasons([first]) == [None]
    duplicates.remember([first])
    assert duplicates.reasons([second, russian]) == [f"the same question and gold as item {first.id}", None]
    # asked before wording, with a scenario's question and gold
    assert duplicates.reason_before_wording(question_key("en", second.question, second.gold)) == f"the same question and gold as item {first.id}"
    assert duplicates.reason_before_wording(question_key("ru", russian.question, russian.gold)) is None


def test_only_kept_items_count_and_a_batch_counts_its_earlier_items(twins):
    first, second, _ = twins
    duplicates = ExactDuplicateFilter()
    assert duplicates.reasons([first]) == [None]  # judged, never remembered (its scenario was dropped)
    assert duplicates.reasons([second]) == [None]
    assert duplicates.reasons([first, second]) == [None, f"the same question and gold as item {first.id}"]


def test_case_spacing_and_set_order_do_not_hide_a_duplicate(twins):
    first, _, _ = twins
    duplicates = ExactDuplicateFilter()
    duplicates.remember([first, first.model_copy(update={"gold": ["Kazan", "Moscow"], "question": "List every city."})])
    shouting = first.model_copy(update={"id": "x", "question": "  " + first.question.upper().replace(" ", "  ")})
    reordered = first.model_copy(update={"id": "y", "gold": ["moscow", "KAZAN"], "question": "List every city."})
    other_gold = first.model_copy(update={"id": "z", "gold": "another answer"})
    assert duplicates.reasons([shouting, reordered, other_gold]) == [
        f"the same question and gold as item {first.id}", f"the same question and gold as item {first.id}", None]


def _rows(out) -> list[dict]:
    return [json.loads(line) for line in (out / "items.jsonl").open(encoding="utf-8")]


def _repeats(rows: list[dict]) -> int:
    keys = Counter((r["language"], r["question"], tuple(sorted(r["gold_items"]))) for r in rows)
    return sum(n - 1 for n in keys.values())


@pytest.fixture(scope="module")
def dataset(demo_kg, tmp_path_factory):
    out = tmp_path_factory.mktemp("dedup") / "out"
    return out, synthesize(demo_kg, CONFIG, out)


def test_a_run_keeps_no_duplicates_and_records_each_drop_across_cells(dataset, demo_kg, tmp_path):
    out, result = dataset
    rows = _rows(out)
    assert len(rows) == result.items and _repeats(rows) == 0
    without = tmp_path / "without"
    synthesize(demo_kg, NO_EXACT_DUPLICATE, without)
    assert _repeats(_rows(without)) > 0  # the demo graph does give duplicates: the filter removed them
    cell_of = {r["id"]: r["cell"] for r in rows}
    dropped = [json.loads(line) for line in (out / "rejections.jsonl").open(encoding="utf-8")]
    dropped = [r for r in dropped if r["filter"] == "exact_duplicate"]
    kept_ids = [r["reason"].removeprefix("the same question and gold as item ") for r in dropped]
    across = [(r["cell"], cell_of[kept]) for r, kept in zip(dropped, kept_ids, strict=True) if kept in cell_of]
    assert across and all(cell != kept_cell for cell, kept_cell in across)
    # template wording: the item's question and gold are its scenario's, so each twin was
    # dropped before it was worded (no item id; no other filter saw it)
    assert all(r["item_id"] is None for r in dropped)
    others = [json.loads(line) for line in (out / "rejections.jsonl").open(encoding="utf-8")]
    assert not {r["scenario_id"] for r in dropped} & {r["scenario_id"] for r in others if r["filter"] != "exact_duplicate"}
    stage = result.manifest["filters"]["exact_duplicate"]
    assert stage["rejected"] == len(dropped) and stage["reasons"] == {"the same question and gold as item …": len(dropped)}


def test_a_resumed_run_remembers_what_the_stopped_one_kept(demo_kg, tmp_path):
    """Every scenario of every currency cell is worded (a pool far above a cell's share),
    so the later difficulty cells meet the twins of the first cell's items. Stopped inside
    the first cell, the resumed run must still drop those twins, and end with the files of
    a run never stopped."""
    config = SynthConfig.model_validate({"dataset": {"n": 2, "formats": ["currency"]}, "filters": {"top_n_pool": 1000}})
    reference, stopped = tmp_path / "reference", tmp_path / "stopped"
    synthesize(demo_kg, config, reference)

    def interrupt(done: int, wanted: int) -> None:
        if done >= 10:  # five scenarios of the first cell (it keeps many more), both languages
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        synthesize(demo_kg, config, stopped, progress=interrupt)
    spooled = list(read_items(stopped / ".work" / "items.spool.jsonl"))
    kept_before = {item.id for item in spooled}
    (first_cell,) = {cell_key(i.metadata.category, i.metadata.difficulty, i.metadata.answer_format) for i in spooled}
    assert len(kept_before) == 10
    synthesize(demo_kg, config, stopped)
    rejections = [json.loads(line) for line in (stopped / "rejections.jsonl").open(encoding="utf-8")]
    # decided after the resume: in a later cell, against an item the stopped run kept
    assert any(r["filter"] == "exact_duplicate" and r["cell"] != first_cell and r["reason"].split()[-1] in kept_before
               for r in rejections)
    for relative in [*json.loads((reference / "manifest.json").read_text(encoding="utf-8"))["files"], "manifest.json"]:
        assert (stopped / relative).read_bytes() == (reference / relative).read_bytes(), relative
