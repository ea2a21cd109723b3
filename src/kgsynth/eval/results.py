"""Per-answer results: one typed row per item and condition (and per fact probe)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from kgsynth._collector import collector_paused
from kgsynth.eval.dataset import parse_rows
from kgsynth.synth.dialogues.item import ItemMetadata

RecordCondition = Literal["main", "closed_book", "oracle", "length", "position", "fact_probe", "rule_probe", "kv"]
RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"


class KVQuery(BaseModel):
    """What a key-value probe row asked (``kgsynth.eval.kv``): the queried ``key`` of an
    object of ``keys`` pairs, shown at ``index``, and the ``value`` a right answer gives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keys: int
    trial: int
    index: int
    key: str
    value: str


class AnswerRecord(BaseModel):
    """One model answer and its strict score.

    ``param`` is the target length (``length``), the depth 0..1 (``position``), the fact
    index (``fact_probe``) or the queried pair's position 0..1 (``kv``). A probe's ``value``
    is what it asked for (the fact value, or the rule's statement for ``rule_probe``) and
    its ``correct`` whether the answer gave it. A ``kv`` row asks no item: ``kv`` holds what
    it asked and the value wanted, ``item_id`` names its JSON object, ``metadata`` is None
    and ``value`` is the UUID answered. ``failure`` is set when the request failed after
    every retry (such rows count in no metric; a re-run asks again).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    item_id: str
    condition: RecordCondition
    param: float | None = None
    model: str
    rendering: str
    answer: str | None
    value: str | None
    syntactic_ok: bool
    value_matches: bool
    correct: bool
    token_f1: float | None = None
    error_source: str | None = None
    failure: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    context_tokens: int  # the shown dialogue's (kv: JSON object's) tokens (kgsynth.synth.dialogues.dialogue.count_tokens)
    turns: int
    fact_turn_indices: tuple[int, ...]
    fact_depth: float | None  # mean fact-turn index over the last index: 0 start, 1 end (kv: the pair's index)
    metadata: ItemMetadata | None = None
    kv: KVQuery | None = None

    @model_validator(mode="after")
    def _an_item_or_a_kv_query(self) -> AnswerRecord:
        if (self.condition == "kv") != (self.kv is not None) or (self.kv is None) == (self.metadata is None):
            raise ValueError("a kv row has kv and no metadata; every other row has metadata and no kv")
        return self


def read_results(folder: Path) -> list[AnswerRecord]:
    """The rows of ``folder/results.jsonl``; a damaged row is one line naming the file and the line."""
    with collector_paused():  # thousands of models, no cycles: see kgsynth._collector
        return parse_rows(folder / RESULTS_FILE, AnswerRecord.model_validate)
