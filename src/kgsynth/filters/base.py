"""One interface for every filter: look at items, say why one must go (or None).

Filters run as a cascade, cheapest first; a rejected item records which filter dropped
it and why. LLM filters (closed-book guessing, judge) implement the same interface with
a batch ``reasons`` so they can send many requests at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from kgsynth.synth.item import Item
from kgsynth.synth.scenario import cell_key


class Rejection(BaseModel):
    model_config = ConfigDict(frozen=True)

    item_id: str
    scenario_id: str
    language: str
    cell: str
    filter: str
    reason: str


class ItemFilter:
    """Subclasses set ``name`` and implement ``reason`` (or ``reasons`` for batches)."""

    name: ClassVar[str]

    def reason(self, item: Item) -> str | None:
        raise NotImplementedError

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        return [self.reason(item) for item in items]


def rejection(item: Item, filter_name: str, reason: str) -> Rejection:
    m = item.metadata
    return Rejection(
        item_id=item.id,
        scenario_id=m.scenario_id,
        language=item.language,
        cell=cell_key(m.category, m.difficulty, m.answer_format),
        filter=filter_name,
        reason=reason,
    )


def apply_filters(items: Iterable[Item], filters: Sequence[ItemFilter]) -> tuple[list[Item], list[Rejection]]:
    """Run the cascade; an item stops at the first filter that rejects it."""
    kept, rejected = list(items), []
    for f in filters:
        passed = []
        for item, reason in zip(kept, f.reasons(kept), strict=True):
            if reason is None:
                passed.append(item)
            else:
                rejected.append(rejection(item, f.name, reason))
        kept = passed
    return kept, rejected
