"""``kgsynth pressure claims | train | run | report`` end to end against a real model:
SmolLM2-135M behind llama-cpp-python's server on 127.0.0.1 (tests/local_llm.py). The model
is tiny, so this tests the path (claims from the graph, every probe scored in code, a policy
trained and replayed, the static benchmark and the report, a warm rerun without calls), not
the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from local_llm import SMOLLM2_SHA256, llama_server, missing, qwen05_path, smollm2_path, verify

from kgsynth.eval.scoring import value_recalled
from kgsynth.formats.answers import check_answer
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize
from kgsynth.pressure.policy import Outcome
from kgsynth.pressure.run import read_claims, read_episodes

pytestmark = [pytest.mark.local_llm, pytest.mark.skipif(missing() is not None, reason=missing() or "")]

CONFIG = """
max_steps = 2
train_episodes = 6
[model]
cache = "{cache}"
concurrency = 1
timeout_s = 300
[claims]
in_context_n = 12
world_n = 4
"""


@pytest.fixture
def claims(demo_kg, tmp_path):
    config = {"sampling": {"shapes": ["simple"], "subgraphs_per_shape": 200}, "dataset": {"n": 60}}
    synthesize(demo_kg, SynthConfig.model_validate(config), tmp_path / "dataset")
    (tmp_path / "pressure.toml").write_text(CONFIG.format(cache=tmp_path / "cache.sqlite"))
    _kgsynth(tmp_path, "claims", "--dataset", str(tmp_path / "dataset"), "--world", str(ROOT / "tests" / "data" / "world_small.ttl"),
             "--config", "pressure.toml", "--out", "claims.jsonl")
    return {c.id: c for c in read_claims(tmp_path / "claims.jsonl")}


def _kgsynth(folder, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "kgsynth.cli", "pressure", *args]
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=folder)
    assert done.returncode == 0, done.stderr
    return done


def _check_run(folder, cases, policies: set[str]) -> list:
    """Every outcome is the checker's verdict on the answer kept beside it; a warm rerun asks nothing."""
    records = read_episodes(folder / "first")
    assert {r.policy for r in records} == policies
    for record in records:  # each outcome says what the answer beside it holds
        case = cases[record.case_id]
        assert record.failure is None
        assert (record.zero_turn is Outcome.maintained) == check_answer(
            record.answer, case.answer_format, case.true_value, case.constraints, aliases=case.true_aliases).correct
        for e in record.exchanges:
            if e.outcome is Outcome.capitulated:
                assert any(value_recalled(e.answer, v) for v in (case.false_value, case.claim_value, *case.false_aliases))
            if e.outcome is Outcome.maintained:
                assert check_answer(e.answer, case.answer_format, case.true_value, case.constraints, aliases=case.true_aliases).correct
        assert (record.zero_turn is Outcome.maintained) == bool(record.exchanges)
        assert record.calls == 1 + 2 * len(record.exchanges)
    assert [r.model_dump() for r in read_episodes(folder / "again")] == [r.model_dump() for r in records]
    run = json.loads((folder / "again" / "run.json").read_text())
    assert sum(u["calls"] for u in run["usage"].values()) == 0
    plots = 2 if any(r.exchanges for r in records) else 1  # robustness always; flip rate by operation once a step was pushed
    assert (folder / "first" / "report.html").read_text().count("<img") == plots
    metrics = json.loads((folder / "first" / "metrics.json").read_text())
    assert {p["policy"] for p in metrics["policies"]} == policies
    return records


def test_smollm2_answers_are_scored_in_code_and_a_warm_rerun_makes_no_call(claims, tmp_path):
    """SmolLM2 answers in whole sentences (format violations at turn 0, so few steps are
    pushed): the path, not the model."""
    model = smollm2_path()
    verify(model, SMOLLM2_SHA256)
    with llama_server(model) as base_url:
        common = ("--claims", "claims.jsonl", "--config", "pressure.toml", "--base-url", base_url)
        first = _kgsynth(tmp_path, "run", *common, "--out", "first")
        _kgsynth(tmp_path, "run", *common, "--out", "again")
    assert "report: " in first.stderr
    records = _check_run(tmp_path, claims, {"random", "farm", "are_you_sure"})
    assert {r.case_id for r in records} == set(claims)  # no policy: nothing was trained on, every claim is run


@pytest.mark.slow
def test_qwen_is_pushed_by_a_trained_policy_on_held_out_claims(claims, tmp_path):
    model = qwen05_path(Path.home() / ".cache" / "kgsynth" / "models")
    if model is None:
        pytest.skip("Qwen2.5-Coder-0.5B's registry packages are not installed")
    with llama_server(model, n_ctx=4096) as base_url:
        common = ("--claims", "claims.jsonl", "--config", "pressure.toml", "--base-url", base_url)
        _kgsynth(tmp_path, "train", *common, "--out", "policy")
        _kgsynth(tmp_path, "run", *common, "--policy", "policy/policy.json", "--out", "first")
        _kgsynth(tmp_path, "run", *common, "--policy", "policy/policy.json", "--out", "again")
    records = _check_run(tmp_path, claims, {"learned", "random", "farm", "are_you_sure"})
    trained = set(json.loads((tmp_path / "policy" / "policy.json").read_text())["trained_on"])
    assert {r.case_id for r in records} == set(claims) - trained and any(r.exchanges for r in records)
