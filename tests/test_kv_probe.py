"""The key-value retrieval probe (source 004): the JSON objects it asks about, its strict
score, its metrics and report; its error handling in the runner against the FAULT
INJECTOR (a fake server whose replies are computed from the prompt, for plumbing only);
and ``kgsynth eval`` end to end against a real local model (skipped without one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid

import pytest
from conftest import ROOT, kill_when_logged
from llm_fault_injector import FaultInjectingServer
from local_llm import SMOLLM2_SHA256, llama_server, missing, smollm2_path, verify
from test_eval_report import bare_metrics, colour_pixels, decode_png

from kgsynth.eval import kv, plots
from kgsynth.eval.config import EvalConfig, EvalModel, KVProbe
from kgsynth.eval.metrics import kv_retrieval
from kgsynth.eval.prompts import kv_messages
from kgsynth.eval.report import build_report, write_report
from kgsynth.eval.results import AnswerRecord, KVQuery, read_results
from kgsynth.eval.runner import _PROMPT_OVERHEAD, evaluate, plan_kv

POSITIONS = (0.0, 0.25, 0.5, 0.75, 1.0)


# ---------------------------------------------------------------------------- the objects
def test_the_same_seed_gives_the_same_objects_and_another_seed_others():
    first = kv.prompts((10, 50), POSITIONS, trials=3, seed=7)
    assert first == kv.prompts((10, 50), POSITIONS, trials=3, seed=7)
    other = kv.prompts((10, 50), POSITIONS, trials=3, seed=8)
    assert not {p.queried for p in first} & {p.queried for p in other}
    assert len({p.object_id for p in first}) == 6 and len({p.key for p in first}) == len(first) == 30
    assert kv.random_pairs(10, 0, seed=7) != kv.random_pairs(10, 1, seed=7)  # each trial its own object


@pytest.mark.parametrize("keys", [2, 3, 10, 101])
def test_keys_and_values_are_distinct_uuids(keys):
    pairs = kv.random_pairs(keys, 0, seed=0)
    ids = [i for pair in pairs for i in pair]
    assert len(pairs) == keys and len(set(ids)) == 2 * keys
    for i in ids:
        assert kv.UUID.fullmatch(i) and str(uuid.UUID(i)) == i and uuid.UUID(i).version == 4


@pytest.mark.parametrize("keys", [2, 5, 10, 101])
def test_the_queried_pair_sits_where_asked_among_the_same_other_pairs(keys):
    planned = [p for p in kv.prompts((keys,), POSITIONS, trials=2, seed=0) if p.trial == 1]
    queried = {p.queried for p in planned}
    assert len(queried) == 1  # one pair moved through the object
    others = None
    for prompt in planned:
        shown = list(json.loads(prompt.json).items())  # the order the model reads
        assert len(shown) == keys and shown[prompt.index] == prompt.queried
        assert prompt.index == round(prompt.position * (keys - 1))
        rest = shown[: prompt.index] + shown[prompt.index + 1 :]
        assert others in (None, rest)
        others = rest
    assert planned[0].index == 0 and planned[-1].index == keys - 1  # positions 0 and 1: first and last


def test_the_prompt_shows_the_object_and_asks_for_one_key():
    prompt = kv.prompts((10,), (0.5,), trials=1, seed=0)[0]
    system, user = kv_messages(prompt)
    key, value = prompt.queried
    assert system["role"] == "system" and user["role"] == "user"
    assert prompt.json in user["content"] and user["content"].count(key) == 2  # in the object and as the question
    assert user["content"].endswith(f'Key: "{key}"\nCorresponding value:')
    assert user["content"].count(value) == 1


# ---------------------------------------------------------------------------- strict score
def test_only_the_value_itself_is_right():
    (key, value), (_, other) = kv.random_pairs(2, 0, seed=0)
    for wrapped in (value, f"  {value}\n", f'"{value}"', f"'{value}'", f"`{value}`", f"```\n{value}\n```",
                    f'```json\n"{value}"\n```'):
        check = kv.score(wrapped, value)
        assert check.correct and check.value == value, wrapped
    for wrong, in_format in ((other, True), (value.upper(), True), (key, True), (f"{value}.", False),
                             (f"The value is {value}", False), (f"{value} {other}", False), (value[:-1], False),
                             ("", False), (None, False)):
        check = kv.score(wrong, value)
        assert not check.correct and check.syntactic_ok == in_format, wrong


# ---------------------------------------------------------------------------- config
def test_config_errors_name_the_setting():
    with pytest.raises(ValueError, match="key_counts"):
        KVProbe(key_counts=(50, 10))
    with pytest.raises(ValueError, match="key_counts"):
        KVProbe(key_counts=(1, 10))
    with pytest.raises(ValueError, match="positions"):
        KVProbe(positions=(0.0, 1.5))
    with pytest.raises(ValueError, match="extra"):
        EvalConfig.model_validate({"kv_probe": {"keys": [10]}})
    with pytest.raises(ValueError, match="max_tokens >= 48"):
        EvalConfig.model_validate({"kv_probe": {}, "model": {"max_tokens": 16}})
    assert EvalConfig().kv_probe is None  # off unless configured


def test_key_counts_beyond_the_context_window_are_skipped():
    probe = {"key_counts": [10, 25, 50, 100], "positions": [0.0, 1.0], "trials": 2}
    window = object_characters(50) + _PROMPT_OVERHEAD + 48
    config = EvalConfig.model_validate({"kv_probe": probe, "model": {"context_tokens": window, "max_tokens": 48}})
    planned, skipped = plan_kv(config)
    assert skipped == (100,) and sorted({p.keys for p in planned}) == [10, 25, 50] and len(planned) == 12
    assert plan_kv(EvalConfig.model_validate({"kv_probe": probe}))[1] == ()  # no window given: nothing skipped
    assert plan_kv(EvalConfig()) == ([], ())


def object_characters(keys: int) -> int:
    """The length of an object of ``keys`` pairs as shown (every UUID is 36 characters)."""
    return len(kv.prompts((keys,), (0.0,), trials=1, seed=0)[0].json)


# ---------------------------------------------------------------------------- metrics and report
def kv_row(keys: int, trial: int, position: float, correct: bool | None) -> AnswerRecord:
    """A hand-made kv row; ``correct`` None: the request failed."""
    return AnswerRecord(
        key=f"kv/{keys}/{trial}/{position!r}", item_id=f"kv/{keys}/{trial}", condition="kv", param=position, model="m",
        rendering="transcript", answer=None if correct is None else "x", value=None, syntactic_ok=bool(correct),
        value_matches=bool(correct), correct=bool(correct), failure="HTTP 500" if correct is None else None,
        context_tokens=10 * keys, turns=0, fact_turn_indices=(), fact_depth=position,
        kv=KVQuery(keys=keys, trial=trial, index=0, key="k", value="v"),
    )


ROWS = [kv_row(4, 0, 0.0, True), kv_row(4, 0, 1.0, False), kv_row(4, 1, 0.0, True), kv_row(4, 1, 1.0, True),
        kv_row(8, 0, 0.0, False), kv_row(8, 0, 1.0, False), kv_row(8, 1, 0.0, True), kv_row(8, 1, 1.0, None)]


def test_accuracy_by_key_count_and_position_worked_by_hand():
    result = kv_retrieval(ROWS, skipped_counts=(16,), bootstrap=200)
    assert [c.keys for c in result.curves] == [4, 8, None] and result.skipped_counts == (16,)
    points = {c.keys: {p.x: (p.metrics.accuracy.mean, p.metrics.n, p.metrics.failures) for p in c.points}
              for c in result.curves}
    assert points[4] == {0.0: (1.0, 2, 0), 1.0: (0.5, 2, 0)}
    assert points[8] == {0.0: (0.5, 2, 0), 1.0: (0.0, 1, 1)}  # a failed request is counted, not scored
    assert points[None][0.0][:2] == (0.75, 4) and points[None][1.0][0] == pytest.approx(1 / 3)
    # over every position: the mean of each object's accuracy, resampled by object
    overall = {c.keys: c.overall.accuracy for c in result.curves}
    assert (overall[4].mean, overall[4].n) == (0.75, 2)
    assert (overall[8].mean, overall[8].n) == (0.5, 2)  # objects at 0/2 and 1/1, where the answers pool to 1/3
    assert (overall[None].mean, overall[None].n) == (0.625, 4)
    assert all(e.low <= e.mean <= e.high for e in overall.values())
    assert kv_retrieval([]) is None


def test_a_kv_row_holds_its_query_and_no_item():
    row = kv_row(4, 0, 0.0, True).model_dump()
    with pytest.raises(ValueError, match="a kv row has kv and no metadata"):
        AnswerRecord.model_validate(row | {"kv": None})
    with pytest.raises(ValueError, match="a kv row has kv and no metadata"):
        AnswerRecord.model_validate(row | {"condition": "main"})


def test_the_report_shows_the_probe_beside_the_position_curve(tmp_path):
    metrics = bare_metrics().model_copy(update={"kv": kv_retrieval(ROWS, skipped_counts=(16,), bootstrap=200)})
    pngs = plots.render_plots(metrics)
    assert list(pngs) == ["kv"]
    rgb = decode_png(pngs["kv"])
    assert all(colour_pixels(rgb, shade) > 100 for shade in plots._shades(2))  # one line per key count
    html = write_report(tmp_path, metrics, {"dataset": "d"}).read_text(encoding="utf-8")
    assert "<h2>Key-value retrieval</h2>" in html and "key-value retrieval" in html  # the section and its card
    section = html.split("<h2>Key-value retrieval</h2>")[1].split("</section>")[0]
    for cell in ("100.0%", "50.0%", "0.0%", "75.0%", "62.5%", "33.3%", "n = 4", "16 keys"):
        assert cell in section, cell
    assert not re.search(r"\b(nan|None|inf)\b", html, re.IGNORECASE)
    assert "Key-value retrieval" not in write_report(tmp_path / "bare", bare_metrics(), {}).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- runner error handling, FAKE server
def fake_retriever(body: dict) -> str:
    """FAKE replies for plumbing: the queried key's value read from the prompt's own JSON,
    fenced and quoted as chatty models do; "no idea" to anything else."""
    ask = body["messages"][-1]["content"]
    found = re.search(r'JSON data:\n(.*)\n\nKey: "([^"]+)"', ask, re.DOTALL)
    return f'```json\n"{json.loads(found.group(1))[found.group(2)]}"\n```' if found else "no idea"


def fake_config(server: FaultInjectingServer, tmp_path, retries: int = 6, trials: int = 2) -> EvalConfig:
    """Two items, no baselines, and 2 x 3 x ``trials`` key-value questions."""
    model = EvalModel(base_url=server.base_url, cache=str(tmp_path / "cache.sqlite"), timeout_s=2, max_retries=retries)
    return EvalConfig.model_validate({
        "model": model.model_dump(), "limit": 2, "baselines": [], "probes": False, "batch": 4,
        "kv_probe": {"key_counts": [4, 8], "positions": [0.0, 0.5, 1.0], "trials": trials},
    })


def test_a_failed_kv_request_is_a_failure_row_and_the_next_run_asks_it_again(demo_dataset, tmp_path):
    out = tmp_path / "out"
    with FaultInjectingServer(fake_retriever, script=["ok", "ok", "500", "500", "500"]) as server:
        config = fake_config(server, tmp_path, retries=0)
        first = evaluate(demo_dataset, config, out)
        rows = [r for r in read_results(out) if r.condition == "kv"]
        failed = [r for r in rows if r.failure]
        assert len(rows) == 12 and first.failures == len(failed) == 3
        assert all(not r.correct and r.answer is None and "HTTP 500" in r.failure for r in failed)
        assert all(r.correct for r in rows if not r.failure)  # the fake's fenced, quoted values are right
        asked = len(server.requests)
        second = evaluate(demo_dataset, config, out)
        assert len(server.requests) - asked == 3  # only the failed ones
    assert second.failures == 0 and all(r.correct for r in read_results(out) if r.condition == "kv")
    report = build_report(out)
    assert report.metrics.items == 2  # the JSON objects are not items
    assert report.metrics.kv.curves[-1].overall.accuracy.mean == 1.0
    assert "<h2>Key-value retrieval</h2>" in report.html.read_text(encoding="utf-8")


def test_a_killed_eval_resumes_the_probe_and_asks_nothing_twice(demo_dataset, tmp_path):
    with FaultInjectingServer(fake_retriever) as server:
        (tmp_path / "eval.yaml").write_text(fake_config(server, tmp_path, trials=10).model_dump_json())  # JSON is YAML
        command = [sys.executable, "-m", "kgsynth.cli", "eval", "--dataset", str(demo_dataset), "--config",
                   str(tmp_path / "eval.yaml"), "--out", str(tmp_path / "out")]
        env = kill_when_logged(command, tmp_path / "out" / ".work" / "progress.jsonl", b'"condition":"kv"', 5)
        first = len(server.requests)
        finished = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert finished.returncode == 0, finished.stderr
        resumed = len(server.requests) - first
    assert 2 + 5 <= first < 62 and first + resumed <= 62 + 4  # killed mid-probe; at most one batch asked twice
    rows = [r for r in read_results(tmp_path / "out") if r.condition == "kv"]
    assert len(rows) == len({r.key for r in rows}) == 60 and all(r.correct for r in rows)


# ---------------------------------------------------------------------------- a real model
LOCAL_CONFIG = """
rules = "given"
limit = 2
baselines = []
probes = false
[model]
context_tokens = 2048
concurrency = 1
timeout_s = 300
[kv_probe]
key_counts = [5, 10, 40]
positions = [0.0, 0.5, 1.0]
trials = 2
"""


@pytest.mark.local_llm
@pytest.mark.skipif(missing() is not None, reason=missing() or "")
def test_kgsynth_eval_runs_the_probe_against_a_real_model_and_reports_it(demo_dataset, tmp_path):
    """SmolLM2-135M (tests/local_llm.py): the path and the token estimate, not the model's skill."""
    config = LOCAL_CONFIG.replace("[model]\n", f'[model]\ncache = "{tmp_path / "cache.sqlite"}"\n')
    (tmp_path / "eval.toml").write_text(config)
    model = smollm2_path()
    verify(model, SMOLLM2_SHA256)
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    with llama_server(model) as base_url:
        command = [sys.executable, "-m", "kgsynth.cli", "eval", "--dataset", str(demo_dataset), "--config",
                   str(tmp_path / "eval.toml"), "--base-url", base_url, "--out", str(tmp_path / "out")]
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "key-value probe: 40 keys skipped" in result.stderr  # 40 pairs of 81 characters do not fit 2,048
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["skipped_kv_counts"] == [40] and run["usage"]["kv"]["calls"] == 12
    rows = [r for r in read_results(tmp_path / "out") if r.condition == "kv"]
    assert sorted((r.kv.keys, r.kv.trial, r.param) for r in rows) == sorted(
        (k, t, p) for k in (5, 10) for t in (0, 1) for p in (0.0, 0.5, 1.0))
    for row in rows:
        assert not row.failure and row.answer is not None
        assert dict(kv.random_pairs(row.kv.keys, row.kv.trial, seed=0))[row.kv.key] == row.kv.value
        # what decides the fit (at most a token per character) holds for a real tokenizer
        assert 0 < row.prompt_tokens <= object_characters(row.kv.keys) + _PROMPT_OVERHEAD
        if row.correct:
            assert row.kv.value in row.answer
        if row.kv.value not in row.answer:
            assert not row.correct
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<h2>Key-value retrieval</h2>" in html and (tmp_path / "out" / "plots" / "kv.png").is_file()
