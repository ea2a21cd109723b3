"""Error handling of the LLM gateway against a local fault-injecting HTTP server (see
tests/llm_fault_injector.py: canned replies, so no content is tested here)."""

from __future__ import annotations

import json

import pytest
from llm_fault_injector import FaultInjectingServer
from pydantic import BaseModel

from kgsynth.llm import LLMFailingError, LLMGateway, ModelConfig, Request, ResponseCache, parse_output


class Answer(BaseModel):
    question: str
    answer: int


def _echo(body: dict) -> str:
    """The canned good reply: the last user message as the question, its length as the answer."""
    text = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return json.dumps({"question": text, "answer": len(text)})


def _config(server: FaultInjectingServer, **overrides) -> ModelConfig:
    fields = {"base_url": server.base_url, "model": "test", "timeout_s": 0.5, "backoff_s": 0.01, "max_backoff_s": 0.05}
    return ModelConfig(**(fields | overrides))


def _requests(n: int, stage: str = "test") -> list[Request]:
    return [Request(messages=[{"role": "user", "content": f"item {i}"}], output=Answer, stage=stage) for i in range(n)]


def test_every_fault_kind_is_retried_until_a_good_reply():
    with FaultInjectingServer(_echo, script=["429", "500", "stall", "truncated", "not_json"]) as server:
        gateway = LLMGateway(_config(server, concurrency=1))
        (result,) = gateway.complete_all(_requests(1))
    assert result.ok and result.value == Answer(question="item 0", answer=6)
    # before any success, a 500 to json_schema may be a refusal of that form: json_object
    # goes out at once, in the same attempt (it stalls, so json_schema is tried again)
    assert result.attempts == 5 and len(server.requests) == 6
    assert [b["response_format"]["type"] for b in server.requests[1:3]] == ["json_schema", "json_object"]
    assert gateway.usage["test"].calls == 6 and gateway.usage["test"].failures == 0


def test_a_call_that_keeps_failing_is_recorded_not_retried_forever():
    with FaultInjectingServer(_echo, script=["500"] * 100) as server:
        gateway = LLMGateway(_config(server, max_retries=3))
        (result,) = gateway.complete_all(_requests(1))
    assert not result.ok and "HTTP 500" in result.error and result.attempts == 4
    # no form has worked on this server yet, so each attempt tries all three before backing off
    assert len(server.requests) == 4 * 3 and gateway.usage["test"].failures == 1


@pytest.mark.parametrize("fault", ["500", "not_json"])
def test_a_model_that_fails_every_call_is_given_up_on_after_the_budget(fault):
    with FaultInjectingServer(_echo, rate=1.0, faults=(fault,)) as server:
        gateway = LLMGateway(_config(server, max_retries=1, concurrency=2, max_failures_in_a_row=5))
        with pytest.raises(LLMFailingError, match=rf"stopped asking the model test at {server.base_url}: 5 calls in a row failed"):
            gateway.complete_all(_requests(40))
        asked = len(server.requests)
        with pytest.raises(LLMFailingError):  # a later batch is not sent at all
            gateway.complete_all(_requests(3))
    assert len(server.requests) == asked
    assert asked <= (5 + 2) * 2 * 3  # the budget, the calls in flight, two attempts each, up to three output forms


def test_a_success_between_failures_starts_the_count_again():
    script = (["429"] * 3 + ["ok"]) * 5
    with FaultInjectingServer(_echo, script=script) as server:
        results = LLMGateway(_config(server, max_retries=0, concurrency=1, max_failures_in_a_row=4)).complete_all(_requests(20))
    assert [r.ok for r in results] == ([False] * 3 + [True]) * 5


def test_once_a_form_worked_a_500_is_a_fault_not_a_refusal():
    with FaultInjectingServer(_echo, script=["ok", "500", "500"]) as server:
        gateway = LLMGateway(_config(server, concurrency=1))
        results = gateway.complete_all(_requests(2))
    assert all(r.ok for r in results) and results[1].attempts == 3
    assert {b["response_format"]["type"] for b in server.requests} == {"json_schema"}


def test_a_client_error_is_not_retried():
    with FaultInjectingServer(_echo) as server:
        gateway = LLMGateway(_config(server, base_url=server.base_url.removesuffix("/v1") + "/missing"))
        (result,) = gateway.complete_all(_requests(1))
    assert not result.ok and "HTTP 404" in result.error
    assert result.attempts == 1 and len(server.requests) == 0


def test_a_server_that_rejects_json_schema_gets_json_object_and_keeps_it():
    with FaultInjectingServer(_echo, reject_json_schema=True) as server:
        gateway = LLMGateway(_config(server, concurrency=1))
        results = gateway.complete_all(_requests(3))
    assert all(r.ok for r in results)
    formats = [body.get("response_format", {}).get("type") for body in server.requests]
    assert formats == ["json_schema", "json_object", "json_object", "json_object"]
    assert server.requests[1]["response_format"]["schema"] == Answer.model_json_schema()


def test_thirty_percent_faults_lose_and_duplicate_nothing(tmp_path):
    with FaultInjectingServer(_echo, rate=0.3, seed=1) as server:
        gateway = LLMGateway(_config(server, max_retries=8, concurrency=4), ResponseCache(tmp_path / "cache.sqlite"))
        results = gateway.complete_all(_requests(100))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert [r.value.question for r in results] == [f"item {i}" for i in range(100)]
    assert gateway.usage["test"].calls == len(server.requests) > 100


def test_a_rerun_with_the_cache_makes_no_calls(tmp_path):
    path = tmp_path / "cache.sqlite"
    with FaultInjectingServer(_echo) as server:
        first = LLMGateway(_config(server), ResponseCache(path)).complete_all(_requests(20))
        sent = len(server.requests)
        again = LLMGateway(_config(server), ResponseCache(path))
        second = again.complete_all(_requests(20))
    assert sent == 20 and len(server.requests) == 20
    assert [r.value for r in second] == [r.value for r in first] and all(r.cached for r in second)
    assert again.usage["test"].cache_hits == 20 and again.usage["test"].calls == 0


def test_the_api_key_is_sent_but_never_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("KGSYNTH_TEST_KEY", "sk-secret-123")
    path = tmp_path / "cache.sqlite"
    with FaultInjectingServer(_echo) as server:
        gateway = LLMGateway(_config(server, api_key_env="KGSYNTH_TEST_KEY"), ResponseCache(path))
        (result,) = gateway.complete_all(_requests(1))
    assert result.ok and server.headers[0]["authorization"] == "Bearer sk-secret-123"
    assert b"sk-secret-123" not in path.read_bytes()
    assert "sk-secret-123" not in result.model_dump_json() and "sk-secret-123" not in repr(gateway.config)


@pytest.mark.parametrize(
    "text",
    ['{"question": "q", "answer": 3}', 'Here you go:\n```json\n{"question": "q", "answer": 3}\n```', 'Answer: {"question": "q", "answer": 3} done'],
)
def test_json_is_cut_out_of_a_chatty_reply(text):
    assert parse_output(text, Answer) == Answer(question="q", answer=3)


def test_a_line_break_inside_a_string_is_accepted():
    assert parse_output('{"question": "two\nlines", "answer": 1}', Answer).question == "two\nlines"


def test_complete_all_works_inside_a_running_event_loop():
    """As in a Jupyter notebook, where the synchronous pipeline calls the gateway."""
    import asyncio

    async def notebook_cell():
        with FaultInjectingServer(_echo) as server:
            return LLMGateway(_config(server)).complete_all(_requests(3))

    results = asyncio.run(notebook_cell())
    assert [r.value.question for r in results] == ["item 0", "item 1", "item 2"]


def test_a_reply_that_never_parses_is_cached_so_a_rerun_asks_nothing(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with FaultInjectingServer(lambda body: "not json at all") as server:
        first = LLMGateway(_config(server, max_retries=2), cache).complete_all(_requests(2))
        sent = len(server.requests)
        again = LLMGateway(_config(server, max_retries=2), cache).complete_all(_requests(2))
        assert len(server.requests) == sent == 2 * 3  # the first run retried; the re-run asked nothing
    assert all(not r.ok for r in first) and all(not r.ok and r.cached and r.error.endswith("(cached reply)") for r in again)


def test_a_reply_that_never_fits_the_output_model_comes_back_with_its_text(tmp_path):
    cut = '{"question": "item 0", "answ'  # what a model cut off at max_tokens sends
    with FaultInjectingServer(lambda body: cut) as server:
        gateway = LLMGateway(_config(server, max_retries=1), ResponseCache(tmp_path / "cache.sqlite"))
        [result] = gateway.complete_all(_requests(1))
        [again] = LLMGateway(_config(server, max_retries=1), ResponseCache(tmp_path / "cache.sqlite")).complete_all(_requests(1))
    assert not result.ok and result.text == cut and "no JSON object" in result.error
    assert again.cached and not again.ok and again.text == cut
