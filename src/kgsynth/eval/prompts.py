"""The messages a model under evaluation gets, in the item's language.

Two renderings of the dialogue: ``transcript`` puts it into one user message as
``Speaker: words`` lines; ``chat`` sends each turn as its own chat message (the first
speaker's turns as ``user``, the others' as ``assistant``, each prefixed with the
speaker's name, since chat roles hold two parties and a dialogue may have three),
then the question as a last user message.
"""

from __future__ import annotations

from kgsynth.eval.config import Rendering
from kgsynth.eval.render import Variant
from kgsynth.synth.dialogue import Turn, transcript

PROMPT = {
    "en": {
        "system": "You read a conversation and answer a question about it. Take the facts from the conversation. "
        "Reply with the answer only, in exactly the format asked for, with no explanation.",
        "closed_book": "Answer the question. Reply with the answer only, in exactly the format asked for, with no explanation.",
        "rule": "Rule that applies: {rule}",
        "conversation": "Conversation:",
        "question": "Question: {question}\n{instruction}",
        "probe": "In the conversation, {speaker} says: \"{masked}\"\nWhat stands in place of ___? "
        "Reply with that value only, as the conversation states it.",
    },
    "ru": {
        "system": "Ты читаешь разговор и отвечаешь на вопрос о нём. Факты бери из разговора. "
        "Отвечай только ответом, строго в требуемом формате, без пояснений.",
        "closed_book": "Ответь на вопрос. Отвечай только ответом, строго в требуемом формате, без пояснений.",
        "rule": "Действующее правило: {rule}",
        "conversation": "Разговор:",
        "question": "Вопрос: {question}\n{instruction}",
        "probe": "В разговоре {speaker} говорит: «{masked}»\nЧто стоит на месте ___? "
        "Ответь только этим значением, как оно сказано в разговоре.",
    },
}


def answer_messages(variant: Variant, rendering: Rendering, rule: str | None = None) -> list[dict[str, str]]:
    """System prompt (with the rule when given), the dialogue and the question with its format instruction."""
    item, text = variant.item, PROMPT[variant.item.language]
    ask = text["question"].format(question=item.question, instruction=item.format_instruction)
    return _with_dialogue(variant.turns, text, rendering, rule, ask)


def probe_messages(variant: Variant, rendering: Rendering, turn: Turn, masked: str) -> list[dict[str, str]]:
    """The fact probe: the same dialogue, then only the episodic value of one turn is asked for."""
    text = PROMPT[variant.item.language]
    return _with_dialogue(variant.turns, text, rendering, None, text["probe"].format(speaker=turn.speaker, masked=masked))


def _with_dialogue(turns: tuple[Turn, ...], text: dict[str, str], rendering: Rendering, rule: str | None, ask: str):
    system = text["system"] if turns else text["closed_book"]
    if rule:
        system += "\n" + text["rule"].format(rule=rule)
    messages = [{"role": "system", "content": system}]
    if not turns:
        return [*messages, {"role": "user", "content": ask}]
    if rendering == "transcript":
        return [*messages, {"role": "user", "content": f"{text['conversation']}\n{transcript(turns)}\n\n{ask}"}]
    first = turns[0].speaker
    for turn in turns:
        role = "user" if turn.speaker == first else "assistant"
        messages.append({"role": role, "content": f"{turn.speaker}: {turn.text}"})
    return [*messages, {"role": "user", "content": ask}]
