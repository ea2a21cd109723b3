"""The offline synthesis path end to end on the demo graph: items, balance, files, resume."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from conftest import ROOT

from kgsynth.dataset.splits import SPLITS, read_items
from kgsynth.errors import KgsynthError
from kgsynth.formats.answers import numbers_in
from kgsynth.kg import load_rules
from kgsynth.pipeline.config import SynthConfig, load_config
from kgsynth.pipeline.run import plan_cells, synthesize
from kgsynth.synth.dialogues.dialogue import DialogueSettings, build_dialogue
from kgsynth.synth.dialogues.item import item_rng, make_item
from kgsynth.synth.dialogues.statements import STATEMENTS
from kgsynth.synth.scenarios.scenario import DIFFICULTY, Scenario

CONFIG = SynthConfig.model_validate({"dataset": {"n": 300}})


@pytest.fixture(scope="module")
def dataset(demo_kg, tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "out"
    result = synthesize(demo_kg, CONFIG, out)
    items = list(read_items(out / "items.jsonl"))
    return out, result, items


@pytest.fixture(scope="module")
def plans(demo_kg):
    return plan_cells(demo_kg, CONFIG, load_rules(demo_kg))


_DATE = re.compile(r"[A-Z][a-z]+ \d{1,2}, \d{4}|\d{1,2} [а-я]+ \d{4} г\.|\d{4}-\d{2}-\d{2}")


def _digits(text: str) -> str:
    """Dates left out, numbers with their group separators removed ("15 600", "15,600" -> 15600)."""
    return re.sub(r"(?<=\d)[ ,\u00a0\u202f](?=\d{3}\b)", "", _DATE.sub(" ", text))


def test_balance_is_exact_in_every_cell_and_language(dataset):
    out, result, items = dataset
    counts = Counter((f"{i.metadata.category}/{i.metadata.difficulty.value}/{i.answer_format.value}", i.language) for i in items)
    assert set(counts.values()) == {result.per_cell}
    assert {cell for cell, _ in counts} == set(result.filled_cells)
    assert {lang for _, lang in counts} == {"en", "ru"}
    assert len(items) == result.items == result.per_cell * len(result.filled_cells) * 2


def test_difficulty_table_holds(dataset):
    """Turns in the level's envelope, reasoning steps in its band, every fact turn states a fact
    (tests/test_difficulty.py checks the step counts themselves)."""
    for item in dataset[2]:
        spec, m = DIFFICULTY[item.metadata.difficulty], item.metadata
        assert spec.turns[0] <= m.turns - m.padding_turns <= spec.turns[1]
        assert sum(t.kind == "fact" for t in item.dialogue) == m.fact_turn_count >= 1
        assert all(t.facts for t in item.dialogue if t.kind == "fact")
        assert spec.holds(m.links)
        assert len({t.speaker for t in item.dialogue}) in (2, 3)


def test_every_fact_value_sits_in_its_turn(dataset):
    for item in dataset[2]:
        m = item.metadata
        assert len(m.fact_to_turn) == len(m.source_triples) == len(m.fact_values)
        for turn, value in zip(m.fact_to_turn, m.fact_values, strict=True):
            assert item.dialogue[turn].kind == "fact" and value in item.dialogue[turn].text


def test_no_item_states_its_rule_or_computed_answer(dataset, demo_kg):
    """Checked here by plain string search, apart from the filters that built the dataset."""
    rules = load_rules(demo_kg)
    for item in dataset[2]:
        text = _digits(item.transcript)
        rule = rules[item.metadata.rule_iri]
        assert "%" not in text and rule.statements[item.language] not in text
        if rule.rate is not None and rule.rate not in (0, 1):
            assert not re.search(rf"(?<![\d.,]){rule.rate * 100:f}".rstrip("0").rstrip(".") + r"(?![\d])", text)
        if item.answer_format.value in ("number", "currency"):
            gold = item.gold.rstrip("0").rstrip(".") if "." in item.gold else item.gold
            said = re.compile(rf"(?<![\d.,]){re.escape(gold)}(?![\d]|[.,]\d)")
            if any(said.search(_digits(value)) for value in item.metadata.fact_values):
                continue  # the answer is an input, as a full refund is the amount paid: stated as that fact
            assert not said.search(text), (item.id, item.gold)


def test_russian_and_english_keep_their_conventions(dataset):
    money = [i for i in dataset[2] if i.answer_format.value == "currency"]
    ru = " ".join(i.transcript for i in money if i.language == "ru")
    en = " ".join(i.transcript for i in money if i.language == "en")
    assert re.search(r"\d{1,3}(\u00a0\d{3})+ руб\.", ru) and "roubles" in en and re.search(r"\d,\d{3} roubles", en)


def test_files_load_with_datasets_and_public_files_hold_no_answers(dataset):
    datasets = pytest.importorskip("datasets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    out, result, _ = dataset
    for name in SPLITS:
        for kind in ("json", "parquet"):
            path = out / f"{name}.{kind.replace('json', 'jsonl')}"
            loaded = datasets.load_dataset(kind, data_files=str(path), split="train", cache_dir=str(out.parent / "hf"))
            assert len(loaded) == result.items, (name, kind)
            if name.startswith("public"):
                assert "gold" not in loaded.column_names and "gold_items" not in loaded.column_names


def test_public_dialogues_hold_only_who_said_what(dataset):
    out = dataset[0]
    for line in (out / "public" / "dialogues.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        assert set(row) == {"public_id", "language", "dialogue"}
        assert all(set(turn) == {"speaker", "role", "text"} for turn in row["dialogue"])


def _stop_after(items: int, kg, out) -> None:
    """Start ``synthesize`` into ``out`` and interrupt it once ``items`` items are kept."""

    def interrupt(done: int, wanted: int) -> None:
        if done >= items:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        synthesize(kg, CONFIG, out, progress=interrupt)


def test_resume_refuses_a_log_from_another_graph(dataset, demo_kg, tmp_path):
    from kgsynth.kg import KnowledgeGraph

    stopped = tmp_path / "stopped"
    _stop_after(10, demo_kg, stopped)
    other = KnowledgeGraph.load(ROOT / "data" / "demo", lang=("en", "ru"))
    other.add(ROOT / "tests" / "data" / "handmade.ttl")
    with pytest.raises(KgsynthError, match="another config, graph or kgsynth version"):
        synthesize(other, CONFIG, stopped)


def test_manifest_counts_hashes_and_pass_rates(dataset):
    import hashlib

    out, result, _ = dataset
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["items"] == result.items and manifest["seed"] == 0 and manifest["per_cell"] == result.per_cell
    for relative, digest in manifest["files"].items():
        assert hashlib.sha256((out / relative).read_bytes()).hexdigest() == digest
    structure = manifest["filters"]["structure"]
    assert structure["in"] >= result.items and 0 <= structure["pass_rate"] <= 1
    assert not (out / ".work").exists()


def test_same_seed_and_config_give_byte_identical_files(dataset, demo_kg, tmp_path):
    out, _, _ = dataset
    again = tmp_path / "again"
    synthesize(demo_kg, CONFIG, again)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for relative in [*manifest["files"], "manifest.json"]:
        assert (again / relative).read_bytes() == (out / relative).read_bytes(), relative


def test_interrupted_run_resumes_to_identical_files(dataset, demo_kg, tmp_path):
    out, result, _ = dataset
    stopped = tmp_path / "stopped"
    _stop_after(result.items // 3, demo_kg, stopped)
    work = stopped / ".work"
    for spool in work.glob("*.spool.jsonl"):  # a kill after spooling a scenario's lines, before logging it
        with spool.open("ab") as f:
            f.write(b'{"public_id":"lines nobody logged"}\n')
    with (work / "progress.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"cell": "half a line written when the pro')  # a kill mid-write
    synthesize(demo_kg, CONFIG, stopped)
    for relative in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["files"]:
        assert (stopped / relative).read_bytes() == (out / relative).read_bytes(), relative


def test_resume_refuses_a_spool_shorter_than_its_log(demo_kg, tmp_path):
    stopped = tmp_path / "stopped"
    _stop_after(10, demo_kg, stopped)
    (stopped / ".work" / "items.spool.jsonl").write_bytes(b"")  # lost lines the log accounts for
    with pytest.raises(KgsynthError, match="shorter than its progress log"):
        synthesize(demo_kg, CONFIG, stopped)


def test_killed_cli_run_resumes_to_identical_files(tmp_path):
    """A real SIGKILL in the middle of ``kgsynth synth``, then the same command again."""
    command = [sys.executable, "-m", "kgsynth.cli", "synth", "--n", "1200", "--seed", "5", "--out"]
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    subprocess.run([*command, str(reference)], cwd=ROOT, check=True, capture_output=True)
    process = subprocess.Popen([*command, str(killed)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    progress = killed / ".work" / "progress.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if progress.exists() and progress.stat().st_size > 20_000:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    process.wait()
    if not progress.exists():
        pytest.fail("the run finished before it could be killed; raise --n")
    subprocess.run([*command, str(killed)], cwd=ROOT, check=True, capture_output=True)
    manifest = json.loads((reference / "manifest.json").read_text(encoding="utf-8"))
    for relative in [*manifest["files"], "manifest.json"]:
        assert (killed / relative).read_bytes() == (reference / relative).read_bytes(), relative


def test_cells_the_graph_cannot_fill_are_reported_not_faked(demo_kg, tmp_path):
    config = SynthConfig.model_validate({"dataset": {"n": 6000}})
    result = synthesize(demo_kg, config, tmp_path / "big")
    assert result.unfillable_cells  # the demo graph cannot give 6,000 items
    assert any(f"{len(result.unfillable_cells)} of the {len(result.manifest['cells'])} cells of the configured grid" in note
               for note in result.notes)
    assert result.manifest["shortfall"]["missing"] == 6000 - result.items > 0
    manifest = json.loads((tmp_path / "big" / "manifest.json").read_text(encoding="utf-8"))
    for cell, kept in result.unfillable_cells.items():
        assert kept < result.per_cell and manifest["cells"][cell]["kept"] == kept
        assert not any(key.startswith(cell + "/") for key in manifest["counts"])


def test_items_of_cells_that_fell_short_are_left_out_of_every_split(demo_kg, tmp_path):
    """At n=3000 some cells have enough scenarios to be worded but too many are rejected:
    their items were spooled, so assembly copies the filled cells' lines record by record."""
    config = SynthConfig.model_validate({"dataset": {"n": 3000}})
    result = synthesize(demo_kg, config, tmp_path / "out")
    cells = result.manifest["cells"]
    worded_short = [c for c, kept in result.unfillable_cells.items() if kept and cells[c]["scenarios"] >= result.per_cell]
    assert worded_short, "no cell was worded and then fell short: pick another n"
    rows = {split: [json.loads(line) for line in (tmp_path / "out" / f"{split}.jsonl").open(encoding="utf-8")] for split in SPLITS}
    assert all(len(r) == result.items for r in rows.values())
    assert all(row["cell"] not in result.unfillable_cells for row in rows["items"])
    in_items = [r["public_id"] for r in rows["items"]]
    for split, split_rows in rows.items():  # the public files: the same rows in an order of their own (test_public_order)
        public = split.startswith("public/")
        ids = [r["public_id"] for r in split_rows]
        assert (sorted(ids) if public else ids) == (sorted(in_items) if public else in_items), split


# ---------------------------------------------------------------------------- dialogue knobs
def _scenarios(plans, difficulty: str):
    return [s for p in plans for s in p.scenarios if s.cell.difficulty.value == difficulty][:40]


@pytest.mark.parametrize("position", ["start", "middle", "end"])
def test_position_control_puts_fact_turns_where_asked(plans, position):
    settings = DialogueSettings(position=position)
    buckets = Counter(make_item(s, "en", settings, 0).metadata.position for s in _scenarios(plans, "hard"))
    assert buckets.most_common(1)[0][0] == position


def test_exact_fact_turn_indices(plans):
    """A scenario with fewer fact turns takes the first indices, one with more merges its facts into as many turns."""
    for scenario in _scenarios(plans, "medium"):
        item = make_item(scenario, "ru", DialogueSettings(fact_turn_indices={"medium": (0, 2, 5)}), 0)
        assert item.metadata.fact_turns == (0, 2, 5)[: len(scenario.pieces)]
        item = make_item(scenario, "ru", DialogueSettings(fact_turn_indices={"medium": (4,)}), 0)
        assert item.metadata.fact_turns == (4,) and item.dialogue[4].facts == tuple(sorted(item.dialogue[4].facts))


def test_fact_turn_indices_must_fit_the_difficulty_table():
    with pytest.raises(ValueError, match="fact_turn_indices.easy needs one or more distinct indices below 4"):
        DialogueSettings(fact_turn_indices={"easy": (0, 5)})


def test_length_padding_reaches_the_target_without_touching_the_answer(plans):
    for scenario in _scenarios(plans, "easy")[:20]:
        short = make_item(scenario, "en", DialogueSettings(), 0)
        long = make_item(scenario, "en", DialogueSettings(target_tokens=2000), 0)
        assert long.metadata.token_length >= 2000 > short.metadata.token_length
        assert long.gold == short.gold and long.metadata.fact_values == short.metadata.fact_values
        labels = {n.casefold() for f in scenario.facts for node in (f.subject, f.object) for n in node.labels.values()}
        for turn in long.dialogue:
            if turn.kind == "distractor":
                assert not any(label in turn.text.casefold() for label in labels), turn.text  # a haystack: test_haystack.py
                assert not numbers_in(turn.text) & {n for v in long.metadata.fact_values for n in numbers_in(v)}, turn.text


def test_a_corrected_value_is_misstated_first_and_the_gold_uses_the_final_one(plans):
    settings = DialogueSettings(corrections=1.0)
    corrected = 0
    for scenario in _scenarios(plans, "hard"):  # a hard level has room for a correction beyond what it needs
        item = make_item(scenario, "en", settings, 0)
        wrong_turns = [i for i, t in enumerate(item.dialogue) if t.kind == "misstatement"]
        if not wrong_turns:
            continue
        corrected += 1
        fact_turn = next(i for i, t in enumerate(item.dialogue) if t.kind == "fact" and "not" in t.text and i > wrong_turns[0])
        final = [v for i, v in zip(item.metadata.fact_to_turn, item.metadata.fact_values, strict=True) if i == fact_turn]
        assert final and all(v in item.dialogue[fact_turn].text for v in final)
        assert not any(v in item.dialogue[wrong_turns[0]].text for v in final)
        # whoever corrects says whose slip it was: "Let me correct myself" only from the one who misstated it
        own = item.dialogue[fact_turn].speaker == item.dialogue[wrong_turns[0]].speaker
        opening = item.dialogue[fact_turn].text.split(":")[0] + ":"
        assert own == any(p.startswith(opening) for p in STATEMENTS["en"]["correction_self"])
        named = [i for i, piece in enumerate(scenario.pieces) if piece.name]
        assert not named or wrong_turns[0] > item.metadata.fact_turns[named[0]]  # after the entity is introduced
    assert corrected >= 10


def test_same_rng_state_gives_the_same_dialogue(plans):
    scenario = plans[0].scenarios[0]
    first = build_dialogue(scenario, "en", DialogueSettings(), item_rng(3, scenario, "en"))
    again = build_dialogue(scenario, "en", DialogueSettings(), item_rng(3, scenario, "en"))
    assert first == again


# ---------------------------------------------------------------------------- config
def test_config_rejects_unknown_keys_in_one_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[dataset]\nn = 10\nsede = 3\n')
    with pytest.raises(KgsynthError, match=r"bad.toml: dataset.sede: Extra inputs are not permitted"):
        load_config(path)


def test_config_needs_labels_in_every_item_language():
    with pytest.raises(ValueError, match="label_languages lacks"):
        SynthConfig.model_validate({"graph": {"label_languages": ["en"]}, "dataset": {"languages": ["en", "ru"]}})


def test_config_loads_toml_and_yaml(tmp_path):
    (tmp_path / "c.toml").write_text('[dataset]\nn = 10\nlanguages = ["ru"]\n[dialogue]\nposition = "end"\n')
    (tmp_path / "c.yaml").write_text("dataset:\n  n: 10\n  languages: [ru]\ndialogue:\n  position: end\n")
    assert load_config(tmp_path / "c.toml") == load_config(tmp_path / "c.yaml")
    assert load_config(tmp_path / "c.toml").dialogue.position == "end"


def test_every_shipped_config_validates():
    from kgsynth.eval.config import EvalConfig
    from kgsynth.ingest import IngestConfig
    from kgsynth.pressure.config import PressureConfig

    schemas = {"eval_": EvalConfig, "ingest": IngestConfig, "pressure_": PressureConfig}  # by file-name prefix; else synth
    paths = sorted((ROOT / "configs").glob("*.toml"))
    assert all(any(p.name.startswith(prefix) for p in paths) for prefix in schemas)
    for path in paths:
        schema = next((s for prefix, s in schemas.items() if path.name.startswith(prefix)), SynthConfig)
        load_config(path, schema)


def test_cli_error_is_one_line(tmp_path):
    (tmp_path / "bad.toml").write_text("[dataset]\nlanguages = ['de']\n")
    run = subprocess.run([sys.executable, "-m", "kgsynth.cli", "synth", "--config", str(tmp_path / "bad.toml")],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "languages" in run.stderr


def test_a_scenario_copy_recomputes_what_it_caches(plans):
    scenario = next(s for p in plans for s in p.scenarios if len(s.facts) > 1)
    assert scenario.source_triples and scenario.mentioned_blob and scenario.mentioned_texts
    copied = scenario.model_copy(update={"facts": scenario.facts[:1]})
    fresh = Scenario(**{**dict(scenario), "facts": scenario.facts[:1]})
    assert copied.source_triples == scenario.source_triples[:1] == fresh.source_triples
    assert (copied.mentioned_blob, copied.mentioned_texts) == (fresh.mentioned_blob, fresh.mentioned_texts)


@pytest.mark.parametrize(("args", "config", "said"), [
    (["--llm-model", "x"], "", "--llm-model needs --llm-base-url"),
    ([], "[filters]\norder = ['closed_book']\n", "filter 'closed_book' needs a model"),
    ([], "[filters]\norder = ['judges']\n", "unknown filter 'judges'"),
    ([], "[llm]\nbase_url = 'http://127.0.0.1:1/v1'\nconcurrency = 0\n", "llm.concurrency"),
    ([], "[llm]\nconcurrency = 2\n", "names no endpoint: set llm.base_url or pass --llm-base-url"),
])
def test_llm_settings_errors_are_one_line(tmp_path, args, config, said):
    (tmp_path / "c.toml").write_text(config)
    run = subprocess.run([sys.executable, "-m", "kgsynth.cli", "synth", "--config", str(tmp_path / "c.toml"), *args],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and said in run.stderr, run.stderr


def test_an_unreachable_model_stops_the_run_in_one_line_and_loses_nothing(demo_kg, tmp_path):
    """No server on the port: the run stops at the first call with the gateway's reason,
    before any scenario is logged as processed, so the same run resumes once the server is up
    (it does not reject every scenario left and then pass for finished)."""
    config = SynthConfig.model_validate({
        "dataset": {"n": 4, "difficulties": ["easy"], "formats": ["number"]}, "sampling": {"subgraphs_per_shape": 30},
        "llm": {"base_url": "http://127.0.0.1:9/v1", "cache": str(tmp_path / "c.sqlite"), "max_retries": 0, "timeout_s": 2},
    })
    out = tmp_path / "out"
    with pytest.raises(KgsynthError, match=r"^cannot reach the model local at http://127\.0\.0\.1:9/v1: connection refused$"):
        synthesize(demo_kg, config, out)
    logged = [json.loads(line) for line in (out / ".work" / "progress.jsonl").read_text().splitlines()]
    assert logged and not any("index" in record for record in logged)
    assert not (out / "manifest.json").exists()


def test_scenarios_share_one_field_name_set(plans):
    """Every scenario, fact and wording is given all its fields, so instances of a class share
    one set of field names (``share_field_names``): a per-instance set cost the 1M run 360 MB
    when a new field was left to its default."""
    scenarios = [s for plan in plans for s in plan.scenarios]
    facts = [f for s in scenarios for f in s.facts]
    wordings = [w for s in scenarios for w in s.wording.values()]
    for instances in (scenarios, facts, wordings):
        assert len({id(x.__pydantic_fields_set__) for x in instances}) == 1, type(instances[0]).__name__
