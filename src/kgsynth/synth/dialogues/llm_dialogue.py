"""The LLM verbaliser: a model rewords a template item's dialogue and question.

It works behind the template verbaliser, not instead of it: the template gives the plan
(turn count, speakers, which turn carries which fact, the values as written in the
language, the question's meaning), the model gives natural wording, turn for turn. So
the difficulty table, speakers, noise, positions and languages stay those of the
template, and the gold still comes from the rule engine: the model never sees it.

After each generation the code checks that the text is in the item's language (by
script), that every fact value sits in its mapped turn and in no turn where the plan did
not put it, that the question names what the template question names and no bridge or
answer, then runs the caller's item checks (rule and answer leakage). The prompt is in
the item's language (small models answer in the language they are asked in). A failed check is sent back to the model with the reason, at most
``attempts`` generations in all; then the item is rejected with the last reason.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pydantic import BaseModel, Field, create_model
from rapidfuzz import fuzz

from kgsynth.formats.answers import AnswerFormat, date_spans, normalize_text, number_spans, parse_number
from kgsynth.llm import LLMGateway, Request
from kgsynth.synth.dialogues.dialogue import Dialogue
from kgsynth.synth.dialogues.item import Item, item_from_dialogue
from kgsynth.synth.scenarios.scenario import Scenario

STAGE = "verbalise"
_SPACES = re.compile(r"[\s\u00a0\u202f\u2009]+")
_ORDINARY_SPACES = re.compile(r"[ \t\r\n]+")
_YEAR_WORD = re.compile(r"(?:\s*(?:г\.|года|год)(?!\w))?")  # "2024 года" is the date "2024 г."
_NAME_PREFIX = re.compile(r"^(?:[A-ZА-ЯЁ][\w-]*\s?){1,2}:\s+")
NAME_SIMILARITY = 85  # rapidfuzz partial ratio: a Russian name may be inflected ("Ивана Петрова")


class WrittenDialogue(BaseModel):
    """The model's output: one text per planned turn, and the question."""

    turns: list[str]
    question: str


@functools.cache
def written_dialogue_model(turns: int) -> type[WrittenDialogue]:
    """The output model for ``turns`` turns: servers with schema-constrained decoding then
    return exactly that many."""
    return create_model(f"WrittenDialogue{turns}", __base__=WrittenDialogue, turns=(list[str], Field(min_length=turns, max_length=turns)))


ItemCheck = Callable[[Item], "str | None"]


@dataclass(frozen=True)
class Draft:
    """A template item to reword, with the scenario it was made from."""

    scenario: Scenario
    item: Item

    @property
    def dialogue(self) -> Dialogue:
        m = self.item.metadata
        return Dialogue(turns=self.item.dialogue, fact_turns=m.fact_turns, fact_values=m.fact_values, padding_turns=m.padding_turns)


class LLMVerbaliser:
    def __init__(self, gateway: LLMGateway, attempts: int = 3, check: ItemCheck | None = None):
        self.gateway, self.attempts, self.check = gateway, attempts, check

    def reword(self, drafts: Sequence[Draft]) -> list[Item | str]:
        """Each draft's reworded item, or the reason it was rejected (all requests of a
        round are sent together)."""
        outcomes: list[Item | str] = ["not worded"] * len(drafts)
        conversations = [messages(d) for d in drafts]
        open_drafts = list(range(len(drafts)))
        for _ in range(self.attempts):
            requests = [Request(conversations[i], written_dialogue_model(len(drafts[i].item.dialogue)), STAGE) for i in open_drafts]
            results = self.gateway.complete_all(requests)
            retry = []
            for i, result in zip(open_drafts, results, strict=True):
                if not result.ok:
                    outcomes[i] = f"the generator failed: {result.error}"
                    continue  # the gateway has already retried; another round would repeat that
                outcome = self._apply(drafts[i], result.value)
                outcomes[i] = outcome
                if isinstance(outcome, str):
                    feedback = PROMPT[drafts[i].item.language]["feedback"].format(outcome)
                    conversations[i] = [*conversations[i], {"role": "assistant", "content": result.text}, {"role": "user", "content": feedback}]
                    retry.append(i)
            open_drafts = retry
            if not open_drafts:
                break
        return outcomes

    def _apply(self, draft: Draft, written: WrittenDialogue) -> Item | str:
        item = draft.item
        if len(written.turns) != len(item.dialogue):
            return f"{len(written.turns)} turns instead of {len(item.dialogue)}"
        turns = [_without_speaker(_clean(t), turn.text) for t, turn in zip(written.turns, item.dialogue, strict=True)]
        if any(not t for t in turns):
            return "a turn is empty"
        turns = _restore_values(turns, draft)
        reason = (language_problem([*turns, written.question], item.language) or placement_problem(turns, item)
                  or question_problem(_clean(written.question), draft.scenario, item))
        if reason:
            return reason
        dialogue = draft.dialogue
        new_turns = tuple(turn.model_copy(update={"text": text}) for turn, text in zip(dialogue.turns, turns, strict=True))
        reworded = item_from_dialogue(draft.scenario, item.language, dialogue.model_copy(update={"turns": new_turns}),
                                      item.metadata.seed, question=_clean(written.question))
        return (self.check(reworded) if self.check else None) or reworded


def messages(draft: Draft) -> list[dict[str, str]]:
    """The generator's prompt: the plan as numbered lines with the values in brackets."""
    item, scenario = draft.item, draft.scenario
    values = item.metadata.fact_values
    lines = []
    for k, turn in enumerate(item.dialogue, 1):
        text = turn.text
        for f in turn.facts:
            text = text.replace(values[f], f"[{values[f]}]", 1)
        lines.append(f"{k}. {turn.speaker}: {text}")
    names = _named_in_question(scenario, item)
    hidden = [n.label_in(item.language) for n in scenario.hidden]
    words = PROMPT[item.language]
    asks = words["asks"]
    if names:
        asks += words["naming"] + ", ".join(names)
    if hidden:
        asks += words["hiding"].format(", ".join(hidden))
    prompt = words["task"].format(n=len(lines), asks=asks) + (
        f"\n\n{words['dialogue']}\n" + "\n".join(lines) + f"\n\n{words['question']} {item.question}\n\n{words['reply']}"
    )
    return [{"role": "system", "content": words["system"]}, {"role": "user", "content": prompt}]


# In the item's language: small models answer in the language they are asked in.
PROMPT = {
    "en": {
        "system": "You write natural dialogues. You reply with JSON only.",
        "task": (
            "Reword this English dialogue so it sounds like a natural conversation. Rules:\n"
            "- Write in English. Exactly {n} turns, in the same order; turn k says what line k says.\n"
            "- Copy every value in [brackets] exactly, without the brackets, into the same turn.\n"
            "- Add no number, date, name or fact. Explain no rule and compute nothing.\n"
            "- Also reword the question. {asks}."
        ),
        "asks": "It must ask exactly the same thing",
        "naming": ", naming ",
        "hiding": "; it must not name {} (describe it instead)",
        "dialogue": "Dialogue:",
        "question": "Question:",
        "reply": 'Reply with JSON: {"turns": ["text of turn 1", ...], "question": "..."} (turn texts without the speaker names).',
        "feedback": "That reply breaks a rule: {}. Write the whole JSON again and fix it.",
    },
    "ru": {
        "system": "Ты пишешь естественные диалоги на русском языке. Отвечай только JSON.",
        "task": (
            "Перепиши этот диалог на русском языке, чтобы он звучал как живой разговор. Правила:\n"
            "- Пиши по-русски. Ровно {n} реплик в том же порядке; реплика k говорит то же, что строка k.\n"
            "- Каждое значение в [квадратных скобках] перепиши точно, без скобок, в ту же реплику.\n"
            "- Не добавляй чисел, дат, имён и фактов. Не объясняй правил и ничего не вычисляй.\n"
            "- Перепиши и вопрос. {asks}."
        ),
        "asks": "Он должен спрашивать ровно о том же",
        "naming": " и называть ",
        "hiding": "; в нём нельзя называть {} (опиши это иначе)",
        "dialogue": "Диалог:",
        "question": "Вопрос:",
        "reply": 'Ответь JSON: {"turns": ["текст реплики 1", ...], "question": "..."} (тексты реплик без имён говорящих).',
        "feedback": "Этот ответ нарушает правило ({}). Напиши весь JSON заново и исправь.",
    },
}


def language_problem(turns: Sequence[str], language: str) -> str | None:
    """Whether the turns are in the item's language, by script: a model asked for Russian
    sometimes answers in English, which no value check would notice in a turn without values."""
    letters = [c for text in turns for c in text if c.isalpha()]
    cyrillic = sum("\u0400" <= c <= "\u04ff" for c in letters) / max(len(letters), 1)
    if language == "ru" and cyrillic < 0.5:
        return "the dialogue must be in Russian"
    if language == "en" and cyrillic > 0.2:
        return "the dialogue must be in English"
    return None


def placement_problem(turns: Sequence[str], item: Item) -> str | None:
    """Whether each fact value sits in its mapped turn and in no turn the plan kept it out of."""
    m = item.metadata
    for turn, value in zip(m.fact_to_turn, m.fact_values, strict=True):
        if value not in turns[turn]:
            return f"turn {turn + 1} must contain {value!r} exactly"
        if not _distinctive(value):
            continue
        for k, text in enumerate(turns):
            if value in text and value not in item.dialogue[k].text:
                return f"turn {k + 1} must not contain {value!r}"
    return None


def question_problem(question: str, scenario: Scenario, item: Item) -> str | None:
    """Whether the question names what the template question names, and no bridge or gold."""
    if not question:
        return "the question is empty"
    folded = normalize_text(question)
    for name in _named_in_question(scenario, item):
        if fuzz.partial_ratio(normalize_text(name), folded) < NAME_SIMILARITY:
            return f"the question must name {name!r}"
    for node in scenario.hidden:
        label = node.label_in(item.language)
        if label and normalize_text(label) in folded:
            return f"the question names {label!r}, which the dialogue must supply"
    golds = [item.gold] if isinstance(item.gold, str) else list(item.gold)
    if item.answer_format is not AnswerFormat.yes_no:
        for gold in golds:
            if normalize_text(gold) and normalize_text(gold) in folded and normalize_text(gold) not in normalize_text(item.question):
                return f"the question gives the answer {gold!r}"
    return None


def _named_in_question(scenario: Scenario, item: Item) -> list[str]:
    """Labels of the scenario's nodes that the template question contains."""
    nodes = [scenario.entity, *(n for f in scenario.facts for n in (f.subject, f.object) if n.kind == "iri")]
    folded = normalize_text(item.question)
    labels = dict.fromkeys(n.label_in(item.language) for n in nodes)
    return [label for label in labels if label and normalize_text(label) in folded]


def _distinctive(value: str) -> bool:
    """A value worth tracking across turns: with a digit, or of more than one word (a bare
    "yes" or "Anna" may recur legitimately)."""
    return any(c.isdigit() for c in value) or len(value.split()) > 1


def _restore_values(turns: list[str], draft: Draft) -> list[str]:
    """Put each fact value back as written where the model wrote the same value another
    way: a plain number regrouped ("21366" or "21 366" for "21,366" or the thin-spaced
    "21 366"), a date in another form ("21 ноября 2024 года", "2024-11-21"), other spaces
    in money and text ("73 000 руб." with a plain space).
    Only a value that occurs once in its turn is rewritten; anything else is left for the
    checks to reject."""
    item = draft.item
    out = []
    for k, text in enumerate(turns):
        for f in item.dialogue[k].facts:
            value = item.metadata.fact_values[f]
            if value not in text:
                text = _rewrite_value(text, value, draft.scenario.facts[f].object)
        out.append(text)
    return out


def _rewrite_value(text: str, value: str, node) -> str:
    spans = _respaced(text, value) or _same_value(text, value, node)
    if len(spans) != 1:
        return text
    start, end = spans[0]
    return text[:start] + value + text[end:]


def _respaced(text: str, value: str) -> list[tuple[int, int]]:
    """Where ``value``'s words occur with other spaces between them."""
    if not _SPACES.search(value):
        return []
    pattern = r"[\s\u00a0\u202f\u2009]+".join(re.escape(part) for part in _SPACES.split(value))
    return [m.span() for m in re.finditer(pattern, text)]


def _same_value(text: str, value: str, node) -> list[tuple[int, int]]:
    """Where the node's date, or plain number, is written in any form the checker reads."""
    python = node.python if node.kind == "literal" else None
    if isinstance(python, dt.datetime):
        python = python.date()
    if isinstance(python, dt.date):
        return [(start, _YEAR_WORD.match(text, end).end()) for start, end, d in date_spans(text) if d == python]
    if isinstance(python, int | Decimal) and not isinstance(python, bool) and parse_number(value) == python:
        return [(start, end) for start, end, readings in number_spans(text) if python in readings]
    return []


def _without_speaker(text: str, template: str) -> str:
    """The turn without the value brackets (no template turn has one) or a leading speaker
    name ("Anna:", or "Alexey:" for "Алексей") that the model wrote and the template turn
    does not start with."""
    text = text.replace("[", "").replace("]", "")
    prefix = _NAME_PREFIX.match(text)
    return text[prefix.end() :] if prefix and not template.startswith(prefix.group(0).strip()) else text


def _clean(text: str) -> str:
    """Runs of ordinary white space as one space; a no-break space inside "10 000" is kept."""
    return _ORDINARY_SPACES.sub(" ", text).strip()
