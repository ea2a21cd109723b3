"""Attribution: with other entities' facts in the dialogue (confusable turns), every fact
the gold is computed from must still belong, for a reader, to the question's entity.

A reader gives a statement to the entity it names, else to the last one named. So a
confusable turn must not name the topic, and the first turn after it that states a fact of
the topic must name the topic again: otherwise that fact would read as the other entity's
and the gold, computed from the topic's facts, would no longer follow from the dialogue.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgsynth.filters.base import ItemFilter
from kgsynth.formats.answers import has_any_word
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.scenario import Scenario


class AttributionFilter(ItemFilter):
    name = "attribution"

    def __init__(self, scenarios: dict[str, Scenario]):
        self.scenarios = scenarios

    @classmethod
    def from_scenarios(cls, scenarios: Iterable[Scenario]) -> AttributionFilter:
        return cls({s.id: s for s in scenarios})

    def reason(self, item: Item) -> str | None:
        if not item.metadata.confusable_turns:
            return None
        scenario = self.scenarios.get(item.metadata.scenario_id)
        if scenario is None:
            return None
        entity = scenario.wording[item.language].entity
        writings = entity.writings()
        topic = scenario.entity.value
        after_other = None  # the confusable turn the reader last met, until the topic is named again
        for i, turn in enumerate(item.dialogue):
            if turn.kind == "confusable":
                if has_any_word(turn.text, writings):
                    return f"turn {i} states another entity's fact but names {entity.name}"
                after_other = i
            elif after_other is None:
                continue  # no other entity to take this turn's facts: whether it names the topic does not matter
            elif has_any_word(turn.text, writings):
                after_other = None
            elif any(scenario.facts[f].subject.value == topic for f in turn.facts):
                return f"turn {i} states a fact of {entity.name} after turn {after_other}'s other entity without naming it"
        return None
