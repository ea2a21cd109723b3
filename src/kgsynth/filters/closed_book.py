"""Closed-book guessing: an item a model answers without the dialogue tests memory, not
the dialogue, and is dropped.

Each guesser gets only the question and the format instruction. A guess counts as right
when its value matches the gold by the answer checker (``value_matches``: a guess in the
wrong format that states the right value still shows the answer is known). Guessers run
in turn, each on the items no earlier guesser answered. A guess that failed after the
gateway's retries drops nothing (it is counted in the gateway's usage).
"""

from __future__ import annotations

from collections.abc import Sequence

from kgsynth.filters.base import ItemFilter
from kgsynth.llm import LLMGateway, Request
from kgsynth.synth.formats import check_answer
from kgsynth.synth.item import Item

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

    def __init__(self, guessers: Sequence[LLMGateway]):
        self.guessers = list(guessers)

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        verdicts: list[str | None] = [None] * len(items)
        for gateway in self.guessers:
            open_items = [i for i, verdict in enumerate(verdicts) if verdict is None]
            results = gateway.complete_all([Request(closed_book_messages(items[i]), stage=self.name) for i in open_items])
            for i, result in zip(open_items, results, strict=True):
                item = items[i]
                if result.ok and check_answer(result.text, item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases).value_matches:
                    guess = " ".join(result.text.split())[:80]
                    verdicts[i] = f"{gateway.config.model} answered without the dialogue: {guess!r}"
        return verdicts

    def reason(self, item: Item) -> str | None:
        return self.reasons([item])[0]
