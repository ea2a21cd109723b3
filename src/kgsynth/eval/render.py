"""What a model is shown of an item under each condition: the dialogue as written, no
dialogue (closed book), only the fact turns (oracle), the dialogue stretched with
distractor turns to a target length (length sweep), or kept whole and moved through
padding from the start to the end of the context (position sweep).

The sweeps re-render the SAME item: its turns, question and gold stay; only distractor
turns are added, a haystack (``kgsynth.synth.dialogues.haystack``): the fact turns of other items of
the dataset in the same language (``others``), their turns that state another entity's
fact, and small talk with numbers. None of them holds a value, number or name of the
item (its fact values, answer and aliases; the capitalised or coded names of its question
and fact turns, Russian compared by lemma; its entities' IRIs), and a turn naming another
entity goes only where the item's next turn about a value names the item's topic (a name
of its question), so they cannot change the answer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from kgsynth.formats.morph import lemma_key
from kgsynth.synth.dialogues import haystack
from kgsynth.synth.dialogues.dialogue import Turn, count_tokens, transcript
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.dialogues.phrases import YES_NO

Condition = Literal["main", "closed_book", "oracle", "length", "position"]


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


def stretched(item: Item, target_tokens: int, seed: int, others: Sequence[Item] = ()) -> Variant:
    """The dialogue with a haystack among its turns up to ``target_tokens``: the fact turns
    of ``others`` (the dataset's items; those in the item's language are used), their
    entities' facts and small talk (see the module note)."""
    rng = random.Random(f"{seed}:{item.id}:length:{target_tokens}")
    source = _Source(item, others)
    turns, _ = haystack.fill(item.dialogue, target_tokens - count_tokens(item.transcript), source, rng, source.names_topic)
    return Variant(item, "length", tuple(turns), float(target_tokens))


def placed(item: Item, target_tokens: int, depth: float, seed: int, others: Sequence[Item] = ()) -> Variant:
    """The dialogue kept whole, after ``depth`` of the haystack's turns and before the rest:
    depth 0 puts it at the start of the context, 1 at the end. The haystack is the same
    for every depth of an item, so only the position changes; the dialogue goes between
    two of its units (a block is never split), the boundary nearest to ``depth``."""
    rng = random.Random(f"{seed}:{item.id}:position:{target_tokens}")
    source = _Source(item, others)
    speakers = sorted({(t.speaker, t.role) for t in item.dialogue})
    first = next((t for t in item.dialogue if t.kind in haystack.VALUE_KINDS), None)
    naming = first is None or source.names_topic(first)  # what goes before the dialogue is followed by it
    units = haystack.units(target_tokens - count_tokens(item.transcript), source, rng, naming, speakers)
    fields, ends = haystack.voices(units, speakers, None, None, rng, source)
    padding = haystack.turns(fields)
    at = min([0, *ends], key=lambda end: abs(end - depth * len(padding)))
    return Variant(item, "position", (*padding[:at], *item.dialogue, *padding[at:]), depth)


# ---------------------------------------------------------------------------- the haystack of an item
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_SEP = "\x1f"
_IRI = re.compile(r"<([^>]*)>")
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'll", "i'd", "i’m", "i’ve", "i’ll", "i’d"})


@dataclass(frozen=True)
class _Said:
    """Text of another item (a block or one turn) with what an item's guard checks."""

    texts: tuple[str, ...]
    tokens: int
    ties: tuple[tuple[int, int, bool], ...]
    folded: str
    numbers: frozenset[Decimal]
    days: frozenset[tuple[int, int]]
    keys: str  # its words (Russian: lemmas) between separators
    names: tuple[str, ...]  # its names as keys: none may be in the item's words


@dataclass(frozen=True)
class _Other:
    """What one item lends other items' haystacks: its block (None if its first fact turn
    names no name of its question), its turns stating another entity's fact, its entities."""

    block: _Said | None
    facts: tuple[_Said, ...]
    entities: frozenset[str]


_OTHERS: dict[str, _Other] = {}  # by item id (a hash of its content), for every sweep of a run


def _keys(text: str, lang: str) -> tuple[str, list[str]]:
    """``text`` as its words' keys between separators, and the keys of its name runs: words
    that are capitalised (not first in a sentence: "I" and "I'm" aside) or hold a letter and a
    digit ("CL-0045"), next to each other ("Claim CL-0045", "Ивана Смирнова")."""
    keys, names, run = [], [], []
    start = True
    at = 0
    for m in _TOKEN.finditer(text):
        between = text[at : m.start()]
        if any(c in ".!?\n" for c in between):
            start = True
        word = m.group()
        key = lemma_key(word) if lang == "ru" else word.casefold().removesuffix("'s").removesuffix("’s")
        has_digit = any(c.isdigit() for c in word)
        name = (has_digit and not word.isdigit()) or (not start and word[:1].isupper() and len(word) > 1
                                                      and key not in _NOT_NAMES)
        if name and (not run or not any(c in ".!?,;:()\n" for c in between)):
            run.append(key)
        else:
            if run:
                names.append(_SEP + _SEP.join(run) + _SEP)
            run = [key] if name else []
        keys.append(key)
        start, at = False, m.end()
    if run:
        names.append(_SEP + _SEP.join(run) + _SEP)
    return _SEP + _SEP.join(keys) + _SEP, names


def _said(texts: Sequence[str], lang: str, ties: tuple[tuple[int, int, bool], ...] = ()) -> _Said:
    joined = " ".join(texts)
    numbers, days = haystack.readings(joined)
    keys, names = _keys(joined, lang)
    return _Said(tuple(texts), sum(map(count_tokens, texts)), ties, joined.casefold(), numbers, days, keys, tuple(names))


def _other(item: Item) -> _Other:
    if item.id not in _OTHERS:
        lang = item.language
        turns = [t for t in item.dialogue if t.kind in ("fact", "misstatement")]
        topic = _keys(item.question, lang)[1]
        block = None
        if turns and turns[0].kind == "fact" and any(n in _keys(turns[0].text, lang)[0] for n in topic if _long(n)):
            ties = haystack.slip_ties(turns)
            if ties is not None:
                block = _said([t.text for t in turns], lang, ties)
        facts = tuple(_said([t.text], lang) for t in item.dialogue if t.kind == "confusable")
        entities = frozenset(iri for triple in item.metadata.source_triples
                             for k, iri in enumerate(_IRI.findall(triple)) if k != 1)  # subjects and objects
        if len(_OTHERS) > 200_000:
            _OTHERS.clear()
        _OTHERS[item.id] = _Other(block, facts, entities)
    return _OTHERS[item.id]


def _long(name: str) -> bool:
    """A name a turn can be said to name the topic by: a code, or a word of 4 letters or more
    ("IT" of "IT department" is also a pronoun)."""
    return len(name) > 5 or any(c.isdigit() for c in name)


class _Source(haystack.Source):
    """The haystack of one item of a dataset: blocks and entities' facts of ``others`` in
    its language (half the blocks of items asking a question of the same kind), and talk."""

    def __init__(self, item: Item, others: Sequence[Item]):
        lang = item.language
        golds = [item.gold] if isinstance(item.gold, str) else list(item.gold)
        values = [*item.metadata.fact_values, *golds, *item.gold_aliases]
        yes_no = {w.casefold() for w in YES_NO[lang]}
        words = [w for w in (*values, *(t.speaker for t in item.dialogue)) if w.casefold() not in yes_no]
        super().__init__(lang, haystack.Guard.of(words, [*values, item.question]))
        self.item = item
        own = " ".join([item.question, *(t.text for t in item.dialogue if t.kind in ("fact", "misstatement"))])
        self.own_keys, self.own_names = _keys(own, lang)
        self.topic = [n for n in _keys(item.question, lang)[1] if _long(n)]
        self.entities = _other(item).entities
        self.others = [o for o in others if o.language == lang and o.metadata.scenario_id != item.metadata.scenario_id
                       and o.id != item.id]
        self.alike = [o for o in self.others if o.metadata.topic == item.metadata.topic]
        self.used: set[str] = set()
        self.checked: dict[str, bool] = {}
        self.said: set[tuple[str, int]] = set()

    def names_topic(self, turn: Turn) -> bool:
        keys = _keys(turn.text, self.lang)[0]
        return any(name in keys for name in self.topic)

    def _fits(self, said: _Said) -> bool:
        return (self.guard.allows(said.folded, said.numbers, said.days)
                and not any(name in said.keys for name in self.own_names)
                and not any(name in self.own_keys for name in said.names))

    def _draw(self, rng: random.Random, alike: bool) -> Item | None:
        pool = self.alike if alike and self.alike else self.others
        return pool[int(rng.random() * len(pool))] if pool else None

    def _usable(self, other: Item) -> _Other | None:
        lent = _other(other)
        if other.id not in self.checked:
            self.checked[other.id] = self.entities.isdisjoint(lent.entities)
        return lent if self.checked[other.id] else None

    def block(self, rng: random.Random) -> haystack.Unit | None:
        for _ in range(8):
            other = self._draw(rng, alike=rng.random() < 0.5)
            lent = self._usable(other) if other is not None and other.id not in self.used else None
            if lent and lent.block and self._fits(lent.block) and self.fresh(lent.block.texts):
                self.used.add(other.id)
                return haystack.Unit(lent.block.texts, lent.block.tokens, names=True, ties=lent.block.ties)
        return None

    def fact(self, rng: random.Random) -> haystack.Unit | None:
        for _ in range(8):
            other = self._draw(rng, alike=True)
            lent = self._usable(other) if other is not None else None
            if not lent or not lent.facts:
                continue
            k = int(rng.random() * len(lent.facts))
            said = lent.facts[k]
            if (other.id, k) not in self.said and self._fits(said) and self.fresh(said.texts):
                self.said.add((other.id, k))
                return haystack.Unit(said.texts, said.tokens, names=True)
        return None
