"""The template verbaliser: a scenario -> a 2-3 speaker dialogue, with no model.

Every fact value sits in the turn its piece is mapped to; the rule and (for computed
answers) the answer never appear. The scenario's level fixes the turn range and the
corrections (a value first misstated, then corrected: the gold uses the final value) and
confusable turns (another entity's value of the topic's relation) it needs to reach its
reasoning steps. Knobs: neutral noise turns (from a pool of the entity's domain),
clarifications, re-asks, further corrections and confusable turns by chance while the
item stays within its level, the position of the fact turns, and padding to a target
token count with distractor turns that mention no entity or value of the scenario.

The dialogue reads as a conversation: each free turn answers the one before it (a
greeting is returned, a statement acknowledged, a pause or a remark answered), no line is
said twice, no one speaks twice in a row, a value is misstated only after what it belongs
to is introduced and only where no other value of that relation could be meant, and a
correction always says it is one.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kgsynth.errors import KgsynthError
from kgsynth.formats import locale, morph
from kgsynth.formats.answers import has_any_word, has_word, numbers_in
from kgsynth.queries import Fact, Node
from kgsynth.synth.dialogues.phrases import NOISE, PAUSES, PHRASES, ROLES, SPEAKERS, YES_NO
from kgsynth.synth.dialogues.statements import STATEMENTS
from kgsynth.synth.scenarios.scenario import (
    CURRENCIES,
    DIFFICULTY,
    RESERVED_TURNS,
    Difficulty,
    Scenario,
    carried_facts,
    merge_pieces,
    misstatable,
    said_in_name,
    several_valued,
)

TurnKind = Literal[
    "opening", "reply", "fact", "misstatement", "reask", "restate", "ack", "prompt", "clarify_q", "clarify_a", "noise",
    "closing", "distractor", "confusable",
]
Position = Literal["spread", "start", "middle", "end"]
_WORD_RUN = re.compile(r"\w+")
_MONEY_ROLES = frozenset({"amount", "limit", "threshold"})
_MEASURED_ROLES = frozenset({"amount", "denominator"})  # the input kgs:sourceUnit names the unit of


def count_tokens(text: str) -> int:
    """Approximate tokens (words and punctuation marks): deterministic and model-free.
    Evaluation may re-count with a model's own tokenizer."""
    # each word as one character, then every character but whitespace is a token: the
    # count of r"\w+|[^\w\s]" matches, twice as fast as listing them
    return len("".join(_WORD_RUN.sub("a", text).split()))


class DialogueSettings(BaseModel):
    """Knobs of dialogue construction (difficulty comes from the scenario's cell)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speakers: tuple[int, int] = (2, 3)
    noise: float = Field(0.3, ge=0, le=1, description="share of free turns that are neutral noise")
    clarifications: float = Field(0.3, ge=0, le=1, description="chance of a clarification question and answer")
    reasks: float = Field(0.2, ge=0, le=1, description="chance that a fact is asked for again and restated")
    corrections: float = Field(0.2, ge=0, le=1, description="chance that a value is misstated, then corrected, beyond "
                               "what the item's level needs, while the item stays within its level")
    position: Position = "spread"
    # exact fact-turn indices per difficulty (overrides position): a scenario with fewer fact turns takes the
    # first ones, one with more merges its facts into that many turns
    fact_turn_indices: dict[Difficulty, tuple[int, ...]] | None = None
    target_tokens: int | None = Field(None, ge=1, description="pad with distractor turns up to this many tokens "
                                      "(make_item, through haystack.pad_dialogue)")
    confusables: float = Field(
        0.2, ge=0, le=1, description="chance that a free turn states a fact of another entity of the same kind "
        "(another booking and its amount), so an answer needs the facts kept apart by entity; beyond what the item's "
        "level needs, while the item stays within its level")

    @model_validator(mode="after")
    def _speakers_in_range(self) -> DialogueSettings:
        low, high = self.speakers
        if not 2 <= low <= high <= 3:
            raise ValueError("speakers must be a range within 2..3, e.g. [2, 3]")
        for difficulty, indices in (self.fact_turn_indices or {}).items():
            low = DIFFICULTY[difficulty].turns[0]
            if not indices or len(set(indices)) != len(indices) or not all(0 <= i < low for i in indices):
                raise ValueError(
                    f"fact_turn_indices.{difficulty.value} needs one or more distinct indices below {low} "
                    f"(the fewest turns a {difficulty.value} dialogue has)"
                )
        return self


class Turn(BaseModel):
    model_config = ConfigDict(frozen=True)

    speaker: str
    role: str
    text: str
    kind: TurnKind
    facts: tuple[int, ...] = ()  # scenario facts whose (final) value this turn states


class Dialogue(BaseModel):
    model_config = ConfigDict(frozen=True)

    turns: tuple[Turn, ...]
    fact_turns: tuple[int, ...]  # turn index of each piece, in piece order
    fact_values: tuple[str, ...]  # each scenario fact's value as written in the dialogue
    padding_turns: int = 0

    @property
    def text(self) -> str:
        return transcript(self.turns)


def transcript(turns: Sequence[Turn]) -> str:
    """The dialogue as one text, a ``Speaker: words`` line per turn."""
    return "\n".join(f"{t.speaker}: {t.text}" for t in turns)


class VerbaliserError(KgsynthError):
    """A dialogue cannot be built as asked (e.g. fact-turn indices outside the dialogue)."""


# ---------------------------------------------------------------------------- values
def render_value(fact: Fact, scenario: Scenario, lang: str) -> str:
    """A fact's value as a speaker of ``lang`` would say it."""
    return _render(fact.object, fact, scenario, lang, fact.object.python if fact.object.kind == "literal" else None)


def _render(node: Node, fact: Fact, scenario: Scenario, lang: str, value: object) -> str:
    if node.kind == "iri":
        return node.label_in(lang)
    unit = scenario.rule.unit if scenario.rule else None
    if isinstance(value, bool):
        return YES_NO[lang][0 if value else 1]
    if node.is_year:  # a year, not an amount: "2013", never "2,013"
        return node.value if value == node.python else str(value)  # as written, or a slip of it
    if isinstance(value, int | Decimal):
        value = locale.as_written(value) if isinstance(value, Decimal) else value
        if fact.role in _MONEY_ROLES and unit in CURRENCIES:
            return locale.format_money(Decimal(value), unit, lang)
        if fact.role in _MEASURED_ROLES and scenario.rule.source_unit:  # a conversion's input, a ratio's denominator
            return locale.format_quantity(value, scenario.rule.source_unit, lang)
        return locale.format_number(value, lang)
    if isinstance(value, dt.datetime):
        return locale.format_date(value.date(), lang)
    if isinstance(value, dt.date):
        return locale.format_date(value, lang)
    return node.value


def _wrong_value(value: object, rng: random.Random) -> object | None:
    """A plausible misstatement of a numeric or date value (never equal to it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value + rng.choice((-3, -2, -1, 1, 2, 3)) if value > 3 else value + rng.randint(1, 3)
    if isinstance(value, Decimal):
        exponent = min(value.as_tuple().exponent, 0) if value == value.to_integral_value() else value.as_tuple().exponent
        step = Decimal(1).scaleb(max(exponent, -2))
        scale = Decimal(rng.choice(("0.9", "0.95", "1.05", "1.1")))
        wrong = (value * scale).quantize(step) if value >= 10 else value + step * rng.randint(1, 3)
        return wrong if wrong != value else value + step
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=rng.choice((-5, -3, -2, 2, 3, 5)))
    return None


# ---------------------------------------------------------------------------- building
def build_dialogue(scenario: Scenario, lang: str, settings: DialogueSettings, rng: random.Random,
                   others: Sequence[Scenario] = ()) -> Dialogue:
    """One dialogue for ``scenario`` in ``lang``; the same rng state gives the same dialogue.
    ``others`` are scenarios about other entities of the same kind whose facts the free
    turns may state (see :func:`_place_confusables`).

    The corrections and confusable turns the scenario's level asks for
    (``scenario.reasoning``) are always placed, as many as the scenario and ``others``
    allow (an item left short of its level's steps is the structure filter's to reject); the
    chance knobs add more only while the item's steps stay within its level."""
    difficulty = scenario.cell.difficulty
    spec = DIFFICULTY[difficulty]
    pinned = (settings.fact_turn_indices or {}).get(difficulty)
    if pinned and len(pinned) < len(scenario.pieces):
        scenario = scenario.model_copy(update={"pieces": merge_pieces(scenario.pieces, len(pinned))})
    reasoning = scenario.reasoning
    needed = len(scenario.pieces) + reasoning.corrections + (reasoning.distractors + RESERVED_TURNS if reasoning.distractors else 0)
    total = rng.randint(min(max(spec.turns[0], needed), spec.turns[1]), spec.turns[1])
    plan: list[tuple[str, dict] | None] = [None] * total
    if pinned:
        slots, slips = sorted(pinned)[: len(scenario.pieces)], []
    else:
        slots, slips = _layout(scenario, total, settings.position, reasoning.corrections, rng)
    for piece_index, slot in enumerate(slots):
        plan[slot] = ("piece", {"piece": piece_index})
    for fact, slot in slips:
        _misstate(scenario, plan, slots, fact, slot, rng)
    for _ in range(reasoning.corrections if pinned else 0):
        _add_correction(scenario, plan, slots, rng)
    high = spec.steps[1]
    room = math.inf if high is None else high - reasoning.steps  # steps the chance knobs may add
    values = [render_value(f, scenario, lang) for f in scenario.facts]  # the confusables and the writer read them
    confusables = _confusable_facts(scenario, lang, others, values, _misstated(plan)) if others else []
    _place_confusables(plan, confusables, reasoning.distractors, rng)
    if room > 0 and rng.random() < settings.corrections and _add_correction(scenario, plan, slots, rng):
        room -= 1
        confusables = [c for c in confusables if c[3] not in _misstated(plan)]
    _plan_reask(scenario, plan, slots, settings, rng)
    _plan_clarification(scenario, plan, settings, rng)
    _plan_confusables(plan, confusables, settings, room, rng)
    for i, entry in enumerate(plan):
        if entry is None:
            plan[i] = _filler(plan[i - 1] if i else None, i == len(plan) - 1, settings, rng)
    writer = _Writer(scenario, lang, rng, values)
    speakers = _speakers(scenario, lang, settings, rng)
    order = _speaker_order(len(plan), len(speakers), rng)  # never one speaker twice in a row
    turns = [writer.turn(kind, args, speakers[order[i]]) for i, (kind, args) in enumerate(plan)]
    return Dialogue.model_validate({"turns": turns, "fact_turns": slots, "fact_values": writer.values()})


def _layout(scenario: Scenario, total: int, position: Position, corrections: int,
            rng: random.Random) -> tuple[list[int], list[tuple[int, int]]]:
    """The turn of each piece, and (fact, turn) of each of ``corrections`` slips: a value
    misstated after what it belongs to is introduced and before the piece that corrects it.
    Pieces and slips share the window ``position`` asks for."""
    sequence: list[tuple[str, int]] = [("piece", i) for i in range(len(scenario.pieces))]
    for piece_index, fact in _corrected(scenario, corrections, rng):
        start = sequence.index(("piece", _introducing_piece(scenario, scenario.facts[fact].subject.value))) + 1
        sequence.insert(rng.randint(start, sequence.index(("piece", piece_index))), ("slip", fact))
    width = min(total, max(len(sequence), math.ceil(total / 3)))
    window = {
        "spread": range(total),
        "start": range(0, width),
        "middle": range((total - width) // 2, (total - width) // 2 + width),
        "end": range(total - width, total),
    }[position]
    turns = sorted(rng.sample(window, len(sequence)))
    slots = [turn for turn, (kind, _) in zip(turns, sequence, strict=True) if kind == "piece"]
    return slots, [(fact, turn) for turn, (kind, fact) in zip(turns, sequence, strict=True) if kind == "slip"]


def _correctable(scenario: Scenario) -> dict[int, list[int]]:
    """Piece -> its facts a slip may misstate: a number or a date, the one value of its
    relation, in a piece after the one that introduces its subject (kept with the scenario:
    each language's dialogue asks, some twice)."""
    if "correctable" not in scenario.derived:
        several = several_valued(scenario.facts)
        found: dict[int, list[int]] = {}
        for piece_index, piece in enumerate(scenario.pieces):
            for fact in piece.facts:
                f = scenario.facts[fact]
                if fact not in several and misstatable(f) and 0 <= _introducing_piece(scenario, f.subject.value) < piece_index:
                    found.setdefault(piece_index, []).append(fact)
        scenario.derived["correctable"] = found
    return scenario.derived["correctable"]


def _corrected(scenario: Scenario, count: int, rng: random.Random) -> list[tuple[int, int]]:
    """(piece, fact) of up to ``count`` facts to correct, each in its own piece, in piece order."""
    if not count:
        return []
    candidates = _correctable(scenario)
    pieces = sorted(rng.sample(sorted(candidates), min(count, len(candidates))))
    return [(piece, rng.choice(candidates[piece])) for piece in pieces]


def _misstate(scenario: Scenario, plan: list, slots: list[int], fact: int, slot: int, rng: random.Random) -> None:
    """A slip of ``fact`` at turn ``slot``; the turn of its piece corrects it."""
    wrong = _wrong_value(scenario.facts[fact].object.python, rng)
    plan[slot] = ("misstatement", {"fact": fact, "wrong": wrong})
    piece = next(i for i, p in enumerate(scenario.pieces) if fact in p.facts)
    plan[slots[piece]][1].update(corrected=fact, wrong=wrong)


def _add_correction(scenario: Scenario, plan: list, slots: list[int], rng: random.Random) -> bool:
    """Misstate one more fact, in a piece not corrected yet, in a free turn between the turn
    that introduces its subject and its piece's, which corrects it; whether one could be."""
    candidates = []
    for piece_index, facts in _correctable(scenario).items():
        slot = slots[piece_index]
        if "corrected" in plan[slot][1]:
            continue
        for fact in facts:
            introduced = slots[_introducing_piece(scenario, scenario.facts[fact].subject.value)]
            earlier = [i for i in range(introduced + 1, slot) if plan[i] is None]
            if earlier:
                candidates.append((fact, earlier))
    if not candidates:
        return False
    fact, earlier = rng.choice(candidates)
    _misstate(scenario, plan, slots, fact, rng.choice(earlier), rng)
    return True


def _introducing_piece(scenario: Scenario, entity: str) -> int:
    """The piece that first names ``entity``: the name piece for the topic, else the first
    piece with a fact about it or pointing to it (a bridge); -1 if none does."""
    for index, piece in enumerate(scenario.pieces):
        facts = (scenario.facts[i] for i in piece.facts)
        named = piece.name and entity == scenario.entity.value
        if named or any(entity in (f.subject.value, f.object.value) for f in facts):
            return index
    return -1


_STATEMENTS = frozenset({"piece", "restate", "clarify_a", "misstatement", "confusable"})


def _filler(previous: tuple[str, dict] | None, last: bool, settings: DialogueSettings,
            rng: random.Random) -> tuple[str, dict]:
    """A free turn that answers the one before it: an opening first, then a reply to it;
    after a statement an acknowledgement, which a prompt to go on may follow; after noise
    a reply to it. With the chance ``settings.noise`` (and always after a prompt or a
    reply) it is noise instead, except as the last turn, which closes the talk."""
    if previous is None:
        return ("opening", {})
    kind = previous[0]
    if kind == "opening":
        return ("reply", {"to": "opening"})
    if last:  # no noise or prompt that nothing follows
        if kind in _STATEMENTS:
            return ("ack", {})
        return ("reply", {"to": "noise"}) if kind == "noise" else ("closing", {})
    if kind in ("prompt", "reply") or rng.random() < settings.noise:
        return ("noise", {})
    if kind in _STATEMENTS:
        return ("ack", {})
    return ("reply", {"to": "noise"}) if kind == "noise" else ("prompt", {})


def _plan_reask(scenario: Scenario, plan: list, slots: list[int], settings: DialogueSettings, rng) -> None:
    if rng.random() >= settings.reasks:
        return
    several = several_valued(scenario.facts)
    options = [(s, f) for i, s in enumerate(slots) for f in scenario.pieces[i].facts
               if s + 2 < len(plan) and plan[s + 1] is None and plan[s + 2] is None and f not in several
               and _said_as_a_value(scenario, f)]
    if options:
        slot, fact = rng.choice(options)
        plan[slot + 1], plan[slot + 2] = ("reask", {"fact": fact}), ("restate", {"fact": fact})


def _plan_clarification(scenario: Scenario, plan: list, settings: DialogueSettings, rng) -> None:
    if rng.random() >= settings.clarifications:
        return
    # after a stated value ("Is that the latest information?"), never after a slip: confirming a
    # value that is corrected later would contradict it
    options = [i for i in range(1, len(plan) - 1) if plan[i] is None and plan[i + 1] is None
               and plan[i - 1] is not None and _states_a_value(scenario, plan[i - 1])]
    if options:
        i = rng.choice(options)
        plan[i], plan[i + 1] = ("clarify_q", {}), ("clarify_a", {})


def _confusable_turns(plan: list) -> list[int]:
    """The free turns a confusable may take: never the opening, its reply or the closing."""
    return [i for i in range(2, len(plan) - 1) if plan[i] is None]


def _place_confusables(plan: list, choices: list, count: int, rng: random.Random) -> None:
    """``count`` confusable turns (as many as there are free turns and ``choices``), each
    stating one of ``choices`` (see :func:`_confusable_facts`), which it takes out."""
    free = _confusable_turns(plan)
    for i in rng.sample(free, min(count, len(free), len(choices))):
        plan[i] = ("confusable", {"said": choices.pop(rng.randrange(len(choices)))})


def _plan_confusables(plan: list, choices: list, settings: DialogueSettings, room: float, rng: random.Random) -> None:
    """With the chance ``settings.confusables``, a free turn states a fact of another entity,
    while ``room`` steps remain in the level. A confusable states a relation the topic has
    too, with a value the topic's facts and the answer do not have; it names that entity,
    and the topic is named again in the next statement about it, so every value keeps one owner."""
    if not settings.confusables:
        return
    for i in _confusable_turns(plan):
        if room <= 0 or not choices:
            return
        if rng.random() < settings.confusables:
            plan[i] = ("confusable", {"said": choices.pop(rng.randrange(len(choices)))})
            room -= 1


def _misstated(plan: list) -> set[object]:
    """The wrong values the planned slips say."""
    return {entry[1]["wrong"] for entry in plan if entry and entry[0] == "misstatement"}


def _confusable_facts(scenario: Scenario, lang: str, others: Sequence[Scenario], values: Sequence[str],
                      misstated: set[object] = frozenset()) -> list[tuple[str, str | None, str, object]]:
    """(the noun with its subject, value, whole yes/no sentence, value as data) of each fact
    of ``others`` that the topic's relations share and whose value the dialogue would not
    also give the topic (``values``: its facts' :func:`render_value`), nor a slip
    (``misstated``) say."""
    # a value of the topic's kind: a rule reading years says the topic's 1912.67 as 1912, so
    # another entity's 1952.25 is no confusable (its value would give itself away)
    kinds = {f.relation.value: type(f.object.python) for f in scenario.facts}
    gold = scenario.gold[lang]
    texts = {*values, *([gold] if isinstance(gold, str) else gold)}
    numbers = frozenset().union(*map(numbers_in, texts))  # "150,000" and "150,000 roubles" are one value
    objects = {f.object.python for f in scenario.facts if not isinstance(f.object.python, bool)}
    found = [said for other in others for relation, said, value_numbers in _in_topic_terms(scenario, other, lang)
             if type(said[3]) is kinds.get(relation) and said[1] not in texts and said[3] not in objects
             and said[3] not in misstated
             and not numbers & value_numbers]
    return list(dict.fromkeys(found))  # two lent scenarios about one entity share its facts: each said once


def _in_topic_terms(scenario: Scenario, other: Scenario, lang: str) -> Iterator[tuple[str, tuple, frozenset]]:
    """:func:`_facts_of_entity` of ``other``, each value said as the topic says its own (:func:`as_topic_says`)."""
    for relation, said, value_numbers in _facts_of_entity(other, lang):
        written = as_topic_says(scenario, relation, said[3], said[1], lang)
        yield (relation, said, value_numbers) if written == said[1] else \
            (relation, (said[0], written, said[2], said[3]), numbers_in(written))


def as_topic_says(scenario: Scenario, relation: str, value: object, said: str, lang: str) -> str:
    """Another entity's ``value`` of ``relation`` (``said`` as its own scenario says it) as the
    topic's dialogue says its own: a number in the unit the topic's rule gives ("1.83 m",
    "22,800 roubles"), else bare, so that one item never says a height with its unit in one
    turn and without it in the next."""
    if not isinstance(value, int | Decimal) or isinstance(value, bool):  # the cheap test first: most values are no number
        return said
    fact = next((f for f in scenario.facts if f.relation.value == relation), None)
    if fact is None or fact.object.is_year:
        return said
    return _render(fact.object, fact, scenario, lang, value)


def _facts_of_entity(scenario: Scenario, lang: str) -> list[tuple[str, tuple[str, str | None, str, object], frozenset]]:
    """(relation, what a confusable turn says, the value's numbers) of each fact about the
    scenario's own entity: kept with the scenario, which several items may draw as their confusable
    (a few times each in a 1M run, often on a small graph)."""
    key = ("facts_of_entity", lang)
    if key not in scenario.derived:
        said = []
        for fact, words, said_by_its_name in zip(scenario.facts, scenario.wording[lang].facts, carried(scenario), strict=True):
            if fact.subject.value == scenario.entity.value and not said_by_its_name:
                value = words.spoken or words.value or render_value(fact, scenario, lang)
                said.append((fact.relation.value, (words.noun_of, value, words.statement, fact.object.python), numbers_in(value)))
        scenario.derived[key] = said
    return scenario.derived[key]


def _states_a_value(scenario: Scenario, entry: tuple[str, dict]) -> bool:
    """Whether a planned turn states a value (not only a name, or a yes/no fact as a sentence)."""
    kind, args = entry
    facts = scenario.pieces[args["piece"]].facts if kind == "piece" else ()
    return kind == "restate" or any(_said_as_a_value(scenario, i) for i in facts)


def _said_as_a_value(scenario: Scenario, index: int) -> bool:
    """Whether a turn says the fact's value: not a yes/no fact (a sentence), nor one its subject's name says."""
    return not isinstance(scenario.facts[index].object.python, bool) and not carried(scenario)[index]


def carried(scenario: Scenario) -> tuple[bool, ...]:
    """Whether each fact's value is said by its subject's name (:func:`carried_facts`), kept with
    the scenario: every item made of it, in each language, asks this of each fact several times."""
    if "carried" not in scenario.derived:
        scenario.derived["carried"] = carried_facts(scenario.facts, scenario.entity)
    return scenario.derived["carried"]


def _domain(scenario: Scenario, lang: str) -> str:
    """The rule's domain, else the domain of the entity's class ("episodic" retrieval items too)."""
    if scenario.cell.domain in ROLES[lang]:
        return scenario.cell.domain
    return scenario.wording[lang].entity.domain or "general"


def _speakers(scenario: Scenario, lang: str, settings: DialogueSettings, rng) -> list[tuple[str, str]]:
    """2-3 (name, role) pairs; names that occur in the scenario's labels are never used."""
    names = [n for n, folded in _FOLDED_SPEAKERS[lang] if not has_word(scenario.mentioned_blob, folded)]
    roles = ROLES[lang].get(_domain(scenario, lang), ROLES[lang]["general"])
    k = rng.randint(*settings.speakers)
    return list(zip(rng.sample(names, k), rng.sample(roles, k), strict=True))


def _speaker_order(n: int, k: int, rng: random.Random) -> list[int]:
    others = [[s for s in range(k) if s != last] for last in range(k)]
    order = [0]
    for _ in range(n - 1):
        order.append(rng.choice(others[order[-1]]))
    return order


class _Writer:
    """Writes each planned turn from the scenario's wording; remembers whether the entity
    has been named, what this dialogue has said (no line twice) and who misstated a value
    (a correction says whose slip it fixes)."""

    def __init__(self, scenario: Scenario, lang: str, rng: random.Random, values: Sequence[str]):
        self.s, self.lang, self.rng = scenario, lang, rng
        self.words = scenario.wording[lang]
        self.phrases = STATEMENTS[lang]
        self.free = PHRASES[lang]
        self.noise = NOISE[lang].get(_domain(scenario, lang), NOISE[lang]["general"])
        self.paused = False  # whether the last noise line was a pause (answered "No problem"), not a remark
        self.named = False
        self.stated: set[tuple[str, str]] = set()  # (subject, relation) of the values stated (for "another ...")
        self.confused: set[str] = set()  # the nouns with their subjects the confusable turns said
        self.used: set[str] = set()  # phrases already said in this dialogue
        self.misstated_by: dict[int, str] = {}  # fact -> the speaker who misstated it
        # a yes/no fact is written as its whole statement ("Pavel is a tax resident"); rendered is each
        # value as fact_values records it, spoken the same with the article a sentence needs ("the Pine store");
        # ``values`` are the facts' render_value
        self.rendered = {i: w.statement or w.value or values[i] for i, w in enumerate(self.words.facts)}
        # a value the subject's name says is written as the name says it («Москве» of «офис … в Москве»)
        self.rendered |= {i: said_in_name(f, lang) or self.rendered[i]
                          for i, f in enumerate(scenario.facts) if carried(scenario)[i]}
        self.spoken = {i: w.spoken or self.rendered[i] for i, w in enumerate(self.words.facts)}

    def values(self) -> tuple[str, ...]:
        return tuple(self.rendered[i] for i in range(len(self.s.facts)))

    def turn(self, kind: str, args: dict, speaker: tuple[str, str]) -> dict:
        """A turn's fields (the dialogue validates all its turns in one call: 40% faster)."""
        name, role = speaker
        if kind == "piece":
            text, facts = self._piece(args, name)
            return dict(speaker=name, role=role, text=text, kind="fact", facts=facts)
        if kind == "misstatement":
            fact = self.s.facts[args["fact"]]
            self.misstated_by[args["fact"]] = name
            wrong = _render(fact.object, fact, self.s, self.lang, args["wrong"])
            text = self._pick("slip").format(value=wrong, **self._noun_slots(args["fact"]))
            return dict(speaker=name, role=role, text=_tidy(text), kind="misstatement")
        if kind in ("reask", "restate"):
            value = self.spoken[args["fact"]]
            text = self._pick(kind).format(value=value, Value=_cap(value), **self._noun_slots(args["fact"]))
            return dict(speaker=name, role=role, text=_tidy(text), kind=kind)
        if kind == "noise":
            return dict(speaker=name, role=role, text=self._noise_line(), kind=kind)
        if kind == "confusable":
            return dict(speaker=name, role=role, text=self._confusable(*args["said"][:3]), kind=kind)
        if kind == "reply":
            pool = "reply_opening" if args["to"] == "opening" else "reply_pause" if self.paused else "reply_remark"
            return dict(speaker=name, role=role, text=self._fresh(self.free[pool]), kind=kind)
        return dict(speaker=name, role=role, text=self._fresh(self.free[kind]), kind=kind)

    def _piece(self, args: dict, speaker: str) -> tuple[str, tuple[int, ...]]:
        piece = self.s.pieces[args["piece"]]
        parts = []
        if piece.name or piece.entity_class:
            parts.append(self._introduction(piece.name, piece.entity_class))
        self.named = self.named or piece.name
        for i in piece.facts:
            if carried(self.s)[i]:
                continue  # the piece names the subject, whose name says it
            if args.get("corrected") == i:
                fact = self.s.facts[i]
                wrong = _render(fact.object, fact, self.s, self.lang, args["wrong"])
                whose = "correction_self" if self.misstated_by.get(i) == speaker else "correction_other"
                parts.append(_cap(self._pick(whose).format(value=self.spoken[i], wrong=wrong, **self._noun_slots(i))))
            else:
                parts.append(self._statement(i, self.spoken[i]))
            if self.s.facts[i].subject.value != self.s.entity.value:
                self.named = False  # after a bridge's fact the topic is named again: its "year of birth" is not the bridge's
        return _tidy(" ".join(parts)), piece.facts

    def _confusable(self, noun_of: str, value: str, statement: str | None) -> str:
        """Another entity's fact, naming it (a further value of its relation says it is another
        one); the topic is named again before its next fact."""
        self.named = False
        if statement:
            return self._pick("yes_no").format(statement=statement)
        kind = "confusable_again" if noun_of in self.confused else "confusable"
        self.confused.add(noun_of)
        the_noun = f"the {noun_of}" if self.lang == "en" else noun_of
        return _tidy(self._pick(kind).format(the_noun=the_noun, The_noun=_cap(the_noun), another=self._another(noun_of),
                                             value=value))

    def _introduction(self, name: bool, entity_class: bool) -> str:
        """The entity's name and/or class. A class the name already says ("Claim CL-1", an
        insurance claim) is never said again: its turn names the entity once more instead."""
        entity = self.words.entity
        says_class = entity_class and entity.cls and not entity.cls_in_name
        if name:
            kind = "name_class" if says_class else "name"
        else:
            kind = "class" if says_class else "name_again"
        cls = entity.cls or ""
        # "the product frying pan", not "the product the frying pan"
        name = entity.name.removeprefix("the ") if kind == "name_class" else entity.name
        return self._pick(kind).format(
            entity=name, Entity=_cap(name), cls=cls, a_cls=_a(cls),
            **{f"entity_{case}": text for case, text in entity.cases.items()},
            **{f"cls_{case}": text for case, text in entity.cls_cases.items()},
        )

    def _statement(self, index: int, value: str) -> str:
        """One fact as a sentence; a further value of its subject's relation says it is another one."""
        fact, words = self.s.facts[index], self.words.facts[index]
        if words.statement:
            return self._pick("yes_no").format(statement=words.statement)
        key = (fact.subject.value, fact.relation.value)
        kind = "fact_again" if key in self.stated else "fact"
        self.stated.add(key)
        return _cap(self._pick(kind).format(value=value, **self._noun_slots(index)))

    def _implicit(self, index: int) -> bool:
        """Whether the fact is about the topic, already named, so its noun needs no subject:
        not when a bridge has a value of the same relation (two dates of birth, a couple's)."""
        fact = self.s.facts[index]
        return self.named and fact.subject.value == self.s.entity.value and not any(
            f.relation.value == fact.relation.value and f.subject.value != fact.subject.value for f in self.s.facts)

    def _noun_slots(self, index: int) -> dict[str, str]:
        words = self.words.facts[index]
        noun = words.short if self._implicit(index) else words.noun_of
        the_noun = f"the {noun}" if self.lang == "en" else noun
        return {"the_noun": the_noun, "The_noun": _cap(the_noun), "another": self._another(noun), "which": words.which}

    def _another(self, noun: str) -> str:
        """A noun as a further value of its relation: "another monthly purchase", «ещё одна покупка за месяц»."""
        if self.lang == "en":
            return f"another {noun}"
        noun = noun.removeprefix("другой ").removeprefix("другая ")  # «ещё один лауреат», not «ещё один другой лауреат»
        return f"ещё {morph.agree('один', noun)} {noun}"

    def _pick(self, kind: str) -> str:
        return self._fresh(self.phrases[kind])

    def _fresh(self, options: Sequence[str]) -> str:
        """A random phrase, not one this dialogue has used yet while others remain."""
        fresh = [p for p in options if p not in self.used] or options
        phrase = self.rng.choice(fresh)
        self.used.add(phrase)
        return phrase

    def _noise_line(self) -> str:
        """A noise line this dialogue has not said, free of the scenario's labels. The pool
        is large, so a few random draws find one; listing the free lines is the fallback."""
        for _ in range(_NOISE_DRAWS):
            line = self.rng.choice(self.noise)
            if line not in self.used and not has_any_word(line, self.s.mentioned_texts):
                break
        else:
            free = [p for p in self.noise if p not in self.used and not has_any_word(p, self.s.mentioned_texts)]
            line = self.rng.choice(free or self.noise)
        self.used.add(line)
        self.paused = line in PAUSES[self.lang]
        return line


_NOISE_DRAWS = 8


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


_FOLDED_SPEAKERS = {lang: [(n, n.casefold()) for n in names] for lang, names in SPEAKERS.items()}


def _tidy(text: str) -> str:
    """One full stop where a value ending in one ("2024 г.") meets the template's own."""
    return text.replace("..", ".")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
