"""The public files' row order: by opaque public_id, no English item next to its Russian twin
(nor any two rows of one scenario), the same in every public file and format, whichever way
the dataset was assembled; the private files and items keep the item order."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq

from kgsynth.dataset.splits import SPLITS, DatasetWriter, public_order, split_lines


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def _adjacent_pairs(ids: list[str], scenario: dict[str, str]) -> int:
    """Neighbouring rows of one scenario."""
    return sum(scenario[a] == scenario[b] for a, b in zip(ids, ids[1:]))


def test_no_public_row_sits_next_to_its_twin(demo_dataset):
    mapping = _rows(demo_dataset / "private" / "mapping.jsonl")
    scenario = {r["public_id"]: r["scenario_id"] for r in mapping}
    assert len(scenario) == len(mapping) and len(set(scenario.values())) * 2 == len(mapping)  # en + ru twins
    # the item order (the old public order, kept by items and the private files) puts twins side by side
    items = _rows(demo_dataset / "items.jsonl")
    assert [r["public_id"] for r in items] == [r["public_id"] for r in mapping]
    assert _adjacent_pairs([r["public_id"] for r in items], scenario) >= len(items) // 4
    orders = {}
    for name in ("public/dialogues", "public/questions"):
        ids = [r["public_id"] for r in _rows(demo_dataset / f"{name}.jsonl")]
        assert sorted(ids) == sorted(scenario)
        assert _adjacent_pairs(ids, scenario) == 0, name
        assert pq.read_table(demo_dataset / f"{name}.parquet").column("public_id").to_pylist() == ids
        orders[name] = ids
    assert orders["public/dialogues"] == orders["public/questions"]
    # the order follows the opaque id, held apart where twins would meet: mostly ascending
    ids = orders["public/dialogues"]
    assert sum(a < b for a, b in zip(ids, ids[1:])) >= 0.9 * (len(ids) - 1)
    # no language pattern either: English and Russian rows do not simply alternate
    languages = [r["language"] for r in _rows(demo_dataset / "public" / "dialogues.jsonl")]
    assert any(a == b for a, b in zip(languages, languages[1:]))


def test_public_order_is_a_permutation_with_no_neighbours_of_one_scenario():
    rng = random.Random(0)
    for trial in range(200):
        scenarios = [f"s{k}" for k in range(rng.randint(1, 40)) for _ in range(rng.choice((1, 2, 2, 3)))]
        ids = [f"{rng.getrandbits(48):012x}" for _ in scenarios]
        order = public_order(ids, scenarios)
        assert sorted(order) == list(range(len(ids)))
        placed = [scenarios[i] for i in order]
        if len(set(scenarios)) > 1 and max(map(placed.count, set(placed))) * 2 <= len(placed):
            assert all(a != b for a, b in zip(placed, placed[1:])), trial
        shuffled = list(range(len(ids)))
        rng.shuffle(shuffled)  # the same rows given in another order: the same public order
        again = public_order([ids[i] for i in shuffled], [scenarios[i] for i in shuffled])
        assert [ids[shuffled[i]] for i in again] == [ids[i] for i in order]


def test_public_order_worked_by_hand():
    # by id: a b c d; c and d are twins at the end, so d goes to the first gap between other scenarios
    assert public_order(["a", "b", "c", "d"], ["x", "y", "z", "z"]) == [3, 0, 1, 2]
    # b would follow its twin a: it waits for c, then comes
    assert public_order(["a", "b", "c", "d"], ["x", "x", "y", "z"]) == [0, 2, 1, 3]
    assert public_order(["b", "a"], ["x", "x"]) == [1, 0]  # one scenario: nothing to separate
    assert public_order([], []) == []


def test_streamed_and_linked_assembly_write_the_same_bytes_and_leave_the_sources(demo_dataset, tmp_path):
    """DatasetWriter given lines, and given finished JSONL files to link (as a run whose
    spools are the splits' files): the same bytes, and the linked sources untouched."""
    lines = [split_lines(row) for row in _rows(demo_dataset / "items.jsonl")]
    spools = {}
    for name in SPLITS:
        spools[name] = tmp_path / "spools" / f"{name.replace('/', '-')}.jsonl"
        spools[name].parent.mkdir(exist_ok=True)
        spools[name].write_bytes(b"".join(line[name] for line in lines))
    before = {name: path.read_bytes() for name, path in spools.items()}
    with DatasetWriter(tmp_path / "streamed") as writer:
        for line in lines:
            writer.write_lines(line)
    for _ in range(2):  # twice: the second time over files the first put in place, as a resumed run does
        with DatasetWriter(tmp_path / "linked", spools):
            pass
    for name in SPLITS:
        for ext in ("jsonl", "parquet"):
            streamed = (tmp_path / "streamed" / f"{name}.{ext}").read_bytes()
            assert (tmp_path / "linked" / f"{name}.{ext}").read_bytes() == streamed, (name, ext)
            assert (demo_dataset / f"{name}.{ext}").read_bytes() == streamed, (name, ext)
        assert spools[name].read_bytes() == before[name], name
    assert {p.name for p in (tmp_path / "linked").rglob("*") if ".partial" in p.name or ".ordered" in p.name} == set()
