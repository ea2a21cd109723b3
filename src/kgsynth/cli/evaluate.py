"""``kgsynth eval`` and ``kgsynth report``: run a model on a dataset, then build the report."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError

from kgsynth.cli._common import Interrupted, check_url, option_error, output_folder, phase_progress
from kgsynth.cli._common import err as _err
from kgsynth.eval.config import EvalConfig
from kgsynth.eval.dataset import require_dataset, require_folder
from kgsynth.eval.runner import evaluate
from kgsynth.pipeline.config import load_config


def eval_command(
    dataset: Path = typer.Option(..., "--dataset", help="A dataset folder written by kgsynth synth."),
    model: str | None = typer.Option(None, "--model", help="The model name the endpoint serves (default: the config's, else 'local')."),
    base_url: str | None = typer.Option(None, "--base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1."),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Requests in flight at once (default 4)."),
    config: Path | None = typer.Option(None, "--config", help="A TOML or YAML evaluation config (see configs/eval_*.toml)."),
    out: Path = typer.Option(Path("out/eval"), "--out", help="Results folder; an unfinished run there is resumed."),
    limit: int | None = typer.Option(None, "--limit", help="Evaluate only the first N items."),
) -> None:
    """Ask a model every item (and the baselines, sweeps, probes and the key-value probe), score strictly, write
    results and a report."""
    cfg = load_config(config, EvalConfig) if config else EvalConfig()
    check_url("--base-url", base_url)
    model_updates = {k: v for k, v in (("model", model), ("base_url", base_url), ("concurrency", concurrency)) if v is not None}
    updates = {"model": cfg.model.model_copy(update=model_updates)} | ({"limit": limit} if limit is not None else {})
    options = {"model.model": ("--model", model), "model.base_url": ("--base-url", base_url),
               "model.concurrency": ("--concurrency", concurrency), "limit": ("--limit", limit)}
    try:
        cfg = EvalConfig.model_validate(cfg.model_copy(update=updates).model_dump())
    except ValidationError as e:
        raise option_error(e, {k: v for k, v in options.items() if v[1] is not None}, config) from None
    cfg.model.gateway_config()  # an endpoint and a dataset are needed: fail before the progress bar, in one line
    require_dataset(dataset)
    output_folder("--out", out)
    try:
        with phase_progress() as show:
            run = evaluate(dataset, cfg, out, progress=show)
    except KeyboardInterrupt:
        raise Interrupted(_where_eval_stopped(out)) from None
    calls = sum(u["calls"] for u in run.usage.values())
    hits = sum(u["cache_hits"] for u in run.usage.values())
    _err.print(f"{run.records:,} answers in {out / 'results.jsonl'}: {calls:,} model calls, {hits:,} from the cache")
    if run.failures:
        _err.print(f"  {run.failures:,} requests failed after every retry; run the same command again to ask them again")
    if run.skipped_targets:
        _err.print(f"  length sweep: {', '.join(map(str, run.skipped_targets))} tokens skipped (beyond model.context_tokens)")
    if run.skipped_kv_counts:
        counts = ", ".join(map(str, run.skipped_kv_counts))
        _err.print(f"  key-value probe: {counts} keys skipped (beyond model.context_tokens)")
    _summary(_build_report(out))


def report_command(results: Path = typer.Argument(..., help="A results folder written by kgsynth eval.")) -> None:
    """Rebuild metrics.json and report.html from a results folder (no model calls)."""
    require_folder(results, "kgsynth eval wrote (it holds results.jsonl and run.json)")
    try:
        _summary(_build_report(results))
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: the report in {results} is not finished; run the same command again") from None


def _where_eval_stopped(out: Path) -> str:
    """How many answers the stopped run kept (its progress log: one header line, then one line per answer)."""
    log = out / ".work" / "progress.jsonl"
    try:
        with log.open("rb") as f:
            answers = max(0, sum(1 for line in f if line.endswith(b"\n")) - 1)
    except OSError:
        return f"interrupted before the first answer was kept in {out / '.work'}; run the same command to start again"
    return f"interrupted: {answers:,} answers kept in {out / '.work'}; run the same command to resume"


def _build_report(folder: Path):
    from kgsynth.eval.report import build_report  # matplotlib and statsmodels load only for these commands

    return build_report(folder)


def _summary(report) -> None:
    overall = report.metrics.overall
    acc = overall.accuracy
    interval = f" [{acc.low:.1%}, {acc.high:.1%}]" if acc.low is not None else ""
    _err.print(f"accuracy {acc.mean:.1%}{interval} on {overall.n:,} answers; format valid {overall.syntactic_ok.mean:.1%}")
    _err.print(f"report: {report.html}")
