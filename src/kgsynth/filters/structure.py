"""Structure: the item is well formed for its difficulty (its turns and reasoning steps in the level's
ranges, every fact-bearing turn stating a fact), and its gold is valid in its own format."""

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
        if not spec.holds(m.links):
            low, high = spec.steps
            return f"{m.links} reasoning steps; {m.difficulty.value} needs {f'{low}-{high}' if high else f'{low} or more'}"
        if not m.fact_turn_count:
            return "no fact-bearing turn"
        bare = [i for i, t in enumerate(item.dialogue) if t.kind == "fact" and not t.facts]
        if bare:
            return f"fact-bearing turn {bare[0]} states no fact (a name or a class alone is not one)"
        for fact, (turn, value) in enumerate(zip(m.fact_to_turn, m.fact_values, strict=True)):
            if value not in item.dialogue[turn].text:
                return f"fact {fact} value {value!r} is not in its turn {turn}"
        gold_text = item.gold if isinstance(item.gold, str) else ", ".join(item.gold)
        if not check_answer(gold_text, item.answer_format, item.gold, item.constraints).correct:
            return f"gold {gold_text!r} does not pass its own {item.answer_format.value} check"
        return None
