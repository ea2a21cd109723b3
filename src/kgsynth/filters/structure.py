"""Structure: the item is well formed for its difficulty, and its gold is valid in its own format."""

from __future__ import annotations

from kgsynth.filters.base import ItemFilter
from kgsynth.synth.formats import check_answer
from kgsynth.synth.item import Item
from kgsynth.synth.scenario import DIFFICULTY


class StructureFilter(ItemFilter):
    name = "structure"

    def reason(self, item: Item) -> str | None:
        m = item.metadata
        spec = DIFFICULTY[m.difficulty]
        turns = m.turns - m.padding_turns
        if not spec.turns[0] <= turns <= spec.turns[1]:
            return f"{turns} turns; {m.difficulty.value} needs {spec.turns[0]}-{spec.turns[1]}"
        if m.fact_turn_count != spec.fact_turns:
            return f"{m.fact_turn_count} fact-bearing turns; {m.difficulty.value} needs {spec.fact_turns}"
        for fact, (turn, value) in enumerate(zip(m.fact_to_turn, m.fact_values, strict=True)):
            if value not in item.dialogue[turn].text:
                return f"fact {fact} value {value!r} is not in its turn {turn}"
        gold_text = item.gold if isinstance(item.gold, str) else ", ".join(item.gold)
        if not check_answer(gold_text, item.answer_format, item.gold, item.constraints).correct:
            return f"gold {gold_text!r} does not pass its own {item.answer_format.value} check"
        return None
