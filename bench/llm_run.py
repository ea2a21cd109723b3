"""The LLM run against a real local model: Qwen2.5-Coder-0.5B behind llama-cpp-python's
OpenAI-compatible server on 127.0.0.1 (``make llm-local`` installs both), running
``kgsynth synth --config configs/local_llm.toml`` from an empty cache, then the same
command into a new folder from the warm cache.

Reported: accepted items, pass rate per stage, calls and tokens per accepted item, wall
time, and the warm re-run's calls (must be 0). Run: ``.venv/bin/python bench/llm_run.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the server fixture and the model's checked assembly

from local_llm import llama_server, qwen05_path


def run(base_url: str, config: Path, out: Path, cache_home: Path) -> tuple[dict, float]:
    command = [sys.executable, "-m", "kgsynth.cli", "synth", "--config", str(config), "--llm-base-url", base_url, "--out", str(out)]
    started = time.perf_counter()
    subprocess.run(command, check=True, env=os.environ | {"XDG_CACHE_HOME": str(cache_home)})
    return json.loads((out / "filter_report.json").read_text(encoding="utf-8")), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "local_llm.toml")
    parser.add_argument("--work", type=Path, default=None, help="folder for the model file, cache and outputs (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kgsynth-llm-run-"))
    model = qwen05_path(Path.home() / ".cache" / "kgsynth" / "models")
    if model is None:
        sys.exit("Qwen2.5-Coder-0.5B is not installed: run make llm-local")
    with llama_server(model, n_ctx=4096) as base_url:
        cold, cold_s = run(base_url, args.config, work / "cold", work / "cache")
        warm, warm_s = run(base_url, args.config, work / "warm", work / "cache")
    total = cold["total"]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; model {model.name}")
    print(f"accepted items: {total['accepted_items']}; wall time {cold_s:.0f} s")
    print(f"calls per accepted item: {total['calls_per_accepted_item']}; tokens per accepted item: {total['tokens_per_accepted_item']}")
    print("stage             in   out  pass   calls  tokens  seconds")
    for name in cold["order"]:
        s = cold["stages"][name]
        rate = f"{s['pass_rate']:.0%}" if s["pass_rate"] is not None else "-"
        print(f"{name:15} {s['in']:4} {s['out']:5} {rate:>5} {s['calls']:7} {s['prompt_tokens'] + s['completion_tokens']:7} {s['seconds']:8.0f}")
    print(f"warm re-run: {warm['total']['calls']} calls, {warm_s:.1f} s, same items: "
          f"{(work / 'cold' / 'items.jsonl').read_bytes() == (work / 'warm' / 'items.jsonl').read_bytes()}")


if __name__ == "__main__":
    main()
