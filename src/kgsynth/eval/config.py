"""The evaluation configuration: one pydantic tree, unknown keys rejected, TOML or YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from kgsynth._config import Strict, http_url_or_none
from kgsynth.errors import KgsynthError
from kgsynth.llm import FailuresInARow, ModelConfig
from kgsynth.llm.cache import default_cache_path

Rendering = Literal["transcript", "chat"]
Baseline = Literal["closed_book", "oracle"]
KV_ANSWER_TOKENS = 48  # a UUID is up to 36 tokens (one per character), a few more in quotes or a code fence


class EvalModel(Strict):
    """The model under evaluation, behind an OpenAI-compatible endpoint."""

    model: str = Field("local", min_length=1)
    base_url: str | None = Field(None, description="required here or as kgsynth eval --base-url")
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(48, ge=1, description="answers are short; a cap keeps a rambling model cheap")
    context_tokens: int | None = Field(
        None, ge=256, description="the model's context window: sweep lengths whose prompt would not fit are skipped"
    )
    concurrency: int = Field(4, ge=1)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(4, ge=0)
    max_failures_in_a_row: FailuresInARow = 20
    cache: str | None = Field(None, description="response cache file (default: ~/.cache/kgsynth/llm-cache.sqlite)")

    _url = field_validator("base_url")(http_url_or_none)

    def gateway_config(self) -> ModelConfig:
        if not self.base_url:
            raise KgsynthError("no endpoint for the model under evaluation: pass --base-url or set model.base_url")
        return ModelConfig(
            base_url=self.base_url, model=self.model, api_key_env=self.api_key_env, temperature=self.temperature,
            max_tokens=self.max_tokens, seed=0, timeout_s=self.timeout_s, max_retries=self.max_retries,
            concurrency=self.concurrency, max_failures_in_a_row=self.max_failures_in_a_row,
        )

    def cache_path(self) -> Path:
        return Path(self.cache).expanduser() if self.cache else default_cache_path()


class LengthSweep(Strict):
    """The same items re-rendered with distractor turns up to each target length (source 001)."""

    targets: tuple[int, ...] = (1000, 2000, 4000, 8000, 16000)
    items: int = Field(40, ge=1, description="items drawn (seeded) from the dataset for the sweep")
    break_ratio: float = Field(
        0.8, gt=0, le=1, description="the break point is the first length whose accuracy falls below this share of the shortest's"
    )

    @model_validator(mode="after")
    def _ascending(self) -> LengthSweep:
        if not self.targets or list(self.targets) != sorted(set(self.targets)):
            raise ValueError("length_sweep.targets must be distinct token counts in ascending order")
        return self


class PositionSweep(Strict):
    """The same items with the whole dialogue moved through padding from start to end (source 004)."""

    depths: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    target_tokens: int = Field(1000, ge=1, description="context length every depth is rendered at")
    items: int = Field(40, ge=1)

    @model_validator(mode="after")
    def _depths_in_range(self) -> PositionSweep:
        if not self.depths or any(not 0 <= d <= 1 for d in self.depths) or list(self.depths) != sorted(set(self.depths)):
            raise ValueError("position_sweep.depths must be distinct shares in [0, 1], ascending")
        return self


class KVProbe(Strict):
    """Key-value retrieval (source 004): a JSON object of random UUID keys and values, the
    queried pair moved from the first place (0) to the last (1); scored strictly."""

    key_counts: tuple[int, ...] = Field(
        (10, 25, 50, 100), description="pairs per object; those that would not fit model.context_tokens are skipped"
    )
    positions: tuple[float, ...] = Field(
        (0.0, 0.25, 0.5, 0.75, 1.0), description="where the queried pair sits: 0 first, 1 last"
    )
    trials: int = Field(4, ge=1, description="objects per key count (seeded by the run's seed), asked at each position")

    @model_validator(mode="after")
    def _sweeps_in_order(self) -> KVProbe:
        if not self.key_counts or min(self.key_counts) < 2 or list(self.key_counts) != sorted(set(self.key_counts)):
            raise ValueError("kv_probe.key_counts must be distinct counts of at least 2, ascending")
        positions = list(self.positions)
        if not positions or any(not 0 <= p <= 1 for p in positions) or positions != sorted(set(positions)):
            raise ValueError("kv_probe.positions must be distinct shares in [0, 1], ascending")
        return self


class EvalConfig(Strict):
    """Everything ``kgsynth eval`` needs besides the dataset."""

    model: EvalModel = EvalModel()
    rendering: Rendering = Field("transcript", description="the dialogue as one transcript message, or as chat turns")
    rules: Literal["none", "given", "invented"] = Field(
        "none", description="none: the model must know the rule (the benchmark's premise); given: the item's rule "
        "statement goes into the system prompt (for graphs whose rules no model can know); invented: given for the "
        "graph's own rules, not for library rules a model can know (metadata.rule_origin)"
    )
    baselines: tuple[Baseline, ...] = ("closed_book", "oracle")
    probes: bool = Field(True, description="classify each wrong answer's error source with a fact probe")
    limit: int | None = Field(None, ge=1, description="evaluate only the first N items")
    seed: int = 0
    bootstrap: int = Field(1000, ge=100, description="bootstrap resamples for confidence intervals")
    confidence: float = Field(0.95, gt=0.5, lt=1)
    length_sweep: LengthSweep | None = None
    position_sweep: PositionSweep | None = None
    kv_probe: KVProbe | None = Field(None, description="the key-value retrieval probe; off unless configured")
    batch: int = Field(16, ge=1, description="requests sent together; progress is saved after each batch")

    @model_validator(mode="after")
    def _probes_need_the_oracle(self) -> EvalConfig:
        if self.probes and "oracle" not in self.baselines:
            raise ValueError("probes need the oracle baseline (it is the rule probe): add 'oracle' to baselines or set probes = false")
        return self

    @model_validator(mode="after")
    def _kv_answers_fit(self) -> EvalConfig:
        if self.kv_probe and self.model.max_tokens < KV_ANSWER_TOKENS:
            raise ValueError(f"kv_probe needs model.max_tokens >= {KV_ANSWER_TOKENS}: a UUID alone is up to 36 tokens, "
                             "and a cut answer would be scored wrong")
        return self
