"""Phrase banks for the fact-bearing turns of the template verbaliser, by language.

Slots, filled from a scenario's :class:`~kgsynth.synth.lexicon.Wording`:
``{entity}`` (Russian also ``{entity_accs}``, ``{entity_datv}``), ``{cls}`` / ``{a_cls}``
(the class noun; Russian ``{cls_accs}``, ``{cls_datv}``), ``{the_noun}`` (the relation's
noun, with its subject when the subject is not the topic: "the monthly salary of Ivan
Smirnov", «месячная зарплата у Ивана Смирнова»), ``{which}`` (Russian "какой" agreeing
with the noun), ``{value}``, ``{wrong}`` and ``{statement}`` (a yes/no fact as a sentence).
A correction always says it is one, and a second value of the same relation always says
it is another one, so neither can be read as the other.
"""

from __future__ import annotations

STATEMENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "name": (
            "Let's go over {entity}.",
            "I have a question about {entity}.",
            "Can we look at {entity} today?",
            "Next on my list is {entity}.",
        ),
        "name_class": (
            "Let's go over the {cls} {entity}.",
            "I have a question about the {cls} {entity}.",
            "Next on my list is the {cls} {entity}.",
        ),
        "class": (
            "By the way, {entity} is {a_cls}.",
            "Keep in mind that {entity} is {a_cls}.",
            "For context, {entity} is {a_cls}.",
        ),
        "class_named": (  # the name already says the class ("Claim CL-0032")
            "{Entity} is listed as {a_cls} in the system.",
            "Keep in mind that {entity} is registered as {a_cls}.",
        ),
        "fact": (
            "{The_noun} is {value}.",
            "By the way, {the_noun} is {value}.",
            "Just so you know, {the_noun} is {value}.",
            "I checked: {the_noun} is {value}.",
        ),
        "fact_again": (
            "On top of that, there is another {noun}, a separate one: {value}.",
            "There is also a second {noun}, in addition to that one: {value}.",
        ),
        "yes_no": ("By the way, {statement}.", "For the record, {statement}.", "Also worth noting: {statement}."),
        "correction_self": (
            "Sorry, I misspoke earlier: {the_noun} is {value}, not {wrong}.",
            "Let me correct myself: {the_noun} is actually {value}, not {wrong}.",
        ),
        "correction_other": (
            "A correction to what was said: {the_noun} is {value}, not {wrong}.",
            "That's not quite right: {the_noun} is {value}, not {wrong}.",
        ),
        "reask": (
            "Sorry, what was {the_noun} again?",
            "Could you repeat {the_noun}?",
        ),
        "restate": ("It's {value}.", "{Value}."),
    },
    "ru": {
        "name": (
            "Давай разберём {entity_accs}.",
            "У меня вопрос по {entity_datv}.",
            "Посмотрим сегодня {entity_accs}?",
            "Следующий пункт у меня — {entity}.",
        ),
        "name_class": (
            "Давай разберём {cls_accs} {entity_accs}.",
            "У меня вопрос по {cls_datv} {entity_datv}.",
            "Следующий пункт у меня — {cls} {entity}.",
        ),
        "class": (
            "Кстати, {entity} — {cls}.",
            "Учти, что {entity} — это {cls}.",
            "Для контекста: {entity} — {cls}.",
        ),
        "class_named": (
            "{Entity} числится в системе как {cls}.",
            "Учти, что {entity} числится как {cls}.",
        ),
        "fact": (
            "{The_noun} — {value}.",
            "Кстати, {the_noun} — {value}.",
            "Для справки: {the_noun} — {value}.",
            "Проверено: {the_noun} — {value}.",
        ),
        "fact_again": (
            "Кроме того, есть ещё одна, отдельная запись: {noun} — {value}.",
            "И это не всё: отдельно есть ещё {noun} — {value}.",
        ),
        "yes_no": ("Кстати, {statement}.", "Для справки: {statement}.", "Отмечу: {statement}."),
        "correction_self": (
            "Прошу прощения, поправка: {the_noun} — {value}, а не {wrong}.",
            "Поправлю себя: {the_noun} на самом деле {value}, а не {wrong}.",
        ),
        "correction_other": (
            "Поправка к сказанному: {the_noun} — {value}, а не {wrong}.",
            "Тут неточность: {the_noun} — {value}, а не {wrong}.",
        ),
        "reask": (
            "Прости, повтори: {which} {the_noun}?",
            "Напомни, пожалуйста, {which} там {the_noun}?",
        ),
        "restate": ("{Value}.", "Там {value}."),
    },
}
