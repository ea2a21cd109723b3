"""Structure: the item is well formed for its difficulty (its turns and reasoning steps in the level's
ranges, every fact-bearing turn stating a fact), and its gold is valid in its own format."""

from __future__ import annotations

import functools

from kgsynth.filters.base import ItemFilter
from kgsynth.formats.answers import AnswerFormat, Constraints, check_answer
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.scenario import DIFFICULTY


class StructureFilter(ItemFilter):
    name = "structure"

    def reason(self, item: Item) -> str | None:
        m = item.metadata
        spec = DIFFICULTY[m.difficulty]
        turns = m.turns - m.padding_turns
        if not spec.turns[0] <= turns <= spec.turns[1]:
            return f"{turns} turns; {m.difficulty.value} needs {spec.turns[0]}-{spec.turns[1]}"
        if not spec.holds(m.links):
            low, high = spec.steps
            return f"{m.links} reasoning steps; {m.difficulty.value} needs {f'{low}-{high}' if high else f'{low} or more'}"
        if not m.fact_turn_count:
            return "no fact-bearing turn"
        for i, t in enumerate(item.dialogue):
            if t.kind == "fact" and not t.facts:
                return f"fact-bearing turn {i} states no fact (a name or a class alone is not one)"
        for fact, (turn, value) in enumerate(zip(m.fact_to_turn, m.fact_values, strict=True)):
            if value not in item.dialogue[turn].text:
                return f"fact {fact} value {value!r} is not in its turn {turn}"
        gold = item.gold if isinstance(item.gold, str) else tuple(item.gold)
        if not _gold_passes(gold, item.answer_format, item.constraints):
            gold_text = item.gold if isinstance(item.gold, str) else ", ".join(item.gold)
            return f"gold {gold_text!r} does not pass its own {item.answer_format.value} check"
        return None


@functools.lru_cache(maxsize=4096)  # 4 in 5 gold checks repeat a recent one (yes and no; a scenario's other language)
def _gold_passes(gold: str | tuple[str, ...], answer_format: AnswerFormat, constraints: Constraints) -> bool:
    """Whether ``gold`` (a set's as a tuple: a cache key), written as an answer, passes its own check."""
    golds = gold if isinstance(gold, str) else list(gold)
    gold_text = gold if isinstance(gold, str) else ", ".join(gold)
    return check_answer(gold_text, answer_format, golds, constraints).correct
