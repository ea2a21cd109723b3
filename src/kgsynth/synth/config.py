"""The synthesis configuration: one pydantic tree, unknown keys rejected, TOML or YAML."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kgsynth.errors import KgsynthError
from kgsynth.queries import Shape
from kgsynth.synth.dialogue import DialogueSettings
from kgsynth.synth.formats import AnswerFormat
from kgsynth.synth.scenario import Difficulty

FILTERS = ("structure", "rule_leakage", "answer_stated")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GraphConfig(_Strict):
    paths: tuple[str, ...] = ("data/demo",)
    label_languages: tuple[str, ...] = ("en", "ru")


class SamplingConfig(_Strict):
    shapes: tuple[Shape, ...] = (Shape.rule_application,)
    subgraphs_per_shape: int = Field(20_000, ge=1, description="most subgraphs drawn per shape (multihop: per hop count)")
    per_anchor: int = Field(2, ge=1)


class DatasetConfig(_Strict):
    n: int = Field(600, ge=1, description="items wanted in all (every language counted)")
    seed: int = 0
    languages: tuple[str, ...] = ("en", "ru")
    difficulties: tuple[Difficulty, ...] = tuple(Difficulty)
    formats: tuple[AnswerFormat, ...] = tuple(AnswerFormat)
    version: str = "0.1.0"

    @model_validator(mode="after")
    def _languages_known(self) -> DatasetConfig:
        unknown = set(self.languages) - {"en", "ru"}
        if unknown or not self.languages or len(set(self.languages)) != len(self.languages):
            raise ValueError(f"languages must be distinct values out of en, ru (got {list(self.languages)})")
        return self


class FilterConfig(_Strict):
    order: tuple[str, ...] = FILTERS

    @model_validator(mode="after")
    def _filters_known(self) -> FilterConfig:
        unknown = [f for f in self.order if f not in FILTERS]
        if unknown:
            raise ValueError(f"unknown filter {unknown[0]!r}; offline filters are {', '.join(FILTERS)}")
        return self


class SynthConfig(_Strict):
    """Everything ``kgsynth synth`` needs; defaults run on the demo graph."""

    graph: GraphConfig = GraphConfig()
    sampling: SamplingConfig = SamplingConfig()
    dataset: DatasetConfig = DatasetConfig()
    dialogue: DialogueSettings = DialogueSettings()
    filters: FilterConfig = FilterConfig()

    @model_validator(mode="after")
    def _labels_for_every_language(self) -> SynthConfig:
        missing = [lang for lang in self.dataset.languages if lang not in self.graph.label_languages]
        if missing:
            raise ValueError(f"graph.label_languages lacks {missing}: items in those languages would show other languages' labels")
        return self


def load_config(path: str | Path) -> SynthConfig:
    """Read a TOML (or YAML) config; any error is one line naming the file and the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise KgsynthError(f"cannot read config {path}: {e.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text)
    except Exception as e:  # noqa: BLE001 - every parser's own error type, reported in one line
        raise KgsynthError(f"config {path} does not parse: {str(e).splitlines()[0]}") from None
    try:
        return SynthConfig.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise KgsynthError(f"config {path}: {where}: {first['msg']}") from None
