"""Target questions in English and Russian, built from the lexicon's noun forms.

A question names what the reader needs and nothing the answer is: retrieval shapes ask
for the value of a relation ("What is the monthly salary of Ivan Smirnov?"), a set, the
entity two facts single out, or the end of a chain whose bridges are described, never
named ("What is the opening date of the usual store of Irina Zaitseva?"). Rule questions
come from the rule's ``kgs:question`` (``{entity}``, or ``{entity:gent}`` for a declined
Russian name), else from a question per operation that never names the rule.
"""

from __future__ import annotations

import re

from kgsynth.kg.vocab import Operation, Rule
from kgsynth.queries import Fact, Node, Shape, Subgraph
from kgsynth.synth import morph
from kgsynth.synth.lexicon import Lexicon, fill_subject

_SLOT = re.compile(r"\{entity(?::(\w+))?\}")

# For rules without kgs:question: what each operation computes, asked without the rule.
_RULE_QUESTIONS = {
    Operation.percent_of: ("What amount is due for {entity}?", "Какая сумма причитается по {entity:datv}?"),
    Operation.percent_of_excess: ("What amount is due for {entity}?", "Какая сумма причитается по {entity:datv}?"),
    Operation.case_rate: ("What amount is due for {entity}?", "Какая сумма причитается по {entity:datv}?"),
    Operation.compare: ("Is {entity} over the threshold?", "Превышен ли порог для {entity:gent}?"),
    Operation.within_days: ("Does {entity} fit within the allowed period?", "Укладывается ли {entity} в допустимый срок?"),
    Operation.days_between: ("How many days does {entity} span?", "Сколько дней охватывает {entity}?"),
    Operation.deadline: ("What is the deadline for {entity}?", "Какой крайний срок для {entity:gent}?"),
    Operation.bracket_class: ("Which class does {entity} fall into?", "К какому классу относится {entity}?"),
}


def rule_question(rule: Rule, entity: Node, lang: str, lexicon: Lexicon) -> str:
    """The rule's question about ``entity`` with the entity named in the slot's case."""
    template = rule.questions.get(lang) or _RULE_QUESTIONS[rule.operation][0 if lang == "en" else 1]
    return _SLOT.sub(lambda m: lexicon.name(entity, lang, m.group(1) or "nomn"), template)


def retrieval_question(subgraph: Subgraph, lang: str, lexicon: Lexicon) -> str:
    """The question of a retrieval subgraph (simple, set, conditional, multihop, comparison)."""
    ask = _English(lexicon) if lang == "en" else _Russian(lexicon)
    facts = subgraph.facts
    if subgraph.shape is Shape.simple:
        return ask.simple(facts[0])
    if subgraph.shape is Shape.set:
        return ask.inverse_set(facts) if subgraph.variant == "inverse" else ask.forward_set(facts)
    if subgraph.shape is Shape.conditional:
        return getattr(ask, subgraph.variant)(facts[0], facts[1])
    if subgraph.shape is Shape.comparison:
        later = bool(facts[0].object.datatype and "date" in facts[0].object.datatype)
        return ask.comparison(facts[0], facts[1], later)
    return ask.multihop(facts, inverse_start=facts[0].object.value == subgraph.mention[0].value)


class _English:
    def __init__(self, lexicon: Lexicon):
        self.lex = lexicon

    def noun(self, fact: Fact) -> str:
        return self.lex.noun(fact.relation, "en", fact.object)

    def inverse(self, fact: Fact) -> str:
        return self.lex.inverse_noun(fact.relation, "en", fact.subject)

    def name(self, node: Node) -> str:
        return self.lex.name(node, "en")

    def simple(self, fact: Fact) -> str:
        if isinstance(fact.object.python, bool):
            statement = self.lex.yes_no(fact.relation, True, "en")
            if statement:
                return f"Is it true that {fill_subject(statement, fact.subject, 'en', self.lex)}?"
            return f"Is {self.name(fact.subject)} marked as “{self.noun(fact)}”: yes or no?"
        return f"What is the {self.noun(fact)} of {self.name(fact.subject)}?"

    def forward_set(self, facts: tuple[Fact, ...]) -> str:
        return f"List every {self.noun(facts[0])} of {self.name(facts[0].subject)}."

    def inverse_set(self, facts: tuple[Fact, ...]) -> str:
        return f"List every {self.inverse(facts[0])} whose {self.noun(facts[0])} is {self.name(facts[0].object)}."

    def shared_subject(self, a: Fact, b: Fact) -> str:
        return (f"Which {self.inverse(a)} has the {self.noun(a)} {self.name(a.object)} "
                f"and the {self.noun(b)} {self.name(b.object)}?")

    def shared_object(self, a: Fact, b: Fact) -> str:
        return f"What is both the {self.noun(a)} of {self.name(a.subject)} and the {self.noun(b)} of {self.name(b.subject)}?"

    def chain(self, a: Fact, b: Fact) -> str:
        return (f"Which {self.inverse(b)}, with the {self.noun(b)} {self.name(b.object)}, "
                f"is the {self.noun(a)} of {self.name(a.subject)}?")

    def comparison(self, a: Fact, b: Fact, later: bool) -> str:
        return f"Which has the {'later' if later else 'greater'} {self.noun(a)}: {self.name(a.subject)} or {self.name(b.subject)}?"

    def multihop(self, facts: tuple[Fact, ...], inverse_start: bool) -> str:
        first = facts[0]
        if inverse_start:
            phrase = f"the {self.inverse(first)} whose {self.noun(first)} is {self.name(first.object)}"
        else:
            phrase = f"the {self.noun(first)} of {self.name(first.subject)}"
        for fact in facts[1:]:
            phrase = f"the {self.noun(fact)} of {phrase}"
        return f"What is {phrase}?"


class _Russian:
    def __init__(self, lexicon: Lexicon):
        self.lex = lexicon

    def noun(self, fact: Fact) -> str:
        return self.lex.noun(fact.relation, "ru", fact.object)

    def inverse(self, fact: Fact) -> str:
        return self.lex.inverse_noun(fact.relation, "ru", fact.subject)

    def name(self, node: Node, case: str = "nomn") -> str:
        return self.lex.name(node, "ru", case)

    def simple(self, fact: Fact) -> str:
        if isinstance(fact.object.python, bool):
            statement = self.lex.yes_no(fact.relation, True, "ru")
            if statement:
                return f"Верно ли, что {fill_subject(statement, fact.subject, 'ru', self.lex)}?"
            return f"{_cap(self.noun(fact))} у {self.name(fact.subject, 'gent')} — да или нет?"
        noun = self.noun(fact)
        return f"{_cap(morph.agree('какой', noun))} {noun} у {self.name(fact.subject, 'gent')}?"

    def forward_set(self, facts: tuple[Fact, ...]) -> str:
        noun = self.noun(facts[0])
        return f"Перечислите {_all(noun)} {morph.decline(noun, 'accs', 'plur')} у {self.name(facts[0].subject, 'gent')}."

    def inverse_set(self, facts: tuple[Fact, ...]) -> str:
        inverse = self.inverse(facts[0])
        return (f"Перечислите {_all(inverse)} {morph.decline(inverse, 'accs', 'plur')}, у которых "
                f"{self.noun(facts[0])} — {self.name(facts[0].object)}.")

    def shared_subject(self, a: Fact, b: Fact) -> str:
        inverse = self.inverse(a)
        return (f"У {morph.agree('какой', inverse, 'gent')} {morph.decline(inverse, 'gent')} {self.noun(a)} — "
                f"{self.name(a.object)}, а {self.noun(b)} — {self.name(b.object)}?")

    def shared_object(self, a: Fact, b: Fact) -> str:
        return (f"Что является одновременно {morph.decline(self.noun(a), 'ablt')} {self.name(a.subject, 'gent')} "
                f"и {morph.decline(self.noun(b), 'ablt')} {self.name(b.subject, 'gent')}?")

    def chain(self, a: Fact, b: Fact) -> str:
        inverse = self.inverse(b)
        return (f"{_cap(morph.agree('какой', inverse))} {inverse}, у {morph.agree('который', inverse, 'gent')} "
                f"{self.noun(b)} — {self.name(b.object)}, является {morph.decline(self.noun(a), 'ablt')} "
                f"{self.name(a.subject, 'gent')}?")

    def comparison(self, a: Fact, b: Fact, later: bool) -> str:
        return (f"{_cap(self.noun(a))} {'позже' if later else 'больше'} у {self.name(a.subject, 'gent')} "
                f"или у {self.name(b.subject, 'gent')}?")

    def multihop(self, facts: tuple[Fact, ...], inverse_start: bool) -> str:
        first = facts[0]
        if inverse_start:
            inverse = self.inverse(first)
            phrase = (f"{inverse}, у {morph.agree('который', inverse, 'gent')} {self.noun(first)} — "
                      f"{self.name(first.object)}")
        else:
            phrase = f"{self.noun(first)} {self.name(first.subject, 'gent')}"
        for fact in facts[1:-1]:
            phrase = f"{self.noun(fact)} {morph.decline(phrase, 'gent')}"
        last = self.noun(facts[-1])
        return f"{_cap(morph.agree('какой', last))} {last} у {morph.decline(phrase, 'gent')}?"


def _all(noun: str) -> str:
    """"все" or, before an animate plural in the accusative, "всех"."""
    return "всех" if morph.animate(noun) else "все"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
