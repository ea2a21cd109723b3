"""The LLM gateway against a real model: SmolLM2-135M behind llama-cpp-python's server on
127.0.0.1 (tests/local_llm.py). Plumbing only (the model is tiny): free text, typed output
through the forms this server accepts, token counts, determinism, and the cache."""

from __future__ import annotations

import pytest
from local_llm import SMOLLM2_SHA256, llama_server, missing, smollm2_path, verify
from pydantic import BaseModel

from kgsynth.llm import LLMGateway, ModelConfig, Request, ResponseCache

pytestmark = [pytest.mark.local_llm, pytest.mark.skipif(missing() is not None, reason=missing() or "")]


class City(BaseModel):
    city: str


@pytest.fixture(scope="module")
def base_url():
    model = smollm2_path()
    verify(model, SMOLLM2_SHA256)
    with llama_server(model) as url:
        yield url


def _config(base_url: str) -> ModelConfig:
    return ModelConfig(base_url=base_url, model="local", max_tokens=200, timeout_s=120, max_retries=2)


ASK = [{"role": "user", "content": "Name the capital of France in one word."}]


def test_free_text_with_token_counts_and_the_same_reply_twice(base_url):
    gateway = LLMGateway(_config(base_url))
    first, second = gateway.complete_all([Request(ASK, stage="plain"), Request(ASK, stage="plain")])
    assert first.ok and first.text and first.text == second.text  # temperature 0, fixed seed
    usage = gateway.usage["plain"]
    assert usage.calls == 2 and usage.prompt_tokens > 0 and usage.completion_tokens > 0


def test_typed_output_falls_back_to_the_form_this_server_accepts(base_url):
    gateway = LLMGateway(_config(base_url))
    (result,) = gateway.complete_all([Request(ASK, output=City, stage="typed")])
    assert result.ok, result.error
    assert isinstance(result.value, City) and result.value.city.strip()
    # llama.cpp's server answers json_schema with HTTP 500 and accepts json_object + schema
    assert gateway.output_mode == "json_object" and gateway.usage["typed"].calls == 2


def test_a_cached_rerun_makes_no_calls(base_url, tmp_path):
    requests = [Request([{"role": "user", "content": f"Say the number {i}."}], stage="cached") for i in range(3)]
    first = LLMGateway(_config(base_url), ResponseCache(tmp_path / "cache.sqlite"))
    texts = [r.text for r in first.complete_all(requests)]
    again = LLMGateway(_config(base_url), ResponseCache(tmp_path / "cache.sqlite"))
    results = again.complete_all(requests)
    assert [r.text for r in results] == texts and all(r.cached for r in results)
    assert again.usage["cached"].calls == 0 and again.usage["cached"].cache_hits == 3


def test_closed_book_drops_exactly_the_items_the_guesser_answers(base_url, demo_kg, tmp_path):
    from kgsynth.filters import ClosedBookFilter
    from kgsynth.filters.closed_book import closed_book_messages
    from kgsynth.formats.answers import AnswerFormat, Constraints
    from kgsynth.kg import load_rules
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import plan_cells
    from kgsynth.synth.dialogues.dialogue import DialogueSettings
    from kgsynth.synth.dialogues.item import make_item

    plans = plan_cells(demo_kg, SynthConfig(), load_rules(demo_kg))
    yes_no = [make_item(p.scenarios[0], "en", DialogueSettings(), 0) for p in plans if p.key.endswith("/yes_no")][:3]
    others = [make_item(p.scenarios[0], "en", DialogueSettings(), 0) for p in plans if not p.key.endswith("/yes_no")][:5]
    # a worked example any model knows, so that a drop can happen
    known = others[0].model_copy(update={
        "question": "What is the capital of France?", "format_instruction": "Answer with one word.",
        "answer_format": AnswerFormat.one_token, "constraints": Constraints(), "gold": "Paris", "gold_aliases": [],
    })
    items = [*yes_no, known, *others]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    guesser = LLMGateway(_config(base_url), cache)
    closed_book = ClosedBookFilter([guesser])
    verdicts = closed_book.reasons(items)
    assert verdicts[:3] == [None] * 3 and guesser.usage["closed_book"].calls == len(items) - 3  # yes/no: never guessed
    # the same guesses, read back through the cache and checked here
    replay = LLMGateway(_config(base_url), cache)
    guesses = replay.complete_all([Request(closed_book_messages(item), stage="closed_book") for item in items[3:]])
    assert replay.usage["closed_book"].calls == 0 and all(g.ok for g in guesses)
    expected = [closed_book.knows(g.text, i) for g, i in zip(guesses, items[3:], strict=True)]
    assert [v is not None for v in verdicts[3:]] == expected
    assert expected[0] and not all(expected)  # both outcomes occur, so the comparison means something

def test_kgsynth_synth_with_a_real_model_writes_english_and_russian_items_and_a_report(base_url, tmp_path):
    """The whole LLM path through the command line: SmolLM2 words, guesses and judges (a
    tiny model, so the judge's thresholds are those of configs/local_llm.toml)."""
    import json
    import os
    import subprocess
    import sys

    from conftest import ROOT

    config = tmp_path / "llm.toml"
    config.write_text(
        '[dataset]\nn = 4\ndifficulties = ["easy"]\nformats = ["number"]\n[sampling]\nsubgraphs_per_shape = 60\n'
        f'[llm]\ncache = "{tmp_path / "cache.sqlite"}"\nconcurrency = 1\ntimeout_s = 120\nattempts = 1\ncell_budget = 1\n'
        "[filters.judge]\nmin_each = 0\nmin_total = 0\n"
    )
    command = [sys.executable, "-m", "kgsynth.cli", "synth", "--config", str(config), "--llm-base-url", base_url]
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    first = subprocess.run([*command, "--out", str(tmp_path / "first")], env=env, capture_output=True, text=True)
    # SmolLM2 may fail every check: then the run writes its files and says so in one line
    assert first.returncode == 0 or first.stderr.startswith("error: wrote no item"), first.stderr
    report = json.loads((tmp_path / "first" / "filter_report.json").read_text())
    stages = report["stages"]
    assert stages["verbalise"]["calls"] >= stages["verbalise"]["in"] > 0
    for earlier, later in zip(report["order"], report["order"][1:]):
        assert stages[later]["in"] <= stages[earlier]["out"]  # each stage sees only survivors
    written = tmp_path / "first" / "items.jsonl"  # a dataset without rows has no items file
    items = [json.loads(line) for line in written.read_text().splitlines()] if written.is_file() else []
    if items:  # SmolLM2 may fail every check: then the cells are reported unfillable, not faked
        assert {i["language"] for i in items} == {"en", "ru"} and all(i["review"] for i in items)
    else:
        assert json.loads((tmp_path / "first" / "manifest.json").read_text())["unfillable_cells"]
    assert "model calls:" in first.stderr or not items
    again = subprocess.run([*command, "--out", str(tmp_path / "again")], env=env, capture_output=True, text=True)
    assert again.returncode == first.returncode, again.stderr
    assert json.loads((tmp_path / "again" / "filter_report.json").read_text())["total"]["calls"] == 0
    assert json.loads((tmp_path / "again" / "manifest.json").read_text())["files"] == json.loads(
        (tmp_path / "first" / "manifest.json").read_text())["files"]  # the same files, byte for byte (sha256)
