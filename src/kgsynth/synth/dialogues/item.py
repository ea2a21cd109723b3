"""Items: a dialogue, a question, a format instruction and a gold answer, with metadata
for slicing results later (difficulty, category, format, rule kind, shape, positions,
length). An item is a scenario worded in one language."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kgsynth.formats.answers import AnswerFormat, Constraints, format_instruction
from kgsynth.queries import CachedModel
from kgsynth.synth.dialogues.dialogue import Dialogue, DialogueSettings, Turn, build_dialogue, count_tokens, transcript
from kgsynth.synth.dialogues.haystack import pad_dialogue
from kgsynth.synth.scenarios.scenario import NO_RULE, Difficulty, Scenario

PositionBucket = Literal["start", "middle", "end"]


class ItemMetadata(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario_id: str
    subgraph_id: str
    language: str
    domain: str
    category: str
    topic: str
    difficulty: Difficulty
    answer_format: AnswerFormat
    rule_kind: str
    rule_iri: str | None
    rule_origin: str = "none"  # "library" (common knowledge a model can know), "invented" (the graph's own), "none"
    shape: str
    variant: str
    turns: int
    fact_turn_count: int
    links: int  # reasoning steps: inputs + bridged + summed + the operation + corrections + confusable turns
    inputs: int = 0  # facts the answer reads (0 in datasets before the count)
    bridged: int = 0  # of them, facts about a multi-hop bridge or member: a join each
    summed: int = 0  # additions of a summed input (k purchases: k - 1)
    fact_turns: tuple[int, ...]  # turn index of each fact-bearing turn
    fact_to_turn: tuple[int, ...]  # for each source fact, the turn that states its final value
    fact_values: tuple[str, ...]  # each source fact's value as written in the dialogue
    noise_turns: int
    clarifications: int
    reasks: int
    corrections: int
    confusable_turns: int = 0  # turns stating a fact of another entity of the same kind (0 in datasets before them)
    padding_turns: int
    position: PositionBucket
    token_length: int
    speakers: tuple[str, ...]
    source_triples: tuple[str, ...]
    sources: tuple[str, ...] = ()  # ids of the documents stating the source triples (a graph kgsynth ingest wrote)
    answer_in_dialogue: bool
    world_knowledge: bool = False  # a model can answer it from world knowledge (real places' facts), kept by config
    seed: int


class CriterionScore(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    score: int
    rationale: str


class Review(BaseModel):
    """An LLM judge's verdict on an item: each rubric criterion scored 0-2 with a reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    total: int
    criteria: tuple[CriterionScore, ...]


class Item(CachedModel):  # model_copy drops the cached transcript
    """One benchmark item (see ``ItemMetadata`` for what it is made of); ``review`` is the
    judge's verdict when the judge filter ran."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    language: str
    dialogue: tuple[Turn, ...]
    question: str
    format_instruction: str
    answer_format: AnswerFormat
    constraints: Constraints
    gold: str | list[str]
    gold_aliases: list[str] = []
    metadata: ItemMetadata
    review: Review | None = None

    @cached_property  # several filters read it
    def transcript(self) -> str:
        return transcript(self.dialogue)


def position_bucket(fact_turns: tuple[int, ...], turns: int) -> PositionBucket:
    """Where the fact turns sit on average: first, middle or last third of the dialogue."""
    share = sum(fact_turns) / len(fact_turns) / max(turns - 1, 1)
    return "start" if share < 1 / 3 else "middle" if share < 2 / 3 else "end"


def item_rng(seed: int, scenario: Scenario, lang: str) -> random.Random:
    """Each item draws from its own stream, so skipping items on resume changes nothing else."""
    return random.Random(f"{seed}:{scenario.id}:{lang}")


def make_item(scenario: Scenario, lang: str, settings: DialogueSettings, seed: int, others: Sequence[Scenario] = ()) -> Item:
    """The template item of ``scenario`` in ``lang``; ``others`` (same kind, other entities)
    lend the facts its confusable turns state; with ``settings.target_tokens`` the dialogue
    is padded to that length (``haystack.pad_dialogue``), drawing on the same random stream."""
    rng = item_rng(seed, scenario, lang)
    dialogue = build_dialogue(scenario, lang, settings, rng, others)
    if settings.target_tokens:
        dialogue = pad_dialogue(dialogue, scenario, lang, settings.target_tokens, rng, others)
    return item_from_dialogue(scenario, lang, dialogue, seed)


def item_from_dialogue(scenario: Scenario, lang: str, dialogue: Dialogue, seed: int, question: str | None = None) -> Item:
    """Wrap a dialogue (from any verbaliser) into an item with its metadata; ``question``
    replaces the scenario's (a reworded one asking the same)."""
    kinds = Counter(t.kind for t in dialogue.turns)
    stated_in = {}  # fact -> the first fact turn stating it
    for i, turn in enumerate(dialogue.turns):
        if turn.kind == "fact":
            for fact in turn.facts:
                stated_in.setdefault(fact, i)
    text = dialogue.text
    question = question or scenario.question[lang]
    instruction = format_instruction(scenario.answer_format, scenario.constraints, lang)
    metadata = ItemMetadata(
        scenario_id=scenario.id,
        subgraph_id=scenario.subgraph_id,
        language=lang,
        domain=scenario.cell.domain,
        category=scenario.cell.category,
        topic=scenario.topic[lang],
        difficulty=scenario.cell.difficulty,
        answer_format=scenario.answer_format,
        rule_kind=scenario.cell.rule_kind,
        rule_iri=scenario.rule.iri if scenario.rule else None,
        rule_origin=scenario.rule.origin.name if scenario.rule else NO_RULE,
        shape=scenario.shape.value,
        variant=scenario.variant,
        turns=len(dialogue.turns),
        fact_turn_count=len(dialogue.fact_turns),
        links=scenario.reasoning.base + kinds["misstatement"] + kinds["confusable"],
        inputs=scenario.reasoning.inputs,
        bridged=scenario.reasoning.bridged,
        summed=scenario.reasoning.summed,
        fact_turns=dialogue.fact_turns,
        fact_to_turn=tuple(stated_in[f] for f in range(len(scenario.facts))),
        fact_values=dialogue.fact_values,
        noise_turns=kinds["noise"],
        clarifications=kinds["clarify_q"],
        reasks=kinds["reask"],
        corrections=kinds["misstatement"],
        confusable_turns=kinds["confusable"],
        padding_turns=dialogue.padding_turns,
        position=position_bucket(dialogue.fact_turns, len(dialogue.turns)),
        token_length=count_tokens(text),
        speakers=tuple(dict.fromkeys(t.speaker for t in dialogue.turns)),
        source_triples=scenario.source_triples,
        sources=scenario.sources,
        answer_in_dialogue=scenario.answer_in_dialogue,
        world_knowledge=scenario.world_knowledge,
        seed=seed,
    )
    content = json.dumps([scenario.id, lang, text, question], ensure_ascii=False)
    item = Item(
        id=hashlib.sha256(content.encode()).hexdigest()[:16],
        language=lang,
        dialogue=dialogue.turns,
        question=question,
        format_instruction=instruction,
        answer_format=scenario.answer_format,
        constraints=scenario.constraints,
        gold=scenario.gold[lang],
        gold_aliases=scenario.gold_aliases.get(lang, []),
        metadata=metadata,
    )
    item.__dict__["transcript"] = text  # joined above already: the filters read it again
    return item
