"""``kgsynth eval`` + ``kgsynth report`` end to end against a real model: SmolLM2-135M
behind llama-cpp-python's server on 127.0.0.1 (tests/local_llm.py). The model is tiny, so
this tests the path (every condition asked, answers scored by the checker, a report
written, a warm re-run without calls), not the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT
from local_llm import SMOLLM2_SHA256, llama_server, missing, smollm2_path, verify

from kgsynth.dataset.splits import read_items
from kgsynth.eval.results import read_results
from kgsynth.eval.scoring import score
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize

pytestmark = [pytest.mark.local_llm, pytest.mark.skipif(missing() is not None, reason=missing() or "")]

CONFIG = """
rules = "given"
limit = 6
[model]
context_tokens = 2048
concurrency = 1
timeout_s = 300
[length_sweep]
targets = [200, 400, 4000]
items = 2
[position_sweep]
target_tokens = 200
items = 2
depths = [0.0, 1.0]
"""


def test_eval_and_report_end_to_end_then_a_warm_rerun_makes_no_call(demo_kg, tmp_path):
    synthesize(demo_kg, SynthConfig.model_validate({"dataset": {"n": 40}}), tmp_path / "dataset")
    (tmp_path / "eval.toml").write_text(CONFIG.replace("[model]\n", f'[model]\ncache = "{tmp_path / "cache.sqlite"}"\n'))
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    model = smollm2_path()
    verify(model, SMOLLM2_SHA256)
    with llama_server(model) as base_url:

        def kgsynth_eval(out: str) -> subprocess.CompletedProcess:
            command = [sys.executable, "-m", "kgsynth.cli", "eval", "--dataset", str(tmp_path / "dataset"), "--config",
                       str(tmp_path / "eval.toml"), "--base-url", base_url, "--out", str(tmp_path / out)]
            return subprocess.run(command, env=env, capture_output=True, text=True, check=False)

        first = kgsynth_eval("first")
        assert first.returncode == 0, first.stderr
        again = kgsynth_eval("again")
        assert again.returncode == 0, again.stderr
    items = {i.id: i for i in read_items(tmp_path / "dataset" / "items.jsonl")}
    records = read_results(tmp_path / "first")
    conditions = {r.condition for r in records}
    assert {"main", "closed_book", "oracle", "length", "position"} <= conditions
    assert not any(r.failure for r in records)
    for record in records:
        assert record.prompt_tokens > 0 and record.answer is not None
        if record.condition != "fact_probe":
            assert record.correct == score(items[record.item_id], record.answer).correct
    run = json.loads((tmp_path / "first" / "run.json").read_text())
    assert run["skipped_targets"] == [4000]  # 4000 counted tokens do not fit a 2048-token window
    assert {r.param for r in records if r.condition == "length"} == {200.0, 400.0}
    assert "0 from the cache" in first.stderr and "0 model calls" in again.stderr
    assert [r.answer for r in read_results(tmp_path / "again")] == [r.answer for r in records]
    html = (tmp_path / "first" / "report.html").read_text()
    assert "<img" in html and "Hypotheses" in html
    rebuilt = subprocess.run([sys.executable, "-m", "kgsynth.cli", "report", str(tmp_path / "first")], env=env,
                             capture_output=True, text=True, check=False)
    assert rebuilt.returncode == 0 and (tmp_path / "first" / "report.html").read_text() == html
