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
from kgsynth.synth.formats import (
    NUMERIC_FORMATS,
    AnswerFormat,
    dates_in,
    has_word,
    normalize_text,
    numbers_in,
    parse_number,
)
from kgsynth.synth.item import Item

_NON_DIGITS = re.compile(r"[^0-9]+")


def _significant_digits(number: Decimal) -> str:
    """The digits of ``number`` without leading or trailing zeros ("156" for 15600 and 0.156)."""
    return "".join(map(str, number.as_tuple().digits)).strip("0") or "0"


def _said_as_words(key: str, said: str) -> bool:
    """``key`` occurs in ``said`` as whole words. One character is never looked for: a
    class's short alias "A" or "B" is an article or a letter in any dialogue."""
    return len(key) > 1 and has_word(said, key)


class AnswerStatedFilter(ItemFilter):
    name = "answer_stated"

    def reason(self, item: Item) -> str | None:
        if item.metadata.answer_in_dialogue or item.answer_format is AnswerFormat.yes_no:
            return None
        text = item.transcript
        if item.answer_format in NUMERIC_FORMATS:
            gold = parse_number(str(item.gold))
            # Any writing of the gold holds its significant digits in a row, separators
            # aside; most dialogues do not, and then the full number scan is skipped.
            if gold is not None and _significant_digits(gold) in _NON_DIGITS.sub("", text) and gold in numbers_in(text):
                return f"the dialogue states the answer {item.gold}"
        elif item.answer_format is AnswerFormat.date:
            if dt.date.fromisoformat(str(item.gold)) in dates_in(text):
                return f"the dialogue states the answer date {item.gold}"
        else:
            said = normalize_text(text)
            golds = [item.gold] if isinstance(item.gold, str) else list(item.gold)
            for gold in [*golds, *item.gold_aliases]:
                if _said_as_words(normalize_text(gold), said):
                    return f"the dialogue states the answer {gold!r}"
        return None
