"""The gateway: chat completions with typed outputs, retries, a cache and usage counts.

It knows nothing of graphs or items: callers (synth, filters, eval) bring their prompts
and a pydantic model for the answer. Structured output is asked for in the strictest form
the server accepts, tried in order: ``json_schema`` (OpenAI, vLLM), ``json_object`` with
the schema (llama.cpp's server rejects ``json_schema`` with HTTP 500), then the schema in
the prompt with the JSON cut out of the reply and validated. Until a form has worked on
the server, HTTP 400/422/500/501 is taken as a refusal of that form and the next one is
sent at once; the first form that works is kept for the gateway's later calls, and from
then on a 5xx is a fault like any other.

Timeouts, HTTP 429 (its Retry-After honoured), 5xx, dropped connections and replies
that do not parse are retried with exponential backoff and jitter, at most
``max_retries`` times; then the call is returned as a failure with its reason, never
raised and never retried forever. Other 4xx answers fail at once.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, ValidationError

from kgsynth.llm.cache import ResponseCache, cache_key
from kgsynth.llm.config import ModelConfig

OUTPUT_MODES = ("json_schema", "json_object", "prompt")
_REJECTS_FORMAT = (400, 422, 500, 501)  # how servers refuse a response_format they do not support
_COSTS = ("prompt_tokens", "completion_tokens", "latency_s")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Request:
    """One chat completion: OpenAI-style messages, and the pydantic model of the answer
    (None for free text); ``stage`` names the caller in the usage counts."""

    messages: Sequence[dict[str, str]]
    output: type[BaseModel] | None = None
    stage: str = "default"


class LLMResult(BaseModel):
    """A completion, or the reason it failed after every retry."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str | None = None
    value: Any = None  # an instance of the request's output model
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # from the first attempt to the reply, retries included

    @property
    def ok(self) -> bool:
        return self.error is None


class StageUsage(BaseModel):
    calls: int = 0  # HTTP requests sent
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class _BadOutput(Exception):
    """The reply did not hold a valid instance of the output model."""


class _Retryable(Exception):
    def __init__(self, reason: str, wait_s: float | None = None):
        super().__init__(reason)
        self.wait_s = wait_s


class LLMGateway:
    """Sends requests to one model with bounded concurrency; see the module docstring."""

    def __init__(self, config: ModelConfig, cache: ResponseCache | None = None, jitter_seed: int = 0):
        self.config = config
        self.cache = cache
        self.usage: dict[str, StageUsage] = {}
        self._mode = 0  # index into OUTPUT_MODES: the strictest form this server accepted
        self._mode_confirmed = False  # a reply came back in that form
        self._jitter = random.Random(jitter_seed)

    # ------------------------------------------------------------------ public
    @property
    def output_mode(self) -> str:
        """The structured-output form in use (the first that worked, once one has)."""
        return OUTPUT_MODES[self._mode]

    def complete_all(self, requests: Sequence[Request]) -> list[LLMResult]:
        """Run the requests (``concurrency`` at a time) and return their results in order.
        Inside a running event loop (a Jupyter notebook) they run on a worker thread's own
        loop, so synchronous callers work there too; async code can ``await complete_many``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.complete_many(requests))
        with ThreadPoolExecutor(max_workers=1) as worker:
            return worker.submit(asyncio.run, self.complete_many(requests)).result()

    async def complete_many(self, requests: Sequence[Request]) -> list[LLMResult]:
        limit = asyncio.Semaphore(self.config.concurrency)
        api_key = os.environ.get(self.config.api_key_env) or "unused"  # local servers need none
        async with openai.AsyncOpenAI(
            base_url=self.config.base_url, api_key=api_key, timeout=self.config.timeout_s, max_retries=0
        ) as client:

            async def one(request: Request) -> LLMResult:
                async with limit:
                    return await self._complete(client, request)

            return list(await asyncio.gather(*(one(r) for r in requests)))

    # ------------------------------------------------------------------ one request
    async def _complete(self, client: openai.AsyncOpenAI, request: Request) -> LLMResult:
        usage = self.usage.setdefault(request.stage, StageUsage())
        key = cache_key(self._describe(request))
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            usage.cache_hits += 1
            try:
                result = self._result(request, hit["text"], cached=True)
            except _Retryable as e:  # a reply that never parsed: asking again would get it again
                usage.failures += 1
                return LLMResult(error=f"{self.config.model} at {self.config.base_url}: {e} (cached reply)", cached=True)
            # the first reply's cost, so a cached re-run reports what the answers took
            return result.model_copy(update={k: hit[k] for k in _COSTS if k in hit})
        attempts, reason = 0, ""
        started = time.perf_counter()
        for attempt in range(self.config.max_retries + 1):
            attempts = attempt + 1
            try:
                text, prompt_tokens, completion_tokens = await self._send(client, request, usage)
                costs = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                         "latency_s": round(time.perf_counter() - started, 3)}
                if self.cache is not None:  # every reply the server gave, parsed or not: a re-run asks nothing again
                    self.cache.put(key, {"text": text, **costs})
                result = self._result(request, text, attempts=attempts)
            except _Retryable as e:
                reason = str(e)
                if attempt < self.config.max_retries:
                    await asyncio.sleep(self._delay(attempt, e.wait_s))
                continue
            except _Permanent as e:
                reason = str(e)
                break
            return result.model_copy(update=costs)
        usage.failures += 1
        return LLMResult(error=f"{self.config.model} at {self.config.base_url}: {reason}", attempts=attempts)

    def _describe(self, request: Request) -> dict:
        """What determines the response: the cache key's content (no API key, no retry policy)."""
        c = self.config
        return {
            "base_url": c.base_url,
            "model": c.model,
            "messages": list(request.messages),
            "temperature": c.temperature,
            "max_tokens": c.max_tokens,
            "seed": c.seed,
            "output": _schema(request.output) if request.output else None,
        }

    async def _send(self, client: openai.AsyncOpenAI, request: Request, usage: StageUsage) -> tuple[str, int, int]:
        """One attempt; a server that refuses a structured-output form gets the next one at once."""
        modes = range(self._mode, len(OUTPUT_MODES)) if request.output else [len(OUTPUT_MODES) - 1]
        for mode in modes:
            started = time.perf_counter()
            usage.calls += 1
            try:
                response = await client.chat.completions.create(**self._arguments(request, OUTPUT_MODES[mode]))
            except openai.APIStatusError as e:
                refused = request.output and not self._mode_confirmed and e.status_code in _REJECTS_FORMAT
                if refused and mode < len(OUTPUT_MODES) - 1:
                    continue  # before any form worked here, this may be a refusal of the form: try the next
                raise _classify(e) from None
            except (openai.APIError, ValueError) as e:  # timeouts, dropped connections, unparsable bodies
                raise _Retryable(f"{type(e).__name__}: {e}") from None
            finally:
                usage.seconds += time.perf_counter() - started
            if request.output:
                self._mode, self._mode_confirmed = mode, True
            tokens = response.usage
            prompt_tokens = tokens.prompt_tokens if tokens else 0
            completion_tokens = tokens.completion_tokens if tokens else 0
            usage.prompt_tokens += prompt_tokens
            usage.completion_tokens += completion_tokens
            text = response.choices[0].message.content if response.choices else None
            if text is None:
                raise _Retryable("the reply has no message content")
            return text, prompt_tokens, completion_tokens
        raise _Retryable("the server refused every structured-output form")

    def _arguments(self, request: Request, mode: str) -> dict:
        c = self.config
        messages = list(request.messages)
        arguments: dict[str, Any] = {"model": c.model, "temperature": c.temperature}
        if c.max_tokens is not None:
            arguments["max_tokens"] = c.max_tokens
        if c.seed is not None:
            arguments["seed"] = c.seed
        if request.output is not None:
            schema = _schema(request.output)
            if mode == "json_schema":
                arguments["response_format"] = {"type": "json_schema", "json_schema": {"name": request.output.__name__, "schema": schema}}
            elif mode == "json_object":
                arguments["response_format"] = {"type": "json_object", "schema": schema}
            else:
                messages.append({"role": "system", "content": "Reply with one JSON object only, valid against this JSON schema: " + json.dumps(schema)})
        arguments["messages"] = messages
        return arguments

    def _result(self, request: Request, text: str, cached: bool = False, attempts: int = 0) -> LLMResult:
        if request.output is None:
            return LLMResult(text=text, cached=cached, attempts=attempts)
        try:
            value = parse_output(text, request.output)
        except _BadOutput as e:
            raise _Retryable(str(e)) from None
        return LLMResult(text=text, value=value, cached=cached, attempts=attempts)

    def _delay(self, attempt: int, wait_s: float | None) -> float:
        if wait_s is not None:
            return min(wait_s, self.config.max_backoff_s)
        base = min(self.config.max_backoff_s, self.config.backoff_s * 2**attempt)
        return base * self._jitter.uniform(0.5, 1.0)


@functools.cache
def _schema(output: type[BaseModel]) -> dict:
    """The output model's JSON schema, built once (pydantic rebuilds it on every call);
    for the cache key and every attempt's request."""
    return output.model_json_schema()


class _Permanent(Exception):
    """An answer that retrying cannot change (e.g. 401, 404, a 400 the request caused)."""


def _classify(error: openai.APIStatusError) -> Exception:
    status = error.status_code
    reason = f"HTTP {status}: {_short(error.message)}"
    if status == 429:
        return _Retryable(reason, _retry_after(error))
    if status >= 500 or status in (408, 409):
        return _Retryable(reason)
    return _Permanent(reason)


def _retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after") if error.response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use the backoff instead


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def parse_output(text: str, output: type[BaseModel]) -> BaseModel:
    """The reply as an instance of ``output``: the whole text as JSON, else the JSON in a
    code fence, else the outermost ``{...}``; raw line breaks inside strings are accepted
    (small models write them under a JSON grammar). Raises ``_BadOutput`` with the reason."""
    candidates = [text, *(m.group(1) for m in _FENCE.finditer(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    reason = "no JSON object in the reply"
    for candidate in candidates:
        try:
            return output.model_validate(json.loads(candidate, strict=False))
        except json.JSONDecodeError:
            continue
        except ValidationError as e:
            reason = f"the JSON does not fit {output.__name__}: {_short(str(e))}"
    raise _BadOutput(reason)
