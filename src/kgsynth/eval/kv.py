"""The key-value retrieval probe (source 004, "Lost in the Middle", section 3): a JSON
object of random UUID keys and values, and one of its keys; the model must give that
key's value.

It measures the least a long context asks of a model, copying the tokens that match,
with no language in the way. Each (key count, trial) is one seeded object; its queried
pair is moved through the same other pairs from the first place to the last
(``positions``), so a position's effect is measured on the same pairs. A right answer is
exactly the value: surrounding whitespace, one code fence and quotes a model may wrap it
in are taken off, nothing else is forgiven.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from kgsynth.eval.results import KVQuery
from kgsynth.formats.answers import AnswerCheck
from kgsynth.synth.dialogues.dialogue import count_tokens

CONDITION = "kv"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_FENCE = re.compile(r"```[\w-]*\s*(.*?)\s*```", re.DOTALL)
_QUOTES = "\"'`“”«»"


@dataclass(frozen=True)
class KVPrompt:
    """One question of the probe: the object's ``pairs`` in the order shown, the queried
    pair at ``index`` (``position`` is the share asked for: 0 the first pair, 1 the last)."""

    keys: int
    trial: int
    position: float
    index: int
    pairs: tuple[tuple[str, str], ...]

    @property
    def key(self) -> str:
        """Names the question in results and progress files."""
        return f"{self.object_id}/{self.position!r}"

    @property
    def object_id(self) -> str:
        """The JSON object's name: the same at every position (the cluster of its answers)."""
        return f"{CONDITION}/{self.keys}/{self.trial}"

    @property
    def queried(self) -> tuple[str, str]:
        return self.pairs[self.index]

    @cached_property
    def json(self) -> str:
        """The object as the model sees it: one pair per line, in the order shown."""
        return json.dumps(dict(self.pairs), indent=1)

    @property
    def context_tokens(self) -> int:
        return count_tokens(self.json)

    def query(self) -> KVQuery:
        key, value = self.queried
        return KVQuery(keys=self.keys, trial=self.trial, index=self.index, key=key, value=value)


def random_pairs(keys: int, trial: int, seed: int) -> list[tuple[str, str]]:
    """``keys`` (key, value) pairs of version-4 UUIDs, every key and value distinct; the
    same for the same arguments."""
    rng = random.Random(f"{seed}:{CONDITION}:{keys}:{trial}")
    ids: dict[str, None] = {}  # insertion-ordered: a repeat (all but impossible in 122 random bits) is drawn again
    while len(ids) < 2 * keys:
        ids[str(uuid.UUID(int=rng.getrandbits(128), version=4))] = None
    drawn = list(ids)
    return list(zip(drawn[:keys], drawn[keys:], strict=True))


def place(pairs: Sequence[tuple[str, str]], position: float) -> tuple[tuple[tuple[str, str], ...], int]:
    """The pairs with the first one (the queried pair) moved to ``position`` of the object,
    the others in their order; and the index it lands on."""
    queried, others = pairs[0], list(pairs[1:])
    index = round(position * len(others))
    return (*others[:index], queried, *others[index:]), index


def prompts(key_counts: Iterable[int], positions: Sequence[float], trials: int, seed: int) -> list[KVPrompt]:
    """Every question of the probe, by key count, trial and position."""
    planned = []
    for keys in key_counts:
        for trial in range(trials):
            pairs = random_pairs(keys, trial, seed)
            for position in positions:
                shown, index = place(pairs, position)
                planned.append(KVPrompt(keys, trial, position, index, shown))
    return planned


def answer_text(answer: str | None) -> str:
    """The answer without the wrapping a model may add: whitespace, one code fence, quotes."""
    text = (answer or "").strip()
    if fenced := _FENCE.fullmatch(text):
        text = fenced.group(1)
    return text.strip().strip(_QUOTES).strip()


def score(answer: str | None, value: str) -> AnswerCheck:
    """Strict: in the format when the answer is one UUID, right when it is ``value`` exactly."""
    text = answer_text(answer)
    syntactic_ok = UUID.fullmatch(text) is not None
    correct = syntactic_ok and text == value
    reason = None if correct else ("not a UUID" if not syntactic_ok else "another UUID than the key's value")
    return AnswerCheck(syntactic_ok=syntactic_ok, value_matches=text == value, correct=correct,
                       value=text if syntactic_ok else None, reason=reason)
