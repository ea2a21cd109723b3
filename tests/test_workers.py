"""Wording on several processes or a Ray cluster writes the same bytes as one process: the
files of runs with 1, 2 and 3 workers, a run killed under 2 workers and resumed under 1, and
a run on a local Ray instance, compared file by file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline import SynthConfig, synthesize

# every shape, padding and corrections: the haystack, confusable turns and twins of kept items all go through the workers
CONFIG = {"sampling": {"shapes": ["rule_application", "simple", "set", "conditional", "multihop", "comparison"],
                       "subgraphs_per_shape": 400},
          "dataset": {"n": 700, "seed": 3}, "dialogue": {"target_tokens": 600}}


def _config(**run) -> SynthConfig:
    return SynthConfig.model_validate(CONFIG | {"run": run})


def _files(out) -> dict[str, bytes]:
    """Every file of a dataset folder, the run report without its timings."""
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    report = json.loads(files.pop("filter_report.json"))
    for stage in report["stages"].values():
        stage.pop("seconds")
    files["filter_report.json"] = json.dumps(report, sort_keys=True).encode()
    return files


@pytest.fixture(scope="module")
def demo_kg():
    """The packaged demo graph, as ``kgsynth synth`` without --graph reads it (the manifest names it so)."""
    return KnowledgeGraph.demo(lang=("en", "ru"))


@pytest.fixture(scope="module")
def one_worker(demo_kg, tmp_path_factory):
    out = tmp_path_factory.mktemp("one-worker") / "out"
    result = synthesize(demo_kg, _config(workers=1), out)
    assert result.workers.peak_mb == {} and result.workers.executor == "this process"
    assert result.manifest["filters"]["exact_duplicate"]["rejected"] > 0, "no twin of a kept item: the run checks too little"
    return out


@pytest.mark.parametrize("workers", [2, 3])
def test_any_number_of_workers_writes_the_same_bytes(demo_kg, one_worker, tmp_path, workers):
    result = synthesize(demo_kg, _config(workers=workers), tmp_path / "out")
    assert _files(tmp_path / "out") == _files(one_worker)
    assert result.workers.executor == "process" and result.workers.workers == workers
    assert 0 < len(result.workers.peak_mb) <= workers and all(mb > 0 for mb in result.workers.peak_mb.values())


def test_the_worker_setting_is_not_part_of_the_dataset(demo_kg, one_worker):
    manifest = json.loads((one_worker / "manifest.json").read_text(encoding="utf-8"))
    assert "run" not in manifest["config"]
    assert _config(workers=1).written_json() == _config(workers=4, executor="ray").written_json()


def test_a_run_killed_under_two_workers_resumes_under_one_to_the_same_bytes(one_worker, tmp_path):
    """A real SIGKILL in the middle of ``kgsynth synth --workers 2``; the same command with --workers 1 finishes it."""
    config = tmp_path / "config.yaml"  # JSON is YAML
    config.write_text(json.dumps(CONFIG))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "kgsynth.cli", "synth", "--config", str(config), "--out", str(out), "--workers"]
    process = subprocess.Popen([*command, "2"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    progress = out / ".work" / "progress.jsonl"
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while time.monotonic() < deadline and process.poll() is None:
        workers |= _children(process.pid)
        if progress.exists() and progress.read_bytes().count(b'"index"') >= 60:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    process.wait()
    if process.returncode == 0:
        pytest.fail("the run finished before it could be killed; raise n")
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in workers):
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers), "a worker outlived its killed run"
    subprocess.run([*command, "1"], cwd=ROOT, check=True, capture_output=True)
    assert _files(out) == _files(one_worker)


def _children(pid: int) -> set[int]:
    """The processes ``pid`` started, as Linux lists them."""
    found = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.update(int(child) for child in children.read_text().split())
        except OSError:  # the process ended meanwhile
            pass
    return found


@pytest.mark.slow  # about 27 s, most of it starting a ray instance; the process-pool runs above check the same bytes
def test_a_local_ray_instance_writes_the_same_bytes(demo_kg, one_worker, tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is the optional extra kgsynth[ray]")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        result = synthesize(demo_kg, _config(executor="ray"), tmp_path / "out")
    finally:
        ray.shutdown()
    assert _files(tmp_path / "out") == _files(one_worker)
    assert result.workers.executor == "Ray" and result.workers.workers == 2 and result.workers.peak_mb


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_in_wording_stops_the_run_alike_with_workers(demo_kg, tmp_path, monkeypatch, workers):
    """A bug that raises while a scenario is worded (made to raise here for the first scenario
    the run words) stops the run with that error under any number of workers; forked workers
    inherit the patched function."""
    from kgsynth.errors import KgsynthError
    from kgsynth.kg import load_rules
    from kgsynth.pipeline import run

    config = _config(workers=workers)
    first = next(plan.scenarios[0] for plan in run.plan_cells(demo_kg, config, load_rules(demo_kg)) if plan.scenarios)
    original = run.make_item

    def failing(scenario, *args, **kwargs):
        if scenario.id == first.id:
            raise KgsynthError(f"wording failed for {scenario.id}")
        return original(scenario, *args, **kwargs)

    monkeypatch.setattr(run, "make_item", failing)
    with pytest.raises(KgsynthError, match=f"^wording failed for {first.id}$"):
        synthesize(demo_kg, config, tmp_path / "out")
