"""The pressure configuration: one pydantic tree, unknown keys rejected, TOML or YAML."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from kgsynth._config import Strict
from kgsynth.eval.config import EvalModel
from kgsynth.pressure.claims import Confusability

PolicyName = Literal["learned", "random", "farm", "are_you_sure"]


class ClaimsConfig(Strict):
    """Which claims ``kgsynth pressure claims`` builds."""

    confusability: tuple[Confusability, ...] = Field(
        (Confusability.high,), min_length=1, description="levels, each claim at one drawn by seed: high, medium, low")

    @field_validator("confusability", mode="before")
    @classmethod
    def _one_level(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value  # confusability = "high" names one level
    world_languages: tuple[Literal["en", "ru"], ...] = ("en",)
    world_n: int = Field(60, ge=1, description="world-knowledge claims per language")
    world_relations: tuple[str, ...] = Field((), description="relation IRIs to draw world-knowledge facts from (default: any)")
    in_context_n: int | None = Field(None, ge=1, description="in-context claims at most (default: one per simple item)")


class PressureConfig(Strict):
    """Everything ``kgsynth pressure train | run`` needs besides the claims."""

    model: EvalModel = EvalModel(max_tokens=64)
    claims: ClaimsConfig = ClaimsConfig()
    seed: int = 0
    max_steps: int = Field(4, ge=1, le=8, description="pushing turns at most per episode")
    learner: Literal["thompson", "q"] = Field(
        "thompson", description="thompson: a bandit over (step, action), cheap against a real model; q: tabular Q-learning"
    )
    train_episodes: int = Field(200, ge=1)
    train_share: float = Field(0.5, gt=0, lt=1, description="share of the claims trained on; the rest are held out")
    policies: tuple[PolicyName, ...] = ("learned", "random", "farm", "are_you_sure")
    bootstrap: int = Field(2000, ge=100)
    confidence: float = Field(0.95, gt=0.5, lt=1)
