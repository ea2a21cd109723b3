"""FAKE stage replies for error-handling tests of the LLM pipeline (kill/resume, faults,
cache, call counts): behind the fault injector, they answer each kgsynth prompt with
canned content built from the prompt itself. The "generator" returns the template turns
it was shown (so its items equal the template's, and the code checks pass or fail as
the test arranges), the "guesser" never knows, the "judge" gives a fixed score. No
content quality is tested with them; tests/test_llm_local.py uses a real model.
"""

from __future__ import annotations

import json
import re

from kgsynth.filters.judge import RUBRIC
from kgsynth.synth.dialogues.llm_dialogue import PROMPT

_LINE = re.compile(r"^(\d+)\. [^:]+: (.*)$")


def _last_user(body: dict) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def _first_user(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def copy_the_plan(prompt: str, language: str, drop_values: bool = False) -> str:
    """The generator's canned reply: the plan's lines, brackets removed (or with the
    bracketed values left out, to fail the placement check)."""
    words = PROMPT[language]
    plan, question = prompt.split(f"\n\n{words['dialogue']}\n", 1)[1].split(f"\n\n{words['question']} ", 1)
    turns = []
    for line in plan.splitlines():
        text = _LINE.match(line).group(2)
        turns.append(re.sub(r"\[[^\]]*\]", "something", text) if drop_values else text.replace("[", "").replace("]", ""))
    return json.dumps({"turns": turns, "question": question.split("\n\n", 1)[0]}, ensure_ascii=False)


def fake_stage_reply(body: dict, judge_score: int = 2, drop_values: bool = False) -> str:
    prompt = _first_user(body)
    language = next((lang for lang, words in PROMPT.items() if body["messages"][0]["content"] == words["system"]), None)
    if language:
        return copy_the_plan(prompt, language, drop_values=drop_values)
    if prompt.startswith("You check one item"):
        return json.dumps({name: {"rationale": "fake", "score": judge_score} for name in RUBRIC})
    return "I do not know."  # a closed-book guess
