"""The LLM run of ``kgsynth synth`` against the local fault injector with FAKE stage replies
(tests/fake_llm_stages.py): faults lose and duplicate nothing, a killed run resumes and
reuses the cache, a re-run makes no call, failed checks are retried a bounded number of
times, and the report counts calls per stage. Content is tested with a real model in
tests/test_llm_local.py."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import kill_when_logged
from fake_llm_stages import fake_stage_reply
from llm_fault_injector import FaultInjectingServer

from kgsynth.dataset.splits import read_items
from kgsynth.errors import KgsynthError
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize
from kgsynth.synth.dialogues.llm_dialogue import PROMPT

# 5 cells x 2 languages: 10 scenarios per cell, 100 items
DATASET = {"n": 100, "difficulties": ["easy"], "formats": ["number"]}
ORDER = ["structure", "rule_leakage", "answer_stated", "entity_match", "closed_book", "judge"]


def _config(server: FaultInjectingServer, cache: Path, **llm) -> SynthConfig:
    section = {"base_url": server.base_url, "cache": str(cache), "timeout_s": 0.5, "max_retries": 6, "concurrency": 4} | llm
    return SynthConfig.model_validate({"dataset": DATASET, "filters": {"order": ORDER}, "llm": section})


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.jsonl"))}


@pytest.fixture(scope="module")
def clean_run(demo_kg, tmp_path_factory):
    """A run without faults: the reference every other run is compared with."""
    base = tmp_path_factory.mktemp("clean")
    with FaultInjectingServer(fake_stage_reply) as server:
        result = synthesize(demo_kg, _config(server, base / "cache.sqlite"), base / "out")
        requests = len(server.requests)
    return result, base / "out", requests


def test_the_fake_run_keeps_every_cell_full_and_counts_calls(clean_run):
    result, out, requests = clean_run
    items = list(read_items(out / "items.jsonl"))
    assert result.items == len(items) == 100
    assert Counter(i.language for i in items) == {"en": 50, "ru": 50}
    assert all(i.review is not None and i.review.total == 12 for i in items)
    report = json.loads((out / "filter_report.json").read_text())
    stages = report["stages"]
    assert report["order"] == [*ORDER[:3], "verbalise", *ORDER[3:]]
    # one generation, one guess and one judgement per item when everything passes
    for stage in ("verbalise", "closed_book", "judge"):
        assert stages[stage]["in"] == stages[stage]["out"] == stages[stage]["calls"] == 100
    assert report["total"]["calls"] == requests == 300
    assert report["total"]["calls_per_accepted_item"] == 3.0


def test_thirty_percent_faults_lose_and_duplicate_no_item(clean_run, demo_kg, tmp_path, monkeypatch):
    _, clean_out, _ = clean_run
    # short back-offs (test_llm_gateway's): what is tested here is that the retries lose and
    # duplicate nothing, not how long they wait (about 40 s of the defaults' sleeps otherwise)
    with FaultInjectingServer(fake_stage_reply, rate=0.3, seed=7, stall_s=1.0) as server:
        config = _config(server, tmp_path / "cache.sqlite")
        config_for = type(config.llm).model_config_for
        monkeypatch.setattr(type(config.llm), "model_config_for", lambda self, stage, seed: config_for(
            self, stage, seed).model_copy(update={"backoff_s": 0.01, "max_backoff_s": 0.05}))
        synthesize(demo_kg, config, tmp_path / "out")
        faults = len(server.requests) - 300
    assert faults > 50  # the faults did happen, and were retried
    assert _files(tmp_path / "out") == _files(clean_out)
    ids = [i.id for i in read_items(tmp_path / "out" / "items.jsonl")]
    assert len(ids) == len(set(ids)) == 100


def test_a_rerun_with_the_cache_makes_no_call(clean_run, demo_kg, tmp_path):
    _, clean_out, _ = clean_run
    cache = tmp_path / "cache.sqlite"
    with FaultInjectingServer(fake_stage_reply) as server:
        synthesize(demo_kg, _config(server, cache), tmp_path / "first")
        before = len(server.requests)
        synthesize(demo_kg, _config(server, cache), tmp_path / "second")
        assert len(server.requests) == before
    report = json.loads((tmp_path / "second" / "filter_report.json").read_text())
    assert report["total"]["calls"] == 0 and report["stages"]["judge"]["cache_hits"] == 100
    assert _files(tmp_path / "second") == _files(clean_out)


def test_a_killed_run_resumes_reusing_the_cache(clean_run, tmp_path):
    _, clean_out, clean_requests = clean_run
    with FaultInjectingServer(fake_stage_reply) as server:
        config = tmp_path / "llm.toml"
        config.write_text(
            f'[dataset]\nn = 100\ndifficulties = ["easy"]\nformats = ["number"]\n[filters]\norder = {json.dumps(ORDER)}\n'
            f'[llm]\nbase_url = "{server.base_url}"\ncache = "{tmp_path / "cache.sqlite"}"\ntimeout_s = 0.5\nmax_retries = 6\n'
        )
        command = [sys.executable, "-m", "kgsynth.cli", "synth", "--config", str(config), "--out", str(tmp_path / "out")]
        env = kill_when_logged(command, tmp_path / "out" / ".work" / "progress.jsonl", b'"index"', 20)
        first = len(server.requests)
        assert 0 < first < clean_requests  # killed mid-run
        finished = subprocess.run(command, env=env, capture_output=True, text=True)
        assert finished.returncode == 0, finished.stderr
        resumed = len(server.requests) - first
    # nothing done before the kill is asked again: at most the requests in flight then
    assert first + resumed <= clean_requests + 4
    assert _files(tmp_path / "out") == _files(clean_out)
    report = json.loads((tmp_path / "out" / "filter_report.json").read_text())
    assert report["total"]["accepted_items"] == 100


def test_a_generator_that_breaks_the_plan_is_retried_then_rejected_with_the_reason(demo_kg, tmp_path):
    dataset = {"n": 4, "difficulties": ["easy"], "formats": ["number"]}
    with FaultInjectingServer(functools.partial(fake_stage_reply, drop_values=True)) as server:
        config = SynthConfig.model_validate({"dataset": dataset, "llm": {"base_url": server.base_url, "cache": str(tmp_path / "c.sqlite"), "attempts": 2}})
        with pytest.raises(KgsynthError, match="wrote no item: .*; verbalise rejected most \\(\\d+\\), e.g. .*must contain"):
            synthesize(demo_kg, config, tmp_path / "out")
        generations = [r for r in server.requests if r["messages"][0]["content"] in {w["system"] for w in PROMPT.values()}]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["items"] == 0 and manifest["unfillable_cells"]
    rejections = [json.loads(line) for line in (tmp_path / "out" / "rejections.jsonl").read_text().splitlines()]
    worded = [r for r in rejections if r["filter"] == "verbalise"]
    assert worded and all("must contain" in r["reason"] for r in worded)
    assert {r["filter"] for r in rejections} - {"verbalise"} <= {"structure", "rule_leakage", "answer_stated"}  # drafts never sent
    assert len(generations) == 2 * len(worded)  # exactly `attempts` generations per item
    tried = Counter((r["cell"], r["scenario_id"]) for r in rejections)
    assert set(Counter(cell for cell, _ in tried).values()) == {5}  # llm.cell_budget x the 1 scenario each cell needs
    retry = next(r for r in generations if len(r["messages"]) > 2)
    feedback = retry["messages"][-1]["content"]
    assert ("breaks a rule: turn" in feedback or "нарушает правило (turn" in feedback) and "must contain" in feedback  # the reason went back to the model


def test_the_judge_rejects_low_scores_and_its_rationale_is_kept(demo_kg, tmp_path):
    dataset = {"n": 4, "difficulties": ["easy"], "formats": ["number"]}
    with FaultInjectingServer(functools.partial(fake_stage_reply, judge_score=1)) as server:
        config = SynthConfig.model_validate({
            "dataset": dataset, "filters": {"order": ["structure", "judge"]},
            "llm": {"base_url": server.base_url, "cache": str(tmp_path / "c.sqlite")},
        })
        with pytest.raises(KgsynthError, match="wrote no item: .*; judge rejected most \\(\\d+\\), e.g. judge: total 6 below 9"):
            synthesize(demo_kg, config, tmp_path / "out")
    rejections = [json.loads(line) for line in (tmp_path / "out" / "rejections.jsonl").read_text().splitlines()]
    assert rejections and all(r["filter"] == "judge" and r["reason"] == "judge: total 6 below 9" for r in rejections)


def _parity_judge(body: dict) -> str:
    """Scores 2 or 1 on every criterion, by the parity of the dialogue's hash (fixed per item)."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    score = 2 if prompt.startswith("You check one item") and sum(prompt.split("Dialogue:", 1)[1].encode()) % 2 else 1
    return fake_stage_reply(body, judge_score=score)


def test_top_n_keeps_the_best_judged_scenarios_of_each_cell(demo_kg, tmp_path):
    def run(pool: float, name: str) -> list:
        with FaultInjectingServer(_parity_judge) as server:
            config = SynthConfig.model_validate({
                "dataset": {"n": 20, "difficulties": ["easy"], "formats": ["number"]},
                "filters": {"order": ["structure", "judge"], "judge": {"min_total": 6}, "top_n_pool": pool},
                "llm": {"base_url": server.base_url, "cache": str(tmp_path / "c.sqlite")},
            })
            synthesize(demo_kg, config, tmp_path / name)
        return list(read_items(tmp_path / name / "items.jsonl"))

    first, best = run(1.0, "first"), run(3.0, "best")
    assert len(first) == len(best) == 20
    total = lambda items: sum(i.review.total for i in items)
    assert total(best) > total(first)
    assert min(i.review.total for i in best) >= 6


def test_near_duplicates_are_dropped_across_the_run_and_counted_once(demo_kg, tmp_path):
    from kgsynth.filters import NearDuplicateFilter

    threshold = 0.9
    with FaultInjectingServer(fake_stage_reply) as server:
        config = SynthConfig.model_validate({
            "dataset": {"n": 40, "difficulties": ["easy"], "formats": ["number"]},
            "filters": {"order": ["structure", "near_duplicate"], "near_duplicate": {"threshold": threshold}},
            "llm": {"base_url": server.base_url, "cache": str(tmp_path / "c.sqlite")},
        })
        synthesize(demo_kg, config, tmp_path / "out")
    stage = json.loads((tmp_path / "out" / "filter_report.json").read_text())["stages"]["near_duplicate"]
    assert stage["rejected"] > 0 and stage["in"] == stage["out"] + stage["rejected"]
    assert stage["in"] <= json.loads((tmp_path / "out" / "filter_report.json").read_text())["stages"]["verbalise"]["out"]
    items = list(read_items(tmp_path / "out" / "items.jsonl"))
    vectors = NearDuplicateFilter().embed(items)
    for a in range(len(items)):
        for b in range(a):
            if items[a].language == items[b].language:
                assert float(vectors[a] @ vectors[b]) < threshold
