"""``kgsynth eval``'s parts without a model: what each condition shows, the prompts,
strict scoring, token-F1, the fact probe's check and the error source; then the runner's
error handling (faults, kill and resume, the cache) against the local FAULT INJECTOR,
whose canned replies test plumbing only. A real model runs in test_eval_local.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, kill_when_logged
from llm_fault_injector import FAULTS, FaultInjectingServer

from kgsynth.cli._app import run
from kgsynth.dataset.splits import read_items
from kgsynth.eval import render
from kgsynth.eval.config import EvalConfig, EvalModel, LengthSweep, PositionSweep
from kgsynth.eval.prompts import PROMPT, answer_messages, probe_messages
from kgsynth.eval.results import read_results
from kgsynth.eval.runner import evaluate, load_rules, rule_statement
from kgsynth.eval.scoring import BLANK, blanked, error_source, rule_recalled, score, token_f1, value_recalled
from kgsynth.formats.answers import AnswerFormat, check_answer, has_word, numbers_in
from kgsynth.synth.dialogues.dialogue import count_tokens, transcript


@pytest.fixture(scope="module")
def dataset(demo_dataset) -> Path:
    return demo_dataset


@pytest.fixture(scope="module")
def items(dataset):
    return list(read_items(dataset / "items.jsonl"))


# ---------------------------------------------------------------------------- conditions
def test_closed_book_shows_no_dialogue_and_the_oracle_only_the_fact_turns(items):
    for item in items:
        assert render.closed_book(item).turns == ()
        oracle = render.oracle(item)
        assert oracle.turns and all(t.kind == "fact" for t in oracle.turns)
        assert list(oracle.turns) == [t for t in item.dialogue if t.kind == "fact"]
        for value in item.metadata.fact_values:  # every fact value is still shown
            assert value in transcript(oracle.turns)


def test_a_stretched_item_reaches_its_length_and_keeps_its_turns_in_order(items):
    for item in items[:20]:
        for target in (300, 1000):
            variant = render.stretched(item, target, seed=0)
            assert variant.context_tokens >= target
            assert [t for t in variant.turns if t.kind != "distractor"] == list(item.dialogue)
            values = [v for v in (*item.metadata.fact_values, item.gold) if isinstance(v, str) and len(v) > 3]
            numbers = {n for v in values for n in numbers_in(v)}
            for turn in variant.turns:
                if turn.kind == "distractor":  # a haystack with numbers, none of the item's (test_haystack.py)
                    assert not any(has_word(turn.text.casefold(), v.casefold()) for v in values), turn.text
                    assert not numbers & numbers_in(turn.text), turn.text
            assert render.stretched(item, target, seed=0) == variant  # seeded
            assert render.stretched(item, target, seed=1) != variant


def test_the_position_sweep_moves_the_whole_dialogue_through_the_same_padding(items):
    item = items[0]
    depths = [render.placed(item, 600, d, seed=0) for d in (0.0, 0.5, 1.0)]
    n = len(item.dialogue)
    start, middle, end = (v.turns for v in depths)
    assert start[:n] == item.dialogue and end[-n:] == item.dialogue
    padding = [t for t in start if t.kind == "distractor"]
    assert padding == [t for t in end if t.kind == "distractor"] == [t for t in middle if t.kind == "distractor"]
    first = middle.index(item.dialogue[0])
    assert middle[first : first + n] == item.dialogue and 0 < first < len(padding)
    assert depths[0].fact_depth < depths[1].fact_depth < depths[2].fact_depth
    assert all(v.context_tokens >= 600 for v in depths)


# ---------------------------------------------------------------------------- prompts
def test_the_transcript_rendering_is_one_message_and_chat_one_per_turn(items):
    item = next(i for i in items if i.language == "ru")
    variant = render.main(item)
    messages = answer_messages(variant, "transcript", rule="правило")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith(PROMPT["ru"]["system"]) and "правило" in messages[0]["content"]
    assert item.transcript in messages[1]["content"]
    assert messages[1]["content"].endswith(f"{item.question}\n{item.format_instruction}")
    chat = answer_messages(variant, "chat")
    assert "правило" not in chat[0]["content"] and chat[-1]["role"] == "user"
    roles = [m["role"] for m in chat[1:]]
    assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:], strict=False))  # strict alternation
    ask = f"{PROMPT['ru']['question'].format(question=item.question, instruction=item.format_instruction)}"
    assert chat[-1]["content"].endswith(ask)
    shown = [(m["role"], line) for m in chat[1:] for line in m["content"].removesuffix(ask).strip("\n").split("\n") if line]
    first = item.dialogue[0].speaker
    assert shown == [("user" if t.speaker == first else "assistant", f"{t.speaker}: {t.text}") for t in item.dialogue]
    closed = answer_messages(render.closed_book(item), "chat")
    assert [m["role"] for m in closed] == ["system", "user"] and closed[0]["content"] == PROMPT["ru"]["closed_book"]


def test_rule_statements_come_from_the_dataset(dataset, items, demo_kg):
    from kgsynth.kg import load_rules as graph_rules

    rules = load_rules(dataset)
    expected = graph_rules(demo_kg)
    for item in items:
        assert rule_statement(item, rules) == expected[item.metadata.rule_iri].statements[item.language]
    assert rule_statement(items[0], {}) is None


# ---------------------------------------------------------------------------- scoring
def test_token_f1_on_a_worked_example():
    # "the Red Square" -> red, square (article dropped); gold red, square, moscow:
    # precision 2/2, recall 2/3, F1 = 2 * 1 * 2/3 / (1 + 2/3) = 0.8
    assert token_f1("the Red Square", "Red Square Moscow") == pytest.approx(0.8)
    assert token_f1("Paris", ["Paris"]) == 1.0
    assert token_f1("Lyon", "Paris") == 0.0
    assert token_f1("", "Paris") == 0.0


def test_scoring_is_the_format_checker(items):
    for item in items:
        gold = item.gold if isinstance(item.gold, str) else "; ".join(item.gold)
        for answer in (gold, f"I think it is {gold}, surely", "", "42"):
            assert score(item, answer) == check_answer(answer, item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases)
        assert score(item, gold).correct


def test_the_fact_probe_blanks_one_value_and_recognises_it_in_any_writing(items):
    for item in items:
        for fact, value in enumerate(item.metadata.fact_values):
            turn, masked = blanked(item, fact)
            assert turn.text.replace(value, BLANK, 1) == masked and BLANK in masked
            assert value_recalled(value, value) and value_recalled(f"It is {value}.", value)
    assert value_recalled("15600", "15 600 руб.") and value_recalled("15,600", "$15,600")
    assert not value_recalled("15 000", "15 600 руб.")
    assert value_recalled("2026-01-05", "5 января 2026 г.") and not value_recalled("2026-01-06", "5 января 2026 г.")
    assert value_recalled("Gold tier", "gold tier") and not value_recalled("silver", "gold")


def test_the_error_source_follows_the_probes(items):
    item = next(i for i in items if i.answer_format is AnswerFormat.currency)
    right, wrong_value, wrong_format = score(item, item.gold), score(item, "1"), score(item, "about one rouble")
    assert not wrong_value.correct and wrong_value.syntactic_ok and not wrong_format.syntactic_ok
    every = dict.fromkeys(range(len(item.metadata.fact_values)), True)
    assert every and error_source(right, item, {}, None) is None
    assert error_source(wrong_format, item, every, True) == "format"
    assert error_source(wrong_value, item, every | {0: False}, True) == "fact_extraction"
    assert error_source(wrong_value, item, {0: False}, None) == "fact_extraction"  # a failed probe is enough
    assert error_source(wrong_value, item, every, False) == "rule_application"
    assert error_source(wrong_value, item, every, True) == "combination"
    assert error_source(wrong_value, item, {}, False) == "unprobed"  # no probe ran
    assert error_source(wrong_value, item, every, None) == "unprobed"  # the oracle failed
    assert error_source(wrong_value, item, every, False, rule_known=False) == "rule_knowledge"
    assert error_source(wrong_value, item, every | {0: False}, False, rule_known=False) == "fact_extraction"
    statement = "The booking platform charges a service fee of 2% of the booking amount."
    assert rule_recalled("A 2% fee on the amount.", statement) and not rule_recalled("A 3% fee.", statement)
    assert rule_recalled("Gold members get free shipping", "Gold members get free shipping.")


def test_probe_messages_quote_the_blanked_turn(items):
    item = items[0]
    turn, masked = blanked(item, 0)
    messages = probe_messages(render.main(item), "transcript", turn, masked)
    assert item.transcript in messages[-1]["content"] and f'{turn.speaker} says: "{masked}"' in messages[-1]["content"]


# ---------------------------------------------------------------------------- config
def test_config_errors_name_the_setting():
    with pytest.raises(ValueError, match="probes need the oracle"):
        EvalConfig(baselines=("closed_book",))
    with pytest.raises(ValueError, match="ascending"):
        LengthSweep(targets=(2000, 1000))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        PositionSweep(depths=(0.0, 1.5))
    with pytest.raises(ValueError, match="extra"):
        EvalConfig.model_validate({"modle": {}})


# ---------------------------------------------------------------------------- the runner, against the fault injector
def _canned(gold_by_question: dict[str, str]):
    """FAKE answers for plumbing tests: the gold for even-length questions, "0" otherwise,
    and "no idea" to a fact probe (so every probed item is a fact-extraction error)."""

    def reply(body: dict) -> str:
        ask = body["messages"][-1]["content"]
        for question, gold in gold_by_question.items():
            if question in ask:
                return gold if len(question) % 2 == 0 else "0"
        return "no idea"

    return reply


def _config(server: FaultInjectingServer, cache: Path, retries: int = 6, **fields) -> EvalConfig:
    model = EvalModel(base_url=server.base_url, cache=str(cache), timeout_s=0.5, max_retries=retries, concurrency=4)
    return EvalConfig.model_validate({"model": model.model_dump(), "batch": 8, "length_sweep": {"targets": [200, 400], "items": 4},
                                      "position_sweep": {"target_tokens": 300, "items": 4, "depths": [0, 0.5, 1]}} | fields)


def _answers(out: Path) -> list[dict]:
    """The results without what differs between runs of the same answers (time, cache)."""
    return [r.model_dump(exclude={"latency_s", "cached"}) for r in read_results(out)]


@pytest.fixture(scope="module")
def golds(items) -> dict[str, str]:
    return {i.question: i.gold if isinstance(i.gold, str) else "; ".join(i.gold) for i in items}


@pytest.fixture(scope="module")
def clean_eval(dataset, golds, tmp_path_factory):
    """A fault-free run; its server stays up (the cache is keyed by endpoint) for a warm re-run."""
    base = tmp_path_factory.mktemp("clean-eval")
    with FaultInjectingServer(_canned(golds)) as server:
        run = evaluate(dataset, _config(server, base / "cache.sqlite"), base / "out")
        yield run, base / "out", len(server.requests), server


def test_every_condition_and_probe_is_answered_once(clean_eval, items):
    run, out, requests, _ = clean_eval
    records = read_results(out)
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys)) == run.records and run.failures == 0
    conditions = {c: sum(r.condition == c for r in records) for c in ("main", "closed_book", "oracle", "length", "position")}
    assert conditions == {"main": len(items), "closed_book": len(items), "oracle": len(items), "length": 8, "position": 12}
    # a variant shown exactly like another (a length target below the item's own) is a cache hit
    assert requests == sum(u["calls"] for u in run.usage.values())
    assert len(records) == requests + sum(u["cache_hits"] for u in run.usage.values())
    by_item = {i.id: i for i in items}
    for record in records:
        item = by_item[record.item_id]
        if record.condition == "fact_probe":
            assert record.value == item.metadata.fact_values[int(record.param)]
            continue
        assert record.correct == score(item, record.answer).correct  # stored scores are the checker's
        if record.condition == "main":
            assert (record.error_source is None) == record.correct
    probed = {r.item_id for r in records if r.condition == "fact_probe"}
    wrong_in_format = {r.item_id for r in records if r.condition == "main" and not r.correct and r.syntactic_ok}
    assert probed == wrong_in_format and probed
    # the canned probe answers are never the value: every probed item is a fact-extraction error
    assert {r.error_source for r in records if r.item_id in probed and r.condition == "main"} == {"fact_extraction"}


@pytest.mark.slow  # about 90 s of stalls and back-offs; test_llm_gateway covers each fault alone
def test_thirty_percent_faults_change_no_answer(clean_eval, dataset, golds, tmp_path):
    _, clean_out, _, _ = clean_eval
    # a reply that is not JSON is a (wrong) answer to a free-text question, not a fault here
    transport_faults = tuple(f for f in FAULTS if f != "not_json")
    with FaultInjectingServer(_canned(golds), rate=0.3, seed=3, faults=transport_faults) as server:
        run = evaluate(dataset, _config(server, tmp_path / "cache.sqlite"), tmp_path / "out")
        faults = len(server.requests) - run.records
    assert faults > 30 and run.failures == 0
    assert _answers(tmp_path / "out") == _answers(clean_out)


def test_a_warm_cache_makes_no_call(clean_eval, dataset, golds, tmp_path):
    run, clean_out, requests, server = clean_eval
    again = evaluate(dataset, _config(server, clean_out.parent / "cache.sqlite"), tmp_path / "out")
    assert len(server.requests) == requests
    assert sum(u["calls"] for u in again.usage.values()) == 0
    assert sum(u["cache_hits"] for u in again.usage.values()) == run.records
    assert _answers(tmp_path / "out") == _answers(clean_out)
    assert all(r.cached for r in read_results(tmp_path / "out"))


def test_a_request_that_keeps_failing_is_a_failure_row_and_the_next_run_asks_it_again(dataset, golds, tmp_path):
    cache, out = tmp_path / "cache.sqlite", tmp_path / "out"
    with FaultInjectingServer(_canned(golds), script=["500"] * 3) as server:
        config = _config(server, cache, retries=0, limit=4, length_sweep=None, position_sweep=None, probes=False,
                         baselines=["oracle"])
        first = evaluate(dataset, config, out)
        failed = [r for r in read_results(out) if r.failure]
        assert first.failures == len(failed) == 3 and all("HTTP 500" in r.failure for r in failed)
        assert all(not r.correct and r.answer is None for r in failed)
        asked = len(server.requests)
        second = evaluate(dataset, config, out)
        assert len(server.requests) - asked == 3  # only the failed ones
    assert second.failures == 0 and not any(r.failure for r in read_results(out))


def test_a_killed_run_resumes_and_asks_nothing_twice(clean_eval, dataset, golds, tmp_path):
    _, clean_out, clean_requests, _ = clean_eval
    with FaultInjectingServer(_canned(golds), rate=0.0) as server:
        config = _config(server, tmp_path / "cache.sqlite")
        (tmp_path / "eval.yaml").write_text(config.model_dump_json())  # JSON is YAML
        command = [sys.executable, "-m", "kgsynth.cli", "eval", "--dataset", str(dataset), "--config", str(tmp_path / "eval.yaml"),
                   "--out", str(tmp_path / "out")]
        env = kill_when_logged(command, tmp_path / "out" / ".work" / "progress.jsonl", b"\n", 40)
        first = len(server.requests)
        assert 0 < first < clean_requests  # killed mid-run
        finished = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert finished.returncode == 0, finished.stderr
        resumed = len(server.requests) - first
    assert first + resumed <= clean_requests + 8  # at most one batch in flight was asked twice
    assert _answers(tmp_path / "out") == _answers(clean_out)
    assert (tmp_path / "out" / "report.html").is_file() and "accuracy" in finished.stderr


# ---------------------------------------------------------------------------- command line
def test_command_line_errors_are_one_line(dataset, tmp_path, capsys):
    unfinished = tmp_path / "unfinished"
    (unfinished / ".work").mkdir(parents=True)
    bad = tmp_path / "bad.toml"
    bad.write_text('baselines = ["closed_book"]\n')
    cases = [
        (["eval", "--dataset", str(dataset)], "no endpoint"),
        (["eval", "--dataset", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"], "is not a kgsynth dataset"),
        (["report", str(tmp_path)], "is not a finished kgsynth eval run"),
        (["report", str(unfinished)], "holds an unfinished kgsynth eval run"),
        (["eval", "--dataset", str(dataset), "--config", str(bad), "--base-url", "http://127.0.0.1:9/v1"],
         "probes need the oracle"),
    ]
    for args, message in cases:
        code = run(args)
        stderr = capsys.readouterr().err
        assert code == 1 and message in stderr, (args, stderr)
        assert stderr.count("\n") == 1 and "Traceback" not in stderr


def test_counted_tokens_of_a_variant_are_its_dialogue_s(items):
    variant = render.stretched(items[0], 500, seed=0)
    assert variant.context_tokens == count_tokens(transcript(variant.turns))


def test_the_rule_probe_tells_rule_knowledge_from_rule_application(dataset, items, tmp_path):
    """FAKE replies: a wrong number to every question, the whole conversation to a fact probe
    (so every value is found), and to the closed-book rule probe either nothing or the
    rule's statement: the probes then decide the error source."""
    rules = load_rules(dataset)
    statement = {i.question: rule_statement(i, rules) for i in items}

    def reply(knows_rules: bool):
        def answer(body: dict) -> str:
            ask = body["messages"][-1]["content"]
            if "___" in ask:
                return ask
            rule_probe = next((q for q in statement if ask.startswith(PROMPT["en"]["rule_probe"].split("{")[0]) and q in ask
                               or ask.startswith(PROMPT["ru"]["rule_probe"].split("{")[0]) and q in ask), None)
            if rule_probe:
                return statement[rule_probe] if knows_rules else "I do not know."
            return "0"
        return answer

    sources = {}
    for knows in (False, True):
        with FaultInjectingServer(reply(knows)) as server:
            config = _config(server, tmp_path / f"cache-{knows}.sqlite", limit=30, length_sweep=None, position_sweep=None)
            evaluate(dataset, config, tmp_path / f"out-{knows}")
        records = read_results(tmp_path / f"out-{knows}")
        probes = [r for r in records if r.condition == "rule_probe"]
        assert probes and all(r.correct == knows for r in probes)
        wrong = [r for r in records if r.condition == "main" and r.syntactic_ok and not r.correct]
        assert {r.item_id for r in probes} == {r.item_id for r in wrong}
        sources[knows] = {r.error_source for r in wrong}
    assert sources == {False: {"rule_knowledge"}, True: {"rule_application"}}
    with FaultInjectingServer(reply(False)) as server:  # the rule in the prompt: nothing to probe
        config = _config(server, tmp_path / "cache-given.sqlite", limit=30, length_sweep=None, position_sweep=None,
                         rules="given")
        evaluate(dataset, config, tmp_path / "out-given")
    records = read_results(tmp_path / "out-given")
    assert not any(r.condition == "rule_probe" for r in records)
    assert {r.error_source for r in records if r.condition == "main" and r.syntactic_ok and not r.correct} == {"rule_application"}
