"""The gateway: chat completions with typed outputs, retries, a cache and usage counts.

It knows nothing of graphs or items: callers (synth, filters, eval) bring their prompts
and a pydantic model for the answer. Structured output is asked for in the strictest form
the server accepts, tried in order: ``json_schema`` (OpenAI, vLLM), ``json_object`` with
the schema (llama.cpp's server rejects ``json_schema`` with HTTP 500), then the schema in
the prompt with the JSON cut out of the reply and validated. Until a form has worked on
the server, HTTP 400/422/500/501 is taken as a refusal of that form and the next one is
sent at once; the first form that works is kept for the gateway's later calls, and from
then on a 5xx is a fault like any other.

Every HTTP request has an overall deadline, ``timeout_s`` from connect to the reply's
last byte (a server that drips bytes cannot hold a call longer). Timeouts, HTTP 429 (its
Retry-After honoured), 5xx, dropped connections and replies that do not parse are retried
with exponential backoff and jitter, at most ``max_retries`` times; then the call is
returned as a failure with its reason, never raised and never retried forever. Other 4xx
answers fail at once.

An endpoint that cannot be reached (connection refused, unknown host, no connection) is
tried ``connect_retries`` more times after a short pause, not the whole backoff; then that
request fails with the reason, and so does every request of the same ``complete_all`` that
had not started yet, without trying. Such attempts are no model calls: they are counted in
``StageUsage.unreachable``, not ``calls``. With ``raise_unreachable`` the gateway raises
``LLMUnreachableError`` (one line) instead of returning those failures.

No error text the gateway returns or raises holds the API key, an ``Authorization``
header or anything shaped like a key (``kgsynth.llm.redact``), even when the server echoes
the request's headers back; a reply's text has the configured key removed too.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import re
import socket
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ConfigDict, ValidationError

from kgsynth.errors import KgsynthError
from kgsynth.llm.cache import ResponseCache, cache_key
from kgsynth.llm.config import ModelConfig
from kgsynth.llm.redact import redact, redact_secrets, register_secret

OUTPUT_MODES = ("json_schema", "json_object", "prompt")
_REJECTS_FORMAT = (400, 422, 500, 501)  # how servers refuse a response_format they do not support
_COSTS = ("prompt_tokens", "completion_tokens", "latency_s", "attempts")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_CONNECT_PAUSE_S = 0.25  # before trying an unreachable endpoint again (capped by backoff_s)
_CONNECT_TIMEOUT_S = 10.0  # a TCP connection not made by then is not coming


class LLMUnreachableError(KgsynthError):
    """The model's endpoint cannot be reached (connection refused, unknown host, no
    connection): raised by a gateway made with ``raise_unreachable=True``."""


class LLMFailingError(KgsynthError):
    """``max_failures_in_a_row`` calls failed one after another: the gateway stopped asking.
    Raised at the end of the batch in which it happened, and at once by every later one."""


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

    text: str | None = None  # with an error: the last reply, when one came but did not fit the output model
    value: Any = None  # an instance of the request's output model
    error: str | None = None
    cached: bool = False
    attempts: int = 0  # requests sent for the reply (a cached one: those its first asking took)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # from the first attempt to the reply, retries included

    @property
    def ok(self) -> bool:
        return self.error is None


class StageUsage(BaseModel):
    calls: int = 0  # HTTP requests sent
    unreachable: int = 0  # attempts that reached no server (connection refused, unknown host): not calls
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def since(self, before: StageUsage) -> dict[str, float]:
        """What was counted after ``before`` (an earlier copy of this usage), field by field."""
        return {name: getattr(self, name) - getattr(before, name) for name in StageUsage.model_fields}


class _BadOutput(Exception):
    """The reply did not hold a valid instance of the output model."""


class _Retryable(Exception):
    def __init__(self, reason: str, wait_s: float | None = None):
        super().__init__(reason)
        self.wait_s = wait_s


class _Unreachable(Exception):
    """No HTTP exchange happened: the connection was refused or never made."""


class LLMGateway:
    """Sends requests to one model with bounded concurrency; see the module docstring."""

    def __init__(
        self, config: ModelConfig, cache: ResponseCache | None = None, jitter_seed: int = 0, *, raise_unreachable: bool = False
    ):
        self.config = config
        self.cache = cache
        self.raise_unreachable = raise_unreachable
        self.usage: dict[str, StageUsage] = {}
        self._mode = 0  # index into OUTPUT_MODES: the strictest form this server accepted
        self._mode_confirmed = False  # a reply came back in that form
        self._jitter = random.Random(jitter_seed)
        self._down: str | None = None  # why the endpoint could not be reached, in this complete_many
        self._failed_in_a_row = 0
        self._given_up: str | None = None  # why the gateway stopped asking (max_failures_in_a_row)
        register_secret(os.environ.get(config.api_key_env))  # so every redact() in this process removes it

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
        c = self.config
        limit = asyncio.Semaphore(c.concurrency)
        api_key = os.environ.get(c.api_key_env)
        register_secret(api_key)
        self._down = None
        # the client's own limits are per operation; the deadline per request is _send's
        timeout = openai.Timeout(c.timeout_s + 1.0, connect=min(c.timeout_s, _CONNECT_TIMEOUT_S))
        async with openai.AsyncOpenAI(
            base_url=c.base_url, api_key=api_key or "unused", timeout=timeout, max_retries=0  # local servers need no key
        ) as client:

            async def one(request: Request) -> LLMResult:
                async with limit:
                    return await self._complete(client, request)

            results = list(await asyncio.gather(*(one(r) for r in requests)))
        if self.raise_unreachable and self._down is not None:
            raise LLMUnreachableError(redact(f"cannot reach the model {c.model} at {c.base_url}: {self._down}"))
        if self._given_up is not None:
            raise LLMFailingError(redact(f"stopped asking the model {c.model} at {c.base_url}: {self._given_up}"))
        return results

    # ------------------------------------------------------------------ one request
    async def _complete(self, client: openai.AsyncOpenAI, request: Request) -> LLMResult:
        usage = self.usage.setdefault(request.stage, StageUsage())
        key = cache_key(self._describe(request))
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            usage.cache_hits += 1
            try:
                result = self._result(request, redact_secrets(hit["text"]), cached=True)
            except _Retryable as e:  # a reply that never parsed: asking again would get it again
                usage.failures += 1
                return LLMResult(error=redact(f"{self.config.model} at {self.config.base_url}: {e} (cached reply)"), cached=True,
                                 text=redact_secrets(hit["text"]))
            # the first reply's cost, so a cached re-run reports what the answers took
            return result.model_copy(update={k: hit[k] for k in _COSTS if k in hit})
        attempts, reason, refused, unreachable = 0, "", 0, False
        unparsed = None  # the last reply that did not fit the output model: a caller may use part of it
        started = time.perf_counter()
        for attempt in range(self.config.max_retries + 1):
            if self._down is not None or self._given_up is not None:  # found by another request: not asked
                reason = self._down or self._given_up or ""
                break
            attempts, unreachable = attempt + 1, False
            try:
                text, prompt_tokens, completion_tokens = await self._send(client, request, usage)
                text = redact_secrets(text)  # a reply that repeats the key keeps it out of the cache and the outputs
                costs = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                         "latency_s": round(time.perf_counter() - started, 3), "attempts": attempts}
                if self.cache is not None:  # every reply the server gave, parsed or not: a re-run asks nothing again
                    self.cache.put(key, {"text": text, **costs})
                unparsed = text
                result = self._result(request, text, attempts=attempts)
            except _Retryable as e:
                reason = str(e)
                if attempt < self.config.max_retries:
                    await asyncio.sleep(self._delay(attempt, e.wait_s))
                continue
            except _Unreachable as e:
                reason, refused, unreachable = str(e), refused + 1, True
                if refused > self.config.connect_retries:
                    break
                if attempt < self.config.max_retries:
                    await asyncio.sleep(min(self.config.backoff_s, _CONNECT_PAUSE_S))
                continue
            except _Permanent as e:
                reason = str(e)
                break
            self._failed_in_a_row = 0
            return result.model_copy(update=costs)
        if unreachable:  # its last attempt reached no server: the batch's requests not yet tried fail without trying
            self._down = reason
        elif attempts:
            self._count_failure(reason)
        usage.failures += 1
        return LLMResult(error=redact(f"{self.config.model} at {self.config.base_url}: {reason}"), attempts=attempts,
                         text=unparsed if request.output is not None else None)

    def _count_failure(self, reason: str) -> None:
        self._failed_in_a_row += 1
        budget = self.config.max_failures_in_a_row
        if budget is not None and self._failed_in_a_row >= budget and self._given_up is None:
            self._given_up = (f"{self._failed_in_a_row} calls in a row failed, the last with {reason}; "
                              "fix the endpoint or the model, then run the same command again (answers so far are kept)")

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
        deadline = self.config.timeout_s
        for mode in modes:
            started, reached = time.perf_counter(), True
            try:
                create = client.chat.completions.create(**self._arguments(request, OUTPUT_MODES[mode]))
                response = await asyncio.wait_for(create, deadline)
            except TimeoutError:
                raise _Retryable(_late(deadline)) from None
            except openai.APIStatusError as e:
                refused = request.output and not self._mode_confirmed and e.status_code in _REJECTS_FORMAT
                if refused and mode < len(OUTPUT_MODES) - 1:
                    continue  # before any form worked here, this may be a refusal of the form: try the next
                raise _classify(e, self.config.api_key_env) from None
            except openai.APIConnectionError as e:
                if (why := _unreachable(e, min(deadline, _CONNECT_TIMEOUT_S))) is not None:
                    reached = False
                    raise _Unreachable(why) from None
                if isinstance(e, openai.APITimeoutError):
                    raise _Retryable(_late(deadline)) from None
                raise _Retryable(redact(f"{type(e).__name__}: {e}{_root(e)}")) from None  # a dropped connection
            except (openai.APIError, ValueError) as e:  # unparsable bodies
                raise _Retryable(redact(_unparsable(e))) from None
            finally:
                usage.seconds += time.perf_counter() - started
                if reached:
                    usage.calls += 1
                else:
                    usage.unreachable += 1
            if not isinstance(response, ChatCompletion):  # e.g. a web page at a wrong base URL, with HTTP 200
                raise _Permanent(f"the reply is not an OpenAI chat completion: {_short(redact(str(response)))}")
            if response.choices is None:  # JSON of another API: openai builds it unchecked
                raise _Permanent("the reply is not an OpenAI chat completion: it has no 'choices'")
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


def _classify(error: openai.APIStatusError, key_env: str) -> Exception:
    status = error.status_code
    reason = f"HTTP {status}: {_short(redact(_error_body(error)))}{_status_hint(status, key_env)}"  # redacted before cut
    if status == 429:
        return _Retryable(reason, _retry_after(error))
    if status >= 500 or status in (408, 409):
        return _Retryable(reason)
    return _Permanent(reason)


def _error_body(error: openai.APIStatusError) -> str:
    """What the server said: the error message of its JSON body, else the first line of its
    text (openai's own message is a bare "Error code: 500" for a body that is not JSON)."""
    if isinstance(error.body, dict) and error.body.get("message"):
        return str(error.body["message"])
    text = error.response.text.strip() if error.response is not None else ""
    return text.splitlines()[0] if text else error.message


def _status_hint(status: int, key_env: str) -> str:
    if status in (401, 403):
        return f" (the server refused the API key: set {key_env} to one it accepts, or api_key_env to the variable holding it)"
    if status in (404, 405):
        return " (no chat completions there: give the API root as base_url, e.g. http://127.0.0.1:8000/v1)"
    return ""


def _unparsable(error: Exception) -> str:
    """Why a reply's body could not be read, in words a user can act on."""
    if isinstance(error, UnicodeDecodeError):
        return "the reply is not UTF-8 text"
    if isinstance(error, json.JSONDecodeError):
        return f"the reply is not JSON: {_short(error.doc) if error.doc.strip() else 'an empty body'}"
    return f"{type(error).__name__}: {error}"


def _late(deadline: float) -> str:
    return f"no complete reply within {deadline:g} s (timeout_s)"


def _chain(error: BaseException) -> list[BaseException]:
    """The error and its causes, outermost first."""
    chain: list[BaseException] = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def _unreachable(error: openai.APIConnectionError, connect_s: float) -> str | None:
    """Why no HTTP exchange happened, in a few words, or None when the connection was made
    (and then dropped or timed out). httpx's ConnectError/ConnectTimeout mark the former."""
    chain = _chain(error)
    kinds = {type(e).__name__ for e in chain}
    if not kinds & {"ConnectError", "ConnectTimeout"}:
        return None
    for e in chain:
        if isinstance(e, ConnectionRefusedError):
            return "connection refused"
        if isinstance(e, socket.gaierror):
            return f"cannot resolve the host name ({e.strerror or e})"
    if "ConnectTimeout" in kinds:
        return f"no connection within {connect_s:g} s"
    for e in reversed(chain):
        if isinstance(e, OSError) and str(e):
            return f"cannot connect ({_short(redact(e.strerror or str(e)))})"
    return "cannot connect"


def _root(error: BaseException) -> str:
    """The innermost cause, when it says more than the outer error: ' (RemoteProtocolError: ...)'."""
    root = _chain(error)[-1]
    return "" if root is error or not str(root) else f" ({type(root).__name__}: {_short(redact(str(root)))})"


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
