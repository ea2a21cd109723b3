"""``kgsynth rules``: semantic rules for a graph, from the rule library."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pyoxigraph as ox
import typer
from rich.console import Console
from rich.table import Table

from kgsynth.cli._common import err as _err
from kgsynth.cli._common import output_file
from kgsynth.cli.graph import EndpointOpt, GraphUriOpt, LangOpt, PathsArg, RetriesOpt, TimeoutOpt, open_graph
from kgsynth.errors import KgsynthError
from kgsynth.kg import local_name
from kgsynth.rulebook import DEFAULT_BASE, Suggestion, suggest

app = typer.Typer(help="Propose semantic rules for a graph from the rule library.", no_args_is_help=True)

_HEADER = """Library rules proposed by `kgsynth rules suggest` for the {graph}.
Common knowledge (kgs:origin kgs:Library): unit conversions, calendar rules, ages and
durations, population density and counts, each with the source of its constant. Review
before use: a relation may have been recognised wrongly. Above each rule: how many entities
it covers in this graph (at least {minimum}). Load this file beside the graph:
    kgsynth synth --graph GRAPH --graph {out} ..."""


@app.command("suggest")
def suggest_command(
    paths: list[Path] | None = PathsArg,
    out: Path = typer.Option(..., "--out", help="Turtle file to write the proposed rules to."),
    min_entities: int = typer.Option(20, "--min-entities", min=1, help="Leave out a rule that covers fewer entities."),
    base: str = typer.Option(DEFAULT_BASE, "--base", help="IRI the rule IRIs start with."),
    endpoint: str | None = EndpointOpt,
    lang: str = LangOpt,
    timeout: float = TimeoutOpt,
    graph_uri: str | None = GraphUriOpt,
    retries: int = RetriesOpt,
) -> None:
    """Propose every library rule that applies to the graph's dates, quantities and sets."""
    output_file("--out", out, "rules.ttl")
    _check_base(base)
    kg = open_graph(paths, endpoint, lang, timeout, graph_uri=graph_uri, retries=retries)
    suggestion = suggest(kg, min_entities=min_entities, base=base)
    header = _HEADER.format(graph=kg.backend.description, minimum=min_entities, out=out.name)
    write_atomically(out, suggestion.turtle(header))
    Console().print(_summary(suggestion, base))
    _err.print(f"wrote {len(suggestion.proposals):,} library rules to {out}")
    if suggestion.mistyped:
        names = ", ".join(local_name(iri) for iri in suggestion.mistyped)
        n = len(suggestion.mistyped)
        _err.print(f"  read the dates or years of {n:,} relation{'s' * (n != 1)} from mistyped values "
                   f"(strings, a misspelt datatype; how, above each rule in {out}): {names}")
    if suggestion.left_out:
        _err.print(f"  left out {len(suggestion.left_out):,} that would ask nothing worth asking (each with why in {out}), e.g. "
                   f"{suggestion.left_out[0][0].label.en}: {suggestion.left_out[0][1]}")


def _check_base(base: str) -> None:
    try:
        ox.NamedNode(base)
    except ValueError:
        raise KgsynthError(f"--base {base!r} is not an absolute IRI: give one such as {DEFAULT_BASE}") from None


def _summary(suggestion: Suggestion, base: str) -> Table:
    """One row per rule: its IRI (after --base), which names the relations it reads."""
    table = Table(title="proposed library rules")
    table.add_column("rule", overflow="fold")
    table.add_column("operation", no_wrap=True)
    table.add_column("entities", justify="right", no_wrap=True)
    for proposal, iri in zip(suggestion.proposals, suggestion.iris, strict=True):
        table.add_row(iri.removeprefix(base), proposal.operation, f"{proposal.coverage:,}")
    return table


def write_atomically(out: Path, text: str) -> None:
    """Through a temporary file, so a failed write never leaves half a rules file."""
    partial = out.with_name(out.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, out)
    except OSError as e:
        with contextlib.suppress(OSError):  # nothing to remove where nothing could be made
            partial.unlink(missing_ok=True)
        raise KgsynthError(f"cannot write {out}: {e.strerror or e}") from None
