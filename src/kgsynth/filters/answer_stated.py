"""Answer stated: a computed answer must not already appear in the dialogue.

Items whose answer is one of the dialogue's facts (retrieval, and a rule whose answer
is an input, as a 100% payout is the claim) and yes/no answers (the
words occur in any conversation) are out of scope; for the rest the gold value is looked
for in every writing the checker understands (numbers with any grouping, dates in ISO,
D.M.YYYY or with month names, text labels as whole normalised words).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from kgsynth.filters.base import ItemFilter
from kgsynth.formats.answers import (
    NUMERIC_FORMATS,
    AnswerFormat,
    dates_in,
    has_word,
    normalize_text,
    number_marks,
    number_pattern,
    numbers_in,
    parse_number,
)
from kgsynth.synth.dialogues.item import Item

_LETTER_DIGIT_RUN = re.compile(r"[^\W_]+")


def _states_number(text: str, number: Decimal) -> bool:
    """Whether ``text`` states ``number`` in a writing the checker reads. Most dialogues do
    not: the number scan runs only where the number's pattern matches, and the pattern is
    compiled only for a text that holds one of its marks (a gold is in few dialogues)."""
    return (any(mark in text for mark in number_marks(number)) and number_pattern(number).search(text) is not None
            and number in numbers_in(text))


def _first_said(text: str, labels: list[str]) -> str | None:
    """The first of ``labels`` that ``text`` states as whole normalised words. One character
    is never looked for: a class's short alias "A" or "B" is an article or a letter in any
    dialogue. The dialogue is normalised only when a label's letter and digit runs are all
    in its casefolded text (rarely): normalising changes nothing inside such runs."""
    folded = text.casefold().replace("ё", "е")  # normalize_text's first step
    keys = []
    for label in labels:
        key = normalize_text(label)
        if len(key) > 1 and all(run in folded for run in _LETTER_DIGIT_RUN.findall(key)):
            keys.append((label, key))
    if not keys:
        return None
    said = normalize_text(text)
    return next((label for label, key in keys if has_word(said, key)), None)


class AnswerStatedFilter(ItemFilter):
    name = "answer_stated"

    def reason(self, item: Item) -> str | None:
        if item.metadata.answer_in_dialogue or item.answer_format is AnswerFormat.yes_no:
            return None
        text = item.transcript
        if item.answer_format in NUMERIC_FORMATS:
            gold = parse_number(str(item.gold))
            if gold is not None and _states_number(text, gold):
                return f"the dialogue states the answer {item.gold}"
        elif item.answer_format is AnswerFormat.date:
            if dt.date.fromisoformat(str(item.gold)) in dates_in(text):
                return f"the dialogue states the answer date {item.gold}"
        else:
            golds = [item.gold] if isinstance(item.gold, str) else list(item.gold)
            said = _first_said(text, [*golds, *item.gold_aliases])
            if said is not None:
                return f"the dialogue states the answer {said!r}"
        return None
