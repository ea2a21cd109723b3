"""The ingest run: documents -> chunks -> checked triples (one record per finished document in
the work folder, so a rerun redoes only what is unfinished) -> the graph and its report."""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from kgsynth._folders import make_writable_folder
from kgsynth.errors import KgsynthError
from kgsynth.ingest.config import IngestConfig
from kgsynth.ingest.documents import Document, Problem, chunks, read_documents
from kgsynth.ingest.extraction import PROMPT_VERSION, Checker, ChunkResult, extract_chunks
from kgsynth.ingest.graph import FORMATS, DocumentFacts, Resolve, write_graph
from kgsynth.ingest.resolution import model_judge, resolve
from kgsynth.ingest.wikidata import WikidataCheck
from kgsynth.kg import EndpointBackend
from kgsynth.llm import LLMGateway, ResponseCache
from kgsynth.llm.embeddings import embedder, embeddings_installed, packaged_model_path

Progress = Callable[[int, int], None]
UNCHECKED = "its facts are kept unchecked"  # a document's report line when the Wikidata check failed


class DocumentReport(BaseModel):
    id: str
    lang: str | None = None
    chunks: int = 0
    proposed: int = 0
    rejected: dict[str, int] = Field(default_factory=dict)  # by check
    kept: int = 0
    cut_short: int = 0  # replies that did not parse, whose complete triples were used
    calls: int = 0  # what its answers took, asked by this run or an earlier one (the cache's)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    problem: str | None = None  # why it was skipped, or which chunks failed (then redone on a rerun)


class IngestReport(BaseModel):
    graph: str
    documents: int
    finished: int
    problems: int
    chunks: int
    proposed: int
    rejected: dict[str, int]
    kept: int  # distinct facts in the graph
    cut_short: int  # model replies that did not parse, whose complete triples were used
    statements: int  # kept facts with their provenance, one per document that states each
    merged: int
    entities: int
    relations: int
    contamination: dict[str, int]  # distinct facts by their Wikidata label (empty without the check)
    dropped_known: int  # of them, left out as known
    calls: int
    prompt_tokens: int
    completion_tokens: int
    resolution_calls: int = 0  # questions to the model whether two names are one entity (not counted per document), cached ones too
    resolution_tokens: int = 0
    per_document: list[DocumentReport]


def ingest(source: Path, out: Path, config: IngestConfig, progress: Progress | None = None) -> IngestReport:
    """Ingest the documents at ``source`` into the graph file ``out`` (.trig or .nq). Next to
    it: ``<out>.report.json``, ``<out>.rejections.jsonl``, ``<out>.decisions.jsonl`` and the
    work folder ``<out>.work`` that lets a rerun skip finished documents."""
    if out.suffix.lower() not in FORMATS:
        raise KgsynthError(f"{out}: give the graph a .trig or .nq name (named graphs carry each document's provenance)")
    settings = config.documents
    documents = list(read_documents(source, settings.languages, settings.max_mb))
    work = out.with_name(out.name + ".work")
    make_writable_folder(work)
    gateway = _LazyGateway(config)
    reports, finished = [], []
    for n, document in enumerate(documents, 1):
        if isinstance(document, Problem):
            reports.append(DocumentReport(id=document.document, problem=document.reason))
        else:
            record = _record(work, document, config)
            if record is None or record["failed"]:
                record = _extract(gateway(), document, config, work, record)
            results = [ChunkResult.model_validate(c) for c in record["chunks"]]
            reports.append(_document_report(document, results))
            if not record["failed"]:
                finished.append((document, results))
        if progress:
            progress(n, len(documents))
    return _finish(out, config, documents, reports, finished, gateway)


class _LazyGateway:
    """The model's gateway, made at its first use: a rerun of finished documents, whose
    names need no new question, needs no model."""

    def __init__(self, config: IngestConfig):
        self.config, self.made = config, None
        self.resolving: Counter = Counter()  # calls and tokens of the entity resolution's answers

    def __call__(self) -> LLMGateway:
        if self.made is None:
            c = self.config
            self.made = LLMGateway(c.extraction.model_config_for(c.seed), ResponseCache(c.extraction.cache_path()),
                                   jitter_seed=c.seed, raise_unreachable=True)
        return self.made


def _resolver(config: IngestConfig, gateway: _LazyGateway) -> Resolve:
    r = config.resolution
    if not r.ask_model:
        return resolve
    embed = embedder(packaged_model_path("entity resolution")).encode if embeddings_installed() else None
    return functools.partial(resolve, judge=lambda questions: model_judge(gateway(), gateway.resolving)(questions), embed=embed, spelling=r.spelling_score,
                   meaning=r.meaning_score)


def _extract(gateway: LLMGateway, document: Document, config: IngestConfig, work: Path, earlier: dict | None) -> dict:
    """Extract a document's chunks (those ``earlier``, a stopped run's record, finished are
    kept) and record them."""
    s, e = config.documents, config.extraction
    spans = chunks(document.text, s.chunk_chars, s.overlap_chars)
    done = {(c["start"], c["end"]): c for c in (earlier or {}).get("chunks", []) if c["error"] is None}
    todo = [span for span in spans if span not in done]
    checker = Checker(document.lang or "", e.evidence_score, e.mention_score)
    fresh = {(r.start, r.end): r.model_dump(mode="json") for r in extract_chunks(gateway, checker, document.text, todo)}
    record = {"id": document.id, "sha256": document.sha256, "settings": _settings_key(config),
              "chunks": [done.get(span) or fresh[span] for span in spans]}
    record["failed"] = sum(1 for c in record["chunks"] if c["error"] is not None)
    path = _record_path(work, document)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)
    return record


def _record(work: Path, document: Document, config: IngestConfig) -> dict | None:
    """The work folder's record of ``document`` made with these settings and this text."""
    path = _record_path(work, document)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None  # a record cut short by a kill: the document is redone
    if record.get("sha256") != document.sha256 or record.get("settings") != _settings_key(config):
        return None
    return record


def _record_path(work: Path, document: Document) -> Path:
    return work / f"{hashlib.sha256(document.id.encode()).hexdigest()[:24]}.json"


def _settings_key(config: IngestConfig) -> str:
    """What a finished document's triples depend on: the model (by name: the same model moved
    to another address needs no rerun), the prompt, the chunks, the checks."""
    e, s = config.extraction, config.documents
    used = [e.model, e.max_tokens, e.evidence_score, e.mention_score, s.chunk_chars, s.overlap_chars, config.seed, PROMPT_VERSION]
    return hashlib.sha256(json.dumps(used).encode()).hexdigest()[:16]


def _document_report(document: Document, results: list[ChunkResult]) -> DocumentReport:
    rejected = Counter(r.code for c in results for r in c.rejections)
    failed = [f"chunk {k} of {len(results)}: {c.error}" for k, c in enumerate(results, 1) if c.error]
    return DocumentReport(
        id=document.id, lang=document.lang, chunks=len(results), proposed=sum(c.proposed for c in results),
        rejected=dict(sorted(rejected.items())), kept=sum(len(c.triples) for c in results), cut_short=sum(c.cut_short for c in results),
        calls=sum(c.calls for c in results), prompt_tokens=sum(c.prompt_tokens for c in results),
        completion_tokens=sum(c.completion_tokens for c in results),
        problem=(f"{len(failed)} chunk(s) failed, redone on a rerun: " + "; ".join(failed)) if failed else None,
    )


def _finish(out: Path, config: IngestConfig, documents: list, reports: list[DocumentReport],
            finished: list[tuple[Document, list[ChunkResult]]], gateway: _LazyGateway) -> IngestReport:
    facts, rejections = [], []
    for document, results in finished:
        triples = {t.key: t for c in results for t in c.triples}  # overlapping chunks state a fact twice
        facts.append(DocumentFacts(document=document, model=config.extraction.model, triples=list(triples.values())))
        rejections += [{"document": document.id, "chunk": k, "check": r.code, "reason": r.reason,
                        "triple": r.triple.model_dump(mode="json")} for k, c in enumerate(results, 1) for r in c.rejections]
    check = _wikidata_check(config, out) if config.wikidata.check else None
    try:
        built = write_graph(out, config.namespace, facts, config.resolution.relations, config.resolution.relation_score,
                            check=check.check if check else None, keep_known=config.wikidata.keep_known,
                            resolve_entities=_resolver(config, gateway))
    finally:
        if check:
            check.close()
    _write_lines(out.with_name(out.name + ".rejections.jsonl"), rejections)
    _write_lines(out.with_name(out.name + ".decisions.jsonl"), [d.model_dump() for d in built.decisions])
    if check:
        _write_lines(out.with_name(out.name + ".wikidata.jsonl"), built.checks)
    for r in reports:
        if r.id in built.unchecked:
            note = f"{UNCHECKED} (a rerun asks again): {built.unchecked[r.id]}"
            r.problem = f"{r.problem}; {note}" if r.problem else note
    rejected = Counter()
    for r in reports:
        rejected.update(r.rejected)
    report = IngestReport(
        graph=str(out), documents=len(documents), finished=len(finished), problems=sum(1 for r in reports if r.problem),
        chunks=sum(r.chunks for r in reports), proposed=sum(r.proposed for r in reports),
        rejected=dict(sorted(rejected.items())), kept=built.facts, cut_short=sum(r.cut_short for r in reports), statements=built.statements, merged=built.merged, entities=built.entities,
        relations=built.relations, contamination=built.contamination, dropped_known=built.dropped, calls=sum(r.calls for r in reports), prompt_tokens=sum(r.prompt_tokens for r in reports),
        completion_tokens=sum(r.completion_tokens for r in reports),
        resolution_calls=gateway.resolving["calls"], resolution_tokens=gateway.resolving["tokens"], per_document=reports,
    )
    out.with_name(out.name + ".report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report


def _wikidata_check(config: IngestConfig, out: Path) -> WikidataCheck:
    w = config.wikidata
    endpoint = EndpointBackend(w.endpoint, timeout=w.timeout_s, retries=w.retries, seed=config.seed, user_agent=w.user_agent)
    return WikidataCheck(endpoint, out.with_name(out.name + ".work") / "wikidata.sqlite", w.languages, w.properties,
                         w.date_tolerance_days, w.quantity_tolerance)


def _write_lines(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
