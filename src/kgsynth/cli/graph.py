"""``kgsynth graph``: look at a graph and pull question-shaped subgraphs out of it."""

from __future__ import annotations

import contextlib
import os
import sys
import urllib.parse
from pathlib import Path

import pyoxigraph as ox
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from kgsynth.cli._common import (
    GRAPH_URI_WITHOUT_ENDPOINT,
    AnchorClassOpt,
    AnchorsQueryOpt,
    Interrupted,
    anchor_options,
    check_url,
    output_file,
    progress_bar,
)
from kgsynth.cli._common import err as _err
from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg._backends import PASSWORD_ENV, USER_ENV
from kgsynth.kg._terms import anchor_class_iri
from kgsynth.pipeline.config import endpoint_credentials
from kgsynth.queries import Anchors, Shape, enumerate_subgraphs, sample_subgraphs

app = typer.Typer(help="Inspect a graph and extract subgraphs.", no_args_is_help=True)

PathsArg = typer.Argument(None, help="RDF files or folders (.ttl .nt .nq .trig .jsonld, optionally .gz).")
EndpointOpt = typer.Option(
    None, "--endpoint",
    help=f"Query a SPARQL endpoint URL instead of files. For an endpoint behind HTTP Basic or Digest authentication, set "
         f"{USER_ENV} and {PASSWORD_ENV} in the environment (never in the URL or on the command line).")
GraphUriOpt = typer.Option(None, "--graph-uri", metavar="IRI",
                           help="With --endpoint: query this named graph as the default graph (SPARQL protocol default-graph-uri).")
RetriesOpt = typer.Option(3, "--retries", min=0, help="With --endpoint: retry a request this many times after HTTP 429 or "
                          "500/502/503/504, a timeout or a dropped connection (waits 0.5 s doubling, or the server's Retry-After).")
LangOpt = typer.Option("en,ru", "--lang", help="Label languages in order of preference, comma-separated.")
TimeoutOpt = typer.Option(60.0, "--timeout", help="Deadline of each attempt of an --endpoint request in seconds, from connect "
                          "to the last byte (a retry gets its own).")


def open_graph(
    paths: list[Path] | None,
    endpoint: str | None,
    lang: str,
    timeout: float = 60.0,
    *,
    graph_uri: str | None = None,
    retries: int = 3,
) -> KnowledgeGraph:
    """Files xor an endpoint, checked before anything is loaded. An endpoint's credentials
    come from the environment (``KGSYNTH_SPARQL_USER``, ``KGSYNTH_SPARQL_PASSWORD``); the
    password is registered with the redaction, so no message can print it."""
    languages = tuple(code.strip() for code in lang.split(",") if code.strip())
    if not languages:
        raise KgsynthError(f"--lang {lang!r} names no language: give codes such as en,ru")
    if endpoint is not None and paths:
        raise KgsynthError("give graph files or --endpoint, not both")
    if endpoint is not None:
        check_url("--endpoint", endpoint)
        if not timeout > 0:
            raise KgsynthError(f"--timeout {timeout:g}: give a positive number of seconds")
        if retries < 0:
            raise KgsynthError(f"--retries {retries}: give 0 or more")
        _check_graph_uri(graph_uri, endpoint)
        return KnowledgeGraph.from_endpoint(endpoint, lang=languages, timeout=timeout, graph_uri=graph_uri,
                                            auth=endpoint_credentials(), retries=retries)
    if graph_uri is not None:
        raise KgsynthError(GRAPH_URI_WITHOUT_ENDPOINT)
    if not paths:
        raise KgsynthError("give one or more graph files/folders, or --endpoint URL")
    return KnowledgeGraph.load(*paths, lang=languages)


def _check_graph_uri(graph_uri: str | None, endpoint: str) -> None:
    if graph_uri is None:
        return
    try:
        ox.NamedNode(graph_uri)
    except ValueError:
        raise KgsynthError(f"--graph-uri {graph_uri!r} is not an absolute IRI: give one such as http://example.org/graph") from None
    in_url = urllib.parse.parse_qs(urllib.parse.urlsplit(endpoint).query).get("default-graph-uri", [])
    if in_url and in_url != [graph_uri]:
        raise KgsynthError(f"--graph-uri {graph_uri} differs from default-graph-uri={' '.join(in_url)} in the --endpoint URL: "
                           "name the graph in one place")


@app.command()
def stats(
    paths: list[Path] | None = PathsArg,
    endpoint: str | None = EndpointOpt,
    lang: str = LangOpt,
    timeout: float = TimeoutOpt,
    graph_uri: str | None = GraphUriOpt,
    retries: int = RetriesOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
    sample: int | None = typer.Option(
        None, "--sample", min=1, metavar="N",
        help="Cheap mode for large servers: count only N entities and the facts out of them (the first N subjects the "
             "server returns, or members of --anchor-class); no query scans the whole store."),
    anchor_class: str | None = typer.Option(None, "--anchor-class", metavar="IRI", help="With --sample: sample members of this class."),
) -> None:
    """Counts of triples, entities, relations, literal types, labels, rules and degrees."""
    if anchor_class is not None:  # checked before a graph is loaded
        if sample is None:
            raise KgsynthError("--anchor-class needs --sample N: the whole graph's statistics are not per class")
        anchor_class_iri(anchor_class)
    kg = open_graph(paths, endpoint, lang, timeout, graph_uri=graph_uri, retries=retries)
    result = kg.stats(sample=sample, anchor_class=anchor_class)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    console = Console()
    title = str(kg.backend.description) + ("" if sample is None else f"\n{result.scope}")
    summary = Table(title=title, show_header=False)
    for name in ("triples", "entities", "relations", "literals", "labelled_entities"):
        summary.add_row(name, f"{getattr(result, name):,}")
    summary.add_row("label languages", ", ".join(f"{k}: {v:,}" for k, v in result.label_languages.items()))
    summary.add_row("rules by kind", ", ".join(f"{k}: {v}" for k, v in result.rules_by_kind.items()) or "none")
    d = result.degree
    summary.add_row("degree", f"min {d.min}, median {d.median:g}, mean {d.mean:g}, p90 {d.p90:g}, p99 {d.p99:g}, max {d.max}")
    console.print(summary)
    tables = [("literal type", "count", result.literal_types.items()), ("top relation", "triples", [(f"{lbl}  <{iri}>", n) for iri, lbl, n in result.top_relations])]
    for title, unit, rows in tables:
        table = Table(title, unit)
        for key, count in rows:
            table.add_row(key, f"{count:,}")
        console.print(table)


@app.command()
def subgraphs(
    paths: list[Path] | None = PathsArg,
    endpoint: str | None = EndpointOpt,
    shape: str = typer.Option(..., "--shape", help="simple, set, conditional, multihop, multihop_set, comparison or rule_application."),
    limit: int = typer.Option(100, "--limit", min=0, help="How many subgraphs to write."),
    seed: int = typer.Option(0, "--seed", help="Seed for anchored sampling."),
    hops: int = typer.Option(2, "--hops", help="Chain length for multihop (2-4); multihop_set draws every length."),
    variant: str | None = typer.Option(None, "--variant", help="Conditional form (shared_subject, shared_object or chain) or multihop_set chain (2-hop-last, 2-hop-mid, ... 4-hop-mid)."),
    enumerate_all: bool = typer.Option(False, "--all", help="Enumerate in template order instead of sampling anchors."),
    per_anchor: int = typer.Option(2, "--per-anchor", min=1, help="At most this many subgraphs per anchor entity."),
    anchor_class: str | None = AnchorClassOpt,
    anchors_query: Path | None = AnchorsQueryOpt,
    lang: str = LangOpt,
    timeout: float = TimeoutOpt,
    graph_uri: str | None = GraphUriOpt,
    retries: int = RetriesOpt,
    out: Path | None = typer.Option(None, "--out", help="JSONL file to write (default: standard output)."),
) -> None:
    """Extract subgraphs of one shape as JSON lines (one Subgraph per line)."""
    if out is not None:
        output_file("--out", out, "subgraphs.jsonl")
    restricted = anchor_options(anchor_class, anchors_query)
    if restricted and enumerate_all:
        raise KgsynthError("--anchor-class and --anchors-query restrict sampling: not with --all, which enumerates")
    kg = open_graph(paths, endpoint, lang, timeout, graph_uri=graph_uri, retries=retries)
    if shape == Shape.rule_application:  # a malformed rule is named here, as kgsynth synth names it
        load_rules(kg)
    if enumerate_all:
        found = enumerate_subgraphs(kg, shape, limit=limit, hops=hops, variant=variant)
    else:
        anchors = Anchors(**restricted) if restricted else None
        found = sample_subgraphs(kg, shape, limit=limit, seed=seed, hops=hops, variant=variant, per_anchor=per_anchor, anchors=anchors)
    if out is None:
        for subgraph in found:
            sys.stdout.write(subgraph.model_dump_json() + "\n")
        return
    try:
        written = _write_jsonl(found, out, limit)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: {out} not written (nothing is kept); run the same command to start again") from None
    _err.print(f"wrote {written:,} {shape} subgraphs to {out}" + ("" if written == limit else f" (the graph has no more than {written:,})"))


def _write_jsonl(found, out: Path, limit: int) -> int:
    """Write through a temporary file, so an interrupted run never leaves a partial file."""
    partial = out.with_name(out.name + ".partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with partial.open("w", encoding="utf-8") as stream, progress_bar(*columns) as bar:
            task = bar.add_task("subgraphs", total=limit)
            written = 0
            for subgraph in found:
                stream.write(subgraph.model_dump_json() + "\n")
                written += 1
                bar.advance(task)
        os.replace(partial, out)
    except OSError as e:
        raise KgsynthError(f"cannot write {out}: {e.strerror or e}") from None
    finally:
        with contextlib.suppress(OSError):  # nothing to remove where nothing could be made
            partial.unlink(missing_ok=True)
    return written
