"""``kgsynth ingest``: documents -> a graph of checked facts with provenance, and a report."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from kgsynth.cli._common import Interrupted, check_url, option_error, output_file, progress_bar
from kgsynth.cli._common import err as _err
from kgsynth.errors import KgsynthError
from kgsynth.ingest import IngestConfig, IngestReport, ingest, load_ingest_config
from kgsynth.ingest.run import UNCHECKED


def ingest_command(
    docs: Path = typer.Argument(..., help="A folder of .txt/.md files, one such file, or a JSONL of {id, date, lang, title, text}."),
    out: Path = typer.Option(Path("out/graph.trig"), "--out", help="The graph: .trig or .nq (one named graph per document)."),
    config: Path | None = typer.Option(None, "--config", help="A TOML or YAML ingest config (see configs/ingest.toml)."),
    llm_base_url: str | None = typer.Option(None, "--llm-base-url", help="The extraction model's OpenAI-compatible endpoint."),
    llm_model: str | None = typer.Option(None, "--llm-model", help="The model name (default: the config's, else 'local')."),
    wikidata: str | None = typer.Option(None, "--wikidata", help="Look every fact up at this Wikidata SPARQL endpoint "
                                        "(e.g. https://query.wikidata.org/sparql) and drop those it already states."),
) -> None:
    """Documents -> triples with evidence, checked against the text -> resolved entities -> graph with provenance."""
    cfg = load_ingest_config(config) if config else IngestConfig()
    check_url("--llm-base-url", llm_base_url)
    check_url("--wikidata", wikidata)
    output_file("--out", out, "graph.trig")
    updates = {k: v for k, v in (("base_url", llm_base_url), ("model", llm_model)) if v is not None}
    checked = {"check": True, "endpoint": wikidata} if wikidata else {}
    options = {"extraction.base_url": ("--llm-base-url", llm_base_url), "extraction.model": ("--llm-model", llm_model),
               "wikidata.endpoint": ("--wikidata", wikidata)}
    try:
        cfg = IngestConfig.model_validate(cfg.model_copy(update={"extraction": cfg.extraction.model_copy(update=updates),
                                                                 "wikidata": cfg.wikidata.model_copy(update=checked)}).model_dump())
    except ValidationError as e:
        raise option_error(e, {k: v for k, v in options.items() if v[1] is not None}, config) from None
    columns = (TextColumn("documents"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with progress_bar(*columns) as bar:
            task = bar.add_task("documents", total=None)
            report = ingest(docs, out, cfg, progress=lambda done, total: bar.update(task, completed=done, total=total))
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; finished documents are kept in {out}.work: run the same command to resume") from None
    if report.problems and not report.finished:  # nothing to sum up: the first reason is the news
        failed = [d for d in report.per_document if d.problem]
        more = f" (and {len(failed) - 1} more, each with its reason in {out}.report.json)" if len(failed) > 1 else ""
        raise KgsynthError(f"no document was ingested: {failed[0].id}: {failed[0].problem}{more}; "
                           "fix or remove the documents, or rerun to retry what failed")
    _summary(report)
    if report.problems:
        if all(d.problem.startswith(UNCHECKED) for d in report.per_document if d.problem):
            raise KgsynthError(f"the facts of {report.problems} of {report.documents} documents were not checked against Wikidata "
                               "(listed above): rerun when the endpoint answers")
        raise KgsynthError(f"{report.problems} of {report.documents} documents not fully ingested (listed above); "
                           "fix or remove them, or rerun to retry what failed")


def _summary(report: IngestReport) -> None:
    for doc in report.per_document:
        if doc.problem:
            _err.print(f"  {doc.id}: {doc.problem}")
    rejected = ", ".join(f"{code} {n:,}" for code, n in report.rejected.items()) or "none"
    _err.print(
        f"wrote {_n(report.kept, 'fact')} about {_n(report.entities, 'entity', 'entities')} ({_n(report.relations, 'relation')}; "
        f"{_n(report.statements, 'statement')} with provenance) from {report.finished:,} of {_n(report.documents, 'document')} "
        f"to {report.graph}\n"
        f"  chunks {report.chunks:,}; triples proposed {report.proposed:,}, rejected {sum(report.rejected.values()):,} "
        f"({rejected}), entities in several documents {report.merged:,}"
        f"{f'; {report.cut_short:,} replies cut short, their complete triples kept' if report.cut_short else ''}\n"
        f"{_wikidata_line(report)}"
        f"  model calls {report.calls:,}, tokens {report.prompt_tokens + report.completion_tokens:,}"
        f"{f' (and {report.resolution_calls:,} on names, {report.resolution_tokens:,} tokens)' if report.resolution_calls else ''}; "
        f"report in {report.graph}.report.json, rejections in {report.graph}.rejections.jsonl"
    )


def _wikidata_line(report: IngestReport) -> str:
    if not report.contamination:
        return ""
    labels = ", ".join(f"{label} {n:,}" for label, n in report.contamination.items())
    dropped = f"; {report.dropped_known:,} known left out" if report.dropped_known else ""
    return f"  Wikidata: {labels}{dropped} (each with its reason in {report.graph}.wikidata.jsonl)\n"


def _n(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
