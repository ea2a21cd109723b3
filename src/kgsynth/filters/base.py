"""One interface for every filter: look at items, say why one must go (or None).

Filters run as a cascade, cheapest first; a rejected item records which filter dropped
it and why. LLM filters (closed-book guessing, judge) implement the same interface with
a batch ``reasons`` so they can send many requests at once; a filter that learns
something worth keeping about a passing item (the judge's scores) returns it from
``annotate``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.scenario import cell_key


class Rejection(BaseModel):
    model_config = ConfigDict(frozen=True)

    item_id: str
    scenario_id: str
    language: str
    cell: str
    filter: str
    reason: str


class ItemFilter:
    """Subclasses set ``name`` and implement ``reason``, or ``reasons`` for batches (each
    default calls the other)."""

    name: ClassVar[str]

    def reason(self, item: Item) -> str | None:
        return self.reasons([item])[0]

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        return [self.reason(item) for item in items]

    def annotate(self, item: Item) -> Item:
        """The passing item, with what this filter found out about it (unchanged by default)."""
        return item


class DatasetFilter(ItemFilter):
    """A filter that judges an item against the items kept before it in the dataset
    (duplicates). Callers ``remember`` the items they keep, in order, and run these filters
    last, scenario by scenario, so only kept items count; a resumed run rebuilds the
    memory from what it kept and decides as an uninterrupted run did."""

    def remember(self, items: Sequence[Item]) -> None:
        raise NotImplementedError


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


@dataclass
class CascadeResult:
    kept: list[Item]
    rejected: list[Rejection]
    seconds: Counter[str] = field(default_factory=Counter)


def apply_filters(
    items: Iterable[Item], filters: Sequence[ItemFilter], together: Callable[[Item], str] | None = None
) -> CascadeResult:
    """Run the cascade; an item stops at the first filter that rejects it. With
    ``together`` (a key such as the scenario id), items sharing a key stand or fall as one:
    once one is rejected, the others are withdrawn unjudged, so later (costlier) filters
    see only groups that can still pass."""
    result = CascadeResult(kept=list(items), rejected=[])
    for f in filters:
        started = time.perf_counter()
        passed, failed_groups = [], set()
        for item, reason in zip(result.kept, f.reasons(result.kept), strict=True):
            if reason is None:
                passed.append(f.annotate(item))
            else:
                result.rejected.append(rejection(item, f.name, reason))
                if together:
                    failed_groups.add(together(item))
        result.kept = [item for item in passed if not together or together(item) not in failed_groups]
        result.seconds[f.name] += time.perf_counter() - started
    return result
