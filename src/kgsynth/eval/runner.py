"""``kgsynth eval``: run a model on a dataset's items under every configured condition,
score each answer strictly, probe the wrong ones for their error source, and write the
per-answer results.

Phases: (1) every planned variant (the items as written; the closed-book and oracle
baselines; the length and position sweeps) is asked, then the key-value probe's questions
(``kv``: no item, a JSON object of UUIDs); (2) each wrong answer that is in
the right format gets fact probes, one per fact value of its dialogue, and, unless the
model was given the rule, a closed-book rule probe. Requests go to the
model through ``kgsynth.llm`` (cache, retries, bounded concurrency) in batches; after
each batch its answers are appended to ``.work/progress.jsonl``, so a stopped run started
again asks only what is missing. A request that fails after every retry is written as a
failure row and asked again by the next run. ``results.jsonl`` is written at the end, in
plan order, the same for the same answers.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import kgsynth
from kgsynth._files import JsonlWriter, drop_partial_line, json_line, read_jsonl, write_json_atomic
from kgsynth._folders import finish_removal, remove_work_folder
from kgsynth.errors import KgsynthError
from kgsynth.eval import kv, render
from kgsynth.eval.config import EvalConfig
from kgsynth.eval.dataset import RULES, load_dataset, load_rules
from kgsynth.eval.kv import KVPrompt
from kgsynth.eval.prompts import answer_messages, kv_messages, probe_messages, rule_probe_messages
from kgsynth.eval.render import Variant
from kgsynth.eval.results import RESULTS_FILE, RUN_FILE, AnswerRecord
from kgsynth.eval.scoring import blanked, error_source, item_token_f1, rule_recalled, score, value_recalled
from kgsynth.llm import LLMGateway, LLMResult, Request, ResponseCache, redact
from kgsynth.synth.dialogues.item import Item

Progress = Callable[[str, int, int], None]  # (phase, done, total)
# kgsynth.synth.dialogues.dialogue.count_tokens counts words and punctuation; model tokenizers cut
# Russian words into more pieces (Qwen2.5, measured on padded demo items: 1.07 model tokens
# per counted token in English, 2.0 in Russian). A sweep length is skipped when this many
# times its target, plus the prompt around the dialogue, would overflow the model's
# context; a Russian rendering can still come close, and one that overflows comes back as
# a failure row with the server's reason.
MODEL_TOKENS_PER_COUNTED = 1.6
_PROMPT_OVERHEAD = 200


@dataclass(frozen=True)
class EvalRun:
    out: Path
    records: int
    failures: int
    skipped_targets: tuple[int, ...]
    skipped_kv_counts: tuple[int, ...]
    usage: dict[str, dict]


@dataclass(frozen=True)
class _Probe:
    """A fact probe (the item's dialogue, one fact turn with its value blanked out; ``fact``
    its index) or a rule probe (closed book: state the rule; ``fact`` None). ``value`` is
    what a right answer gives: the fact value, or the rule's statement."""

    variant: Variant
    fact: int | None
    value: str
    messages: list[dict[str, str]]

    @property
    def condition(self) -> str:
        return "rule_probe" if self.fact is None else "fact_probe"

    @property
    def key(self) -> str:
        return f"{self.variant.item.id}/{self.condition}" + ("" if self.fact is None else f"/{self.fact}")


def evaluate(dataset: Path, config: EvalConfig, out: Path, progress: Progress | None = None) -> EvalRun:
    """Evaluate ``config.model`` on the dataset in ``dataset``; write ``out/results.jsonl``
    and ``out/run.json`` (resuming an unfinished run in ``out``)."""
    finish_removal(out)
    items, manifest = load_dataset(dataset)  # checked against its manifest: count and sha256
    items = items[: config.limit] if config.limit else items
    rules = load_rules(dataset, manifest, invented_only=config.rules == "invented") if config.rules != "none" else {}
    # an endpoint that cannot be reached stops the run in one line (what was answered is kept for the next)
    gateway = LLMGateway(config.model.gateway_config(), ResponseCache(config.model.cache_path()), raise_unreachable=True)
    variants, skipped = plan_variants(items, config)
    kv_prompts, skipped_kv = plan_kv(config)
    try:
        with _Log(out / ".work", _run_key(config, manifest)) as log:
            failed = _ask(gateway, variants, log, config, "answer", lambda v: answer_messages(v, config.rendering, rule_statement(v.item, rules)), progress)
            failed |= _ask(gateway, kv_prompts, log, config, "kv", kv_messages, progress)
            known_rules = _known_rules(dataset, manifest, rules)  # what a rule probe asks for
            probes = list(_probes(items, log.done, config, known_rules)) if config.probes else []
            failed |= _ask(gateway, probes, log, config, "probes", lambda p: p.messages, progress)
            records = _assemble([*variants, *kv_prompts, *probes], log.done | failed)
    finally:
        gateway.cache.close()
    usage = {stage: u.model_dump() for stage, u in gateway.usage.items()}
    write_json_atomic(out / RUN_FILE, {
        "kgsynth": kgsynth.__version__,
        "dataset": str(dataset),
        "config": json.loads(redact(config.model_dump_json())),
        "manifest": manifest,
        "skipped_targets": list(skipped),
        "skipped_kv_counts": list(skipped_kv),
        "usage": usage,
    })
    with JsonlWriter(out / RESULTS_FILE) as writer:
        for record in records:
            writer.write(record.model_dump(mode="json"))
    remove_work_folder(out)  # only now is the run finished (kgsynth report refuses a folder with .work)
    return EvalRun(out, len(records), sum(1 for r in records if r.failure), skipped, skipped_kv, usage)


# ---------------------------------------------------------------------------- inputs
def load_items(dataset: Path, limit: int | None = None) -> list[Item]:
    """The dataset's items, checked against its manifest (kgsynth.eval.dataset)."""
    items, _ = load_dataset(dataset)
    return items[:limit] if limit else items


def rule_statement(item: Item, rules: dict[str, dict[str, str]]) -> str | None:
    iri = item.metadata.rule_iri
    if not rules or iri is None:
        return None
    statements = rules.get(iri) or {}
    return statements.get(item.language) or statements.get("en")


def plan_variants(items: Sequence[Item], config: EvalConfig) -> tuple[list[Variant], tuple[int, ...]]:
    """Every (item, condition) to ask, in a fixed order; and the sweep lengths skipped
    because they would not fit the model's context."""
    variants = [render.main(i) for i in items]
    if "closed_book" in config.baselines:
        variants += [render.closed_book(i) for i in items]
    if "oracle" in config.baselines:
        variants += [render.oracle(i) for i in items]
    skipped: tuple[int, ...] = ()
    if sweep := config.length_sweep:
        targets = [t for t in sweep.targets if _fits(t, config)]
        skipped = tuple(t for t in sweep.targets if t not in targets)
        variants += [render.stretched(i, t, config.seed, items) for i in _sample(items, sweep.items, config.seed) for t in targets]
    if sweep := config.position_sweep:
        if not _fits(sweep.target_tokens, config):
            raise KgsynthError(f"position_sweep.target_tokens = {sweep.target_tokens} does not fit model.context_tokens = {config.model.context_tokens}")
        variants += [render.placed(i, sweep.target_tokens, d, config.seed, items)
                     for i in _sample(items, sweep.items, config.seed) for d in sweep.depths]
    return variants, skipped


def plan_kv(config: EvalConfig) -> tuple[list[KVPrompt], tuple[int, ...]]:
    """The key-value probe's questions (none when it is off), and the key counts skipped
    because their object would not fit the model's context."""
    if (probe := config.kv_probe) is None:
        return [], ()
    planned = kv.prompts(probe.key_counts, probe.positions, probe.trials, config.seed)
    # A byte-level tokenizer gives an ASCII character at most one token, so the object's
    # characters bound its tokens. UUIDs are cut finely (measured: Qwen2.5 and SmolLM2 make
    # 67-71 tokens of a pair's 81 characters); the sweeps' estimate from counted tokens
    # would be 1.8 times too low.
    fits = {p.keys for p in planned if _fits_tokens(len(p.json), config)}
    return [p for p in planned if p.keys in fits], tuple(k for k in probe.key_counts if k not in fits)


def _fits(target: int, config: EvalConfig) -> bool:
    return _fits_tokens(target * MODEL_TOKENS_PER_COUNTED, config)


def _fits_tokens(model_tokens: float, config: EvalConfig) -> bool:
    window = config.model.context_tokens
    return window is None or model_tokens + _PROMPT_OVERHEAD + config.model.max_tokens <= window


def _sample(items: Sequence[Item], k: int, seed: int) -> list[Item]:
    """The sweeps' items: the same seeded draw for both sweeps, in dataset order."""
    chosen = sorted(random.Random(f"{seed}:sweep").sample(range(len(items)), min(k, len(items))))
    return [items[i] for i in chosen]


def _known_rules(dataset: Path, manifest: dict, given: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The rules for rule probes, the ones the model was not given: none for a dataset
    without ``private/rules.jsonl``."""
    stated = load_rules(dataset, manifest) if (dataset / RULES).is_file() else {}
    return {iri: s for iri, s in stated.items() if iri not in given}


def _probes(items: Sequence[Item], done: dict[str, AnswerRecord], config: EvalConfig,
            rules: dict[str, dict[str, str]]) -> Iterator[_Probe]:
    """For each main answer that is wrong but in the asked format: a fact probe per fact,
    and a rule probe when the model was not given the rule (``rules``: what it should know)."""
    for item in items:
        variant = render.main(item)
        record = done.get(variant.key)
        if record is None or record.correct or not record.syntactic_ok:
            continue
        for fact, value in enumerate(item.metadata.fact_values):
            if found := blanked(item, fact):
                turn, masked = found
                yield _Probe(variant, fact, value, probe_messages(variant, config.rendering, turn, masked))
        if statement := rule_statement(item, rules):
            yield _Probe(variant, None, statement, rule_probe_messages(item))


# ---------------------------------------------------------------------------- asking
def _ask(gateway: LLMGateway, todo: Sequence, log: _Log, config: EvalConfig, stage: str, messages, progress) -> dict[str, AnswerRecord]:
    """Ask what the log lacks, batch by batch; answers go to the log, failures are returned by key."""
    pending = [t for t in todo if t.key not in log.done]
    failed: dict[str, AnswerRecord] = {}
    for start in range(0, len(pending), config.batch):
        batch = pending[start : start + config.batch]
        results = gateway.complete_all([Request(messages(t), stage=stage) for t in batch])
        if start == 0 and not log.done and not any(r.ok for r in results):
            # not one answer yet and a whole batch failed after every retry: the endpoint is
            # down or wrong; stop with its reason instead of writing a failure row per request
            raise KgsynthError(_first_line(results[0].error or "the model answered no request"))
        for thing, result in zip(batch, results, strict=True):
            record = _record(thing, result, config)
            if result.ok:
                log.append(record)
            else:
                failed[thing.key] = record
        if progress:
            progress(stage, start + len(batch), len(pending))
    return failed


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), text)


def _record(thing: Variant | _Probe | KVPrompt, result: LLMResult, config: EvalConfig) -> AnswerRecord:
    if isinstance(thing, KVPrompt):
        return _kv_record(thing, result, config)
    variant = thing.variant if isinstance(thing, _Probe) else thing
    item = variant.item
    if isinstance(thing, _Probe):
        recall = value_recalled if thing.fact is not None else rule_recalled
        recalled = result.ok and recall(result.text, thing.value)
        verdict = {"value": thing.value, "syntactic_ok": recalled, "value_matches": recalled, "correct": recalled}
        condition, param = thing.condition, None if thing.fact is None else float(thing.fact)
    else:
        check = score(item, result.text if result.ok else None)
        verdict = {"value": check.value, "syntactic_ok": check.syntactic_ok, "value_matches": check.value_matches,
                   "correct": check.correct, "token_f1": item_token_f1(item, result.text) if result.ok else None}
        condition, param = variant.condition, variant.param
    return AnswerRecord(
        key=thing.key, item_id=item.id, condition=condition, param=param, model=config.model.model,
        rendering=config.rendering, answer=result.text, failure=result.error and redact(result.error), latency_s=result.latency_s,
        prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens, cached=result.cached,
        context_tokens=variant.context_tokens, turns=len(variant.turns), fact_turn_indices=variant.fact_turn_indices,
        fact_depth=variant.fact_depth, metadata=item.metadata, **verdict,
    )


def _kv_record(prompt: KVPrompt, result: LLMResult, config: EvalConfig) -> AnswerRecord:
    query = prompt.query()
    check = kv.score(result.text if result.ok else None, query.value)
    return AnswerRecord(
        key=prompt.key, item_id=prompt.object_id, condition=kv.CONDITION, param=prompt.position,
        model=config.model.model, rendering=config.rendering, answer=result.text, value=check.value,
        syntactic_ok=check.syntactic_ok, value_matches=check.value_matches, correct=check.correct,
        failure=result.error and redact(result.error),
        latency_s=result.latency_s, prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
        cached=result.cached, context_tokens=prompt.context_tokens, turns=0, fact_turn_indices=(),
        fact_depth=prompt.index / (prompt.keys - 1), kv=query,
    )


def _assemble(asked: Sequence[Variant | _Probe | KVPrompt], answers: dict[str, AnswerRecord]) -> list[AnswerRecord]:
    """Every answer (or failure) in plan order; main rows get their error source."""
    probed: dict[str, dict[int, bool]] = {}  # item id -> fact -> recalled, for the probes answered
    rule_known: dict[str, bool] = {}
    for thing in asked:
        record = answers[thing.key]
        if record.failure:
            continue
        if record.condition == "fact_probe":
            probed.setdefault(record.item_id, {})[int(record.param)] = record.correct
        elif record.condition == "rule_probe":
            rule_known[record.item_id] = record.correct
    records = []
    for thing in asked:
        record = answers[thing.key]
        if record.condition == "main" and not record.failure:
            oracle = answers.get(render.oracle(thing.item).key)
            oracle_value_right = oracle.value_matches if oracle and not oracle.failure else None
            source = error_source(record, thing.item, probed.get(record.item_id, {}), oracle_value_right,
                                  rule_known.get(record.item_id))
            record = record.model_copy(update={"error_source": source})
        records.append(record)
    return records


# ---------------------------------------------------------------------------- progress log
class _Log:
    """The answers so far, one JSON line each; the first line names the run."""

    def __init__(self, folder: Path, run_key: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "progress.jsonl"
        self.done: dict[str, AnswerRecord] = {}
        drop_partial_line(self.path)
        rows = list(read_jsonl(self.path)) if self.path.exists() else []
        if rows and rows[0].get("run") != run_key:
            raise KgsynthError(f"{folder.parent} holds an unfinished evaluation with another config or dataset; use a new --out or delete it")
        for row in rows[1:]:
            record = AnswerRecord.model_validate(row)
            self.done[record.key] = record
        self._file = self.path.open("ab")
        if not rows:
            self._write({"run": run_key})

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def append(self, record: AnswerRecord) -> None:
        self._write(record.model_dump(mode="json"))
        self.done[record.key] = record

    def _write(self, row: dict) -> None:
        self._file.write(json_line(row))
        self._file.flush()


def _run_key(config: EvalConfig, manifest: dict) -> str:
    """What a resumed run must share with the stopped one: the answers' config and the dataset."""
    settings = config.model_dump(mode="json", exclude={"batch": True, "bootstrap": True, "confidence": True, "model": {
        "base_url", "api_key_env", "concurrency", "timeout_s", "max_retries", "cache"}})
    content = json.dumps([kgsynth.__version__, settings, manifest.get("files")], sort_keys=True)
    return hashlib.sha256(content.encode()).hexdigest()[:16]
