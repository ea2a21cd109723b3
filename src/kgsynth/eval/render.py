"""What a model is shown of an item under each condition: the dialogue as written, no
dialogue (closed book), only the fact turns (oracle), the dialogue stretched with
distractor turns to a target length (length sweep), or kept whole and moved through
padding from the start to the end of the context (position sweep).

The sweeps re-render the SAME item: its turns, question and gold stay; only distractor
turns (from the template verbaliser's digit-free bank) are added, and none of them shares
a word of four or more letters with the item's fact turns or question, so they cannot
change the answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Literal

from kgsynth.synth.dialogue import Turn, count_tokens, transcript
from kgsynth.synth.item import Item
from kgsynth.synth.phrases import PHRASES

Condition = Literal["main", "closed_book", "oracle", "length", "position"]
_WORD = re.compile(r"\w{4,}")


@dataclass(frozen=True)
class Variant:
    """One item as shown under one condition (``param``: the target length or the depth)."""

    item: Item
    condition: Condition
    turns: tuple[Turn, ...]
    param: float | None = None

    @property
    def key(self) -> str:
        """Names the variant in results and progress files."""
        return f"{self.item.id}/{self.condition}" + ("" if self.param is None else f"/{self.param!r}")

    @property
    def context_tokens(self) -> int:
        return count_tokens(transcript(self.turns)) if self.turns else 0

    @property
    def fact_turn_indices(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.turns) if t.kind == "fact")

    @property
    def fact_depth(self) -> float | None:
        """Where the fact turns sit on average: 0 at the first turn, 1 at the last."""
        indices = self.fact_turn_indices
        if not indices:
            return None
        return sum(indices) / len(indices) / max(len(self.turns) - 1, 1)


def main(item: Item) -> Variant:
    return Variant(item, "main", item.dialogue)


def closed_book(item: Item) -> Variant:
    return Variant(item, "closed_book", ())


def oracle(item: Item) -> Variant:
    """Only the turns that state the facts (their final values), in dialogue order."""
    return Variant(item, "oracle", tuple(t for t in item.dialogue if t.kind == "fact"))


def stretched(item: Item, target_tokens: int, seed: int) -> Variant:
    """The dialogue with distractor turns inserted at random places up to ``target_tokens``."""
    rng = random.Random(f"{seed}:{item.id}:length:{target_tokens}")
    turns = list(item.dialogue)
    for turn in _padding(item, target_tokens - count_tokens(item.transcript), rng):
        turns.insert(rng.randint(0, len(turns)), turn)
    return Variant(item, "length", tuple(turns), float(target_tokens))


def placed(item: Item, target_tokens: int, depth: float, seed: int) -> Variant:
    """The dialogue kept whole, after ``depth`` of the padding turns and before the rest:
    depth 0 puts it at the start of the context, 1 at the end. The padding is the same
    for every depth of an item, so only the position changes."""
    rng = random.Random(f"{seed}:{item.id}:position:{target_tokens}")
    padding = _padding(item, target_tokens - count_tokens(item.transcript), rng)
    before = round(depth * len(padding))
    return Variant(item, "position", (*padding[:before], *item.dialogue, *padding[before:]), depth)


def _padding(item: Item, tokens: int, rng: random.Random) -> list[Turn]:
    """Distractor turns of about ``tokens`` tokens, said by the item's own speakers."""
    bank = _bank(item)
    speakers = sorted({(t.speaker, t.role) for t in item.dialogue})
    turns: list[Turn] = []
    while tokens > 0:
        speaker, role = rng.choice(speakers)
        text = " ".join(rng.sample(bank, k=min(len(bank), rng.randint(1, 3))))
        turns.append(Turn(speaker=speaker, role=role, text=text, kind="distractor"))
        tokens -= count_tokens(f"{speaker}: {text}")
    return turns


def _bank(item: Item) -> list[str]:
    """The distractor lines that share no word of four or more letters with what the item asks about."""
    own = {w.casefold() for t in item.dialogue if t.kind == "fact" for w in _WORD.findall(t.text)}
    own |= {w.casefold() for w in _WORD.findall(item.question)}
    bank = [line for line in PHRASES[item.language]["distractor"] if not own & {w.casefold() for w in _WORD.findall(line)}]
    if not bank:
        raise ValueError(f"item {item.id}: every distractor line shares a word with its facts; cannot pad it")
    return bank
