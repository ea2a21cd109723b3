"""Phrase banks for the fact-bearing turns of the template verbaliser, by language.

Slots, filled from a scenario's :class:`~kgsynth.synth.naming.lexicon.Wording`:
``{entity}`` (Russian also ``{entity_gent}``, ``{entity_datv}``, ``{entity_accs}``),
``{cls}`` / ``{a_cls}`` (the class noun; Russian ``{cls_datv}``, ``{cls_accs}``),
``{the_noun}`` (the relation's noun, with its subject when the subject is not the topic:
"the monthly salary of Ivan Smirnov", «месячная зарплата у Ивана Смирнова»; without the
words the topic's name repeats when it is: "the budget" of "Trip TR-1"), ``{another}``
(the same noun as a further value of the subject's relation: "another monthly purchase",
«ещё одна покупка за месяц»; a sentence opening with it is capitalised), ``{which}``
(Russian "какой" agreeing with the noun), ``{value}``, ``{wrong}`` and ``{statement}`` (a
yes/no fact as a sentence). Every template reads right whether the entity is a person or a thing. A correction
always says it is one, and a further value of a relation always says it is another one,
never which in order, so neither can be read as the other.
"""

from __future__ import annotations

STATEMENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "name": (
            "Let's talk about {entity}.",
            "I have a question about {entity}.",
            "Can we start with {entity}?",
            "Next on my list is {entity}.",
        ),
        "name_class": (
            "Let's talk about the {cls} {entity}.",
            "I have a question about the {cls} {entity}.",
            "Next on my list is the {cls} {entity}.",
        ),
        "class": (
            "By the way, {entity} is {a_cls}.",
            "Keep in mind that {entity} is {a_cls}.",
            "For context, {entity} is {a_cls}.",
        ),
        "name_again": (  # the class piece when the name already says it ("Claim CL-0032"): the name, confirmed
            "Right, {entity} — I have it open.",
            "Yes, I've found {entity} in the system.",
            "Just so we're on the same page: we're talking about {entity}.",
            "I have everything on {entity} in front of me.",
        ),
        "fact": (
            "{The_noun} is {value}.",
            "By the way, {the_noun} is {value}.",
            "Just so you know, {the_noun} is {value}.",
            "I checked: {the_noun} is {value}.",
        ),
        "fact_again": (
            "On top of that, there is {another}, a separate one: {value}.",
            "There is {another} as well: {value}.",
            "And {another}, in addition: {value}.",
            "The list also has {another}: {value}.",
            "Add to that {another}: {value}.",
            "{another} on the list: {value}.",
        ),
        "yes_no": ("By the way, {statement}.", "For the record, {statement}.", "Also worth noting: {statement}."),
        "confusable": (  # a fact of another entity of the same kind, named: it must not be taken for the topic's
            "Different case, but {the_noun} is {value}.",
            "Not ours, but for comparison: {the_noun} is {value}.",
            "Unrelated, but I just saw that {the_noun} is {value}.",
            "That reminds me of another file: {the_noun} is {value}.",
        ),
        "confusable_again": (  # a further value of that other entity's relation
            "Also not ours, but there is {another}: {value}.",
            "From that same other file: {another} is {value}.",
            "By the way, that other case also has {another}: {value}.",
            "In that same other file, {another} is {value}.",
        ),
        "slip": (  # a value said wrongly, corrected later (a number or a date, never a yes/no)
            "If I remember right, {the_noun} is {value}.",
            "I think {the_noun} is {value}.",
            "{The_noun} is {value}, as far as I know.",
        ),
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
            "Давай обсудим {entity_accs}.",
            "У меня вопрос по {entity_datv}.",
            "Первым делом — {entity}.",
            "Следующий пункт у меня — {entity}.",
        ),
        "name_class": (
            "Давай обсудим {cls_accs} {entity_accs}.",
            "У меня вопрос по {cls_datv} {entity_datv}.",
            "Первым делом — {cls} {entity}.",
            "Следующий пункт у меня — {cls} {entity}.",
        ),
        "class": (
            "Кстати, {entity} — {cls}.",
            "Учти, что {entity} — это {cls}.",
            "Для контекста: {entity} — {cls}.",
        ),
        "name_again": (
            "Да, карточка по {entity_datv} у меня открыта.",
            "Да, вижу {entity_accs} в системе.",
            "Уточню: всё сказанное касается {entity_gent}.",
            "Все данные по {entity_datv} у меня перед глазами.",
        ),
        "fact": (
            "{The_noun} — {value}.",
            "Кстати, {the_noun} — {value}.",
            "Для справки: {the_noun} — {value}.",
            "Проверено: {the_noun} — {value}.",
        ),
        "fact_again": (
            "Кроме того, есть {another} — {value}.",
            "И это не всё: есть {another} — {value}.",
            "Плюс {another} — {value}.",
            "{another} — {value}.",
            "В списке есть и {another}: {value}.",
            "Добавлю: {another} — {value}.",
        ),
        "yes_no": ("Кстати, {statement}.", "Для справки: {statement}.", "Отмечу: {statement}."),
        "confusable": (
            "Это другой случай, но {the_noun} — {value}.",
            "Не про наш случай, но для сравнения: {the_noun} — {value}.",
            "К слову, по другому делу: {the_noun} — {value}.",
            "Это из соседней папки: {the_noun} — {value}.",
        ),
        "confusable_again": (
            "Тоже не наш случай, но есть {another} — {value}.",
            "Из той же соседней папки: {another} — {value}.",
            "К слову, по тому же делу есть {another} — {value}.",
            "По тому же чужому делу: {another} — {value}.",
        ),
        "slip": (
            "Если я правильно помню, {the_noun} — {value}.",
            "Кажется, {the_noun} — {value}.",
            "{The_noun}, насколько я знаю, — {value}.",
        ),
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
            "Ещё раз: {which} там {the_noun}?",
        ),
        "restate": ("{Value}.", "Там {value}."),
    },
}
