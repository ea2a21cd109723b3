"""``kgsynth synth``: write a balanced, versioned dataset from a graph."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kgsynth.kg import KnowledgeGraph
from kgsynth.synth.config import SynthConfig, load_config
from kgsynth.synth.pipeline import synthesize

_err = Console(stderr=True)


def synth(
    graph: list[Path] | None = typer.Option(None, "--graph", help="RDF files or folders (default: the config's, else data/demo)."),
    n: int | None = typer.Option(None, "--n", help="Items wanted in all, every language counted (default 600)."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (default 0)."),
    out: Path = typer.Option(Path("out/dataset"), "--out", help="Output folder; an unfinished run there is resumed."),
    config: Path | None = typer.Option(None, "--config", help="A TOML or YAML config (see configs/)."),
) -> None:
    """Graph -> scenarios -> dialogues -> filters -> balanced JSONL/Parquet with a manifest."""
    cfg = load_config(config) if config else SynthConfig()
    updates = {
        "graph": cfg.graph.model_copy(update={"paths": tuple(map(str, graph))}) if graph else cfg.graph,
        "dataset": cfg.dataset.model_copy(update={k: v for k, v in (("n", n), ("seed", seed)) if v is not None}),
    }
    cfg = SynthConfig.model_validate(cfg.model_copy(update=updates).model_dump())
    kg = KnowledgeGraph.load(*cfg.graph.paths, lang=cfg.graph.label_languages)
    columns = (TextColumn("items"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_err, transient=True) as bar:
        task = bar.add_task("items", total=None)
        result = synthesize(kg, cfg, out, progress=lambda done, total: bar.update(task, completed=done, total=total))
    m = result.manifest
    _err.print(f"wrote {result.items:,} items ({result.per_cell} per cell and language, {len(result.filled_cells)} cells) to {out}")
    for name, stats in m["filters"].items():
        _err.print(f"  filter {name}: {stats['in']:,} in, {stats['rejected']:,} rejected")
    if result.unfillable_cells:
        cells = ", ".join(f"{k} ({v})" for k, v in result.unfillable_cells.items())
        _err.print(f"  cells the graph cannot fill to {result.per_cell}: {cells}")
