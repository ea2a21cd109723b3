"""``kgsynth pressure claims | train | run | report``: false claims from the graph, a learned
pressure policy, every policy's episodes against a model, the report (issue 18)."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError

from kgsynth.cli._common import Interrupted, check_url, option_error, output_file, output_folder, phase_progress
from kgsynth.cli._common import err as _err
from kgsynth.errors import KgsynthError
from kgsynth.eval.runner import load_items
from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline.config import load_config
from kgsynth.pressure.cases import in_context_cases, spread, world_cases
from kgsynth.pressure.config import PressureConfig
from kgsynth.pressure.report import build_report
from kgsynth.pressure.run import BENCHMARK_DIR, EPISODES_FILE, read_claims, run, train, write_claims

app = typer.Typer(help="Push false claims at a model: claims from the graph, a learned pressure policy, robustness.",
                  no_args_is_help=True)
ConfigOpt = typer.Option(None, "--config", help="A TOML or YAML pressure config (see configs/pressure_qwen.toml).")
BaseUrlOpt = typer.Option(None, "--base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1.")
ModelOpt = typer.Option(None, "--model", help="The model name the endpoint serves (default: the config's, else 'local').")
ClaimsOpt = typer.Option(..., "--claims", help="A claims file written by kgsynth pressure claims.")


@app.command("claims")
def claims_command(
    dataset: Path | None = typer.Option(None, "--dataset", help="A kgsynth dataset: its simple items give in-context claims."),
    graph: list[Path] | None = typer.Option(None, "--graph", help="The graph the dataset was made from (default: the demo graph)."),
    world: list[Path] | None = typer.Option(None, "--world", help="A graph of real things (e.g. FB15k-237) for closed-book claims."),
    config: Path | None = ConfigOpt,
    seed: int | None = typer.Option(None, "--seed", help="Random seed (default: the config's, else 0)."),
    out: Path = typer.Option(Path("out/pressure/claims.jsonl"), "--out", help="The claims file to write."),
) -> None:
    """Build false claims, checked false against the graph: in context (a dataset's items) and world knowledge."""
    full = load_config(config, PressureConfig) if config else PressureConfig()
    cfg, seed = full.claims, full.seed if seed is None else seed
    if dataset is None and not world:
        raise KgsynthError("give --dataset (in-context claims), --world (world-knowledge claims) or both")
    output_file("--out", out, "claims.jsonl")
    cases = []
    if dataset is not None:
        kg = KnowledgeGraph.load(*graph, lang=("en", "ru")) if graph else KnowledgeGraph.demo(lang=("en", "ru"))
        cases += spread(in_context_cases(kg, load_items(dataset), cfg.confusability, seed), cfg.in_context_n, seed)
    if world:
        cases += world_cases(KnowledgeGraph.load(*world, lang=("en",)), cfg.world_languages, cfg.world_n, cfg.world_relations,
                             cfg.confusability, seed)
    if not cases:
        raise KgsynthError("no claim could be made: the dataset has no simple items with an entity, number or date answer, "
                           "and the world graph no single-valued fact of the configured relations")
    write_claims(cases, out)
    settings = {s: sum(1 for c in cases if c.setting == s) for s in ("in_context", "world_knowledge")}
    _err.print(f"{len(cases):,} claims in {out}: {settings['in_context']:,} in context, {settings['world_knowledge']:,} world knowledge")


@app.command("train")
def train_command(
    claims: Path = ClaimsOpt, config: Path | None = ConfigOpt, base_url: str | None = BaseUrlOpt, model: str | None = ModelOpt,
    out: Path = typer.Option(Path("out/pressure/policy"), "--out", help="Folder for policy.json."),
) -> None:
    """Train the pressure policy against a model on the training share of the claims."""
    cfg = _config(config, base_url, model)
    cases = read_claims(claims)
    output_folder("--out", out)
    try:
        with phase_progress() as show:
            trained = train(cases, cfg, out, progress=show)
    except KeyboardInterrupt:
        raise Interrupted("interrupted: run the same command again to go on (the model's answers so far are cached)") from None
    _err.print(f"{trained.policy}: {cfg.learner} trained on {trained.claims:,} claims ({trained.maintained:,} right at turn 0), "
               f"{trained.episodes:,} episodes, {trained.flips:,} flips, {trained.calls:,} model calls")


@app.command("run")
def run_command(
    claims: Path = ClaimsOpt, config: Path | None = ConfigOpt, base_url: str | None = BaseUrlOpt, model: str | None = ModelOpt,
    policy: Path | None = typer.Option(None, "--policy", help="The policy.json kgsynth pressure train wrote (the 'learned' policy)."),
    include_trained: bool = typer.Option(False, "--include-trained", help="Also run the claims the policy was trained on."),
    out: Path = typer.Option(Path("out/pressure/run"), "--out", help="Results folder; an unfinished run there is resumed."),
) -> None:
    """Run every configured policy on the held-out claims; write episodes, the static benchmark and the report."""
    cfg = _config(config, base_url, model)
    if policy is None and "learned" in cfg.policies:
        if cfg.policies == ("learned",):
            raise KgsynthError("policies = ['learned'] needs --policy with the file kgsynth pressure train wrote")
        cfg = cfg.model_copy(update={"policies": tuple(p for p in cfg.policies if p != "learned")})
    cases = read_claims(claims)
    output_folder("--out", out)
    try:
        with phase_progress() as show:
            records = run(cases, cfg, out, policy, include_trained, progress=show)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: finished episodes are kept in {out / EPISODES_FILE}; run the same command again to go on") from None
    failures = sum(1 for r in records if r.failure)
    _err.print(f"{len(records):,} episodes in {out / EPISODES_FILE}, the static benchmark in {out / BENCHMARK_DIR}")
    if failures:
        _err.print(f"  {failures:,} episodes failed after every retry; run the same command again to ask them again")
    _summary(out)


@app.command("report")
def report_command(folder: Path = typer.Argument(..., help="A folder kgsynth pressure run wrote.")) -> None:
    """Rebuild metrics.json and report.html from a run folder (no model calls)."""
    _summary(folder)


def _summary(folder: Path) -> None:
    metrics, path = build_report(folder)
    for p in metrics.policies:
        if p.setting == "all":
            k = max(p.mr_at)
            _err.print(f"  {p.policy}: zero-turn {_pct(p.zero_turn.value)}, MR@{k} {_pct(p.mr_at[k].value)}, "
                       f"{p.flips} flips, {_per_flip(p.calls_per_flip)} calls per flip")
    _err.print(f"report: {path}")


def _per_flip(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _config(config: Path | None, base_url: str | None, model: str | None) -> PressureConfig:
    cfg = load_config(config, PressureConfig) if config else PressureConfig()
    check_url("--base-url", base_url)
    updates = {k: v for k, v in (("model", model), ("base_url", base_url)) if v is not None}
    try:
        cfg = PressureConfig.model_validate(cfg.model_copy(update={"model": cfg.model.model_copy(update=updates)}).model_dump())
    except ValidationError as e:
        raise option_error(e, {"model.model": ("--model", model), "model.base_url": ("--base-url", base_url)}, config) from None
    cfg.model.gateway_config()  # no endpoint: one line, before anything runs
    return cfg
