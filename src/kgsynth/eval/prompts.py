"""The messages a model under evaluation gets, in the item's language (the key-value
probe's in English: it asks about UUIDs, no item).

Two renderings of the dialogue: ``transcript`` puts it into one user message as
``Speaker: words`` lines; ``chat`` sends the turns as chat messages, the first speaker's
as ``user`` and the others' as ``assistant`` (chat roles hold two parties and a dialogue
may have three), each line prefixed with the speaker's name, then the question as a user
message. Neighbouring turns of the same role share one message, so user and assistant
alternate, as strict chat templates (Mistral, Gemma) require.
"""

from __future__ import annotations

from kgsynth.eval.config import Rendering
from kgsynth.eval.kv import KVPrompt
from kgsynth.eval.render import Variant
from kgsynth.synth.dialogues.dialogue import Turn, transcript
from kgsynth.synth.dialogues.item import Item

PROMPT = {
    "en": {
        "system": "You read a conversation and answer a question about it. Take the facts from the conversation. "
        "Reply with the answer only, in exactly the format asked for, with no explanation.",
        "closed_book": "Answer the question. Reply with the answer only, in exactly the format asked for, with no explanation.",
        "closed_book_rule": "Answer from your own knowledge, briefly.",
        "rule": "Rule that applies: {rule}",
        "conversation": "Conversation:",
        "question": "Question: {question}\n{instruction}",
        "probe": "In the conversation, {speaker} says: \"{masked}\"\nWhat stands in place of ___? "
        "Reply with that value only, as the conversation states it.",
        "rule_probe": "Which rule answers this question: {question}\nState the rule in one sentence, with its numbers.",
    },
    "ru": {
        "system": "Ты читаешь разговор и отвечаешь на вопрос о нём. Факты бери из разговора. "
        "Отвечай только ответом, строго в требуемом формате, без пояснений.",
        "closed_book": "Ответь на вопрос. Отвечай только ответом, строго в требуемом формате, без пояснений.",
        "closed_book_rule": "Отвечай по своим знаниям, кратко.",
        "rule": "Действующее правило: {rule}",
        "conversation": "Разговор:",
        "question": "Вопрос: {question}\n{instruction}",
        "probe": "В разговоре {speaker} говорит: «{masked}»\nЧто стоит на месте ___? "
        "Ответь только этим значением, как оно сказано в разговоре.",
        "rule_probe": "Какое правило отвечает на этот вопрос: {question}\nСформулируй правило одним предложением, с его числами.",
    },
}

# the key-value probe asks no item, so it has no language: source 004's prompt (its figure 6)
KV_PROMPT = {
    "system": "Reply with the value only, exactly as the JSON object writes it, with no explanation.",
    "user": "Extract the value corresponding to the specified key in the JSON object below.\n\n"
    "JSON data:\n{json}\n\nKey: \"{key}\"\nCorresponding value:",
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


def rule_probe_messages(item: Item) -> list[dict[str, str]]:
    """The rule probe, closed book: no dialogue, only which rule answers the question."""
    text = PROMPT[item.language]
    return [{"role": "system", "content": text["closed_book_rule"]},
            {"role": "user", "content": text["rule_probe"].format(question=item.question)}]


def kv_messages(prompt: KVPrompt) -> list[dict[str, str]]:
    """The key-value probe: the JSON object, the queried key, and only its value to give."""
    return [{"role": "system", "content": KV_PROMPT["system"]},
            {"role": "user", "content": KV_PROMPT["user"].format(json=prompt.json, key=prompt.queried[0])}]


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
    lines = [("user" if t.speaker == first else "assistant", f"{t.speaker}: {t.text}") for t in turns]
    for role, content in [*lines, ("user", ask if lines[-1][0] == "assistant" else f"\n{ask}")]:
        if messages[-1]["role"] == role:
            messages[-1] = {"role": role, "content": f"{messages[-1]['content']}\n{content}"}
        else:
            messages.append({"role": role, "content": content})
    return messages
