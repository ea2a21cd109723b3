"""The LLM gateway against a real model: SmolLM2-135M behind llama-cpp-python's server on
127.0.0.1 (tests/local_llm.py). Plumbing only (the model is tiny): free text, typed output
through the forms this server accepts, token counts, determinism, and the cache."""

from __future__ import annotations

import pytest
from local_llm import SMOLLM2_SHA256, llama_server, missing, smollm2_path, verify
from pydantic import BaseModel

from kgsynth.llm import LLMGateway, ModelConfig, Request, ResponseCache

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")


class City(BaseModel):
    city: str


@pytest.fixture(scope="module")
def base_url():
    model = smollm2_path()
    verify(model, SMOLLM2_SHA256)
    with llama_server(model) as url:
        yield url


def _config(base_url: str) -> ModelConfig:
    return ModelConfig(base_url=base_url, model="local", max_tokens=200, timeout_s=120, max_retries=2)


ASK = [{"role": "user", "content": "Name the capital of France in one word."}]


def test_free_text_with_token_counts_and_the_same_reply_twice(base_url):
    gateway = LLMGateway(_config(base_url))
    first, second = gateway.complete_all([Request(ASK, stage="plain"), Request(ASK, stage="plain")])
    assert first.ok and first.text and first.text == second.text  # temperature 0, fixed seed
    usage = gateway.usage["plain"]
    assert usage.calls == 2 and usage.prompt_tokens > 0 and usage.completion_tokens > 0


def test_typed_output_falls_back_to_the_form_this_server_accepts(base_url):
    gateway = LLMGateway(_config(base_url))
    (result,) = gateway.complete_all([Request(ASK, output=City, stage="typed")])
    assert result.ok, result.error
    assert isinstance(result.value, City) and result.value.city.strip()
    # llama.cpp's server answers json_schema with HTTP 500 and accepts json_object + schema
    assert gateway.output_mode == "json_object" and gateway.usage["typed"].calls == 2


def test_a_cached_rerun_makes_no_calls(base_url, tmp_path):
    requests = [Request([{"role": "user", "content": f"Say the number {i}."}], stage="cached") for i in range(3)]
    first = LLMGateway(_config(base_url), ResponseCache(tmp_path / "cache.sqlite"))
    texts = [r.text for r in first.complete_all(requests)]
    again = LLMGateway(_config(base_url), ResponseCache(tmp_path / "cache.sqlite"))
    results = again.complete_all(requests)
    assert [r.text for r in results] == texts and all(r.cached for r in results)
    assert again.usage["cached"].calls == 0 and again.usage["cached"].cache_hits == 3


def test_closed_book_drops_exactly_the_items_the_guesser_answers(base_url, demo_kg, tmp_path):
    from kgsynth.filters import ClosedBookFilter
    from kgsynth.filters.closed_book import closed_book_messages
    from kgsynth.kg import load_rules
    from kgsynth.synth.config import SynthConfig
    from kgsynth.synth.dialogue import DialogueSettings
    from kgsynth.synth.formats import check_answer
    from kgsynth.synth.item import make_item
    from kgsynth.synth.pipeline import plan_cells

    plans = plan_cells(demo_kg, SynthConfig(), load_rules(demo_kg))
    # yes/no questions get guessed right about half the time, even by a tiny model
    chosen = [p for p in plans if p.key.endswith("/yes_no")][:10] + plans[:4]
    items = [make_item(plan.scenarios[0], "en", DialogueSettings(), 0) for plan in chosen]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    verdicts = ClosedBookFilter([LLMGateway(_config(base_url), cache)]).reasons(items)
    # the same guesses, read back through the cache and checked here
    replay = LLMGateway(_config(base_url), cache)
    guesses = replay.complete_all([Request(closed_book_messages(item)) for item in items])
    assert replay.usage["default"].calls == 0 and all(g.ok for g in guesses)
    expected = [check_answer(g.text, i.answer_format, i.gold, i.constraints, aliases=i.gold_aliases).value_matches for g, i in zip(guesses, items)]
    assert [v is not None for v in verdicts] == expected
    assert any(expected) and not all(expected)  # both outcomes occur, so the comparison means something
