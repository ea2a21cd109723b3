"""``kgsynth release``: the next version of a benchmark, with nothing an earlier release published."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from pydantic import ValidationError

from kgsynth.cli._common import err as _err
from kgsynth.cli._common import not_a_file, option_error
from kgsynth.cli.synth import interruption, item_progress
from kgsynth.errors import KgsynthError
from kgsynth.pipeline.config import load_config
from kgsynth.release import ReleaseConfig, read_previous, release, release_version


def release_command(
    out: Path = typer.Option(..., "--out", help="The release's folder; an unfinished run there is resumed."),
    graph: list[Path] | None = typer.Option(None, "--graph", help="RDF files or folders (default: the config's, else the demo graph)."),
    previous: Path | None = typer.Option(None, "--previous", help="The previous release's folder: its items' subgraphs and questions, "
                                         "and every earlier release's, are not used again; the diff is against its graph."),
    version: str | None = typer.Option(None, "--version", help="X.Y.Z or YYYY.MM (default: 1.0.0; after X.Y.Z, X.(Y+1).0; "
                                       "after a dated one, this month's)."),
    n: int | None = typer.Option(None, "--n", help="Items wanted in all, every language counted (default 600)."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (default 0)."),
    config: Path | None = typer.Option(None, "--config", help="A TOML or YAML synth config, with an optional \\[release] section "
                                       "(name, license)."),
) -> None:
    """Graph (+ the previous release) -> a versioned dataset with a diff and a dataset card (README.md)."""
    cfg = load_config(config, ReleaseConfig) if config else ReleaseConfig()
    updates = {"dataset": cfg.dataset.model_copy(update={k: v for k, v in (("n", n), ("seed", seed)) if v is not None})}
    if graph:
        updates["graph"] = cfg.graph.model_copy(update={"paths": tuple(map(str, graph)), "endpoint": None, "graph_uri": None})
    options = {"dataset.n": ("--n", n), "dataset.seed": ("--seed", seed), "graph": ("--graph", graph)}
    try:
        cfg = ReleaseConfig.model_validate(cfg.model_copy(update=updates).model_dump())
    except ValidationError as e:
        raise option_error(e, {k: v for k, v in options.items() if v[1] is not None}, config) from None
    if cfg.graph.endpoint:
        raise KgsynthError("a release records every fact of its graph for the next one's diff: give graph files "
                           "(--graph), not an endpoint")
    if cfg.llm:
        cfg.llm.require_endpoint()
    not_a_file("--out", out)
    prev = read_previous(previous) if previous is not None else None
    version = release_version(version, prev, datetime.now(UTC).date())  # before the graph is read
    kept: list[int] = []
    try:
        kg = cfg.graph.open()
        with item_progress(kept) as show:
            result = release(kg, cfg, out, previous=prev, version=version, progress=show)
    except KeyboardInterrupt:
        raise interruption(out, kept) from None
    section = result.section
    after = f" (after {section['previous']})" if section["previous"] else ""
    _err.print(f"wrote release {section['version']}{after}: {section['items']:,} items to {out}")
    for note in result.synth.notes:
        _err.print(f"  note: {note}")
    new, left_out = section["new"], section["left_out"]
    if section["previous"]:
        _err.print(f"  new since {section['previous']}: {new['entities']:,} entities, {new['facts']:,} facts; "
                   f"{new['items_on_new_facts']:,} items use a new fact")
        _err.print(f"  left out: {left_out['subgraphs']:,} subgraphs and {left_out['questions']:,} questions "
                   f"of releases {', '.join(section['releases'][:-1])}")
    _err.print(f"  load: datasets.load_dataset({str(out)!r}, \"questions\"); card in {out / 'README.md'}")
