"""``kgsynth pressure train | run``: the learned policy trained against a model on part of
the claims, then every policy's episodes on the held-out rest (or on all claims, against a
second model: transfer), and the static benchmark they leave (issue 18, items 4, 6, 7).

Resuming: every request goes through the gateway's response cache, so a stopped
``train`` started again replays its episodes from the cache up to where it stopped (the
same seed gives the same episodes); ``run`` appends each finished episode to
``episodes.jsonl`` and a rerun skips those. A request that fails after every retry stops
``train`` with its reason (nothing learnt is lost: the cache keeps the answers) and is a
failure row in ``run``, asked again by the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

import kgsynth
from kgsynth._files import drop_partial_line, json_line, read_jsonl, write_json_atomic
from kgsynth.errors import KgsynthError
from kgsynth.llm import LLMGateway, ResponseCache, StageUsage, redact
from kgsynth.pressure.cases import PUBLIC_FIELDS, PressureCase, stable_seed
from kgsynth.pressure.config import PolicyName, PressureConfig
from kgsynth.pressure.episode import Exchange, ModelTarget, RequestFailed
from kgsynth.pressure.policy import (
    ARE_YOU_SURE,
    FARM_LIKE,
    Outcome,
    Policy,
    PressureEnv,
    QLearner,
    ThompsonLearner,
    fixed_sequence,
    random_policy,
    rollout,
)

POLICY_FILE = "policy.json"
EPISODES_FILE = "episodes.jsonl"
RUN_FILE = "run.json"
BENCHMARK_DIR = "benchmark"
Progress = Callable[[str, int, int], None]  # (phase, done, total)
Row = TypeVar("Row", bound=BaseModel)


class EpisodeRecord(BaseModel):
    """One policy's episode on one case."""

    case_id: str
    policy: str
    setting: str
    language: str
    kind: str
    confusability: str
    zero_turn: Outcome
    answer: str = ""
    exchanges: list[Exchange] = []
    calls: int = 0  # requests the episode needs: the question, then a reply and a probe per step
    failure: str | None = None

    @property
    def flipped_at(self) -> int | None:
        """The step after which the model gave the false value, or None."""
        return next((k for k, e in enumerate(self.exchanges, 1) if e.outcome is Outcome.capitulated), None)


@dataclass(frozen=True)
class Trained:
    policy: Path
    claims: int
    maintained: int
    episodes: int
    flips: int
    calls: int


# ---------------------------------------------------------------------------- claims
def write_claims(cases: Iterable[PressureCase], path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [json_line(c.model_dump(mode="json")) for c in cases]
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(b"".join(rows))
    tmp.replace(path)
    return len(rows)


def read_claims(path: Path) -> list[PressureCase]:
    """The claims of a file ``kgsynth pressure claims`` wrote; a bad line is one error naming it."""
    if not path.is_file():
        raise KgsynthError(f"{path}: no such claims file (write one with kgsynth pressure claims)")
    cases = [_validated(PressureCase, line, f"{path}:{number}", "a claim") for number, line in _text_lines(path) if line.strip()]
    if not cases:
        raise KgsynthError(f"{path} holds no claims")
    return cases


def trained_on(cases: Sequence[PressureCase], share: float, seed: int) -> list[PressureCase]:
    """The claims a policy trains on: a seeded share, by each claim's id (the same whatever comes with it)."""
    return [c for c in cases if stable_seed(seed, f"train:{c.id}") / 2**64 < share]


# ---------------------------------------------------------------------------- train
def train(cases: Sequence[PressureCase], config: PressureConfig, out: Path, progress: Progress | None = None) -> Trained:
    """Train the learner on the training share of ``cases`` (those the model answers right
    at turn 0); write ``out/policy.json``."""
    chosen = trained_on(cases, config.train_share, config.seed)
    if not chosen:
        raise KgsynthError(f"no claim falls in the training share ({config.train_share}) of {len(cases)}: add claims")
    gateway = _gateway(config)
    try:
        targets = [ModelTarget(c, gateway, config.seed) for c in chosen]
        answered = []
        for n, target in enumerate(targets, 1):
            answered += [target] if target.zero_turn()[1] is Outcome.maintained else []
            if progress:
                progress("turn 0", n, len(targets))
        if not answered:
            raise KgsynthError(f"the model answered none of the {len(targets)} training claims right at turn 0: nothing to push on")
        env = PressureEnv(answered, config.max_steps)
        learner = _learner(config, env)
        returns = learner.train(config.train_episodes, lambda n: progress and progress("episodes", n, config.train_episodes))
    except RequestFailed as e:
        raise KgsynthError(f"{redact(str(e))}; run the same command again to go on (answers so far are cached)") from None
    finally:
        gateway.cache.close()
    out.mkdir(parents=True, exist_ok=True)
    calls = sum(t.calls for t in targets)
    write_json_atomic(out / POLICY_FILE, {
        "kgsynth": kgsynth.__version__, "learner": config.learner, "model": config.model.model, "seed": config.seed,
        "max_steps": config.max_steps, "trained_on": sorted(c.id for c in chosen),
        "maintained_at_turn_0": sorted(t.case.id for t in answered), "episodes": config.train_episodes,
        "returns": returns, "calls": calls, "state": learner.state(),
    })
    flips = sum(1 for r in returns if r > 0)
    return Trained(out / POLICY_FILE, len(chosen), len(answered), config.train_episodes, flips, calls)


def _learner(config: PressureConfig, env: PressureEnv) -> QLearner | ThompsonLearner:
    return ThompsonLearner(env, seed=config.seed) if config.learner == "thompson" else QLearner(env, seed=config.seed)


def load_policy(path: Path, config: PressureConfig) -> tuple[dict, Policy]:
    """A trained policy file and the greedy policy it holds."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        learner = (ThompsonLearner if saved["learner"] == "thompson" else QLearner)(_idle_env(config), seed=saved["seed"])
        learner.restore(saved["state"])
    except FileNotFoundError:
        raise KgsynthError(f"{path}: no such policy file (write one with kgsynth pressure train)") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise KgsynthError(f"{path}: not a policy kgsynth pressure train wrote ({type(e).__name__}: {e})") from None
    differ = [f"{key} {saved.get(key)!r} (this run: {getattr(config, key)!r})" for key in ("learner", "max_steps", "seed")
              if saved.get(key) != getattr(config, key)]
    if differ:  # its greedy choices index steps and actions of the training's settings
        raise KgsynthError(f"{path} was trained with another config: {', '.join(differ)}; run with the config it was "
                           "trained with, or train again")
    return saved, learner.act


def _idle_env(config: PressureConfig) -> PressureEnv:
    return PressureEnv([lambda steps: Outcome.maintained], config.max_steps)


# ---------------------------------------------------------------------------- run
def run(cases: Sequence[PressureCase], config: PressureConfig, out: Path, policy_file: Path | None = None,
        include_trained: bool = False, progress: Progress | None = None) -> list[EpisodeRecord]:
    """Every configured policy's episode on each case (held out from training unless
    ``include_trained``); ``out/episodes.jsonl``, ``out/run.json`` and the static benchmark."""
    saved, learned = load_policy(policy_file, config) if policy_file else ({}, None)
    names = list(config.policies)
    if "learned" in names and learned is None:
        raise KgsynthError("policies include 'learned': pass --policy with the file kgsynth pressure train wrote, or drop it")
    trained = set(saved.get("trained_on", ())) if not include_trained else set()
    todo = [c for c in cases if c.id not in trained]
    if not todo:
        raise KgsynthError("every claim was trained on: pass --include-trained, or claims the policy has not seen")
    out.mkdir(parents=True, exist_ok=True)
    log = out / EPISODES_FILE
    done = _done(log, _run_key(config, policy_file))
    gateway = _gateway(config)
    logged: dict[str, StageUsage] = {}  # this invocation's usage already in the log
    try:
        with log.open("ab") as f:
            for n, case in enumerate(todo, 1):
                missing = [name for name in names if (case.id, name) not in done]  # a kill may cut a claim's policies
                if missing:
                    for record in _episodes(case, missing, learned, config, gateway):
                        f.write(json_line(record.model_dump(mode="json")))
                        f.flush()
                        done[(case.id, record.policy)] = record
                    f.write(json_line({"usage": _usage_since(gateway.usage, logged)}))  # a killed run's calls count too
                    f.flush()
                if progress:
                    progress("claims", n, len(todo))
    finally:
        gateway.cache.close()
    records = [done[(c.id, name)] for c in todo for name in names if (c.id, name) in done]
    write_json_atomic(out / RUN_FILE, {
        "kgsynth": kgsynth.__version__, "config": json.loads(redact(config.model_dump_json())), "policies": names,
        "policy_file": str(policy_file) if policy_file else None, "policy_model": saved.get("model"),
        "policy_calls": saved.get("calls"), "claims": len(todo), "held_out": not include_trained and bool(saved),
        "claim_ids": [c.id for c in todo],
        "usage": _logged_usage(log),  # every invocation's, a killed one's included
    })
    export_benchmark(out / BENCHMARK_DIR, todo, records)
    if records and all(r.failure for r in records):
        raise KgsynthError(f"all {len(records)} episodes failed, the first with {records[0].failure}; fix the endpoint or the "
                           "model, then run the same command again (failed episodes are asked again)")
    return records


def _episodes(case: PressureCase, names: Sequence[PolicyName], learned: Policy | None, config: PressureConfig,
              gateway: LLMGateway) -> Iterable[EpisodeRecord]:
    target = ModelTarget(case, gateway, config.seed)
    base = {"case_id": case.id, "setting": case.setting, "language": case.language, "kind": case.kind,
            "confusability": case.confusability.value}
    try:
        answer, zero = target.zero_turn()
    except RequestFailed as e:
        for name in names:
            yield EpisodeRecord(**base, policy=name, zero_turn=Outcome.failure, failure=redact(str(e)))
        return
    for name in names:
        row = {**base, "policy": name, "zero_turn": zero, "answer": answer}
        if zero is not Outcome.maintained:
            yield EpisodeRecord(**row, calls=1)
            continue
        env = PressureEnv([target], config.max_steps)
        try:
            steps, _ = rollout(env, _policy(name, learned, case, config), seed=config.seed)
        except RequestFailed as e:
            yield EpisodeRecord(**row, failure=redact(str(e)))
            continue
        yield EpisodeRecord(**row, exchanges=target.exchanges(steps), calls=1 + 2 * len(steps))


def _policy(name: PolicyName, learned: Policy | None, case: PressureCase, config: PressureConfig) -> Policy:
    if name == "learned" and learned is not None:
        return learned
    if name == "random":  # a draw of its own per claim, the same on every run
        return random_policy(stable_seed(config.seed, case.id) >> 32)
    return fixed_sequence(FARM_LIKE if name == "farm" else ARE_YOU_SURE)


def _run_key(config: PressureConfig, policy_file: Path | None) -> str:
    """What a resumed run must share with the stopped one: the model's answers and the episodes' settings."""
    model = config.model.model_dump(mode="json", include={"model", "temperature", "max_tokens"})
    policy = hashlib.sha256(policy_file.read_bytes()).hexdigest() if policy_file else None
    content = json.dumps([model, config.seed, config.max_steps, policy], sort_keys=True)
    return hashlib.sha256(content.encode()).hexdigest()[:16]


def _done(log: Path, run_key: str) -> dict[tuple[str, str], EpisodeRecord]:
    """The finished episodes of an earlier run of the same settings (failure rows are asked
    again); a new log starts with a line naming the run."""
    drop_partial_line(log)
    if not log.exists() or not log.stat().st_size:
        log.write_bytes(json_line({"run": run_key}))
        return {}
    _, line = next(_text_lines(log))
    if _json_object(line).get("run") != run_key:
        raise KgsynthError(f"{log.parent} holds episodes of another model, seed, max_steps or policy: use a new --out or delete it")
    return {(r.case_id, r.policy): r for r in _records(log) if r.failure is None}


def read_episodes(folder: Path) -> list[EpisodeRecord]:
    """The episodes of a run folder, the last row of each (case, policy); only the run's
    claims when its ``run.json`` names them."""
    log = folder / EPISODES_FILE
    if not log.is_file():
        raise KgsynthError(f"{folder}: no {EPISODES_FILE} (write it with kgsynth pressure run)")
    last = _last_byte(log)
    if not last:
        raise KgsynthError(f"{log} is empty, not a log kgsynth pressure run wrote (it starts with a line naming the run)")
    if last != b"\n":
        raise KgsynthError(f"{log} is cut off in its last line (a run was killed while writing it): "
                           "run the same kgsynth pressure run again to finish it")
    latest = {(r.case_id, r.policy): r for r in _records(log)}
    claims = read_run(folder).get("claim_ids")
    return [r for r in latest.values() if claims is None or r.case_id in set(claims)]


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        if not size:
            return b""
        f.seek(size - 1)
        return f.read(1)


def read_run(folder: Path) -> dict:
    """The run's ``run.json`` ({} before the run has finished once)."""
    path = folder / RUN_FILE
    try:
        run = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as e:
        raise KgsynthError(f"{path}: not a run.json kgsynth pressure run wrote ({e})") from None
    if not isinstance(run, dict):
        raise KgsynthError(f"{path}: not a run.json kgsynth pressure run wrote (a JSON {type(run).__name__}, not an object)")
    return run


def _records(log: Path) -> Iterator[EpisodeRecord]:
    """The episode rows of a log (its first line names the run, usage lines follow each
    claim's episodes); a bad line is one error naming it."""
    for number, line in _text_lines(log):
        if not line.endswith("\n"):
            return  # cut short by a killed run
        row = _json_object(line)
        if not (number == 1 and "run" in row) and "usage" not in row:
            yield _validated(EpisodeRecord, line, f"{log}:{number}", "an episode kgsynth pressure run wrote")


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The numbered lines of a UTF-8 file; a line that is not UTF-8 is one error naming it."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise KgsynthError(f"{path}:{number}: not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})") from None


def _json_object(line: str) -> dict:
    """A log line's JSON object ({} when it is not one: validation names the line)."""
    try:
        row = json.loads(line)
    except ValueError:
        return {}
    return row if isinstance(row, dict) else {}


def _usage_since(usage: dict[str, StageUsage], logged: dict[str, StageUsage]) -> dict[str, dict]:
    """Per stage, the usage counted since ``logged`` (which is brought up to date)."""
    since = {stage: now.since(logged.get(stage, StageUsage())) for stage, now in usage.items()}
    logged.update({stage: now.model_copy() for stage, now in usage.items()})
    return since


def _logged_usage(log: Path) -> dict[str, dict]:
    """The usage lines of a log, summed per stage."""
    total: dict[str, Counter] = defaultdict(Counter)
    for row in read_jsonl(log):
        for stage, counts in row.get("usage", {}).items():
            total[stage].update(counts)
    return {stage: dict(counts) for stage, counts in total.items()}


def _validated(model: type[Row], line: str, where: str, what: str) -> Row:
    """One JSON line as ``model``; else one error naming the file, the line and the field."""
    try:
        return model.model_validate_json(line)
    except ValidationError as e:
        error = e.errors()[0]
        field = ".".join(map(str, error["loc"])) or "the line"
        raise KgsynthError(f"{where}: not {what} ({field}: {error['msg']})") from None


def _gateway(config: PressureConfig) -> LLMGateway:
    return LLMGateway(config.model.gateway_config(), ResponseCache(config.model.cache_path()), raise_unreachable=True)


# ---------------------------------------------------------------------------- the static benchmark
def export_benchmark(folder: Path, cases: Sequence[PressureCase], records: Sequence[EpisodeRecord]) -> int:
    """Per claim the model answered right at turn 0, the shortest pushing sequence that
    flipped it (the learned policy's first on a tie; none flipped: the learned policy's, else
    the first policy's): ``public.jsonl`` (the dialogue, question, claim and turns) and
    ``private.jsonl`` (the true and false values), so anyone can replay it without training."""
    by_case: dict[str, list[EpisodeRecord]] = {}
    for r in records:
        if r.exchanges and r.failure is None:
            by_case.setdefault(r.case_id, []).append(r)
    public, private = [], []
    for case in cases:
        episodes = by_case.get(case.id)
        if not episodes:
            continue
        best = min(episodes, key=lambda r: (r.flipped_at is None, r.flipped_at or len(r.exchanges), r.policy != "learned"))
        public.append({**case.model_dump(mode="json", include=set(PUBLIC_FIELDS)), "policy": best.policy,
                       "turns": [e.turn for e in best.exchanges],
                       "operations": [[e.operation, e.intensity] for e in best.exchanges]})
        private.append({"id": case.id, "true_value": case.true_value, "true_aliases": case.true_aliases,
                        "false_value": case.false_value, "false_aliases": case.false_aliases, "triple": case.triple,
                        "flipped_at": best.flipped_at})
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("public.jsonl", public), ("private.jsonl", private)):
        (folder / name).write_bytes(b"".join(json_line(r) for r in rows))
    return len(public)
