"""Phrase banks of the template verbaliser, by language.

Slots: ``{entity}``, ``{cls}`` (``{a_cls}``: with "a"/"an"), ``{subject}``, ``{relation}``, ``{value}``, ``{wrong}``.
Russian phrasings keep labels in the nominative (in quotes or after a dash), because a
template cannot decline an arbitrary label, and avoid past-tense verbs, whose gender would
have to match the speaker. No line without slots contains a digit, so it cannot state a
value; distractor lines are also checked against the scenario's labels before use.
"""

from __future__ import annotations

PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "name": (
            "Let's go over {entity}.",
            "I have a question about {entity}.",
            "Can we look at {entity} today?",
            "Next on my list is {entity}.",
        ),
        "class": (
            "It's {a_cls}, by the way.",
            "Keep in mind this one is {a_cls}.",
            "For context, we're dealing with {a_cls} here.",
        ),
        "name_class": (
            "Let's go over {entity}, {a_cls}.",
            "I have a question about {entity} — it's {a_cls}.",
            "Next on my list is {entity}, {a_cls}.",
        ),
        "opening": (
            "Hi, do you have a minute?",
            "Morning! Shall we start?",
            "Hello, thanks for joining.",
            "Hi there, I won't keep you long.",
        ),
        "fact": (
            "The {relation} is {value}.",
            "By the way, the {relation} is {value}.",
            "Just so you know, {relation}: {value}.",
            "I checked: the {relation} is {value}.",
        ),
        "fact_again": (
            "There's another {relation}: {value}.",
            "Also another {relation}, {value}.",
        ),
        "fact_about": (
            "For {subject}, the {relation} is {value}.",
            "As for {subject}, the {relation} is {value}.",
            "I checked {subject}: {relation} — {value}.",
        ),
        "correction": (
            "Sorry, I misspoke earlier: the {relation} is {value}, not {wrong}.",
            "Correction — the {relation} is actually {value}, not {wrong}.",
        ),
        "reask": (
            "Sorry, what was the {relation} again?",
            "Could you repeat the {relation}?",
        ),
        "restate": ("It's {value}.", "{value}, as I said."),
        "ack": ("Got it.", "Okay, noted.", "Right, thanks.", "Understood.", "Makes sense."),
        "clarify_q": (
            "Is that the latest information?",
            "Has that been confirmed?",
            "Is this from the current records?",
        ),
        "clarify_a": (
            "Yes, it's the current version.",
            "Yes, it was confirmed this week.",
            "Yes, straight from the records.",
        ),
        "noise": (
            "Hold on, let me find my notes.",
            "Sorry, my screen just froze for a second.",
            "Can you hear me all right?",
            "Give me a moment, someone is at the door.",
            "Let me grab a pen.",
            "My coffee is getting cold, but go on.",
        ),
        "distractor": (
            "The weather has been strange lately, hasn't it?",
            "I finally tried that new café near the station.",
            "The printer on our floor is jammed again.",
            "Did you see the email about the team lunch?",
            "I need to book a dentist appointment at some point.",
            "The meeting room upstairs is always too cold.",
            "My neighbour started learning the trumpet.",
            "We should update the shared calendar soon.",
            "I'm thinking of taking a few days off in spring.",
            "The lift was out of order again this morning.",
            "Somebody left an umbrella in the kitchen.",
            "I still haven't finished reading that novel.",
        ),
    },
    "ru": {
        "name": (
            "Давай разберём «{entity}».",
            "У меня вопрос по «{entity}».",
            "Посмотрим сегодня «{entity}»?",
            "Следующий пункт у меня — «{entity}».",
        ),
        "class": (
            "Это, кстати, {cls}.",
            "Учти, что здесь у нас {cls}.",
            "Для контекста: речь про объект типа «{cls}».",
        ),
        "name_class": (
            "Давай разберём «{entity}» — это {cls}.",
            "У меня вопрос по «{entity}», тип — {cls}.",
            "Следующий пункт — «{entity}», {cls}.",
        ),
        "opening": (
            "Привет, есть минутка?",
            "Доброе утро! Начнём?",
            "Здравствуйте, спасибо, что подключились.",
            "Привет, я ненадолго.",
        ),
        "fact": (
            "{relation_cap} — {value}.",
            "Кстати, {relation} — {value}.",
            "Для справки: {relation} — {value}.",
            "Проверено: {relation} — {value}.",
        ),
        "fact_again": (
            "И ещё одна запись, {relation} — {value}.",
            "Есть ещё: {relation} — {value}.",
        ),
        "fact_about": (
            "По «{subject}»: {relation} — {value}.",
            "Что касается «{subject}», {relation} — {value}.",
            "Проверено по «{subject}»: {relation} — {value}.",
        ),
        "correction": (
            "Извини, поправка: {relation} — {value}, а не {wrong}.",
            "Поправка: {relation} на самом деле {value}, а не {wrong}.",
        ),
        "reask": (
            "Прости, повтори: {relation}?",
            "Повтори, пожалуйста, {relation}?",
        ),
        "restate": ("{value_cap}.", "{value_cap}, как уже было сказано."),
        "ack": ("Ясно.", "Хорошо, записано.", "Ясно, спасибо.", "Принято.", "Логично."),
        "clarify_q": (
            "Это последние данные?",
            "Это уже подтверждено?",
            "Это из текущих записей?",
        ),
        "clarify_a": (
            "Да, это актуальная версия.",
            "Да, подтвердили на этой неделе.",
            "Да, прямо из записей.",
        ),
        "noise": (
            "Подожди, найду свои заметки.",
            "Извини, у меня экран на секунду завис.",
            "Меня хорошо слышно?",
            "Минутку, кто-то пришёл.",
            "Сейчас, только ручку возьму.",
            "Кофе остывает, но продолжай.",
        ),
        "distractor": (
            "Погода в последнее время какая-то странная, правда?",
            "Говорят, в новом кафе у вокзала вкусно.",
            "Принтер на нашем этаже опять зажевал бумагу.",
            "Видели письмо про общий обед команды?",
            "Мне надо бы записаться к стоматологу.",
            "В переговорке наверху всегда слишком холодно.",
            "Сосед начал учиться играть на трубе.",
            "Надо бы обновить общий календарь.",
            "Думаю взять несколько выходных весной.",
            "Лифт сегодня утром опять не работал.",
            "Кто-то забыл зонт на кухне.",
            "Тот роман так и остался недочитанным.",
        ),
    },
}

YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет")}

SPEAKERS: dict[str, tuple[str, ...]] = {
    "en": ("Alice", "Ben", "Chloe", "Daniel", "Emma", "Felix", "Grace", "Henry", "Isla", "Jack"),
    "ru": ("Ольга", "Иван", "Мария", "Сергей", "Елена", "Павел", "Наталья", "Дмитрий", "Ирина", "Алексей"),
}

ROLES: dict[str, dict[str, tuple[str, ...]]] = {  # by domain local name; "general" is the fallback
    "en": {
        "payroll": ("accountant", "HR manager", "team lead"),
        "insurance": ("claims adjuster", "insurance agent", "client"),
        "retail": ("store manager", "support agent", "customer"),
        "travel": ("travel manager", "booking agent", "traveller"),
        "general": ("analyst", "colleague", "manager"),
    },
    "ru": {
        "payroll": ("бухгалтер", "HR-менеджер", "руководитель группы"),
        "insurance": ("специалист по убыткам", "страховой агент", "клиент"),
        "retail": ("управляющий магазином", "оператор поддержки", "покупатель"),
        "travel": ("тревел-менеджер", "агент по бронированию", "путешественник"),
        "general": ("аналитик", "коллега", "менеджер"),
    },
}
