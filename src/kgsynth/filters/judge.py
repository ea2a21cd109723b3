"""The LLM judge: a fixed rubric, each criterion scored 0-2 with a short rationale.

The judge sees the dialogue, the question, the format instruction, the gold answer and
the rule (it must be able to tell whether the dialogue states it). An item passes when
its total reaches ``min_total`` and no criterion is below ``min_each``. A passing item
keeps the scores and rationales (``Item.review``) for top-N selection and for anyone
auditing the dataset; a rejection names the failing criterion and its rationale. A judge
call that failed after the gateway's retries rejects the item: an unjudged item cannot be
vouched for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field, create_model

from kgsynth.filters.base import ItemFilter
from kgsynth.kg.vocab import Rule
from kgsynth.llm import LLMGateway, Request
from kgsynth.synth.dialogues.item import CriterionScore, Item, Review

# each criterion asked as a question whose "yes" is good: small judges mix up a statement
# that should hold with one that does ("needs the dialogue" scored 0 while agreeing it does)
RUBRIC = {
    "grammar": "Are the dialogue and the question written in correct, fluent {language}?",
    "naturalness": "Does the dialogue sound like a real conversation between its speakers?",
    "needs_dialogue": "Is a value said in the dialogue needed to get the answer?",
    "dialogue_suffices": "Do the dialogue and the rule together give everything the answer needs?",
    "answer_correct": "Is the gold answer right for the question, given the dialogue and the rule?",
    "rule_not_stated": "Is the rule kept out of the dialogue, so that no speaker says its rate, threshold or formula?",
}
LANGUAGE_NAMES = {"en": "English", "ru": "Russian"}


class Score(BaseModel):
    rationale: str = Field(description="at most ten words")
    score: int = Field(ge=0, le=2, description="2 = yes, 1 = partly, 0 = no")


# the judge's output model: one field per criterion, each a rationale then a score (reason first)
Verdict = create_model("Verdict", **{name: (Score, ...) for name in RUBRIC})


def judge_messages(item: Item, rule: Rule | None) -> list[dict[str, str]]:
    language = LANGUAGE_NAMES.get(item.language, item.language)
    criteria = "\n".join(f"- {name}: {text.format(language=language)}" for name, text in RUBRIC.items())
    gold = item.gold if isinstance(item.gold, str) else ", ".join(item.gold)
    rule_text = (rule.statements.get(item.language) or rule.statements.get("en") or rule.labels.get(item.language) or rule.iri) if rule else "none (the answer is a fact of the dialogue)"
    prompt = (
        "You check one item of a reading-comprehension test. Answer each question below about it with "
        "a reason of at most ten words, then a score: 2 = yes, 1 = partly, 0 = no.\n\n"
        f"Dialogue:\n{item.transcript}\n\n"
        f"Question: {item.question}\nFormat: {item.format_instruction}\nGold answer: {gold}\n"
        f"Rule (known to the reader, not said in the dialogue): {rule_text}\n\n"
        f"Questions:\n{criteria}\n\n"
        'Reply with JSON: one key per question, each {"rationale": "...", "score": 0, 1 or 2}.'
    )
    return [{"role": "user", "content": prompt}]


class JudgeFilter(ItemFilter):
    name = "judge"

    def __init__(self, gateway: LLMGateway, rules: Mapping[str, Rule], min_total: int = 9, min_each: int = 1):
        self.gateway, self.rules = gateway, rules
        self.min_total, self.min_each = min_total, min_each
        self._reviews: dict[str, Review] = {}

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        self._reviews.clear()
        requests = [Request(judge_messages(item, self.rules.get(item.metadata.rule_iri or "")), Verdict, self.name) for item in items]
        verdicts: list[str | None] = []
        for item, result in zip(items, self.gateway.complete_all(requests), strict=True):
            if not result.ok:
                verdicts.append(f"the judge failed: {result.error}")
                continue
            review = _review(result.value, self.gateway.config.model)
            self._reviews[item.id] = review
            verdicts.append(self._verdict(review))
        return verdicts

    def _verdict(self, review: Review) -> str | None:
        low = [c for c in review.criteria if c.score < self.min_each]
        if low:
            return f"judge: {low[0].name} scored {low[0].score}: {low[0].rationale}"
        if review.total < self.min_total:
            return f"judge: total {review.total} below {self.min_total}"
        return None

    def annotate(self, item: Item) -> Item:
        return item.model_copy(update={"review": self._reviews.pop(item.id)})


def _review(verdict: BaseModel, model: str) -> Review:
    criteria = tuple(CriterionScore(name=name, score=getattr(verdict, name).score, rationale=" ".join(getattr(verdict, name).rationale.split()))
                     for name in RUBRIC)
    return Review(model=model, total=sum(c.score for c in criteria), criteria=criteria)
