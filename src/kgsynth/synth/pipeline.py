"""``kgsynth synth``: graph -> subgraphs -> scenarios -> items -> filters -> balanced files.

Two phases, as in ragas' test-set generation: a cheap scenario phase (sample subgraphs,
build every scenario, group them by cell) that is validated before any wording happens,
then the wording phase, cell by cell, until each cell holds the same number of
scenarios whose items passed every filter in every language. A cell that runs out of
scenarios first is reported as unfillable and left out, so the balance stays exact.

Resuming: a kept scenario's items go, as their finished lines, to one spool file per
split in ``.work/``; then the scenario is appended to ``.work/progress.jsonl`` with its
rejections and the byte count it added to each spool, before the next one starts. A run
started again cuts the spools back to what the log records (a kill between the two writes
leaves lines nobody recorded), skips what is done, and, since each item draws from its own
random stream (seed, scenario, language), ends with the same files, byte for byte, as a run
that was never interrupted. Assembly hard-links each spool into place as the split's
JSONL when every spooled item is in a filled cell, and otherwise copies the filled
cells' bytes record by record.
"""

from __future__ import annotations

import gc
import hashlib
import json
import random
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

import kgsynth
from kgsynth.errors import KgsynthError
from kgsynth.filters import AnswerStatedFilter, ItemFilter, RuleLeakageFilter, StructureFilter, apply_filters
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import Rule
from kgsynth.queries import Shape, sample_subgraphs
from kgsynth.synth.config import SynthConfig
from kgsynth.synth.dialogue import VerbaliserError
from kgsynth.synth.export import (
    SPLITS,
    DatasetWriter,
    JsonlWriter,
    json_line,
    read_jsonl,
    row_from_dump,
    sha256_file,
    split_lines,
    write_json_atomic,
)
from kgsynth.synth.item import Item, make_item
from kgsynth.synth.scenario import Scenario, ScenarioBuilder

Progress = Callable[[int, int], None]  # (items kept so far, items wanted)


class CellPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    scenarios: tuple[Scenario, ...]


def plan_cells(kg: KnowledgeGraph, config: SynthConfig, rules: dict[str, Rule]) -> list[CellPlan]:
    """The scenario phase: every scenario the graph gives, grouped by cell, shuffled by seed."""
    builder = ScenarioBuilder(kg, rules, config.dataset.languages)
    by_cell: dict[str, dict[str, Scenario]] = defaultdict(dict)
    wanted_difficulties, wanted_formats = set(config.dataset.difficulties), set(config.dataset.formats)
    with _collector_paused():
        for subgraph in _subgraphs(kg, config):
            for scenario in builder.build(subgraph):
                cell = scenario.cell
                if cell.difficulty in wanted_difficulties and cell.answer_format in wanted_formats:
                    by_cell[cell.key].setdefault(scenario.id, scenario)
    plans = []
    for key in sorted(by_cell):
        scenarios = sorted(by_cell[key].values(), key=lambda s: s.id)
        random.Random(f"{config.dataset.seed}:{key}").shuffle(scenarios)
        plans.append(CellPlan(key=key, scenarios=tuple(scenarios)))
    return plans


def _subgraphs(kg: KnowledgeGraph, config: SynthConfig):
    sampling, seed = config.sampling, config.dataset.seed
    for shape in config.sampling.shapes:
        hops = (2, 3, 4) if shape is Shape.multihop else (2,)
        for h in hops:
            yield from sample_subgraphs(kg, shape, limit=sampling.subgraphs_per_shape, seed=seed, hops=h, per_anchor=sampling.per_anchor)


def make_filters(config: SynthConfig, rules: dict[str, Rule]) -> list[ItemFilter]:
    available = {"structure": StructureFilter, "rule_leakage": lambda: RuleLeakageFilter(rules), "answer_stated": AnswerStatedFilter}
    return [available[name]() for name in config.filters.order]


class SynthResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    out: Path
    items: int
    per_cell: int
    filled_cells: list[str]
    unfillable_cells: dict[str, int]  # cell -> scenarios that passed (fewer than per_cell)
    manifest: dict


def synthesize(kg: KnowledgeGraph, config: SynthConfig, out: Path, progress: Progress | None = None) -> SynthResult:
    """Write a balanced dataset for ``config`` into ``out`` (resuming an interrupted run there)."""
    rules = load_rules(kg)
    if Shape.rule_application in config.sampling.shapes and not rules:
        raise KgsynthError("the graph has no kgs:Rule resources; load a rules file or drop rule_application from the shapes")
    plans = plan_cells(kg, config, rules)
    if not plans:
        raise KgsynthError("the graph gives no scenario for the configured shapes, difficulties and formats")
    with _frozen():
        languages = config.dataset.languages
        per_cell = max(1, config.dataset.n // (len(languages) * len(plans)))
        triples = _triples(kg)  # a full count: once per run
        filters = make_filters(config, rules)
        wanted = per_cell * len(plans) * len(languages)
        with _Work(out / ".work", _run_key(config, triples)) as work:
            for plan in plans:
                for record, lines in _run_cell(plan, work, per_cell, filters, config):
                    work.append(record, lines)
                    if progress:
                        progress(min(work.items, wanted), wanted)
        result = _assemble(out, work, config, per_cell, plans, kg, triples)
    shutil.rmtree(out / ".work")
    return result


# The scenario phase makes ~10^5 objects that live until the run ends and hold no garbage
# cycles, yet CPython's cyclic collector re-scanned all of them on every full collection:
# that doubled the phase's time at 1M triples (measured). So the collector is paused while
# they are built, and they are frozen (kept out of its view) for the wording phase.
@contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def _frozen() -> Iterator[None]:
    """``gc.freeze()`` for the block, unless the caller froze objects itself (left alone)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


ItemLines = dict[str, bytes]  # split name -> the item's line in that split's file


def _run_cell(
    plan: CellPlan, work: _Work, per_cell: int, filters: list[ItemFilter], config: SynthConfig
) -> Iterator[tuple[dict, list[ItemLines]]]:
    """Records of the cell's scenarios not processed yet, each with its items' lines when
    kept, then the cell's closing record."""
    version, seed = config.dataset.version, config.dataset.seed
    if plan.key in work.closed:
        return
    if len(plan.scenarios) < per_cell:  # cannot fill even if every scenario passed: no wording spent
        yield {"cell": plan.key, "closed": 0, "available": len(plan.scenarios)}, []
        return
    kept = work.kept[plan.key]
    for index, scenario in enumerate(plan.scenarios):
        if kept >= per_cell:
            break
        if (plan.key, index) in work.processed:
            if work.processed[(plan.key, index)] != scenario.id:
                raise KgsynthError(f"{work.path.parent.parent} holds a run whose scenarios differ from this graph's; use a new --out or delete it")
            continue
        record = {"cell": plan.key, "index": index, "scenario_id": scenario.id}
        try:
            items = [make_item(scenario, lang, config.dialogue, config.dataset.seed) for lang in config.dataset.languages]
        except VerbaliserError as e:  # e.g. no distractor line free of the scenario's labels
            rejection = {"item_id": None, "scenario_id": scenario.id, "language": None, "cell": plan.key, "filter": "verbaliser", "reason": str(e)}
            yield record | {"rejections": [rejection], "filter_in": {}}, []
            continue
        passed, rejections = apply_filters(items, filters)
        lines = []
        if len(passed) == len(items):
            kept += 1
            record["languages"] = [item.language for item in items]
            lines = [split_lines(row_from_dump(item.model_dump(mode="json"), version, seed)) for item in items]
        record["rejections"] = [r.model_dump() for r in rejections]
        record["filter_in"] = _filter_counts(items, rejections, filters)
        yield record, lines
    yield {"cell": plan.key, "closed": kept, "available": len(plan.scenarios)}, []


def _filter_counts(items: list[Item], rejections: list, filters: list[ItemFilter]) -> dict[str, int]:
    """How many of these items reached each filter (the cascade stops at the first rejection)."""
    counts, remaining = {}, len(items)
    dropped = Counter(r.filter for r in rejections)
    for f in filters:
        counts[f.name] = remaining
        remaining -= dropped[f.name]
    return counts


class _Work:
    """The progress log of one output folder and the spools of kept items' lines: what is
    processed, kept and closed (counts only; the lines stay on disk until assembly)."""

    def __init__(self, folder: Path, run_key: str):
        self.path = folder / "progress.jsonl"
        self.spool_paths = {name: folder / f"{name.replace('/', '-')}.spool.jsonl" for name in SPLITS}
        folder.mkdir(parents=True, exist_ok=True)
        self.processed: dict[tuple[str, int], str] = {}  # -> scenario id
        self.closed: dict[str, dict] = {}
        self.kept: Counter[str] = Counter()
        self.items = 0
        self.spooled: Counter[str] = Counter()  # bytes per split that the log accounts for
        if self.path.exists():
            _drop_partial_line(self.path)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        for i, record in enumerate([] if fresh else read_jsonl(self.path)):
            if i == 0 and record.get("config") != run_key:
                raise KgsynthError(f"{folder.parent} holds an unfinished run with another config, graph or kgsynth version; use a new --out or delete it")
            self._count(record)
        for name, path in self.spool_paths.items():
            with path.open("ab") as spool:  # lines written after the last logged record are cut
                if spool.tell() < self.spooled[name]:
                    raise KgsynthError(f"{path} is shorter than its progress log says; delete {folder} to start over")
                spool.truncate(self.spooled[name])
        self._log = self.path.open("ab")
        self._spools = {name: path.open("ab") for name, path in self.spool_paths.items()}
        if fresh:
            self.append({"config": run_key})

    def __enter__(self) -> _Work:
        return self

    def __exit__(self, *exc) -> None:
        for f in [self._log, *self._spools.values()]:
            f.close()

    def _count(self, record: dict) -> None:
        if "index" in record:
            self.processed[(record["cell"], record["index"])] = record["scenario_id"]
            if "bytes" in record:
                self.kept[record["cell"]] += 1
                self.items += len(record["languages"])
                self.spooled.update(record["bytes"])
        elif "closed" in record:
            self.closed[record["cell"]] = record

    def append(self, record: dict, lines: Sequence[ItemLines] = ()) -> None:
        """Spool the items' lines, then log the record; each write reaches the OS before
        the next starts, so a killed process leaves at most one unlogged tail."""
        if lines:
            record["bytes"] = {}
            for name, spool in self._spools.items():
                data = b"".join(item[name] for item in lines)
                spool.write(data)
                spool.flush()
                record["bytes"][name] = len(data)
        self._log.write(json_line(record))
        self._log.flush()
        self._count(record)

    def records(self, with_lines: bool) -> Iterator[tuple[dict, ItemLines | None]]:
        """Logged records in order, each kept one with its spooled lines (all its items, per
        split) if ``with_lines``."""
        with ExitStack() as stack:
            spools = {name: stack.enter_context(path.open("rb")) for name, path in self.spool_paths.items()} if with_lines else {}
            for record in read_jsonl(self.path):
                sizes = record.get("bytes")
                yield record, {name: spools[name].read(sizes[name]) for name in spools} if sizes and with_lines else None


def _drop_partial_line(path: Path) -> None:
    """A killed writer can leave half a line; cut it so appends start on a fresh line."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


_LOG_FORMAT = "spooled-lines-1"  # changes when progress.jsonl records change meaning


def _run_key(config: SynthConfig, triples: int) -> str:
    """What a resumed run must share with the stopped one: config, kgsynth version, graph
    size, and the progress log's format."""
    key = f"{config.model_dump_json()}|{kgsynth.__version__}|{triples}|{_LOG_FORMAT}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _assemble(
    out: Path, work: _Work, config: SynthConfig, per_cell: int, plans: list[CellPlan], kg: KnowledgeGraph, triples: int
) -> SynthResult:
    """Write the dataset files from the progress log, in the fixed cell and scenario order."""
    closed = work.closed
    filled = [p.key for p in plans if closed[p.key]["closed"] >= per_cell]
    unfillable = {p.key: closed[p.key]["closed"] for p in plans if p.key not in filled}
    version, seed = config.dataset.version, config.dataset.seed
    counts: Counter[str] = Counter()
    stats = _FilterStats()
    filled_set = set(filled)
    # Usually every spooled item is in a filled cell: then each spool is the split's file.
    whole_spools = all(cell in filled_set for cell, kept in work.kept.items() if kept)
    with (
        DatasetWriter(out, work.spool_paths if whole_spools else None) as writer,
        JsonlWriter(out / "rejections.jsonl") as rejections,
    ):
        for record, lines in work.records(with_lines=not whole_spools):
            if "index" not in record:
                continue
            stats.add(record)
            for r in record["rejections"]:
                rejections.write(r)
            if record["cell"] in filled_set and "bytes" in record:
                if lines is not None:
                    writer.write_lines(lines)
                counts.update(f"{record['cell']}/{language}" for language in record["languages"])
    files = {str(p.relative_to(out)): sha256_file(p) for p in sorted([*writer.paths, out / "rejections.jsonl"])}
    manifest = {
        "kgsynth": kgsynth.__version__,
        "version": version,
        "seed": seed,
        "config": json.loads(config.model_dump_json()),
        "graph": {"description": kg.backend.description, "triples": triples},
        "per_cell": per_cell,
        "items": sum(counts.values()),
        "cells": {key: {"kept": closed[key]["closed"], "scenarios": closed[key]["available"]} for key in sorted(closed)},
        "filled_cells": filled,
        "unfillable_cells": unfillable,
        "counts": dict(sorted(counts.items())),
        "filters": stats.report(config.filters.order),
        "files": files,
    }
    write_json_atomic(out / "manifest.json", manifest)
    return SynthResult(out=out, items=manifest["items"], per_cell=per_cell, filled_cells=filled,
                       unfillable_cells=unfillable, manifest=manifest)


class _FilterStats:
    """Items in and rejected per filter, with rejection reasons counted by kind."""

    def __init__(self):
        self.seen: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.reasons: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, record: dict) -> None:
        self.seen.update(record["filter_in"])
        for r in record["rejections"]:
            self.rejected[r["filter"]] += 1
            self.reasons[r["filter"]][_reason_kind(r["reason"])] += 1

    def report(self, order: tuple[str, ...]) -> dict:
        return {
            name: {"in": self.seen[name], "rejected": self.rejected[name], "pass_rate": _rate(self.seen[name], self.rejected[name]),
                   "reasons": dict(sorted(self.reasons[name].items()))}
            for name in order
        }


def _rate(seen: int, rejected: int) -> float | None:
    return round((seen - rejected) / seen, 4) if seen else None


def _reason_kind(reason: str) -> str:
    """A reason without its particulars (quoted values, numbers), for counting."""
    return " ".join(re.sub(r"'[^']*'|\"[^\"]*\"|-?\d[\d.,]*", "…", reason).split())


def _triples(kg: KnowledgeGraph) -> int:
    return int(next(iter(kg.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")))[0].value)
