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
import itertools
import json
import math
import os
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict

import kgsynth
from kgsynth._collector import collector_paused, full_collections_rarer
from kgsynth._files import JsonlWriter, drop_partial_line, json_line, read_jsonl, sha256_file, write_json_atomic
from kgsynth._folders import finish_removal, make_writable_folder, remove_work_folder
from kgsynth.dataset.splits import SPLITS, DatasetWriter, item_from_row, row_from_dump, split_lines
from kgsynth.errors import KgsynthError
from kgsynth.filters import (
    AnswerLeakFilter,
    AnswerStatedFilter,
    AttributionFilter,
    ClosedBookFilter,
    DatasetFilter,
    EntityMatchFilter,
    ExactDuplicateFilter,
    ItemFilter,
    JudgeFilter,
    NearDuplicateFilter,
    RuleLeakageFilter,
    StructureFilter,
    apply_filters,
)
from kgsynth.filters.base import rejection
from kgsynth.formats.answers import KNOWN_UNITS, has_word
from kgsynth.kg import KnowledgeGraph, load_rules, local_name
from kgsynth.kg.vocab import LABEL_PATH, Rule
from kgsynth.llm import LLMGateway, ResponseCache, StageUsage, redact
from kgsynth.pipeline.config import OFFLINE_FILTERS, SynthConfig
from kgsynth.pipeline.executors import Executor, open_executor
from kgsynth.queries import Shape, sample_subgraphs
from kgsynth.synth.dialogues.dialogue import VerbaliserError
from kgsynth.synth.dialogues.haystack import Others, Pool
from kgsynth.synth.dialogues.item import Item, make_item
from kgsynth.synth.dialogues.llm_dialogue import STAGE as VERBALISE
from kgsynth.synth.dialogues.llm_dialogue import Draft, LLMVerbaliser
from kgsynth.synth.scenarios.published import Published
from kgsynth.synth.scenarios.rules import check_rules
from kgsynth.synth.scenarios.scenario import Scenario, ScenarioBuilder, cell_key

Progress = Callable[[int, int], None]  # (items kept so far, items wanted)
PUBLISHED = "published"  # the rejection of a reworded question an earlier release asked


class CellPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    scenarios: tuple[Scenario, ...]


def plan_cells(kg: KnowledgeGraph, config: SynthConfig, rules: dict[str, Rule], empty_cells: bool = False,
               published: Published | None = None, builder: ScenarioBuilder | None = None) -> list[CellPlan]:
    """The scenario phase: every scenario the graph gives, grouped by cell, shuffled by
    seed; in the order the cells are run (:func:`_questions`). With ``empty_cells``, the
    cells of the configured grid (every category and format the graph gives, at every
    difficulty asked) that have no scenario are planned too, empty: a run reports them
    unfillable. A scenario whose subgraph or question is ``published`` is left out (its
    cell stays in the grid). ``builder`` (one of ``config``'s, made here when None) keeps
    the count of subgraphs left out as world knowledge."""
    builder = builder or _builder(kg, config, rules)
    by_cell: dict[str, dict[str, Scenario]] = defaultdict(dict)
    grid: set[tuple[str, str]] = set()
    wanted_difficulties, wanted_formats = set(config.dataset.difficulties), set(config.dataset.formats)
    with collector_paused():
        for scenario in builder.build_many(_subgraphs(kg, config)):
            cell = scenario.cell
            if cell.answer_format in wanted_formats:
                grid.add((cell.category, cell.answer_format))
                if cell.difficulty in wanted_difficulties and not (published and published.excludes(scenario)):
                    by_cell[cell.key].setdefault(scenario.id, scenario)
        if empty_cells:
            for category, fmt in grid:
                for difficulty in wanted_difficulties:
                    by_cell.setdefault(cell_key(category, difficulty, fmt), {})
        plans = []
        # the places a cell fills first (as _run_plans shares n): each rule's branches take
        # turns across cells there too, so a small n is balanced as well
        front = _per_cell(config, sum(map(bool, by_cell.values())))
        fronts: dict[str, Counter[str]] = defaultdict(Counter)
        for key in sorted(by_cell):
            scenarios = sorted(by_cell[key].values(), key=lambda s: s.id)
            random.Random(f"{config.dataset.seed}:{key}").shuffle(scenarios)
            ordered = _branches_take_turns(scenarios, config.dataset.branch_weights, fronts, front)
            plans.append(CellPlan(key=key, scenarios=ordered))
        if ExactDuplicateFilter.name in config.filter_order:  # the keys are 10^5 more objects
            plans.sort(key=lambda plan: (_questions(plan, config.dataset.languages), plan.key))
    return plans


def _branches_take_turns(scenarios: list[Scenario], weights: dict[str, dict[str, float]],
                         fronts: dict[str, Counter[str]], front: int) -> tuple[Scenario, ...]:
    """The cell's shuffled scenarios with each rule's branches (yes / no, each class, each
    case's rate...) taking turns in the places the shuffle gave that rule, in proportion to
    ``weights`` (even by default), a scenario on the rule's edge first within its branch: a
    cell fills from the front, so what the graph holds most of does not crowd out the rest
    and ">" versus ">=" gets asked. A branch that runs out leaves its turns to the others.
    ``fronts`` counts, per rule, the branches earlier cells put in their first ``front``
    places, and goes on counting: a branch they took less goes first here."""
    places: dict[str, list[int]] = defaultdict(list)
    for index, scenario in enumerate(scenarios):
        if scenario.rule is not None:
            places[scenario.rule.iri].append(index)
    ordered = list(scenarios)
    for iri, indices in places.items():
        queues: dict[str, list[Scenario]] = {}  # in order of first appearance: the seed breaks ties
        for index in indices:
            queues.setdefault(scenarios[index].branch, []).append(scenarios[index])
        for queue in queues.values():
            queue.sort(key=lambda s: not s.boundary)  # stable: the shuffle's order otherwise
        wanted = weights.get(iri) or weights.get(local_name(iri)) or {}
        before, taken = Counter(fronts[iri]), Counter()
        # each branch with a scenario left, by the share it would reach with its next turn
        # (kept up to date: 150,000 turns at 1M triples); the first lowest goes
        scores = {b: (before[b] + 1) / wanted.get(b, 1.0) for b in queues}
        for index in indices:
            branch = min(scores, key=scores.__getitem__)
            ordered[index] = queues[branch][taken[branch]]
            taken[branch] += 1
            if taken[branch] == len(queues[branch]):
                del scores[branch]
            else:
                scores[branch] = (before[branch] + taken[branch] + 1) / wanted.get(branch, 1.0)
            if index < front:
                fronts[iri][branch] += 1
    return tuple(ordered)


def _questions(plan: CellPlan, languages: Sequence[str]) -> int:
    """How many distinct questions (with their golds) the cell's scenarios ask.

    A subgraph asks the same question in every difficulty it fills, and a dataset holds a
    question once (the exact_duplicate filter; later cells skip a kept question unworded),
    so the cells with the fewest questions are run first: a hard cell is not left with
    what the easy ones did not take."""
    return len({tuple(s.question_keys[lang] for lang in languages) for s in plan.scenarios})


def _subgraphs(kg: KnowledgeGraph, config: SynthConfig):
    sampling, seed = config.sampling, config.dataset.seed
    for shape in config.sampling.shapes:
        hops = (2, 3, 4) if shape is Shape.multihop else (2,)
        for h in hops:
            yield from sample_subgraphs(kg, shape, limit=config.subgraph_limit, seed=seed, hops=h, per_anchor=sampling.per_anchor,
                                        anchors=sampling.anchors)


def make_filters(config: SynthConfig, rules: dict[str, Rule], kg: KnowledgeGraph | None = None,
                 models: _Models | None = None, scenarios: Iterable[Scenario] = ()) -> list[ItemFilter]:
    """The configured cascade, in order. ``kg`` is needed by entity_match, ``models`` by
    the LLM filters; answer_leak reads the names of the entities of ``scenarios``."""
    f = config.filters
    scenarios = list(scenarios)  # read by two filters

    def needs(thing, name):
        if thing is None:
            raise KgsynthError(f"filter {name!r} cannot run here: it needs {'the graph' if name == 'entity_match' else 'an [llm] section'}")
        return thing

    available = {
        "structure": StructureFilter,
        "rule_leakage": lambda: RuleLeakageFilter(rules),
        "answer_stated": AnswerStatedFilter,
        "answer_leak": lambda: AnswerLeakFilter.from_scenarios(scenarios),
        "attribution": lambda: AttributionFilter.from_scenarios(scenarios),
        "exact_duplicate": ExactDuplicateFilter,
        "entity_match": lambda: EntityMatchFilter(needs(kg, "entity_match").all_labels(), kg.vocabulary(),
                                                  f.entity_match.threshold, f.entity_match.ner),
        "closed_book": lambda: ClosedBookFilter(needs(models, "closed_book").guessers, f.closed_book.similarity),
        "judge": lambda: JudgeFilter(needs(models, "judge").judge, rules, f.judge.min_total, f.judge.min_each),
        "near_duplicate": lambda: NearDuplicateFilter(f.near_duplicate.threshold, f.near_duplicate.model),
    }
    return [available[name]() for name in config.filter_order]


@dataclass
class _Models:
    """The gateways of an LLM run, sharing one response cache."""

    generator: LLMGateway | None
    guessers: list[LLMGateway]
    judge: LLMGateway
    cache: ResponseCache

    @classmethod
    def open(cls, config: SynthConfig) -> _Models | None:
        llm, seed = config.llm, config.dataset.seed
        if llm is None:
            return None
        llm.require_endpoint()
        cache = ResponseCache(llm.cache_path())

        def gateway(stage):
            # an unreachable endpoint stops the run (resumable), rather than rejecting every scenario left
            return LLMGateway(llm.model_config_for(stage, seed), cache, jitter_seed=seed, raise_unreachable=True)

        return cls(gateway(llm.generator) if llm.generator else None, [gateway(g) for g in llm.guessers], gateway(llm.judge), cache)

    def usage(self) -> dict[str, StageUsage]:
        """Usage summed over the gateways, per stage."""
        total: dict[str, StageUsage] = {}
        for gateway in [*([self.generator] if self.generator else []), *self.guessers, self.judge]:
            for stage, u in gateway.usage.items():
                t = total.setdefault(stage, StageUsage())
                for name in StageUsage.model_fields:
                    setattr(t, name, getattr(t, name) + getattr(u, name))
        return total


class WorkersReport(BaseModel):
    """Who worded the scenarios: the executor, its workers and each worker's peak memory."""

    model_config = ConfigDict(frozen=True)

    executor: str = "this process"
    workers: int = 1
    peak_mb: dict[str, float] = {}  # worker -> its peak resident memory in MB (none when this process worded)

    def line(self) -> str:
        if not self.peak_mb:
            return f"worded in {self.executor}"
        peaks = sorted(self.peak_mb.values())
        return (f"worded by {self.workers} {self.executor} workers; peak memory per worker "
                f"{peaks[0]:,.0f}-{peaks[-1]:,.0f} MB ({len(peaks)} workers answered)")


class SynthResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    out: Path
    items: int
    per_cell: int
    filled_cells: list[str]
    unfillable_cells: dict[str, int]  # cell -> scenarios that passed (fewer than per_cell)
    manifest: dict
    notes: list[str] = []  # one line each: what the user should know about this result
    workers: WorkersReport = WorkersReport()  # not in the manifest: the files are the same for any workers


def synthesize(kg: KnowledgeGraph, config: SynthConfig, out: Path, progress: Progress | None = None,
               published: Published | None = None) -> SynthResult:
    """Write a balanced dataset for ``config`` into ``out`` (resuming an interrupted run there;
    a run already finished there with the same config and graph is returned as it is).
    No item has a subgraph or a question that is ``published`` (earlier releases'): such
    scenarios are not planned, and an item a model reworded into a published question is
    rejected (filter ``published``), so the cells stay balanced.

    Raises:
        KgsynthError: ``out`` cannot be written, the graph gives no scenario, ``n`` asks more
            per cell than any cell has, or no item passed (the files and their rejections
            are written first, so the reasons can be read).
    """
    _prepare_out(out)
    rules = load_rules(kg)
    if Shape.rule_application in config.sampling.shapes and not rules:
        raise KgsynthError("the graph has no kgs:Rule resources; load a rules file or drop rule_application from the shapes")
    if Shape.rule_application in config.sampling.shapes:
        check_rules(kg, rules, KNOWN_UNITS)
    # a full count, once per run; not where the anchors are restricted (a graph too large to scan)
    triples = None if config.sampling.anchors else _triples(kg)
    run_key = _run_key(config, triples, kg.fingerprint, published)
    result = _finished(out, run_key) or _run(kg, config, out, rules, triples, run_key, progress, published)
    if not result.items:
        raise KgsynthError(_why_empty(result))
    return result


def _run(kg: KnowledgeGraph, config: SynthConfig, out: Path, rules: dict[str, Rule], triples: int | None, run_key: str,
         progress: Progress | None, published: Published | None = None) -> SynthResult:
    with ExitStack() as frozen:
        with collector_paused():
            builder = _builder(kg, config, rules)
            plans = plan_cells(kg, config, rules, empty_cells=True, published=published, builder=builder)
            frozen.enter_context(_frozen())  # before the collector is back: it would scan every scenario once
        notes = [_world_left_out(builder)] if builder.world_skipped else []
        with full_collections_rarer():
            return _run_plans(kg, config, out, rules, plans, triples, run_key, progress, published, notes)


def _builder(kg: KnowledgeGraph, config: SynthConfig, rules: dict[str, Rule]) -> ScenarioBuilder:
    return ScenarioBuilder(kg, rules, config.dataset.languages, world_knowledge=config.world_policy)


def _world_left_out(builder: ScenarioBuilder) -> str:
    """One line on the subgraphs ``builder`` left out as world knowledge: how many, why (an
    example entity and what makes it world-known) and how to build them anyway."""
    example, checked = builder.world_example, builder.world_policy == "closed_book"
    which = " (their yes/no questions, which the closed-book filter cannot check)" if checked else ""
    return (f"{builder.world_skipped.total():,} subgraphs answerable from world knowledge were left out{which}: "
            f"their entities are real, e.g. <{example}> ({builder.world.why(example)}); --world-knowledge keep "
            '(sampling.world_knowledge = "keep") builds them, flagged metadata.world_knowledge')


def _run_plans(kg: KnowledgeGraph, config: SynthConfig, out: Path, rules: dict[str, Rule], plans: list[CellPlan], triples: int | None,
               run_key: str, progress: Progress | None, published: Published | None = None,
               notes: Sequence[str] = ()) -> SynthResult:
    if not any(plan.scenarios for plan in plans):
        if published and any(plan.scenarios for plan in plan_cells(kg, config, rules)):
            raise KgsynthError("every scenario the graph gives repeats a subgraph or a question of an earlier release: "
                               "add facts to the graph, or ask other shapes, difficulties or formats")
        raise KgsynthError(_why_no_scenario(kg, config, rules))
    languages = config.dataset.languages
    per_cell = _per_cell(config, _with_scenarios(plans))  # cells without any are unfillable
    _check_fillable(config, plans, per_cell)
    models = _Models.open(config)
    try:
        filters = make_filters(config, rules, kg, models, scenarios=(s for plan in plans for s in plan.scenarios))
        wording = _Wording(config, filters, models, _Confusables(plans, config.dataset.seed), published)
        wanted = per_cell * len(plans) * len(languages)
        # with models, a record is worth its calls: each reaches the file at once
        with _Work(out / ".work", run_key, flush_seconds=0 if models else _FLUSH_SECONDS) as work:
            wording.recall(work)
            with _words(config, plans, filters, wording, work, per_cell) as words:
                for plan in plans:
                    for record, lines in _run_cell(plan, work, per_cell, wording, words):
                        work.append(record, lines)
                        if progress:
                            progress(min(work.items, wanted), wanted)
                workers = words.report()
        result = _assemble(out, work, config, per_cell, plans, kg, triples, wording.stage_names(), rules, run_key, notes)
    finally:
        if models:
            models.cache.close()
    remove_work_folder(out)
    return result.model_copy(update={"workers": workers})


def _prepare_out(out: Path) -> None:
    """The output folder, created (one line when it cannot be), without a half-removed work folder."""
    try:
        make_writable_folder(out)
    except KgsynthError as e:
        raise KgsynthError(f"cannot write the dataset to {out}: {e}") from None
    finish_removal(out)


def _finished(out: Path, run_key: str) -> SynthResult | None:
    """The result of a finished run of the same config and graph in ``out`` (its manifest
    names the run and every file still has its recorded hash), else None."""
    path = out / "manifest.json"
    if (out / ".work").exists() or not path.is_file() or not (out / "filter_report.json").is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("run_key") != run_key:
        return None
    files = manifest.get("files", {})
    if not all((out / name).is_file() and sha256_file(out / name) == digest for name, digest in files.items()):
        return None
    notes = [*manifest.get("notes", []), f"{out} already held this run, finished: nothing was redone"]
    return SynthResult(out=out, items=manifest["items"], per_cell=manifest["per_cell"], filled_cells=manifest["filled_cells"],
                       unfillable_cells=manifest["unfillable_cells"], manifest=manifest, notes=notes)


def _why_no_scenario(kg: KnowledgeGraph, config: SynthConfig, rules: dict[str, Rule]) -> str:
    """Why the run has no scenario, in one line: the subgraphs left out as world knowledge
    first, then what each other configured shape gave, and the likely cause where it gave no
    subgraph (asked only when the run cannot start: it samples again)."""
    builder = _builder(kg, config, rules)
    sampled, built = Counter(), Counter()
    for subgraph in _subgraphs(kg, config):
        sampled[subgraph.shape] += 1
        built[subgraph.shape] += sum(1 for _ in builder.build(subgraph))
    said = []
    for shape in config.sampling.shapes:
        rest = sampled[shape] - builder.world_skipped[shape.value]  # those left out as world knowledge are told first
        if not sampled[shape]:
            said.append(f"{shape.value}: no subgraph ({_why_no_subgraph(kg, shape, rules)})")
        elif not built[shape] and rest:
            said.append(f"{shape.value}: {rest:,} subgraphs, none with a question and gold in every language")
        elif built[shape]:
            said.append(f"{shape.value}: {built[shape]:,} scenarios, none in the difficulties and formats asked")
    if builder.world_skipped:
        return "; ".join([f"no scenario to build: {_world_left_out(builder)}", *said])
    return f"the graph gives no scenario for the configured shapes, difficulties and formats: {'; '.join(said)}"


_UNIQUE_LABEL = f"""SELECT ?s WHERE {{ ?s {LABEL_PATH} ?label .
  FILTER NOT EXISTS {{ ?other {LABEL_PATH} ?label . FILTER(!sameTerm(?other, ?s)) }} }} LIMIT 1"""


def _why_no_subgraph(kg: KnowledgeGraph, shape: Shape, rules: dict[str, Rule]) -> str:
    unused = [(rule.iri, relation) for rule in rules.values() for relation in rule.relations
              if not any(True for _ in kg.select(f"SELECT ?s WHERE {{ ?s <{relation}> ?o }} LIMIT 1"))
              ] if shape is Shape.rule_application else []
    if unused:
        rule, relation = unused[0]
        more = f" and {len(unused) - 1} more" if len(unused) > 1 else ""
        return f"<{relation}>, an input of rule <{rule}>{more}, is in no triple"
    if not any(True for _ in kg.select(_UNIQUE_LABEL)):
        return "every label is shared by another entity, and an entity is asked about only by a label of its own"
    if shape is Shape.rule_application:
        return "no entity with a label of its own has every input a rule reads"
    return "no entity has the relations this shape needs, each with one value, under a label of its own"


def _per_cell(config: SynthConfig, cells: int) -> int:
    """Items per cell and language: ``n`` shared among the ``cells`` that have a scenario."""
    return max(1, config.dataset.n // (len(config.dataset.languages) * max(1, cells)))


def _with_scenarios(plans: Sequence[CellPlan]) -> int:
    """How many cells have a scenario: ``n`` is shared among them."""
    return sum(1 for plan in plans if plan.scenarios)


def _check_fillable(config: SynthConfig, plans: list[CellPlan], per_cell: int) -> None:
    """Refuse, before any wording, an ``n`` no cell has scenarios enough for."""
    most = max(len(plan.scenarios) for plan in plans)
    if per_cell > most:
        cells, languages = _with_scenarios(plans), len(config.dataset.languages)
        raise KgsynthError(
            f"n = {config.dataset.n:,} asks {per_cell:,} items per cell and language ({cells} cells x {languages} languages), "
            f"but the fullest cell has {most:,} scenarios: ask for at most {most * cells * languages:,}"
        )


def _why_empty(result: SynthResult) -> str:
    """One line on a dataset without items: no cell kept ``per_cell`` scenarios, what would
    fill one, and the commonest rejection."""
    manifest, path = result.manifest, result.out / "rejections.jsonl"
    best = max(cell["kept"] for cell in manifest["cells"].values())
    line = f"wrote no item: no cell kept {result.per_cell:,} scenarios whose items pass every filter (the most: {best:,})"
    if best:
        cells = sum(1 for cell in manifest["cells"].values() if cell["scenarios"])
        line += f"; --n {best * cells * len(manifest['config']['dataset']['languages']):,} would fill the fullest"
    by_filter: Counter[str] = Counter()
    example: dict[str, str] = {}
    for r in read_jsonl(path) if path.is_file() else ():  # none when nothing was rejected
        by_filter[r["filter"]] += 1
        example.setdefault(r["filter"], r["reason"].splitlines()[0])
    if by_filter:
        name, count = by_filter.most_common(1)[0]
        line += f"; {name} rejected most ({count:,}), e.g. {example[name]} (all in {path})"
    return line


def _shortfall(config: SynthConfig, per_cell: int, closed: dict[str, dict], items: int) -> dict[str, int]:
    """The items against ``n`` and the cells against the configured grid (every category
    and format the graph gives, at every difficulty asked): ``missing`` = ``rounding`` (n
    shared among the cells with scenarios, rounded down to ``per_cell`` each) +
    ``unfilled`` (the share of the cells with scenarios that kept fewer than ``per_cell``)."""
    languages = len(config.dataset.languages)
    with_scenarios = [cell for cell in closed.values() if cell["available"]]
    short = sum(1 for cell in with_scenarios if cell["closed"] < per_cell)
    return {
        "n": config.dataset.n,
        "items": items,
        "missing": config.dataset.n - items,
        "rounding": config.dataset.n - per_cell * languages * len(with_scenarios),
        "unfilled": per_cell * languages * short,
        "grid_cells": len(closed),
        "filled_cells": len(with_scenarios) - short,
        "unfillable_cells": len(closed) - len(with_scenarios) + short,
        "cells_without_scenarios": len(closed) - len(with_scenarios),
    }


def _notes(config: SynthConfig, per_cell: int, closed: dict[str, dict], items: int, unfillable: dict[str, int]) -> list[str]:
    """Why the dataset holds other than ``n`` items, and which cells of the configured grid
    it leaves out (:func:`_shortfall`)."""
    n, languages, notes = config.dataset.n, len(config.dataset.languages), []
    counts = _shortfall(config, per_cell, closed, items)
    cells = counts["grid_cells"] - counts["cells_without_scenarios"]
    if items > n:
        notes.append(f"n = {n:,} is below one item per cell and language ({cells} cells x {languages} languages): "
                     f"wrote {items:,} items, {per_cell} per cell and language")
    elif items < n:
        why = [f"{counts['rounding']:,} from sharing n among {cells} cells with scenarios x {languages} languages "
               f"({per_cell} per cell and language)"] if counts["rounding"] > 0 else []
        if counts["rounding"] < 0:  # n below one per cell: more were planned than n, and the cells left short took more
            why.append(f"{per_cell * cells * languages:,} planned ({cells} cells with scenarios x {languages} languages, one each)")
        why += [f"{counts['unfilled']:,} in cells left short"] if counts["unfilled"] else []
        notes.append(f"wrote {items:,} of n = {n:,} items, {n - items:,} fewer: {'; '.join(why)}")
    if unfillable:
        empty = sorted(key for key in unfillable if not closed[key]["available"])
        short = sorted((key for key in unfillable if closed[key]["available"]), key=lambda key: (unfillable[key], key))
        parts = [f"{len(empty)} without any scenario (e.g. {', '.join(empty[:3])})"] if empty else []
        parts += [f"{len(short)} with fewer than {per_cell:,} scenarios whose items pass (the fewest: "
                  f"{unfillable[short[0]]:,}, in {short[0]})"] if short else []
        notes.append(f"{len(unfillable)} of the {counts['grid_cells']} cells of the configured grid (category x difficulty "
                     f"x format) are unfillable and left out: {'; '.join(parts)}")
    return notes


# The scenario phase makes ~10^5 objects that live until the run ends: the collector is
# paused while they are built (kgsynth._collector), and they are frozen (kept out of its
# view) for the wording phase.
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


@dataclass
class _Outcome:
    """What wording and filtering made of one scenario."""

    items: list[Item] = field(default_factory=list)  # all its items, when they all passed
    rejections: list[dict] = field(default_factory=list)
    reached: Counter[str] = field(default_factory=Counter)  # stage -> its items that reached it


class _Wording:
    """The wording phase's machinery: template or LLM verbaliser, the filter cascade with
    duplicates decided scenario by scenario, and the usage each batch costs."""

    def __init__(self, config: SynthConfig, filters: list[ItemFilter], models: _Models | None, confusables: _Confusables,
                 published: Published | None = None):
        self.config, self.models, self.confusables, self.published = config, models, confusables, published
        self.dataset_filters = [f for f in filters if isinstance(f, DatasetFilter)]  # see keep()
        self.filters = [f for f in filters if not isinstance(f, DatasetFilter)]
        self.exact_duplicate = next((f for f in filters if isinstance(f, ExactDuplicateFilter)), None)
        generator = models.generator if models else None
        offline = [f for f in self.filters if f.name in OFFLINE_FILTERS]
        self.verbaliser = generator and LLMVerbaliser(generator, config.llm.attempts, check=lambda item: _first_reason(item, offline))
        # one scenario at a time without models: nothing to gain from batches, and the
        # cascade then judges every language of a scenario (the reasons are all reported)
        self.batch = config.llm.batch if models else 1
        self.seconds: Counter[str] = Counter()
        self._usage_seen: dict[str, StageUsage] = {}

    def stage_names(self) -> list[str]:
        """Stages in the order items meet them: with a generator, the offline filters check
        the template draft first (a draft that fails them is not worth a call); the
        duplicate filters come last (see keep())."""
        return self._cascade_stage_names() + [f.name for f in self.dataset_filters]

    def _cascade_stage_names(self) -> list[str]:
        names = [f.name for f in self.filters]
        if self.verbaliser:
            names.insert(len(self._before_wording()), VERBALISE)
        return names

    def _before_wording(self) -> list[ItemFilter]:
        return [f for f in self.filters if f.name in OFFLINE_FILTERS] if self.verbaliser else []

    def recall(self, work: _Work) -> None:
        """Give the duplicate filters the items a stopped run had kept, in order."""
        if not self.dataset_filters:
            return
        for record, lines in work.records(with_lines=True):
            if lines is not None:
                items = [item_from_row(json.loads(line)) for line in lines["items"].splitlines()]
                for f in self.dataset_filters:
                    f.remember(items)

    def run(self, batch: Sequence[tuple[int, Scenario]], cell: str) -> list[_Outcome]:
        """Word and filter a batch of scenarios; outcomes in batch order."""
        config, languages = self.config, self.config.dataset.languages
        outcomes = [_Outcome() for _ in batch]
        drafts: list[tuple[int, Item]] = []
        for k, (_, scenario) in enumerate(batch):
            twins = self._twins_of_kept(scenario, cell)
            if twins:
                outcomes[k].rejections += twins
                outcomes[k].reached[self.exact_duplicate.name] += len(languages)
                continue
            try:
                others = self.confusables(scenario, draw=bool(config.dialogue.confusables))
                drafts += [(k, make_item(scenario, lang, config.dialogue, config.dataset.seed, others)) for lang in languages]
            except VerbaliserError as e:  # e.g. no distractor line free of the scenario's labels
                outcomes[k].rejections.append({"item_id": None, "scenario_id": scenario.id, "language": None, "cell": cell,
                                               "filter": "verbaliser", "reason": str(e)})
        together = (lambda item: item.metadata.scenario_id) if self.models else None
        by_scenario = {scenario.id: k for k, (_, scenario) in enumerate(batch)}
        counts = Counter(k for k, _ in drafts)
        items = [item for _, item in drafts]
        if self.verbaliser:
            items = self._cascade(items, self._before_wording(), together, outcomes, by_scenario)
            items = self._reword(batch, [(by_scenario[i.metadata.scenario_id], i) for i in items], outcomes, cell)
        rest = [f for f in self.filters if f not in self._before_wording()]
        for item in self._cascade(items, rest, together, outcomes, by_scenario):
            outcomes[by_scenario[item.metadata.scenario_id]].items.append(item)
        stages = self._cascade_stage_names()  # keep() counts the rest
        for k, outcome in enumerate(outcomes):
            outcome.reached.update(_filter_counts(counts[k], outcome.rejections, stages, together is not None))
            if len(outcome.items) != len(languages):
                outcome.items = []
        return outcomes

    def unasked(self, scenarios: Sequence[Scenario]) -> int:
        """How many of ``scenarios`` ask a question no kept item has."""
        return sum(1 for s in scenarios if not self._kept_twins(s))

    def _kept_twins(self, scenario: Scenario) -> list[tuple[str, str]]:
        """(language, reason) for each of the scenario's template items whose question and
        gold a kept item has: not worth wording (a subgraph gives the same question in every
        difficulty, and a quarter of a 1M run's scenarios are such twins)."""
        if self.exact_duplicate is None:
            return []
        reasons = ((lang, self.exact_duplicate.reason_before_wording(scenario.question_keys[lang]))
                   for lang in self.config.dataset.languages)
        return [(lang, reason) for lang, reason in reasons if reason]

    def _twins_of_kept(self, scenario: Scenario, cell: str) -> list[dict]:
        """The rejections of :meth:`_kept_twins`, as the progress log records them."""
        return [{"item_id": None, "scenario_id": scenario.id, "language": lang, "cell": cell,
                 "filter": self.exact_duplicate.name, "reason": reason} for lang, reason in self._kept_twins(scenario)]

    def _cascade(self, items: list[Item], filters: list[ItemFilter], together, outcomes: list[_Outcome], by_scenario) -> list[Item]:
        result = apply_filters(items, filters, together)
        self.seconds.update(result.seconds)
        for r in result.rejected:
            outcomes[by_scenario[r.scenario_id]].rejections.append(r.model_dump())
        return result.kept

    def _reword(self, batch, drafts: list[tuple[int, Item]], outcomes: list[_Outcome], cell: str) -> list[tuple[int, Item]]:
        started = time.perf_counter()
        results = self.verbaliser.reword([Draft(batch[k][1], item) for k, item in drafts])
        self.seconds[VERBALISE] += time.perf_counter() - started
        reworded, failed = [], set()
        for (k, item), outcome in zip(drafts, results, strict=True):
            if isinstance(outcome, str):
                failed.add(k)
                outcomes[k].rejections.append({"item_id": item.id, "scenario_id": item.metadata.scenario_id, "language": item.language,
                                               "cell": cell, "filter": VERBALISE, "reason": outcome})
            else:
                reworded.append((k, outcome))
        return [item for k, item in reworded if k not in failed]

    def keep(self, outcome: _Outcome) -> bool:
        """The last checks, scenario by scenario in order: duplicates of kept items. They
        run after the cascade, before the cell counts the scenario, so an item is compared
        only with items kept before it, and a dropped one's cell takes another scenario."""
        if not outcome.items:
            return False
        if self.published and (repeats := [item for item in outcome.items if self.published.asked(item.question)]):
            # only a model's rewording can get here: a template question was checked when planned
            outcome.rejections += [rejection(item, PUBLISHED, "an earlier release asked this question").model_dump() for item in repeats]
            outcome.items = []
            return False
        for f in self.dataset_filters:
            started = time.perf_counter()
            outcome.reached[f.name] += len(outcome.items)
            reasons = f.reasons(outcome.items)
            for item, reason in zip(outcome.items, reasons, strict=True):
                if reason:
                    outcome.rejections.append(rejection(item, f.name, reason).model_dump())
            self.seconds[f.name] += time.perf_counter() - started
            if any(reasons):
                outcome.items = []
                return False
        for f in self.dataset_filters:
            started = time.perf_counter()
            f.remember(outcome.items)
            self.seconds[f.name] += time.perf_counter() - started
        return True

    def usage_since_last(self) -> dict[str, dict]:
        """Calls, tokens and seconds per stage since the previous call (for the progress log)."""
        delta: dict[str, dict] = {}
        current = self.models.usage() if self.models else {}
        for stage, u in current.items():
            before = self._usage_seen.get(stage, StageUsage())
            d = u.since(before)
            if any(d.values()):
                delta[stage] = d
        self._usage_seen = {stage: u.model_copy() for stage, u in current.items()}
        for stage, seconds in self.seconds.items():
            if seconds:
                delta.setdefault(stage, {})["wall_seconds"] = seconds
        self.seconds = Counter()
        return delta


class _Confusables:
    """Scenarios about other entities that share a relation of a scenario's topic: whose
    facts its dialogue's confusable turns may state; and ``haystack``, the pool of the
    run's scenarios a padded dialogue draws its haystack from (built on first use)."""

    def __init__(self, plans: Sequence[CellPlan], seed: int, wanted: int = 2):
        self.seed, self.wanted = seed, wanted
        self.haystack = Pool(lambda: (s for plan in plans for s in plan.scenarios), seed)
        self.by_relation: dict[str, list[Scenario]] = defaultdict(list)
        seen: set[tuple[str, str]] = set()
        for plan in plans:
            for s in plan.scenarios:
                for relation in _topic_relations(s):
                    if (relation, s.entity.value) not in seen:  # an entity once per relation
                        seen.add((relation, s.entity.value))
                        self.by_relation[relation].append(s)

    def __call__(self, scenario: Scenario, draw: bool = True) -> list[Scenario]:
        """Up to ``wanted`` of them, drawn by the seed and the scenario (the same on resume),
        none with a name that shares a word with a name the scenario mentions (none unless
        ``draw``); as a list that also hands ``haystack`` to ``pad_dialogue``."""
        if not draw:
            return Others((), self.haystack)
        rng = random.Random(f"{self.seed}:{scenario.id}:confusables")
        relations = sorted({f.relation.value for f in scenario.facts})
        found: list[Scenario] = []
        for _ in range(4 * self.wanted):  # a few draws: most candidates are fine
            pool = self.by_relation.get(rng.choice(relations))
            other = pool[rng.randrange(len(pool))] if pool else None
            if (other and other.entity.value != scenario.entity.value and all(other is not f for f in found)
                    and not _share_a_name(scenario, other)):
                found.append(other)
                if len(found) == self.wanted:
                    break
        return Others(found, self.haystack)


def _topic_relations(scenario: Scenario) -> set[str]:
    return {f.relation.value for f in scenario.facts if f.subject.value == scenario.entity.value}


def _share_a_name(a: Scenario, b: Scenario) -> bool:
    """Whether either entity's name occurs as words among what the other mentions."""
    return any(has_word(a.mentioned_blob, t) for t in _names(b)) or any(has_word(b.mentioned_blob, t) for t in _names(a))


def _names(scenario: Scenario) -> set[str]:
    """The entity's labels casefolded (kept with the scenario: a pool's scenario is compared again each time it is drawn)."""
    if "names" not in scenario.derived:
        entity = scenario.entity
        scenario.derived["names"] = {t.casefold() for t in (entity.label, *entity.labels.values()) if t}
    return scenario.derived["names"]


def _first_reason(item: Item, filters: Sequence[ItemFilter]) -> str | None:
    for f in filters:
        reason = f.reason(item)
        if reason:
            return f"{f.name}: {reason}"
    return None


def _run_cell(plan: CellPlan, work: _Work, per_cell: int, wording: _Wording, words: _Words) -> Iterator[tuple[dict, list[ItemLines]]]:
    """Records of the cell's scenarios not processed yet, each with its items' lines when
    kept, then the cell's closing record (with the chosen scenarios: the best by judge
    score when more than ``per_cell`` were collected). ``words`` words them: ``wording``
    itself, or workers that word ahead (the same records)."""
    config = wording.config
    version, seed = config.dataset.version, config.dataset.seed
    if plan.key in work.closed:
        return
    started = any(cell == plan.key for cell, _ in work.processed)
    # cannot fill even if every scenario passed (the questions earlier cells kept aside): no
    # wording spent; asked only before the cell's first scenario, so a resume decides alike
    if not started and wording.unasked(plan.scenarios) < per_cell:
        yield {"cell": plan.key, "closed": 0, "available": len(plan.scenarios), "chosen": []}, []
        return
    target = math.ceil(per_cell * config.filters.top_n_pool)
    todo = []
    for index, scenario in enumerate(plan.scenarios):
        if (plan.key, index) in work.processed:
            if work.processed[(plan.key, index)] != scenario.id:
                raise KgsynthError(f"{work.path.parent.parent} holds a run whose scenarios differ from this graph's; use a new --out or delete it")
        else:
            todo.append((index, scenario))
    if config.llm:  # model calls cost money: a cell gets a bounded number of tries
        tries = math.ceil(target * config.llm.cell_budget) - (len(plan.scenarios) - len(todo))
        todo = todo[: max(tries, 0)]
    collected = work.candidates[plan.key]
    start = 0
    while start < len(todo) and len(collected) < target:
        size = min(wording.batch, target - len(collected))  # never word more than could still be kept
        batch, start = todo[start : start + size], start + size
        for (index, scenario), outcome in zip(batch, words.run(batch, plan.key), strict=True):
            record = {"cell": plan.key, "index": index, "scenario_id": scenario.id}
            lines = []
            if wording.keep(outcome):
                record["languages"] = [item.language for item in outcome.items]
                reviews = [item.review.total for item in outcome.items if item.review]
                if reviews:
                    record["score"] = sum(reviews)
                lines = [_item_lines(item, version, seed) for item in outcome.items]
            record["rejections"] = outcome.rejections
            record["filter_in"] = dict(outcome.reached)
            yield record, lines
        if wording.models:  # after every batch: a killed run keeps the count of what it spent
            yield from _usage_record(wording)
    yield from _usage_record(wording)
    best = sorted(collected, key=lambda c: (-c[1], c[0]))[:per_cell] if len(collected) >= per_cell else []
    yield {"cell": plan.key, "closed": len(best) or len(collected), "available": len(plan.scenarios),
           "chosen": sorted(index for index, _ in best)}, []


def _usage_record(wording: _Wording) -> Iterator[tuple[dict, list[ItemLines]]]:
    usage = wording.usage_since_last()
    if usage:
        yield {"usage": usage}, []


def _filter_counts(items: int, rejections: list[dict], stages: list[str], together: bool) -> dict[str, int]:
    """How many of a scenario's items reached each stage: the cascade stops an item at its
    first rejection, and with ``together`` all of the scenario's items at the first one."""
    counts, remaining = {}, items
    dropped = Counter(r["filter"] for r in rejections)
    for name in stages:
        if remaining == 0:
            break
        counts[name] = remaining
        remaining = 0 if together and dropped[name] else remaining - dropped[name]
    return counts


class _ItemCell(NamedTuple):
    """What a rejection record names of an item's metadata."""

    scenario_id: str
    category: str
    difficulty: str
    answer_format: str


class _WordedItem(NamedTuple):
    """An item worded by a worker, as the calling process needs it: what the duplicate check
    and the rejection records read, and its finished lines (an Item is ~100 times dearer to send)."""

    id: str
    language: str
    question: str
    gold: str | tuple[str, ...]
    metadata: _ItemCell
    lines: ItemLines
    review: None = None  # runs with a judge word in one process


def _item_lines(item: Item | _WordedItem, version: str, seed: int) -> ItemLines:
    if isinstance(item, _WordedItem):
        return item.lines
    return split_lines(row_from_dump(item.model_dump(mode="json"), version, seed))


@dataclass
class _Worded:
    """A worker's outcome for one scenario, with the seconds each filter took; or the error
    wording it raised, raised again only if the run asks for that scenario (one run ahead of
    a cell's end may never be asked for)."""

    items: list[_WordedItem]
    rejections: list[dict]
    reached: Counter[str]
    seconds: Counter[str]
    error: Exception | None = None


@dataclass
class _ShardJob:
    """What a worker words scenarios with. A forked worker inherits the calling process's
    wording machinery; a Ray worker gets the job pickled once and builds its own."""

    config: SynthConfig
    plans: list[CellPlan]
    filters: list[ItemFilter]
    published: Published | None
    wording: _Wording | None = None

    def __getstate__(self) -> dict:  # the wording holds a lambda and caches: each Ray worker builds its own
        return {**self.__dict__, "wording": None}

    def words(self) -> _Wording:
        if self.wording is None:
            self.wording = _Wording(self.config, self.filters, None, _Confusables(self.plans, self.config.dataset.seed), self.published)
        return self.wording


def _word_shard(job: _ShardJob, position: int, indices: Sequence[int]) -> list[_Worded]:
    """Word and filter scenarios ``indices`` of cell ``position`` (run in a worker)."""
    wording, plan = job.words(), job.plans[position]
    version, seed = job.config.dataset.version, job.config.dataset.seed
    worded = []
    for index in indices:
        try:
            outcome = wording.run([(index, plan.scenarios[index])], plan.key)[0]
        except Exception as e:  # noqa: BLE001 - raised again where the run asks for this scenario
            worded.append(_Worded([], [], Counter(), Counter(), e))
            continue
        items = [_WordedItem(item.id, item.language, item.question, item.gold if isinstance(item.gold, str) else tuple(item.gold),
                             _ItemCell(item.metadata.scenario_id, item.metadata.category, item.metadata.difficulty,
                                       item.metadata.answer_format), _item_lines(item, version, seed))
                 for item in outcome.items]
        worded.append(_Worded(items, outcome.rejections, outcome.reached, wording.seconds))
        wording.seconds = Counter()
    return worded


class _Words(Protocol):
    def run(self, batch: Sequence[tuple[int, Scenario]], cell: str) -> list[_Outcome]: ...

    def report(self) -> WorkersReport: ...


class _InProcess:
    """Scenarios worded here, one after the other."""

    def __init__(self, wording: _Wording, why: str = "this process"):
        self.run, self.why = wording.run, why

    def report(self) -> WorkersReport:
        return WorkersReport(executor=self.why)


class _Shards:
    """Scenarios worded ahead by an executor's workers, in chunks, and handed out in the
    order a one-process run words them. The workers word what the run will most likely
    ask next: the rest of the current cell's share, then the next cells' (``window``
    scenarios in all). Which scenarios a cell takes, and the duplicate check against the
    items kept so far, stay here: a scenario that became a twin of a kept item since it
    was sent is dropped unworded as one process would, and one not worded ahead is worded
    here. So the records, and the files, are the same bytes for any number of workers."""

    def __init__(self, executor: Executor, plans: list[CellPlan], wording: _Wording, work: _Work, target: int, chunk: int):
        self.executor, self.plans, self.wording, self.work, self.target = executor, plans, wording, work, target
        self.chunk, self.window = chunk, 4 * chunk * executor.workers
        self.position = {plan.key: p for p, plan in enumerate(plans)}
        self.sent: dict[int, dict[int, tuple[Future, int]]] = defaultdict(dict)  # cell position -> index -> (shard, offset)
        self.twins: set[tuple[int, int]] = set()  # (cell position, index) of scenarios found to be twins of kept items
        self.since_refill = 0

    def run(self, batch: Sequence[tuple[int, Scenario]], cell: str) -> list[_Outcome]:
        ((index, scenario),) = batch  # runs without models word one scenario at a time
        if self.wording._kept_twins(scenario):
            return self.wording.run(batch, cell)  # dropped unworded, against the items kept here
        position = self.position[cell]
        self.since_refill += 1
        if index not in self.sent[position] or self.since_refill * 2 >= self.chunk:
            self._refill(position, index)
        shard, offset = self.sent[position].pop(index)
        worded = shard.result()[offset]
        if worded.error:
            raise worded.error
        self.wording.seconds.update(worded.seconds)
        return [_Outcome(list(worded.items), worded.rejections, worded.reached)]

    def _refill(self, position: int, index: int) -> None:
        """Send, in chunks of one cell, the scenarios among the next ``window`` likely ones not sent yet."""
        self.since_refill = 0
        for done in [p for p in self.sent if p < position]:
            del self.sent[done]  # worded ahead for a cell that took fewer (results dropped)
        chunk: list[int] = []
        chunk_position = position
        for p, i in itertools.islice(self._ahead(position, index), self.window):
            if i in self.sent[p]:
                continue
            if chunk and (p != chunk_position or len(chunk) == self.chunk):
                self._send(chunk_position, chunk)
                chunk = []
            chunk_position = p
            chunk.append(i)
        if chunk:
            self._send(chunk_position, chunk)

    def _send(self, position: int, indices: list[int]) -> None:
        shard = self.executor.submit(_word_shard, position, tuple(indices))
        for offset, i in enumerate(indices):
            self.sent[position][i] = (shard, offset)

    def _ahead(self, position: int, index: int) -> Iterator[tuple[int, int]]:
        """(cell position, scenario index) of the scenarios the run will word next if every
        one passes, from scenario ``index`` of cell ``position`` on."""
        work = self.work
        for p in range(position, len(self.plans)):
            plan, sent = self.plans[p], self.sent[p]
            if plan.key in work.closed:
                continue
            needed = self.target - len(work.candidates[plan.key])
            for i in range(index if p == position else 0, len(plan.scenarios)):
                if needed <= 0:
                    break
                # one sent is counted unchecked (it was no twin then); a twin stays one: kept items only grow
                if (plan.key, i) in work.processed or (p, i) in self.twins:
                    continue
                if i not in sent and self.wording._kept_twins(plan.scenarios[i]):
                    self.twins.add((p, i))
                    continue
                needed -= 1
                yield p, i

    def report(self) -> WorkersReport:
        return WorkersReport(executor=self.executor.name, workers=self.executor.workers, peak_mb=self.executor.peak_mb)


_CHUNK = 16  # scenarios a worker words per shard: enough to make sending them cheap, few to waste at a cell's end


@contextmanager
def _words(config: SynthConfig, plans: list[CellPlan], filters: list[ItemFilter], wording: _Wording, work: _Work,
           per_cell: int) -> Iterator[_Words]:
    """Who words the scenarios: workers (``config.run``), or this process when one worker is
    asked for or models word and judge (their requests run concurrently already)."""
    run = config.run
    workers = run.workers or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if wording.models:
        yield _InProcess(wording, "this process (a run with models)")
        return
    if run.executor == "processes" and workers == 1:
        yield _InProcess(wording)
        return
    job = _ShardJob(config, plans, filters, wording.published, wording)
    executor = open_executor(run.executor, job, run.workers or (0 if run.executor == "ray" else workers))
    try:
        yield _Shards(executor, plans, wording, work, math.ceil(per_cell * config.filters.top_n_pool), _CHUNK)
    finally:
        executor.close()


class _Work:
    """The progress log of one output folder and the spools of kept items' lines: what is
    processed, kept and closed (counts only; the lines stay on disk until assembly)."""

    def __init__(self, folder: Path, run_key: str, flush_seconds: float = 0):
        self.path = folder / "progress.jsonl"
        self.flush_seconds = flush_seconds
        self.spool_paths = {name: folder / f"{name.replace('/', '-')}.spool.jsonl" for name in SPLITS}
        folder.mkdir(parents=True, exist_ok=True)
        self.processed: dict[tuple[str, int], str] = {}  # -> scenario id
        self.closed: dict[str, dict] = {}
        self.candidates: dict[str, list[tuple[int, int]]] = defaultdict(list)  # cell -> (index, judge score) kept so far
        self.items = 0
        self.spooled: Counter[str] = Counter()  # bytes per split that the log accounts for
        drop_partial_line(self.path)
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
        self._queued_lines: dict[str, list[bytes]] = {name: [] for name in self._spools}
        self._queued_records: list[bytes] = []
        self._flushed_at = time.monotonic()
        if fresh:
            self.append({"config": run_key})

    def __enter__(self) -> _Work:
        return self

    def __exit__(self, *exc) -> None:
        self.flush()
        for f in [self._log, *self._spools.values()]:
            f.close()

    def _count(self, record: dict) -> None:
        if "index" in record:
            self.processed[(record["cell"], record["index"])] = record["scenario_id"]
            if "bytes" in record:
                self.candidates[record["cell"]].append((record["index"], record.get("score", 0)))
                self.items += len(record["languages"])
                self.spooled.update(record["bytes"])
        elif "closed" in record:
            self.closed[record["cell"]] = record

    def append(self, record: dict, lines: Sequence[ItemLines] = ()) -> None:
        """Queue the items' lines and the record; they reach the files at the next
        :meth:`flush`, at most ``flush_seconds`` later (a flush per record cost 5% of a
        1M run)."""
        if lines:
            record["bytes"] = {}
            for name in self._spools:
                data = b"".join(item[name] for item in lines)
                self._queued_lines[name].append(data)
                record["bytes"][name] = len(data)
        line = json_line(record)
        # rejection reasons may quote a server's error body: no credential reaches the files
        self._queued_records.append(redact(line.decode()).encode() if record.get("rejections") else line)
        self._count(record)
        if time.monotonic() - self._flushed_at >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """The queued lines, then the records that account for them: each write reaches the
        OS before the next starts, so a killed process leaves at most an unlogged tail of
        spooled lines (cut on resume) and loses at most the last ``flush_seconds`` of work."""
        for name, spool in self._spools.items():
            spool.write(b"".join(self._queued_lines[name]))
            spool.flush()
            self._queued_lines[name].clear()
        self._log.write(b"".join(self._queued_records))
        self._log.flush()
        self._queued_records.clear()
        self._flushed_at = time.monotonic()

    def records(self, with_lines: bool) -> Iterator[tuple[dict, ItemLines | None]]:
        """Logged records in order, each kept one with its spooled lines (all its items, per
        split) if ``with_lines``."""
        with ExitStack() as stack:
            spools = {name: stack.enter_context(path.open("rb")) for name, path in self.spool_paths.items()} if with_lines else {}
            for record in read_jsonl(self.path):
                sizes = record.get("bytes")
                yield record, {name: spools[name].read(sizes[name]) for name in spools} if sizes and with_lines else None


_FLUSH_SECONDS = 0.2  # without models: what a kill may lose, against a flush per record
_LOG_FORMAT = "spooled-lines-1"  # changes when progress.jsonl records change meaning


def _run_key(config: SynthConfig, triples: int | None, fingerprint: str | None, published: Published | None = None) -> str:
    """What a resumed run must share with the stopped one: config (with the filters it
    runs, which a default may change), kgsynth version, the graph (its files' contents when
    it was loaded from files, else its size), the progress log's format, and what earlier
    releases published (when anything)."""
    key = f"{config.written_json()}|{','.join(config.filter_order)}|{kgsynth.__version__}|{triples}|{fingerprint}|{_LOG_FORMAT}"
    if published:
        key += f"|{published.key}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _assemble(
    out: Path, work: _Work, config: SynthConfig, per_cell: int, plans: list[CellPlan], kg: KnowledgeGraph, triples: int | None,
    stages: list[str], rules: dict[str, Rule], run_key: str, notes: Sequence[str] = (),
) -> SynthResult:
    """Write the dataset files from the progress log, in the fixed cell and scenario order;
    ``notes`` go first among the manifest's."""
    closed = work.closed
    filled = [p.key for p in plans if closed[p.key]["closed"] >= per_cell]
    unfillable = {p.key: closed[p.key]["closed"] for p in plans if p.key not in filled}
    chosen = {(cell, index) for cell in filled for index in closed[cell]["chosen"]}
    version, seed = config.dataset.version, config.dataset.seed
    counts: Counter[str] = Counter()
    stats = _FilterStats()
    plan_of = {plan.key: plan for plan in plans}
    answers = _AnswerBalance(plans, config.dataset.branch_weights, len(config.dataset.languages))
    # Usually every spooled item is chosen in a filled cell: then each spool is the split's file.
    whole_spools = all((cell, index) in chosen for cell, candidates in work.candidates.items() for index, _ in candidates)
    with (
        DatasetWriter(out, work.spool_paths if whole_spools else None) as writer,
        JsonlWriter(out / "rejections.jsonl") as rejections,
    ):
        for record, lines in work.records(with_lines=not whole_spools):
            if "usage" in record:
                stats.add_usage(record["usage"])
            if "index" not in record:
                continue
            stats.add(record)
            for r in record["rejections"]:
                rejections.write(r)
            if (record["cell"], record["index"]) in chosen:
                if lines is not None:
                    writer.write_lines(lines)
                counts.update(f"{record['cell']}/{language}" for language in record["languages"])
                answers.add(plan_of[record["cell"]].scenarios[record["index"]], len(record["languages"]))
    rules_file = _write_rules(out / "private" / "rules.jsonl", rules)
    written = [*writer.paths, *[p for p in (out / "rejections.jsonl", rules_file) if p.is_file()]]  # none without rows
    files = {str(p.relative_to(out)): sha256_file(p) for p in sorted(written)}
    manifest = {
        "kgsynth": kgsynth.__version__,
        "version": version,
        "seed": seed,
        "config": json.loads(redact(config.written_json())),  # a key in a URL's query is not shared with the dataset
        "graph": {"description": kg.backend.description, "triples": triples},
        "per_cell": per_cell,
        "items": sum(counts.values()),
        "cells": {key: {"kept": closed[key]["closed"], "scenarios": closed[key]["available"]} for key in sorted(closed)},
        "filled_cells": filled,
        "unfillable_cells": unfillable,
        "counts": dict(sorted(counts.items())),
        "filters": stats.report(stages),
        "answers": answers.report(),
        "files": files,
        "shortfall": _shortfall(config, per_cell, closed, sum(counts.values())),
        "notes": [*notes, *_notes(config, per_cell, closed, sum(counts.values()), unfillable), *answers.notes()],
        "run_key": run_key,
    }
    write_json_atomic(out / "manifest.json", manifest)
    write_json_atomic(out / "filter_report.json", stats.run_report(stages, manifest["items"]))
    return SynthResult(out=out, items=manifest["items"], per_cell=per_cell, filled_cells=filled,
                       unfillable_cells=unfillable, manifest=manifest, notes=manifest["notes"])


class _AnswerBalance:
    """Which way each rule's kept answers went (``Scenario.branch``), beside what the graph
    offered: the manifest's check that no branch is crowded out by filtering."""

    def __init__(self, plans: Sequence[CellPlan], weights: dict[str, dict[str, float]], languages: int):
        offered: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for plan in plans:
            for scenario in plan.scenarios:
                if scenario.rule is not None:
                    offered[local_name(scenario.rule.iri)][scenario.branch].add(scenario.subgraph_id)
        self.offered = offered
        self.weights = {local_name(iri): branches for iri, branches in weights.items()}
        self.items: dict[str, Counter[str]] = defaultdict(Counter)
        self.boundary: Counter[str] = Counter()
        self.languages = languages

    def add(self, scenario: Scenario, items: int) -> None:
        if scenario.rule is not None:
            rule = local_name(scenario.rule.iri)
            self.items[rule][scenario.branch] += items
            self.boundary[rule] += items if scenario.boundary else 0

    def report(self) -> dict[str, dict]:
        """Per rule: items kept and subgraphs offered per branch, and items on the rule's edge."""
        return {rule: {"branches": {b: {"items": self.items[rule][b], "subgraphs": len(self.offered[rule][b])}
                                    for b in sorted(self.offered[rule])},
                       "boundary_items": self.boundary[rule]}
                for rule in sorted(self.offered)}

    def notes(self) -> list[str]:
        """A line for each branch kept under a third of its share of the rule's items (a
        share of at least one scenario: two scenarios cannot show four classes)."""
        notes = []
        for rule in sorted(self.items):
            kept, weights = self.items[rule], self.weights.get(rule, {})
            total, weight = sum(kept.values()), sum(weights.get(b, 1.0) for b in self.offered[rule])
            for branch in sorted(self.offered[rule]):
                fair = total * weights.get(branch, 1.0) / weight
                if kept[branch] * 3 < fair and fair >= self.languages:
                    notes.append(f"{rule}: {kept[branch]} of {total} items answer {branch!r} (a fair share is {fair:.0f}); "
                                 f"the graph offers {len(self.offered[rule][branch])} such subgraphs")
        return notes


def _write_rules(path: Path, rules: dict[str, Rule]) -> Path:
    """The graph's rules as stated (private: an evaluation may give a model the rule when
    no model can know it, e.g. a graph's invented policies)."""
    with JsonlWriter(path) as writer:
        for iri in sorted(rules):
            rule = rules[iri]
            writer.write({"rule_iri": iri, "kind": rule.kind.value, "origin": rule.origin.name,
                          "labels": dict(sorted(rule.labels.items())), "statements": dict(sorted(rule.statements.items()))})
    return path


class _FilterStats:
    """Items in and rejected per stage, with rejection reasons counted by kind; and the
    model calls, tokens and seconds each stage cost (over every run that wrote the log)."""

    def __init__(self):
        self.seen: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.reasons: dict[str, Counter[str]] = defaultdict(Counter)
        self.usage: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, record: dict) -> None:
        self.seen.update(record["filter_in"])
        for r in record["rejections"]:
            self.rejected[r["filter"]] += 1
            self.reasons[r["filter"]][_reason_kind(r["reason"])] += 1

    def add_usage(self, usage: dict[str, dict]) -> None:
        for stage, counts in usage.items():
            self.usage[stage].update(counts)

    def report(self, stages: list[str]) -> dict:
        """The deterministic part, for the manifest: items in, rejected, reasons."""
        return {
            name: {"in": self.seen[name], "rejected": self.rejected[name], "pass_rate": _rate(self.seen[name], self.rejected[name]),
                   "reasons": dict(sorted(self.reasons[name].items()))}
            for name in stages
        }

    def run_report(self, stages: list[str], accepted: int) -> dict:
        """The report of the run: per stage the counts above with calls, tokens and time."""
        report = self.report(stages)
        for name in stages:
            u = self.usage.get(name, Counter())
            report[name]["out"] = report[name]["in"] - report[name]["rejected"]
            report[name] |= {k: u[k] for k in ("calls", "cache_hits", "failures", "prompt_tokens", "completion_tokens")}
            report[name]["seconds"] = round(u["wall_seconds"], 3)
        calls = sum(self.usage[s]["calls"] for s in self.usage)
        tokens = sum(self.usage[s]["prompt_tokens"] + self.usage[s]["completion_tokens"] for s in self.usage)
        total = {"accepted_items": accepted, "calls": calls, "tokens": tokens,
                 "calls_per_accepted_item": round(calls / accepted, 3) if accepted else None,
                 "tokens_per_accepted_item": round(tokens / accepted, 1) if accepted else None}
        return {"order": stages, "stages": report, "total": total}


def _rate(seen: int, rejected: int) -> float | None:
    return round((seen - rejected) / seen, 4) if seen else None


# quoted values, item ids (16 hex digits: "the same question and gold as item 35e4a1973969158a"), numbers
_PARTICULARS = re.compile(r"'[^']*'|\"[^\"]*\"|\b[0-9a-f]{16}\b|-?\d[\d.,]*")


def _reason_kind(reason: str) -> str:
    """A reason without its particulars, for counting."""
    return " ".join(_PARTICULARS.sub("…", reason).split())


def _triples(kg: KnowledgeGraph) -> int:
    return int(next(iter(kg.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")))[0].value)
