"""The one place that talks to a model: an OpenAI-compatible gateway with typed outputs,
retries, a persistent cache and usage counts per stage. It knows nothing of graphs or
items; prompts live with their users."""

from kgsynth.llm.cache import ResponseCache, cache_key
from kgsynth.llm.config import FailuresInARow, ModelConfig
from kgsynth.llm.gateway import (
    OUTPUT_MODES,
    LLMFailingError,
    LLMGateway,
    LLMResult,
    LLMUnreachableError,
    Request,
    StageUsage,
    parse_output,
)
from kgsynth.llm.redact import REDACTED, redact, register_secret

__all__ = [
    "OUTPUT_MODES",
    "FailuresInARow",
    "REDACTED",
    "LLMFailingError",
    "LLMGateway",
    "LLMResult",
    "LLMUnreachableError",
    "ModelConfig",
    "Request",
    "ResponseCache",
    "StageUsage",
    "cache_key",
    "parse_output",
    "redact",
    "register_secret",
]
