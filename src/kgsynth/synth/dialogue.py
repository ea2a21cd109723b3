"""The template verbaliser: a scenario -> a 2-3 speaker dialogue, with no model.

Every fact value sits in the turn its piece is mapped to; the rule and (for computed
answers) the answer never appear. Knobs beyond the difficulty table: neutral noise turns,
clarifications, re-asks, a correction (a value first misstated, then corrected: the gold
uses the final value), the position of the fact turns, and padding to a target token
count with distractor turns that mention no entity or value of the scenario.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kgsynth.errors import KgsynthError
from kgsynth.queries import Fact, Node
from kgsynth.synth import locale, morph
from kgsynth.synth.phrases import PHRASES, ROLES, SPEAKERS, YES_NO
from kgsynth.synth.scenario import CURRENCIES, DIFFICULTY, Difficulty, Scenario
from kgsynth.synth.statements import STATEMENTS

TurnKind = Literal[
    "opening", "fact", "misstatement", "reask", "restate", "ack", "clarify_q", "clarify_a", "noise", "distractor"
]
Position = Literal["spread", "start", "middle", "end"]
_TOKEN = re.compile(r"\w+|[^\w\s]")
_MONEY_ROLES = frozenset({"amount", "limit", "threshold"})


def count_tokens(text: str) -> int:
    """Approximate tokens (words and punctuation marks): deterministic and model-free.
    Evaluation may re-count with a model's own tokenizer."""
    return len(_TOKEN.findall(text))


class DialogueSettings(BaseModel):
    """Knobs of dialogue construction (difficulty comes from the scenario's cell)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speakers: tuple[int, int] = (2, 3)
    noise: float = Field(0.3, ge=0, le=1, description="share of free turns that are neutral noise")
    clarifications: float = Field(0.3, ge=0, le=1, description="chance of a clarification question and answer")
    reasks: float = Field(0.2, ge=0, le=1, description="chance that a fact is asked for again and restated")
    corrections: float = Field(0.2, ge=0, le=1, description="chance that a value is misstated, then corrected")
    position: Position = "spread"
    fact_turn_indices: dict[Difficulty, tuple[int, ...]] | None = None  # exact fact-turn indices per difficulty (overrides position)
    target_tokens: int | None = Field(None, ge=1, description="pad with distractor turns up to this many tokens")

    @model_validator(mode="after")
    def _speakers_in_range(self) -> DialogueSettings:
        low, high = self.speakers
        if not 2 <= low <= high <= 3:
            raise ValueError("speakers must be a range within 2..3, e.g. [2, 3]")
        for difficulty, indices in (self.fact_turn_indices or {}).items():
            spec = DIFFICULTY[difficulty]
            if len(indices) != spec.fact_turns or len(set(indices)) != len(indices) or not all(0 <= i < spec.turns[0] for i in indices):
                raise ValueError(
                    f"fact_turn_indices.{difficulty.value} needs {spec.fact_turns} distinct indices below {spec.turns[0]} "
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
    if node.datatype and node.datatype.endswith("#gYear"):
        return node.value  # a year, not an amount: "2013", never "2,013"
    if isinstance(value, int | Decimal):
        if fact.role in _MONEY_ROLES and unit in CURRENCIES:
            return locale.format_money(Decimal(value), unit, lang)
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
def build_dialogue(scenario: Scenario, lang: str, settings: DialogueSettings, rng: random.Random) -> Dialogue:
    """One dialogue for ``scenario`` in ``lang``; the same rng state gives the same dialogue."""
    spec = DIFFICULTY[scenario.cell.difficulty]
    total = rng.randint(*spec.turns)
    pieces = scenario.pieces
    slots = _fact_slots(len(pieces), total, scenario.cell.difficulty, settings, rng)
    plan: list[tuple[str, dict] | None] = [None] * total
    for piece_index, slot in enumerate(slots):
        plan[slot] = ("piece", {"piece": piece_index})
    _plan_correction(scenario, plan, slots, settings, rng)
    _plan_reask(scenario, plan, slots, settings, rng)
    _plan_clarification(plan, settings, rng)
    for i, entry in enumerate(plan):
        if entry is None:
            plan[i] = _filler(plan[i - 1] if i else None, settings, rng)
    writer = _Writer(scenario, lang, rng)
    speakers = _speakers(scenario, lang, settings, rng)
    order = _speaker_order(len(plan), len(speakers), rng)  # never one speaker twice in a row
    turns = [writer.turn(kind, args, speakers[order[i]]) for i, (kind, args) in enumerate(plan)]
    dialogue = Dialogue(turns=tuple(turns), fact_turns=tuple(slots), fact_values=writer.values())
    if settings.target_tokens:
        dialogue = pad_dialogue(dialogue, scenario, lang, settings.target_tokens, rng)
    return dialogue


def _fact_slots(n: int, total: int, difficulty: Difficulty, settings: DialogueSettings, rng: random.Random) -> list[int]:
    if settings.fact_turn_indices and difficulty in settings.fact_turn_indices:
        return sorted(settings.fact_turn_indices[difficulty])  # checked against the table by DialogueSettings
    width = max(n, math.ceil(total / 3))
    window = {
        "spread": range(total),
        "start": range(0, width),
        "middle": range((total - width) // 2, (total - width) // 2 + width),
        "end": range(total - width, total),
    }[settings.position]
    return sorted(rng.sample(window, n))


def _filler(previous: tuple[str, dict] | None, settings: DialogueSettings, rng: random.Random) -> tuple[str, dict]:
    """A free turn: an opening first, an acknowledgement after something was said, else noise."""
    if previous is None:
        return ("opening", {})
    if rng.random() < settings.noise or previous[0] not in ("piece", "restate", "clarify_a", "misstatement"):
        return ("noise", {})
    return ("ack", {})


def _plan_correction(scenario: Scenario, plan: list, slots: list[int], settings: DialogueSettings, rng) -> None:
    """Misstate one numeric/date fact in a free turn before its piece; the piece's turn corrects it."""
    if rng.random() >= settings.corrections:
        return
    candidates = []
    # a value is misstated only once the entity it belongs to has been introduced
    named_at = next((slots[i] for i, piece in enumerate(scenario.pieces) if piece.name), -1)
    for piece_index, slot in enumerate(slots):
        for fact in scenario.pieces[piece_index].facts:
            value = scenario.facts[fact].object.python if scenario.facts[fact].object.kind == "literal" else None
            earlier = [i for i in range(named_at + 1, slot) if plan[i] is None]
            if earlier and _wrong_value(value, random.Random(0)) is not None:
                candidates.append((piece_index, fact, earlier))
    if not candidates:
        return
    piece_index, fact, earlier = rng.choice(candidates)
    value = scenario.facts[fact].object.python
    wrong = _wrong_value(value, rng)
    plan[rng.choice(earlier)] = ("misstatement", {"fact": fact, "wrong": wrong})
    plan[slots[piece_index]][1].update(corrected=fact, wrong=wrong)


def _plan_reask(scenario: Scenario, plan: list, slots: list[int], settings: DialogueSettings, rng) -> None:
    if rng.random() >= settings.reasks:
        return
    options = [(s, f) for i, s in enumerate(slots) for f in scenario.pieces[i].facts
               if s + 2 < len(plan) and plan[s + 1] is None and plan[s + 2] is None
               and not isinstance(scenario.facts[f].object.python, bool)]  # a yes/no fact is a sentence, not a value
    if options:
        slot, fact = rng.choice(options)
        plan[slot + 1], plan[slot + 2] = ("reask", {"fact": fact}), ("restate", {"fact": fact})


def _plan_clarification(plan: list, settings: DialogueSettings, rng) -> None:
    if rng.random() >= settings.clarifications:
        return
    options = [i for i in range(1, len(plan) - 1) if plan[i] is None and plan[i + 1] is None and plan[i - 1] is not None]
    if options:
        i = rng.choice(options)
        plan[i], plan[i + 1] = ("clarify_q", {}), ("clarify_a", {})


def _speakers(scenario: Scenario, lang: str, settings: DialogueSettings, rng) -> list[tuple[str, str]]:
    """2-3 (name, role) pairs; names that occur in the scenario's labels are never used."""
    names = [n for n, folded in _FOLDED_SPEAKERS[lang] if not _has_word(scenario.mentioned_blob, folded)]
    roles = ROLES[lang].get(scenario.cell.domain, ROLES[lang]["general"])
    k = rng.randint(*settings.speakers)
    return list(zip(rng.sample(names, k), rng.sample(roles, k), strict=True))


def _speaker_order(n: int, k: int, rng: random.Random) -> list[int]:
    others = [[s for s in range(k) if s != last] for last in range(k)]
    order = [0]
    for _ in range(n - 1):
        order.append(rng.choice(others[order[-1]]))
    return order


def pad_dialogue(dialogue: Dialogue, scenario: Scenario, lang: str, target_tokens: int, rng: random.Random) -> Dialogue:
    """Insert distractor turns at random places until the transcript has ``target_tokens``.

    Distractors come from a digit-free bank and are skipped if they contain any label of
    the scenario, so they cannot change the answer; fact-turn indices are shifted.
    """
    bank = [line for line in PHRASES[lang]["distractor"] if not _mentions(line, scenario.mentioned_texts)]
    if not bank:
        raise VerbaliserError("every distractor line mentions a label of the scenario; cannot pad")
    turns = list(dialogue.turns)
    speakers = sorted({(t.speaker, t.role) for t in turns})
    tokens = count_tokens(dialogue.text)
    padding = 0
    while tokens < target_tokens:
        text = " ".join(rng.sample(bank, k=min(len(bank), rng.randint(1, 3))))
        speaker, role = rng.choice(speakers)
        at = rng.randint(0, len(turns))
        turns.insert(at, Turn(speaker=speaker, role=role, text=text, kind="distractor"))
        tokens += count_tokens(f"{speaker}: {text}")
        padding += 1
    fact_turns = tuple(i for i, t in enumerate(turns) if t.kind == "fact")
    return dialogue.model_copy(update={"turns": tuple(turns), "fact_turns": fact_turns, "padding_turns": padding})


class _Writer:
    """Writes each planned turn from the scenario's wording; remembers whether the entity
    has been named and who misstated a value (a correction says whose slip it fixes)."""

    def __init__(self, scenario: Scenario, lang: str, rng: random.Random):
        self.s, self.lang, self.rng = scenario, lang, rng
        self.words = scenario.wording[lang]
        self.phrases = STATEMENTS[lang]
        self.free = PHRASES[lang]
        self.named = False
        self.stated: set[str] = set()  # relations already stated (for "another ...")
        self.used: set[str] = set()  # phrases already said in this dialogue
        self.misstated_by: dict[int, str] = {}  # fact -> the speaker who misstated it
        # a yes/no fact is written as its whole statement ("Pavel is a tax resident")
        self.rendered = {i: self.words.facts[i].statement or render_value(f, scenario, lang) for i, f in enumerate(scenario.facts)}

    def values(self) -> tuple[str, ...]:
        return tuple(self.rendered[i] for i in range(len(self.s.facts)))

    def turn(self, kind: str, args: dict, speaker: tuple[str, str]) -> Turn:
        name, role = speaker
        if kind == "piece":
            text, facts = self._piece(args, name)
            return Turn(speaker=name, role=role, text=text, kind="fact", facts=facts)
        if kind == "misstatement":
            fact = self.s.facts[args["fact"]]
            self.misstated_by[args["fact"]] = name
            wrong = _render(fact.object, fact, self.s, self.lang, args["wrong"])
            return Turn(speaker=name, role=role, text=_tidy(self._statement(args["fact"], wrong, track=False)), kind="misstatement")
        if kind in ("reask", "restate"):
            value = self.rendered[args["fact"]]
            text = self._pick(kind).format(value=value, Value=_cap(value), **self._noun_slots(args["fact"]))
            return Turn(speaker=name, role=role, text=_tidy(text), kind=kind)
        return Turn(speaker=name, role=role, text=self._pick_free(kind), kind=kind)

    def _piece(self, args: dict, speaker: str) -> tuple[str, tuple[int, ...]]:
        piece = self.s.pieces[args["piece"]]
        parts = []
        entity = self.words.entity
        slots = {"entity": entity.name, "Entity": _cap(entity.name), "cls": entity.cls or "", "a_cls": _a(entity.cls or ""),
                 **{f"entity_{case}": text for case, text in entity.cases.items()},
                 **{f"cls_{case}": morph.decline(entity.cls, case) for case in ("accs", "datv") if self.lang == "ru" and entity.cls}}
        if piece.name:
            kind = "name_class" if piece.entity_class and entity.cls and not entity.cls_in_name else "name"
            parts.append(self._pick(kind).format(**slots))
        elif piece.entity_class:
            parts.append(self._pick("class_named" if entity.cls_in_name else "class").format(**slots))
        self.named = self.named or piece.name
        for i in piece.facts:
            if args.get("corrected") == i:
                fact = self.s.facts[i]
                wrong = _render(fact.object, fact, self.s, self.lang, args["wrong"])
                whose = "correction_self" if self.misstated_by.get(i) == speaker else "correction_other"
                parts.append(_cap(self._pick(whose).format(value=self.rendered[i], wrong=wrong, **self._noun_slots(i))))
            else:
                parts.append(self._statement(i, self.rendered[i]))
        return _tidy(" ".join(parts)), piece.facts

    def _statement(self, index: int, value: str, track: bool = True) -> str:
        """One fact as a sentence; a second value of a relation already stated says it is another one."""
        fact, words = self.s.facts[index], self.words.facts[index]
        if words.statement:
            return self._pick("yes_no").format(statement=words.statement)
        kind = "fact_again" if fact.relation.value in self.stated and self._implicit(index) else "fact"
        if track:
            self.stated.add(fact.relation.value)
        return self._pick(kind).format(value=value, **self._noun_slots(index))

    def _implicit(self, index: int) -> bool:
        """Whether the fact is about the topic, already named, so its noun needs no subject."""
        return self.named and self.s.facts[index].subject.value == self.s.entity.value

    def _noun_slots(self, index: int) -> dict[str, str]:
        words = self.words.facts[index]
        if self.lang == "en":
            the_noun = f"the {words.noun}" if self._implicit(index) else f"the {words.noun} of {words.subject}"
        else:
            the_noun = words.noun if self._implicit(index) else f"{words.noun} у {words.subject_gent}"
        return {"the_noun": the_noun, "The_noun": _cap(the_noun), "noun": words.noun, "which": words.which}

    def _pick(self, kind: str) -> str:
        return self._fresh(self.phrases[kind])

    def _pick_free(self, kind: str) -> str:
        return self._fresh(self.free[kind])

    def _fresh(self, options: Sequence[str]) -> str:
        """A random phrase, not one this dialogue has used yet while others remain."""
        fresh = [p for p in options if p not in self.used] or options
        phrase = self.rng.choice(fresh)
        self.used.add(phrase)
        return phrase


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _mentions(line: str, texts: frozenset[str]) -> bool:
    """Whether ``line`` contains one of ``texts`` as whole words ("TR" is not in "strange")."""
    folded = line.casefold()
    return any(_has_word(folded, t) for t in texts)


def _has_word(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` delimited by non-word characters (or the ends)."""
    return word in text and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


_FOLDED_SPEAKERS = {lang: [(n, n.casefold()) for n in names] for lang, names in SPEAKERS.items()}


def _tidy(text: str) -> str:
    """One full stop where a value ending in one ("2024 г.") meets the template's own."""
    return text.replace("..", ".")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
