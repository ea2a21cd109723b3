"""``kgsynth synth``: write a balanced, versioned dataset from a graph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from kgsynth.cli._common import (
    GRAPH_URI_WITHOUT_ENDPOINT,
    AnchorClassOpt,
    AnchorsQueryOpt,
    Interrupted,
    anchor_options,
    check_url,
    option_error,
    progress_bar,
)
from kgsynth.cli._common import err as _err
from kgsynth.errors import KgsynthError
from kgsynth.pipeline.config import LLMConfig, StageModel, SynthConfig, load_config
from kgsynth.pipeline.run import Progress, synthesize


@contextmanager
def item_progress(kept: list[int]) -> Iterator[Progress]:
    """An items progress bar; its callback also keeps (items kept, items wanted) in ``kept``,
    as the pipeline last reported them, for :func:`interruption`."""
    with progress_bar(TextColumn("items"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        task = bar.add_task("items", total=None)

        def show(done: int, total: int) -> None:
            kept[:] = [done, total]
            bar.update(task, completed=done, total=total)

        yield show


def interruption(out: Path, kept: list[int]) -> Interrupted:
    """What a Ctrl-C says of a run writing items into ``out`` (synth and release alike)."""
    work = out / ".work"
    if kept:
        return Interrupted(f"interrupted: {kept[0]:,} of {kept[1]:,} items kept in {work}; run the same command to resume")
    if (work / "progress.jsonl").is_file():  # stopped before this run kept an item: an earlier run's are there
        return Interrupted(f"interrupted; what earlier runs kept is in {work}: run the same command to resume")
    return Interrupted("interrupted before the first item was kept; run the same command to start again")


def synth(
    graph: list[Path] | None = typer.Option(None, "--graph", help="RDF files or folders (default: the config's, else the demo graph shipped with kgsynth)."),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="Read the graph from a SPARQL endpoint URL instead of files (HTTP auth: KGSYNTH_SPARQL_USER and "
        "KGSYNTH_SPARQL_PASSWORD)."),
    graph_uri: str | None = typer.Option(None, "--graph-uri", help="With --endpoint: the named graph to query (default: its default graph)."),
    anchor_class: str | None = AnchorClassOpt,
    anchors_query: Path | None = AnchorsQueryOpt,
    n: int | None = typer.Option(None, "--n", help="Items wanted in all, every language counted (default 600)."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (default 0)."),
    out: Path = typer.Option(Path("out/dataset"), "--out", help="Output folder; an unfinished run there is resumed."),
    config: Path | None = typer.Option(None, "--config", help="A TOML or YAML config (see configs/)."),
    llm_base_url: str | None = typer.Option(
        None, "--llm-base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1: word with it and run every filter."
    ),
    llm_model: str | None = typer.Option(None, "--llm-model", help="The model name for every LLM stage (default: the config's, else 'local')."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Processes that word scenarios (default: the machine's cores); "
                                       "the files are the same for any number."),
    executor: str | None = typer.Option(None, "--executor", help="processes (default) or ray: Ray tasks on the cluster RAY_ADDRESS "
                                        "names, or on a Ray instance started here (pip install 'kgsynth[ray]')."),
    world_knowledge: str | None = typer.Option(
        None, "--world-knowledge", help="auto (default), skip or keep: questions a model can answer from world knowledge "
        "(real entities' facts, docs/vocabulary.md): auto leaves them out unless a closed-book filter runs; keep builds them, "
        "flagged metadata.world_knowledge."),
) -> None:
    """Graph -> scenarios -> dialogues -> filters -> balanced JSONL/Parquet with a manifest."""
    cfg = load_config(config) if config else SynthConfig()
    check_url("--llm-base-url", llm_base_url)
    check_url("--endpoint", endpoint)
    updates = {
        "graph": cfg.graph.model_copy(update=_graph_updates(graph, endpoint, graph_uri)),
        "sampling": cfg.sampling.model_copy(update=anchor_options(anchor_class, anchors_query) | (
            {"world_knowledge": world_knowledge} if world_knowledge is not None else {})),
        "dataset": cfg.dataset.model_copy(update={k: v for k, v in (("n", n), ("seed", seed)) if v is not None}),
        "llm": _llm_section(cfg.llm, llm_base_url, llm_model),
        "run": cfg.run.model_copy(update={k: v for k, v in (("workers", workers), ("executor", executor)) if v is not None}),
    }
    options = {"dataset.n": ("--n", n), "dataset.seed": ("--seed", seed), "llm.base_url": ("--llm-base-url", llm_base_url),
               "graph": ("--graph/--endpoint", graph or endpoint), "sampling": ("--anchor-class/--anchors-query", anchor_class or anchors_query),
               "run.executor": ("--executor", executor), "sampling.world_knowledge": ("--world-knowledge", world_knowledge)}
    try:
        cfg = SynthConfig.model_validate(cfg.model_copy(update=updates).model_dump())
    except ValidationError as e:
        raise option_error(e, {k: v for k, v in options.items() if v[1] is not None}, config) from None
    if cfg.llm:
        cfg.llm.require_endpoint()  # before the progress bar, so the error stays one line
    kept: list[int] = []
    try:
        kg = cfg.graph.open()
        with item_progress(kept) as show:
            result = synthesize(kg, cfg, out, progress=show)
    except KeyboardInterrupt:
        raise interruption(out, kept) from None
    _err.print(f"wrote {result.items:,} items ({result.per_cell} per cell and language, {len(result.filled_cells)} cells) to {out}")
    for note in result.notes:  # why more or fewer items than --n were written, one line each
        _err.print(f"  note: {note}")
    _err.print(f"  {result.workers.line()}")
    report = json.loads((out / "filter_report.json").read_text(encoding="utf-8"))
    for name in report["order"]:
        stats = report["stages"][name]
        cost = f", {stats['calls']:,} calls, {stats['prompt_tokens'] + stats['completion_tokens']:,} tokens" if stats["calls"] or stats["cache_hits"] else ""
        _err.print(f"  {name}: {stats['in']:,} in, {stats['out']:,} out{cost}, {stats['seconds']:.1f} s")
    total = report["total"]
    if total["calls"] or cfg.llm:
        _err.print(f"  model calls: {total['calls']:,} ({total['calls_per_accepted_item']} per accepted item); report in {out / 'filter_report.json'}")
    if result.unfillable_cells:
        cells = ", ".join(f"{k} ({v})" for k, v in result.unfillable_cells.items())
        _err.print(f"  cells the graph cannot fill to {result.per_cell}: {cells}")


def _graph_updates(graph: list[Path] | None, endpoint: str | None, graph_uri: str | None) -> dict:
    """The command line's graph in place of the config's: files or an endpoint, never both."""
    if graph and endpoint:
        raise KgsynthError("give --graph or --endpoint, not both")
    if graph and graph_uri:
        raise KgsynthError(GRAPH_URI_WITHOUT_ENDPOINT)
    if graph:
        return {"paths": tuple(map(str, graph)), "endpoint": None, "graph_uri": None}
    if endpoint:
        return {"paths": (), "endpoint": endpoint, "graph_uri": graph_uri}
    return {"graph_uri": graph_uri} if graph_uri else {}


def _llm_section(llm: LLMConfig | None, base_url: str | None, model: str | None) -> LLMConfig | None:
    """The config's [llm] section with the command line's endpoint and model put in."""
    if base_url is None and model is None:
        return llm
    if llm is None:
        if base_url is None:
            raise KgsynthError("--llm-model needs --llm-base-url (or an [llm] section in the config)")
        llm = LLMConfig(base_url=base_url)
    stage = StageModel(model=model) if model else None
    updates = {"base_url": base_url or llm.base_url}
    if stage:
        updates |= {"generator": stage, "guessers": (stage,), "judge": stage}
    return llm.model_copy(update=updates)
