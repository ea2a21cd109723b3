"""kgsynth datasets as inspect_ai tasks (kgsynth.eval.inspect_task): the samples carry
exactly kgsynth's own prompts, the scorer is kgsynth's strict checker, and a run against
a real local model (SmolLM2 behind llama.cpp's server) goes through inspect's CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import ROOT

pytest.importorskip("inspect_ai")

import inspect_ai
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT
from local_llm import SMOLLM2_SHA256, llama_server, missing, smollm2_path, verify

from kgsynth.dataset.splits import read_items
from kgsynth.errors import KgsynthError
from kgsynth.eval import prompts, render, scoring
from kgsynth.eval.config import EvalModel
from kgsynth.eval.inspect_task import kgsynth_task
from kgsynth.kg import load_rules

SCORER = "kgsynth_scorer"
# inspect_ai 0.3.285 calls tenacity with a deprecated argument on every model it builds
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def dataset(demo_dataset) -> Path:
    return demo_dataset


@pytest.fixture(scope="module")
def items(dataset):
    return {item.id: item for item in read_items(dataset / "items.jsonl")}


def _pairs(messages) -> list[tuple[str, str]]:
    """(role, text) of inspect chat messages or of kgsynth's OpenAI-style dicts."""
    return [(m["role"], m["content"]) if isinstance(m, dict) else (m.role, m.text) for m in messages]


@pytest.mark.parametrize("rendering", ["transcript", "chat"])
def test_samples_carry_kgsynths_own_messages_gold_and_metadata(dataset, items, rendering):
    task = kgsynth_task(dataset, rendering=rendering)
    assert [s.id for s in task.dataset] == list(items)  # every item, in file order
    for sample in task.dataset:
        item = items[sample.id]
        assert _pairs(sample.input) == _pairs(prompts.answer_messages(render.main(item), rendering))
        assert sample.target == (item.gold if isinstance(item.gold, str) else "; ".join(item.gold))
        assert sample.metadata["item_id"] == item.id and sample.metadata["rendering"] == rendering
        for key in ("difficulty", "category", "answer_format", "rule_kind", "position", "token_length", "language"):
            assert sample.metadata[key] == item.metadata.model_dump(mode="json")[key]
        assert sample.metadata["rule_given"] is False


def test_given_rules_go_into_the_system_prompt_as_kgsynth_eval_puts_them(dataset, items, demo_kg):
    rules = load_rules(demo_kg)
    task = kgsynth_task(dataset, rules="given", limit=10)
    assert len(task.dataset) == 10
    for sample in task.dataset:
        item = items[sample.id]
        statement = rules[item.metadata.rule_iri].statements[item.language]  # from the graph itself
        assert _pairs(sample.input) == _pairs(prompts.answer_messages(render.main(item), "transcript", statement))
        assert statement in sample.input[0].text and sample.metadata["rule_given"] is True


def test_unusable_arguments_are_one_line_kgsynth_errors(dataset, tmp_path):
    with pytest.raises(KgsynthError, match="is not a kgsynth dataset"):
        kgsynth_task(tmp_path)
    with pytest.raises(KgsynthError, match="rendering must be"):
        kgsynth_task(dataset, rendering="json")
    with pytest.raises(KgsynthError, match="rules must be"):
        kgsynth_task(dataset, rules="graph")
    with pytest.raises(KgsynthError, match="limit must be"):
        kgsynth_task(dataset, limit=0)


def test_kgsynth_does_not_import_inspect_and_the_task_without_it_says_how_to_install():
    check = "import sys, kgsynth, kgsynth.eval, kgsynth.eval.scoring, kgsynth.eval.prompts; assert 'inspect_ai' not in sys.modules"
    subprocess.run([sys.executable, "-c", check], check=True, cwd=ROOT)
    blocked = "import sys; sys.modules['inspect_ai'] = None; import kgsynth.eval.inspect_task"
    result = subprocess.run([sys.executable, "-c", blocked], check=False, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode != 0
    assert "kgsynth.errors.KgsynthError" in result.stderr and "pip install kgsynth[inspect]" in result.stderr


def _wrong_format(item) -> str:
    return f"{item.gold} or so, I think" if isinstance(item.gold, str) else "maybe"


def _wrong_value(item) -> str | None:
    """An answer in the asked format with a wrong value, found by kgsynth's checker itself."""
    for candidate in ("yes", "no", "0", "7", "123456.78", "1999-01-01", "50%", "zebra", "Ivanov"):
        check = scoring.score(item, candidate)
        if check.syntactic_ok and not check.correct:
            return candidate
    return None


def test_scorer_wiring_with_inspect_mockllm(dataset, items, tmp_path):
    """Wiring only: inspect's built-in mock model replays answers chosen here (gold, wrong
    format, wrong value in turn), and every logged score must be kgsynth's verdict on that answer."""
    task = kgsynth_task(dataset, limit=30)
    answers = {}  # the prompt's last message -> (item id, the answer the mock gives)
    for n, sample in enumerate(task.dataset):
        item = items[sample.id]
        answer = [sample.target, _wrong_format(item), _wrong_value(item)][n % 3]
        answers[sample.input[-1].text] = (item.id, answer if answer is not None else sample.target)
    assert len(answers) == len(task.dataset) == 30

    def reply(messages, tools, tool_choice, config):
        output = ModelOutput.from_content("mockllm/model", answers[messages[-1].text][1])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm fetches a tiktoken file
        return output

    model = get_model("mockllm/model", custom_outputs=reply)
    (log,) = inspect_ai.eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    sent = dict(answers.values())
    expected = {item_id: scoring.score(items[item_id], answer) for item_id, answer in sent.items()}
    kinds = set()
    for sample in log.samples:
        check, score = expected[sample.id], sample.scores[SCORER]
        assert sample.output.completion == sent[sample.id]
        assert score.value == (CORRECT if check.correct else INCORRECT)
        assert score.answer == check.value and score.explanation == check.reason
        assert score.metadata == {"syntactic_ok": check.syntactic_ok, "value_matches": check.value_matches, "error": check.reason}
        kinds.add("correct" if check.correct else "wrong value" if check.syntactic_ok else "wrong format")
    assert kinds == {"correct", "wrong value", "wrong format"}

    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == pytest.approx(sum(c.correct for c in expected.values()) / len(expected))
    by_difficulty = defaultdict(list)
    for item_id, check in expected.items():
        by_difficulty[items[item_id].metadata.difficulty.value].append(check.correct)
    assert len(by_difficulty) > 1
    for difficulty, correct in by_difficulty.items():
        assert metrics[difficulty].value == pytest.approx(sum(correct) / len(correct))


@pytest.mark.local_llm
@pytest.mark.skipif(missing() is not None, reason=missing() or "")
def test_inspect_cli_against_a_real_local_model(dataset, items, demo_kg, tmp_path):
    """The documented command line, against SmolLM2 behind llama.cpp's OpenAI-compatible
    server: the model gets kgsynth's messages and each answer is scored by kgsynth's checker.
    The model is tiny: this checks the plumbing, not accuracy."""
    rules = load_rules(demo_kg)
    model = smollm2_path()
    verify(model, SMOLLM2_SHA256)
    with llama_server(model) as base_url:
        env = os.environ | {"LOCAL_BASE_URL": base_url, "LOCAL_API_KEY": "none"}
        command = [
            str(Path(sys.executable).parent / "inspect"), "eval", "src/kgsynth/eval/inspect_task.py@kgsynth",
            "-T", f"dataset={dataset}", "-T", "limit=3", "-T", "rules=given", "--model", "openai-api/local/local",
            "--log-dir", str(tmp_path), "--display", "none", "--max-connections", "1",
        ]
        result = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path), resolve_attachments=True)
    assert log.status == "success" and len(log.samples) == 3
    for sample in log.samples:
        item = items[sample.id]
        (call,) = [e for e in sample.events if e.event == "model"]
        request = call.call.request  # the chat-completions body that went over HTTP
        statement = rules[item.metadata.rule_iri].statements[item.language]
        assert request["messages"] == prompts.answer_messages(render.main(item), "transcript", statement)
        assert (request["temperature"], request["max_tokens"]) == (EvalModel().temperature, EvalModel().max_tokens)
        assert call.output.usage.output_tokens > 0  # a real completion came back
        check, score = scoring.score(item, sample.output.completion), sample.scores[SCORER]
        assert score.value == (CORRECT if check.correct else INCORRECT) and score.explanation == check.reason
