"""Closed-book guessing: an item a model answers without the dialogue tests memory, not
the dialogue, and is dropped.

Each guesser gets only the question and the format instruction. A guess counts as right
when its value matches the gold by the answer checker (``value_matches``: a guess in the
wrong format that states the right value still shows the answer is known), or, for free
text (one token, short text), when it contains the gold or an alias as whole words, or its
rapidfuzz ratio to one reaches ``similarity``. Guessers run in turn, each on the items no
earlier guesser answered. A guess that failed after the gateway's retries drops nothing
(it is counted in the gateway's usage).

Yes/no items are not guessed: a guesser is right half the time by chance, so dropping
its hits would remove half of them and skew the kept answers towards the guesser's
wrong default, while telling nothing about memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import fuzz

from kgsynth.filters.base import ItemFilter
from kgsynth.formats.answers import AnswerFormat, check_answer, normalize_text
from kgsynth.llm import LLMGateway, Request
from kgsynth.synth.dialogues.item import Item

_FREE_TEXT = (AnswerFormat.one_token, AnswerFormat.short_text)

PROMPT = {
    "en": "Answer the question from what you know. {instruction}\n\nQuestion: {question}",
    "ru": "Ответьте на вопрос по своим знаниям. {instruction}\n\nВопрос: {question}",
}


def closed_book_messages(item: Item) -> list[dict[str, str]]:
    """The guesser's prompt: the question and its format instruction, no dialogue."""
    text = PROMPT[item.language].format(instruction=item.format_instruction, question=item.question)
    return [{"role": "user", "content": text}]


class ClosedBookFilter(ItemFilter):
    name = "closed_book"

    def __init__(self, guessers: Sequence[LLMGateway], similarity: float = 90):
        self.guessers = list(guessers)
        self.similarity = similarity

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        verdicts: list[str | None] = [None] * len(items)
        to_guess = [i for i, item in enumerate(items) if item.answer_format is not AnswerFormat.yes_no]
        for gateway in self.guessers:
            results = gateway.complete_all([Request(closed_book_messages(items[i]), stage=self.name) for i in to_guess])
            for i, result in zip(to_guess, results, strict=True):
                if result.ok and self.knows(result.text, items[i]):
                    guess = " ".join(result.text.split())[:80]
                    verdicts[i] = f"{gateway.config.model} answered without the dialogue: {guess!r}"
            to_guess = [i for i in to_guess if verdicts[i] is None]
        return verdicts

    def knows(self, guess: str, item: Item) -> bool:
        """Whether ``guess`` gives the item's answer."""
        if check_answer(guess, item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases).value_matches:
            return True
        if item.answer_format not in _FREE_TEXT:
            return False
        said = normalize_text(guess)
        golds = [item.gold] if isinstance(item.gold, str) else item.gold
        for gold in (normalize_text(g) for g in [*golds, *item.gold_aliases]):
            # "The capital of France is Paris." knows "Paris" as well as "Paris" does
            if gold and (f" {gold} " in f" {said} " or fuzz.ratio(said, gold) >= self.similarity):
                return True
        return False
