"""How to reach one model: endpoint, model name, sampling parameters, retry policy."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# The failure budget, as every model config of the product spells it: an endpoint that
# answers nothing usable is not asked for every item.
FailuresInARow = Annotated[int | None, Field(
    ge=1, description="calls failing one after another (each after its retries) before the gateway stops asking and the "
    "run stops with the last one's reason; none: never stop"
)]


class ModelConfig(BaseModel):
    """One model behind an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp).

    The API key is read from the environment variable named by ``api_key_env`` when a
    request is made; it is never stored in a config, a cache or an output.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(description="e.g. http://127.0.0.1:8001/v1")
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = 0
    timeout_s: float = Field(
        60.0, gt=0, description="deadline of one HTTP request, from connect to the reply's last byte; a late one is retried"
    )
    max_retries: int = Field(4, ge=0, description="after the first attempt; then the call is recorded as failed")
    connect_retries: int = Field(
        1, ge=0, description="retries (within max_retries, after a short pause) of an endpoint that refused the connection or could not be reached"
    )
    backoff_s: float = Field(0.5, ge=0, description="first retry delay; doubles per retry, with jitter")
    max_backoff_s: float = Field(30.0, ge=0)
    concurrency: int = Field(4, ge=1, description="requests in flight at once")
    max_failures_in_a_row: FailuresInARow = 20
