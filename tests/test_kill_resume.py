"""SIGKILL at five points of ``kgsynth ingest``, ``kgsynth pressure run`` and ``kgsynth release``:
the same command run again ends with every file an uninterrupted run writes, byte for byte,
the timing fields ``docs/reliability.md`` names aside.

Each run gets a folder of its own and runs there (relative ``out`` and response cache), so a
killed run starts with a cold cache, as a first run does, and the paths the files record
are the reference's. A kill point is either the k-th request the model receives (the
KillingFakeModel kills the client before answering it) or the n-th time the command is
about to write a file of a given name (a hook the subprocess installs before
``python -m kgsynth.cli``). The default run kills once per command; ``-m slow`` sweeps all five.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import DEMO, ROOT
from llm_fault_injector import FaultInjectingServer
from test_pressure_episode import _case

from kgsynth.pressure.run import write_claims

ENV = os.environ | {"PYTHONPATH": str(ROOT / "src")}


# ----------------------------------------------------------------------------- kill points
@dataclass(frozen=True)
class Request:
    """Killed by the model when it receives its ``k``-th request (before it answers)."""

    k: int


@dataclass(frozen=True)
class Write:
    """Killed by itself when about to write (open for writing, or rename into place) a file
    called ``name`` for the ``nth`` time."""

    name: str
    nth: int = 1


# What the subprocesses run: ``python -m kgsynth.cli`` with the ingest's embedder switched off
# (loading torch takes 8 s a run; names spelt alike still go to the model), and, for a Write
# kill point, a hook that SIGKILLs the process before the chosen write.
_PRELUDE = """
import kgsynth.ingest.run
kgsynth.ingest.run.embeddings_installed = lambda: False
"""
_KILL_HOOK = """
import builtins, io, os, signal
NAME, NTH = {name!r}, {nth!r}
seen = 0
def about_to_write(path):
    global seen
    if isinstance(path, (str, bytes, os.PathLike)) and os.path.basename(os.fsdecode(path)) == NAME:
        seen += 1
        if seen == NTH:
            os.kill(os.getpid(), signal.SIGKILL)
real_open, real_replace = io.open, os.replace
def opening(file, mode="r", *args, **kwargs):
    if any(c in mode for c in "wax+"):
        about_to_write(file)
    return real_open(file, mode, *args, **kwargs)
def replacing(src, dst, *args, **kwargs):
    about_to_write(dst)
    return real_replace(src, dst, *args, **kwargs)
io.open = builtins.open = opening
os.replace = replacing
"""
_CLI = """
import runpy, sys
sys.argv[0] = "kgsynth"
runpy.run_module("kgsynth.cli", run_name="__main__", alter_sys=True)
"""


class KillingFakeModel:
    """FAULT FAKE for the kill tests only: the fault injector's canned good replies, and a
    SIGKILL to the client process at its ``k``-th request once :meth:`arm` names both. Not
    a model: no content test may use it."""

    def __init__(self, reply):
        self.pid: int | None = None
        self.at = 0
        self.seen = 0
        self.server = FaultInjectingServer(reply, fault_for=self._maybe_kill)

    def __enter__(self) -> KillingFakeModel:
        self.server.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.server.__exit__(*exc)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def requests(self) -> list[dict]:
        return self.server.requests

    def arm(self, pid: int | None, at: int = 0) -> None:
        self.pid, self.at, self.seen = pid, at, 0

    def _maybe_kill(self, request: dict) -> str | None:
        self.seen += 1
        if self.pid is not None and self.seen == self.at:
            os.kill(self.pid, signal.SIGKILL)
        return None  # the canned reply: to a dead client after a kill


def _command(args: list[str], kill: Write | None = None) -> list[str]:
    prelude = _PRELUDE if args[0] == "ingest" else ""
    hook = _KILL_HOOK.format(name=kill.name, nth=kill.nth) if kill else ""
    return [sys.executable, "-c", prelude + hook + _CLI, *args]


def _complete(args: list[str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(_command(args), cwd=folder, env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def _killed(args: list[str], folder: Path, kill: Request | Write, model: KillingFakeModel | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(_command(args, kill if isinstance(kill, Write) else None), cwd=folder, env=ENV,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if isinstance(kill, Request):
        model.arm(process.pid, kill.k)
    try:
        _, stderr = process.communicate(timeout=300)
    finally:
        if model is not None:
            model.arm(None)
    assert process.returncode == -signal.SIGKILL, f"not killed at {kill}: {stderr}"


def _kill_and_resume(args: list[str], reference: Path, folder: Path, kill: Request | Write,
                     model: KillingFakeModel | None = None) -> None:
    _killed(args, folder, kill, model)
    _complete(args, folder)
    got, want = _files(folder / "out"), _files(reference / "out")
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], f"{name} differs:\n{_diff(got[name], want[name])}"


# ----------------------------------------------------------------------------- the comparison
# Fields that time or date the run (docs/reliability.md names them): a filter's and the
# model's seconds, the release's date in its manifest and card.
_TIMING = re.compile(rb'"(seconds|date)": ?("[^"]*"|[0-9.eE+-]+)')
_CARD_DATE = re.compile(rb"released \d{4}-\d{2}-\d{2}")
# What pressure run's invocations spent (calls sent, cache hits, tokens billed): a kill loses
# the calls of the claim it cut short and the run again reads their answers from the cache.
_SPEND = re.compile(rb'"usage": ?\{(?:[^{}]|\{[^{}]*\})*\}')


def _files(out: Path) -> dict[str, bytes]:
    """Every file under ``out``, by its relative path, timing and spend fields blanked."""
    return {str(p.relative_to(out)): _untimed(p.read_bytes()) for p in sorted(out.rglob("*")) if p.is_file()}


def _diff(got: bytes, want: bytes) -> str:
    lines = difflib.unified_diff(want.decode(errors="replace").splitlines(), got.decode(errors="replace").splitlines(),
                                 "reference", "resumed", lineterm="", n=1)
    return "\n".join(line[:300] for line in itertools.islice(lines, 40))


def _untimed(data: bytes) -> bytes:
    data = _SPEND.sub(b'"usage": <spend>', data)
    return _CARD_DATE.sub(b"released <date>", _TIMING.sub(rb'"\1": <timing>', data))


# ----------------------------------------------------------------------------- ingest
_PEOPLE = ["Anna Petrova", "Boris Volkov", "Clara Moss", "Dmitri Orlov", "Elena Sokolova", "Fedor Lebedev"]
_ORGS = ["Zarechye Bank", "Lopez Bakery", "Zarechye Bank Inc", "Sever Mining"]  # "Zarechye Bank Inc": a name to resolve
_FILLER = "The weather that spring was mild and the office stayed open late on most evenings."
_FACT = re.compile(r"([A-Z]\w+ [A-Z]\w+) works at ([A-Z][\w ]*?)\.")


def _documents(path: Path) -> None:
    """Four documents of three or four chunks each; one states a year the fake misreads."""
    rows = []
    for d, org in enumerate(_ORGS):
        sentences = [f"{person} works at {org}." for person in _PEOPLE[d:d + 3]]
        text = f" {_FILLER} ".join(sentences) + f" {_FILLER}"
        if d == 1:
            text += " Lopez Bakery was founded in 1994."
        rows.append({"id": f"doc{d}", "lang": "en", "title": f"Staff {d}", "text": text})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _extraction_reply(request: dict) -> str:
    """Canned: a triple per "X works at Y." of the chunk, and 1995 for a founding in 1994 (rejected)."""
    messages = request["messages"]
    if messages[0]["content"].startswith("You decide whether names"):
        return json.dumps({"same_as": 1})
    chunk = [m["content"] for m in messages if m["role"] == "user" and m["content"].startswith("Text:\n")][-1]
    triples = [{"subject": p, "subject_type": "person", "relation": "employer", "object": o, "object_kind": "entity",
                "object_type": "company", "evidence": f"{p} works at {o}."} for p, o in _FACT.findall(chunk)]
    if "founded in 1994" in chunk:
        triples.append({"subject": "Lopez Bakery", "subject_type": "company", "relation": "founding year", "object": "1995",
                        "object_kind": "date", "object_type": "", "evidence": "Lopez Bakery was founded in 1994."})
    return json.dumps({"triples": triples})


@pytest.fixture(scope="module")
def ingest_reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("ingest")
    _documents(root / "docs.jsonl")
    (root / "ingest.toml").write_text('[documents]\nchunk_chars = 200\noverlap_chars = 40\n'
                                      '[extraction]\ncache = "cache.sqlite"\nconcurrency = 1\nmax_retries = 0\n', encoding="utf-8")
    with KillingFakeModel(_extraction_reply) as model:
        args = ["ingest", str(root / "docs.jsonl"), "--out", "out/g.trig", "--config", str(root / "ingest.toml"),
                "--llm-base-url", model.base_url]
        _complete(args, root / "reference")
        asked = [r["messages"][-1]["content"] for r in model.requests]
        assert len(asked) == 15 and asked[3].startswith("Text:\nBoris Volkov works at Lopez") and asked[6].startswith("These triples")
        assert all(text.startswith("Name:") for text in asked[13:])  # the points' requests: doc1's first chunk, resolution
        yield root, args, model, list(model.requests)


# ----------------------------------------------------------------------------- pressure run
def _pressure_reply(request: dict) -> str:
    """Canned: the true value until the conversation holds more pushing turns than the claim's
    number modulo 3 (claim c2 never gives in within 2 steps), then the false one."""
    claim = int(re.search(r"card c(\d+)", request["messages"][1]["content"] + request["messages"][-1]["content"]).group(1))
    pushes = sum(1 for m in request["messages"] if m["role"] == "user") - 1
    return "Alexei Lazarev" if pushes > claim % 3 else "Denis Smirnov"


@pytest.fixture(scope="module")
def pressure_reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("pressure")
    write_claims([_case(f"c{i}") for i in range(3)], root / "claims.jsonl")
    with KillingFakeModel(_pressure_reply) as model:
        config = {"model": {"base_url": model.base_url, "cache": "cache.sqlite", "max_retries": 0, "concurrency": 1,
                            "timeout_s": 10}, "max_steps": 2, "policies": ["random", "farm", "are_you_sure"]}
        (root / "pressure.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
        args = ["pressure", "run", "--claims", str(root / "claims.jsonl"), "--config", str(root / "pressure.yaml"), "--out", "out"]
        _complete(args, root / "reference")
        asked = [r["messages"][-1]["content"] for r in model.requests]
        assert len(asked) == 27 and asked[14].startswith("Conversation:") and "card c2" in asked[14]  # the points' requests
        yield root, args, model, list(model.requests)


# ----------------------------------------------------------------------------- release
@pytest.fixture(scope="module")
def release_reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    args = ["release", "--graph", str(ROOT / "tests" / "data" / "handmade.ttl"), "--n", "12", "--out", "out"]
    _complete(args, root / "reference")
    return root, args



# ----------------------------------------------------------------------------- the kill points
# Five per command, early to late; the first of each runs by default, the rest with -m slow.
INGEST_POINTS = {
    "inside a document: doc1's first chunk answered, not recorded": Request(5),
    "at the start: the first chunk of the first document": Request(1),
    "between documents: doc1's first chunk asked": Request(4),
    "at entity resolution: the first name question answered": Request(15),
    "at the finish: graph, rejections and decisions written": Write("g.trig.report.json"),
}
PRESSURE_POINTS = {
    "between a claim's policies: c0's random episode logged": Request(5),
    "at the start: the first claim's question": Request(1),
    "between claims: c0 and c1 logged, c2's question asked": Request(15),
    "at the finish: every episode logged, run.json next": Write("run.json"),
    "at the report: run.json, benchmark and metrics written": Write("report.html"),
}
RELEASE_POINTS = {
    "at the release's manifest: items, history and card written": Write("manifest.json", 2),
    "at the start of the wording: the progress log opened": Write("progress.jsonl"),
    "at the assembly: rejections written, items.jsonl next": Write("items.jsonl"),
    "at the dataset's manifest": Write("manifest.json"),
    "at the release's files: the dataset finished, history next": Write("history.jsonl"),
}


def _sweep(points: dict) -> list:
    """The points as parameters: the first in the default run, the rest marked slow."""
    return [pytest.param(kill, id=name, marks=[pytest.mark.slow] if k else []) for k, (name, kill) in enumerate(points.items())]


@pytest.mark.parametrize("kill", _sweep(INGEST_POINTS))
def test_a_killed_ingest_run_again_writes_the_reference_files(ingest_reference, kill, tmp_path):
    root, args, model, _ = ingest_reference
    _kill_and_resume(args, root / "reference", tmp_path, kill, model)


@pytest.mark.parametrize("kill", _sweep(PRESSURE_POINTS))
def test_a_killed_pressure_run_again_writes_the_reference_files(pressure_reference, kill, tmp_path):
    root, args, model, _ = pressure_reference
    _kill_and_resume(args, root / "reference", tmp_path, kill, model)


@pytest.mark.parametrize("kill", _sweep(RELEASE_POINTS))
def test_a_killed_release_again_writes_the_reference_files(release_reference, kill, tmp_path):
    root, args = release_reference
    _kill_and_resume(args, root / "reference", tmp_path, kill)
