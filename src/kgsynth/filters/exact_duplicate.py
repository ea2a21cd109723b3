"""Exact duplicates: no two items of a dataset share language, question and gold.

A subgraph gives one scenario per difficulty, each asking the same question with the
same gold; without this filter a dataset can hold the same item in two difficulty cells
(dialogues differ, the task does not). The first item kept wins; a later one is dropped
and its cell takes another scenario. Question and gold are compared casefolded, ё as е,
spaces collapsed; a set gold as its members in any order. The pipeline asks before it
words a scenario (``reason_before_wording``, with the template's ``question_key``), so
a twin costs no wording, and again for every worded item.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgsynth.filters.base import DatasetFilter
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.scenario import question_key


def _reason(kept_id: str) -> str:
    return f"the same question and gold as item {kept_id}"


class ExactDuplicateFilter(DatasetFilter):
    name = "exact_duplicate"

    def __init__(self):
        self._kept: dict[bytes, str] = {}  # duplicate key -> id of the item kept with it

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        """Each item against the kept ones and the earlier items of ``items`` that passed."""
        passed: dict[bytes, str] = {}
        verdicts: list[str | None] = []
        for item in items:
            key = question_key(item.language, item.question, item.gold)
            first = self._kept.get(key) or passed.get(key)
            if first:
                verdicts.append(_reason(first))
            else:
                verdicts.append(None)
                passed[key] = item.id
        return verdicts

    def reason_before_wording(self, key: bytes) -> str | None:
        """The reason to drop, before it is worded, an item whose :func:`question_key` is
        ``key``: a kept item has it (None when none has)."""
        kept = self._kept.get(key)
        return _reason(kept) if kept else None

    def remember(self, items: Sequence[Item]) -> None:
        for item in items:
            self._kept.setdefault(question_key(item.language, item.question, item.gold), item.id)
