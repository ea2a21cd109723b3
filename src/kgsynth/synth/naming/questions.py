"""Target questions in English and Russian, built from the lexicon's noun forms.

A question names what the reader needs and nothing the answer is: retrieval shapes ask
for the value of a relation ("What is the monthly salary of Ivan Smirnov?"), a set, the
entity two facts single out, or the end of a chain whose bridges are described, never
named ("What is the opening date of the usual store of Irina Zaitseva?"), or every end of
a chain that fans out ("List every employee who shares a department with Anna Petrova.",
"List every traveller of a trip whose destination is Sochi."). No more than two nouns are
chained one of the next ("the X of the Y of Z", «X у Y Z»; English also counts the "of"
inside a noun: "date of birth"): a longer chain takes the possessive ("Anna Petrova's city
of residence") or a sentence that introduces a bridge, which the question then calls "that
<noun>" ("Consider the policyholder of Policy P-1. What is the date of birth of that policyholder?").
A shared value is asked "in common" ("Which tariff do Booking BK-1 and Booking BK-2 have in
common?"), and a condition only where the rest of the question leaves several answers
("Which item of Order ORD-1 is the one whose price is 5,990?"). Rule questions come from the
rule's ``kgs:question`` (``{entity}``, or ``{entity:gent}`` for a declined Russian name;
``{bridge}`` for an input's kgs:via bridge, described by its relation: "the policyholder of
Policy P-1"), else from a question per operation that never names the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kgsynth.formats import morph
from kgsynth.formats.answers import unit_words
from kgsynth.formats.locale import plural_ru
from kgsynth.kg.vocab import Operation, Rule
from kgsynth.queries import Fact, Node, Shape, Subgraph, picks_out
from kgsynth.synth.naming.lexicon import Lexicon, naming, noun_of, shortened

_SLOT = re.compile(r"\{(\w+)(?::([\w+]+))?\}")
_YEAR_OF_DATE_EN = re.compile(r"year of (?:the date of |the (\w+) date\b)")
_YEAR_OF_DATE_RU = re.compile(r"года даты ")
_THEY = re.compile(r"\b(?:they|their|them)\b")
_PRONOUNS = {"femn": {"they": "she", "their": "her", "them": "her"}, "masc": {"they": "he", "their": "his", "them": "him"}}
_REPEATED_WORD = re.compile(r"\b([a-zа-яё]\w*) \1\b")  # lower case: a name may repeat a word ("Bora Bora")
_MOST_CHAINED = 2  # nouns said one of the next: a third ("the X of the Y of the Z of W") reads as a puzzle
# where a run of "of"s ends: punctuation, and the words that open a clause or carry its verb
_CLAUSE_BREAK = re.compile(r"[,.;:?!]|\b(?:whose|that|who|which|is|are|was|were|has|have|had|does|do|did)\b")
_OF = re.compile(r"\bof\b")

# For rules without kgs:question: what each operation computes, asked without the rule. A
# role's slot ({date}, {amount:gent}) is the noun of the relation that plays it.
_RULE_QUESTIONS = {
    Operation.percent_of: ("What amount is due for {entity}?", "Какая сумма причитается по {entity:datv}?"),
    Operation.percent_of_excess: ("What amount is due for {entity}?", "Какая сумма причитается по {entity:datv}?"),
    Operation.case_rate: ("What amount is due for {entity}?", "Какая сумма причитается по {entity:datv}?"),
    Operation.compare: ("Is {entity} over the threshold?", "Превышен ли порог для {entity:gent}?"),
    Operation.within_days: ("Does {entity} fit within the allowed period?", "Укладывается ли {entity} в допустимый срок?"),
    Operation.days_between: ("How many days does {entity} span?", "Сколько дней охватывает {entity}?"),
    Operation.deadline: ("What is the deadline for {entity}?", "Какой крайний срок для {entity:gent}?"),
    Operation.bracket_class: ("Which class does {entity} fall into?", "К какому классу относится {entity}?"),
    Operation.ratio: ("What is the {numerator} of {entity} divided by its {denominator}?",
                      "Сколько получится, если {numerator:accs} {entity:gent} разделить на {denominator:accs}?"),
    Operation.difference: ("How much greater is the {to} of {entity} than its {from} (negative if smaller)?",
                           "На сколько {to} {entity:gent} больше, чем {from} (со знаком минус, если меньше)?"),
    Operation.percent_change: ("By how many percent is the {to} of {entity} above its {from} (negative if below)?",
                               "На сколько процентов {to} {entity:gent} больше, чем {from} (со знаком минус, если меньше)?"),
    Operation.years_between: ("How many years passed from the {start} of {entity} to the {end}?",
                              "Сколько лет прошло от {start:gent} {entity:gent} до {end:gent}?"),
    Operation.day_of_week: ("On which day of the week did the {date} of {entity} fall?",
                            "На какой день недели приходится {date} {entity:gent}?"),
    Operation.century: ("In which century did the {date} of {entity} fall?",
                        "На какой век приходится {date} {entity:gent}?"),
    Operation.decade: ("In which decade did the {date} of {entity} fall?",
                       "На какое десятилетие приходится {date} {entity:gent}?"),
    Operation.leap_year: ("Was the {date} of {entity} in a leap year?",
                          "Високосный ли год, на который приходится {date} {entity:gent}?"),
    Operation.unit_conversion: ("What is the {amount} of {entity} in {unit}?", "Сколько составляет {amount} {entity:gent} в {unit}?"),
    Operation.count: ("How many different {member:plur} does {entity} have?", "Сколько всего значений «{member}» у {entity:gent}?"),
    Operation.total: ("What is the total of every {member} of {entity}?", "Какова сумма всех значений «{member}» у {entity:gent}?"),
    Operation.maximum: ("What is the largest {member} of {entity}?", "Каково наибольшее значение «{member}» у {entity:gent}?"),
    Operation.earliest: ("What is the earliest {member} of {entity}?", "Каково самое раннее значение «{member}» у {entity:gent}?"),
}
# DateAfter says its period: "What date is 6 months after the {start} of {entity}?"
_DATE_AFTER = ("What date is {n} after the {start} of {entity}?", "Какая дата будет через {n} после {start:gent} {entity:gent}?")


def rule_question(rule: Rule, entity: Node, lang: str, lexicon: Lexicon, facts: tuple[Fact, ...] = ()) -> str:
    """The rule's question about ``entity`` with the entity named in the slot's case and each
    role's slot filled with the noun of the relation that plays it (``facts`` give them); a
    role read on a bridge says whose ("date of birth of the policyholder"), and ``{bridge}``
    is the noun of the relation that links the entity to it. The bridge is never named."""
    template = rule.questions.get(lang) or _fallback(rule, lang)
    relations = {f.role: f for f in facts if f.role is not None}
    links = {f.object.value: f for f in facts if f.role is None}  # entity -> bridge, by bridge

    def bridge_noun(link: Fact, form: str) -> str:
        noun = lexicon.noun(link.relation, lang, link.object)
        return _role_noun(lexicon.in_value_gender(noun, link.object) if lang == "ru" else noun, form, lang)  # «супруга»

    def slot(match: re.Match) -> str:
        name, form = match.group(1), match.group(2) or "nomn"
        if name == "entity":
            return lexicon.referent(entity, lang, form)
        if name == "unit":
            return unit_words(rule.unit, lang)
        if name == "n":
            return _period(rule, lang)
        if name == "bridge" and links:
            return bridge_noun(next(iter(links.values())), form)
        fact = relations.get(name)
        if fact is None:
            return match.group(0)  # not a role this rule's facts play: left for the reader to see
        noun = _role_noun(lexicon.noun(fact.relation, lang, fact.object), form, lang)
        link = links.get(fact.subject.value)
        if link is None:
            return noun
        # read on the bridge: "date of birth of the policyholder", «даты рождения страхователя»
        return f"{noun} of the {bridge_noun(link, 'nomn')}" if lang == "en" else f"{noun} {bridge_noun(link, 'gent')}"

    # a role's noun ending where the entity's name begins: «дате заказа заказа ORD-1» -> «дате заказа ORD-1»
    question = _year_of_a_date(_REPEATED_WORD.sub(r"\1", _SLOT.sub(slot, template)), lang)
    return _pronouns_of(entity, question) if lang == "en" else question


def _pronouns_of(entity: Node, question: str) -> str:
    """An English rule question's "they" / "their" said as "she" / "her" or "he" / "his" of
    a person whose gender the Russian name tells ("How old was Alina Petrova on her hire
    date?"); left as they are when it does not."""
    gender = morph.person_gender(entity.labels.get("ru", ""))
    if gender is None:
        return question
    words = _PRONOUNS[gender]
    return _THEY.sub(lambda m: words[m[0]], question)


def _year_of_a_date(question: str, lang: str) -> str:
    """"the year of the date of birth" said as "the year of birth", «года даты премьеры» as
    «года премьеры», "the year of the premiere date" as "the year of the premiere": a year is
    the date's already."""
    if lang == "en":
        return _YEAR_OF_DATE_EN.sub(lambda m: f"year of the {m[1]}" if m[1] else "year of ", question)
    return _YEAR_OF_DATE_RU.sub("года ", question)


def _fallback(rule: Rule, lang: str) -> str:
    template = _DATE_AFTER if rule.operation is Operation.date_after else _RULE_QUESTIONS[rule.operation]
    return template[0 if lang == "en" else 1]


def _role_noun(noun: str, form: str, lang: str) -> str:
    """A relation's noun in a slot's form: "plur" in English, a case (and "+plur") in Russian."""
    grammemes = form.split("+")
    if lang == "en":
        return english_plural(noun) if "plur" in grammemes else noun
    case = next((g for g in grammemes if g != "plur"), "nomn")
    return morph.decline(noun, case, "plur" if "plur" in grammemes else "sing")


def english_plural(noun: str) -> str:
    """The plural of an English noun phrase's head ("spoken language" -> "spoken languages",
    "country of citizenship" -> "countries of citizenship"); a head already plural ("films",
    FB15k-237's relation names) stays."""
    for joint in (" of ", " in "):
        if joint in noun:
            head, rest = noun.split(joint, 1)
            return f"{english_plural(head)}{joint}{rest}"
    head, _, last = noun.rpartition(" ")
    if last.endswith("s") and not last.endswith(("ss", "us", "is")):
        plural = last
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        plural = last[:-1] + "ies"
    elif last.endswith(("s", "sh", "ch", "x", "z")):
        plural = last + "es"
    else:
        plural = last + "s"
    return f"{head} {plural}" if head else plural


def _period(rule: Rule, lang: str) -> str:
    count, unit = (rule.days, "day") if rule.days is not None else (rule.months, "month")
    if lang == "en":
        return f"{count} {unit}{'' if count == 1 else 's'}"
    forms = ("день", "дня", "дней") if unit == "day" else ("месяц", "месяца", "месяцев")
    return f"{count} {plural_ru(count, *forms)}"


@dataclass(frozen=True)
class FanChain:
    """A multihop_set subgraph read as its chain (its facts come in chain order, see Subgraph)."""

    start: Node
    prefix: tuple[Fact, ...]  # the hops before the fan, which describe the node it fans out from
    fan: Fact  # one fact of the fan: its relation, and which side the members are on
    fan_inverse: bool  # the members are the subjects of the fan's facts
    members: tuple[Node, ...]
    last: Fact | None  # one member's last hop, when the fan is not the last hop
    ends: tuple[Node, ...]  # what the chain reaches: the answer, and the start when it comes back

    @property
    def back_to_start(self) -> bool:
        """The chain reaches its start, which the question names and the answer leaves out."""
        return self.start in self.ends

    @property
    def shares(self) -> bool:
        """Two hops that go back along one relation: "who shares a department with X"."""
        return (self.last is None and len(self.prefix) == 1 and self.back_to_start
                and self.prefix[0].relation == self.fan.relation)


def fan_chain(subgraph: Subgraph) -> FanChain:
    """A multihop_set subgraph's chain, read from its facts and variant ("3-hop-mid")."""
    hops, at = subgraph.variant.split("-hop-")
    fan_hop = int(hops) - (at == "mid")
    start, facts = subgraph.mention[0], subgraph.facts
    prefix = facts[: fan_hop - 1]
    pivot = start
    for fact in prefix:  # the first hop may go backwards, the others go forwards
        pivot = fact.subject if fact.object == pivot else fact.object
    fan = facts[fan_hop - 1]
    inverse = fan.object == pivot
    # the first fact too: a chain back to its start keeps that fact once
    members = tuple((f.subject if inverse else f.object) for f in facts
                    if f.relation == fan.relation and (f.object if inverse else f.subject) == pivot)
    if at == "last":
        return FanChain(start=start, prefix=prefix, fan=fan, fan_inverse=inverse, members=members, last=None,
                        ends=members)
    last_hops = facts[fan_hop - 1 + len(members):]
    return FanChain(start=start, prefix=prefix, fan=fan, fan_inverse=inverse, members=members, last=last_hops[0],
                    ends=tuple(dict.fromkeys(f.object for f in last_hops)))


def retrieval_question(subgraph: Subgraph, lang: str, lexicon: Lexicon) -> str:
    """The question of a retrieval subgraph (simple, set, conditional, multihop, multihop_set, comparison)."""
    ask = _English(lexicon) if lang == "en" else _Russian(lexicon)
    facts = subgraph.facts
    if subgraph.shape is Shape.simple:
        return ask.simple(facts[0])
    if subgraph.shape is Shape.set:
        return ask.inverse_set(facts) if subgraph.variant == "inverse" else ask.forward_set(facts)
    if subgraph.shape is Shape.conditional:
        return _conditional(ask, subgraph, lexicon)
    if subgraph.shape is Shape.comparison:
        later = bool(facts[0].object.datatype and "date" in facts[0].object.datatype)
        return ask.comparison(facts[0], facts[1], later)
    if subgraph.shape is Shape.multihop_set:
        return ask.multihop_set(fan_chain(subgraph))
    return ask.multihop(facts, inverse_start=facts[0].object.value == subgraph.mention[0].value)


def _conditional(ask: _English | _Russian, subgraph: Subgraph, lexicon: Lexicon) -> str:
    first, second = subgraph.facts
    if subgraph.variant != "chain":
        return getattr(ask, subgraph.variant)(first, second)
    # the one value of its relation the named node has ("the city of Sapphire Hotel") needs no condition
    if picks_out(lexicon.kg, first, subgraph.answer[0]):
        return ask.simple(first)
    return ask.chain(first, second)


def fact_noun(fact: Fact, lang: str, lexicon: Lexicon) -> str:
    """The fact's relation with its subject, as its question names it: "the holder of the
    Sokol Bank card *5702", «держатель карты «Сокол Банк» *5702»."""
    ask = _English(lexicon) if lang == "en" else _Russian(lexicon)
    return ask.of(fact, fact.subject)


def _of_run(text: str) -> int:
    """The most "of"s in a row in ``text``: between punctuation and the words that open a
    clause or carry its verb ("whose", "is", "has"); "the date of birth of the policyholder
    of Policy P-1" has three."""
    return max(len(_OF.findall(part)) for part in _CLAUSE_BREAK.split(text))


def _fan_chained(chain: FanChain) -> int:
    """The nouns a set-valued chain's listing chains before the node it fans out from: none
    when a clause describes the members ("whose department is <pivot>"), else the fan's and
    the last hop's ("every city of residence of an item of <pivot>")."""
    return 0 if chain.fan_inverse else 1 + (chain.last is not None)


class _Asker:
    """What a question says alike in both languages: nouns, chains of hops said each of the
    next, and where such a chain is split (the module docstring)."""

    lang = ""

    def __init__(self, lexicon: Lexicon):
        self.lex = lexicon

    def noun(self, fact: Fact) -> str:
        return self.lex.stating_noun(fact.relation, self.lang, fact.object)

    def inverse(self, fact: Fact) -> str:
        return self.lex.inverse_noun(fact.relation, self.lang, fact.subject)

    def name(self, node: Node, case: str = "nomn") -> str:
        """A value as a question says it: with "the" before an English common noun ("whose item is the plush bear")."""
        return self.lex.referent(node, self.lang, case)

    def of_inverse(self, fact: Fact, inverse: str, gendered: bool = True) -> str:
        """The noun said of what ``inverse`` names, without the words it repeats ("number" of an
        order); before the value it names, a Russian noun of a person in her gender («у которого
        супруга — Madonna»): the question names her, so it gives nothing away."""
        noun = self.noun(fact)
        if gendered and self.lang == "ru" and fact.object.kind == "iri":
            noun = self.lex.in_value_gender(noun, fact.object)
        return shortened(noun, inverse, self.lang)

    def simple(self, fact: Fact) -> str:
        if isinstance(fact.object.python, bool):
            return self.lex.yes_no_question(fact.relation, fact.subject, self.lang)
        return self.value_of(fact, fact.subject)

    def multihop(self, facts: tuple[Fact, ...], inverse_start: bool) -> str:
        start, hops = self.start_and_hops(facts[:-1], inverse_start)
        last = facts[-1]
        if isinstance(last.object.python, bool):  # "Does the hotel of Booking BK-1 have a swimming pool?"
            return self.chained(start, hops, lambda phrase: self.lex.yes_no_question(last.relation, phrase, self.lang))
        return self.chained(start, hops, lambda phrase: self.value_of(last, phrase))

    def multihop_set(self, chain: FanChain) -> str:
        if chain.shares:
            return self.shared_with(chain)
        if not chain.prefix:
            return self.listed(chain, chain.start)
        start, hops = self.start_and_hops(chain.prefix, chain.prefix[0].object == chain.start)
        return self.chained(start, hops, lambda pivot: self.listed(chain, pivot), outer=_fan_chained(chain))

    def start_and_hops(self, facts: Sequence[Fact], inverse_start: bool) -> tuple[Node | str, Sequence[Fact]]:
        """Where a chain of facts starts, and its hops: the first fact's subject, or
        (``inverse_start``) that subject described by the first fact ("the order whose order
        number is ORD-1"), the other facts then being the hops."""
        if inverse_start:
            return self.described_by(facts[0]), facts[1:]
        return facts[0].subject, facts

    def nested(self, start: Node | str, hops: Sequence[Fact]) -> Node | str:
        """What ``hops`` reach from ``start``, each hop's noun said of the one before:
        "the country of the city of residence of Anna Petrova"."""
        phrase = start
        for fact in hops:
            phrase = self.of(fact, phrase)
        return phrase

    def chained(self, start: Node | str, hops: Sequence[Fact], frame: Callable[[Node | str], str],
                outer: int = 1) -> str:
        """``frame`` (the question around a phrase, which chains ``outer`` nouns before it:
        "the X of", «X у», «бассейн в») around what ``hops`` reach from ``start``, said the
        most direct way that chains at most :data:`_MOST_CHAINED` nouns (:meth:`phrasings`)."""
        said = []
        for intro, phrase, chained, intro_chained in self.phrasings(start, hops):
            text = f"{intro} {frame(phrase)}" if intro else frame(phrase)
            if self.reads_well(text, outer + chained, intro_chained):
                return text
            said.append(text)
        return min(said, key=self.links)  # none reads well: the one that chains the fewest

    def phrasings(self, start: Node | str, hops: Sequence[Fact]) -> Iterator[tuple[str, Node | str, int, int]]:
        """(a sentence before the question, the phrase, the nouns the phrase chains, the
        nouns that sentence chains) of each way to say what ``hops`` reach, the most direct
        first: the whole chain, a named start in the possessive, then a sentence that
        introduces the first bridge ("Consider the policyholder of Policy P-1."), the second, and so
        on, the question calling it "that policyholder" (possessive too: "that owner's city")."""
        yield "", self.nested(start, hops), len(hops), 0
        if isinstance(start, Node):  # not a described start ("the order whose ... is the Pine store's")
            yield from (("", phrase, len(hops), 0) for phrase in self.possessives(start, hops))
        for at, bridge in enumerate(hops):
            owner, rest = self.nested(start, hops[:at]), hops[at + 1:]
            noun = shortened(self.noun(bridge), self.said(owner), self.lang)
            intro, that = self.introduce(owner, noun), self.that(noun)
            # the sentence says the bridge's noun of its owner: one link more than the owner's own
            yield intro, self.nested(that, rest), len(rest), at + 1
            yield from ((intro, phrase, len(rest), at + 1) for phrase in self.possessives(that, rest))

    def unrepeated(self, subject: Node | str, noun: str) -> Node | str:
        """A described ``subject`` without the word its class noun shares with the ``noun`` said
        of it: "the hotel of the booking whose ..." (not "of the hotel booking"), «гостиница у
        бронирования, у которого ...» (not «бронирования гостиницы»)."""
        if isinstance(subject, Node):
            return subject
        cut = subject.find(" whose " if self.lang == "en" else ",")
        if cut < 0:
            return subject
        words, head = subject[:cut].split(), noun.split()[-1]
        same = (lambda w: w.casefold() == head.casefold()) if self.lang == "en" else (lambda w: morph.lemma(w) == morph.lemma(head))
        kept = [w for i, w in enumerate(words) if not (i > (0 if self.lang == "ru" else -1) and same(w))]
        if len(kept) == len(words) or not [w for w in kept if w != "the"]:
            return subject
        return " ".join(kept) + subject[cut:]

    def said(self, subject: Node | str) -> str:
        """``subject`` as a sentence names it in the nominative."""
        return self.lex.referent(subject, self.lang) if isinstance(subject, Node) else subject


class _English(_Asker):
    lang = "en"

    def referent(self, node: Node) -> str:
        return self.lex.referent(node, "en")

    def of(self, fact: Fact, subject: Node | str) -> str:
        """"the <noun> of <subject>" (an entity, or a phrase describing a bridge)."""
        noun = self.noun(fact)
        return f"the {noun_of(noun, naming(self.unrepeated(subject, noun), 'en', self.lex), 'en')}"

    def value_of(self, fact: Fact, subject: Node | str) -> str:
        return f"{'Who' if self.lex.is_person(fact.object) else 'What'} is {self.of(fact, subject)}?"

    def described_by(self, fact: Fact) -> str:
        """The fact's subject described by its value: "the order whose order number is ORD-1"."""
        inverse = self.inverse(fact)
        return f"the {inverse} whose {self.of_inverse(fact, inverse)} is {self.name(fact.object)}"

    def reads_well(self, text: str, chained: int, intro_chained: int) -> bool:
        return _of_run(text) <= _MOST_CHAINED  # an "of" inside a noun counts too ("date of birth")

    @staticmethod
    def links(text: str) -> int:
        return _of_run(text)

    def possessives(self, owner: Node | str, hops: Sequence[Fact]) -> Iterator[str]:
        """What ``hops`` reach with ``owner`` in the possessive, said of the first hop ("Anna
        Petrova's city of residence", "that owner's city"): an owner that ends in a letter and
        has no "of" ("Policy P-1's" and "the head of X's" read badly)."""
        name = self.said(owner)
        if hops and name[-1:].isalpha() and not _OF.search(name):
            # a plural name takes the apostrophe alone: "the Houston Astros' stadium"
            mark = "'" if name.startswith("the ") and name.endswith("s") and not name.endswith("ss") else "'s"
            yield self.nested(f"{name}{mark} {shortened(self.noun(hops[0]), name, 'en')}", hops[1:])

    def introduce(self, owner: Node | str, noun: str) -> str:
        return f"Consider the {noun} of {self.said(owner).removesuffix('.')}."  # "Acme Inc." ends the sentence once

    @staticmethod
    def that(noun: str) -> str:
        return f"that {noun}"

    def forward_set(self, facts: tuple[Fact, ...]) -> str:
        return f"List every {noun_of(self.noun(facts[0]), naming(facts[0].subject, 'en', self.lex), 'en')}."

    def inverse_set(self, facts: tuple[Fact, ...]) -> str:
        inverse = self.inverse(facts[0])
        return f"List every {inverse} whose {self.of_inverse(facts[0], inverse)} is {self.name(facts[0].object)}."

    def shared_subject(self, a: Fact, b: Fact) -> str:
        inverse = self.inverse(a)
        if a.relation == b.relation:  # "Which genre has Chris Seefried and Melissa Etheridge among its artists?"
            whose = "their" if self.lex.is_person(a.subject) else "its"
            return (f"Which {inverse} has {self.name(a.object)} and {self.name(b.object)} "
                    f"among {whose} {english_plural(self.of_inverse(a, inverse))}?")
        return (f"Which is the {inverse} whose {self.of_inverse(a, inverse)} is {self.name(a.object)} "
                f"and whose {self.of_inverse(b, inverse)} is {self.name(b.object)}?")

    def shared_object(self, a: Fact, b: Fact) -> str:
        if a.relation == b.relation:  # "Which tariff do Booking BK-1 and Booking BK-2 have in common?"
            return f"Which {self.noun(a)} do {self.referent(a.subject)} and {self.referent(b.subject)} have in common?"
        return f"Which {self.of(a, a.subject).removeprefix('the ')} is also {self.of(b, b.subject)}?"

    def chain(self, a: Fact, b: Fact) -> str:
        # the condition picks out one of several: "Which item of Order ORD-1 is the one whose price is 5,990?"
        inverse = self.inverse(b)
        return (f"Which {self.of(a, a.subject).removeprefix('the ')} is the one whose "
                f"{self.of_inverse(b, inverse)} is {self.name(b.object)}?")

    def comparison(self, a: Fact, b: Fact, later: bool) -> str:
        return f"Which has the {'later' if later else 'greater'} {self.noun(a)}: {self.referent(a.subject)} or {self.referent(b.subject)}?"

    def listed(self, chain: FanChain, pivot: Node | str) -> str:
        fan = self.fanned(chain, pivot)
        other = f", other than {self.referent(chain.start)}" if chain.back_to_start else ""
        if chain.last is None:
            return _sentence(f"List every {fan}{other}")
        members = f"{_a(fan)} {fan}"  # "the city of residence of an employee whose department is ..."
        return _sentence(f"List every {noun_of(self.noun(chain.last), naming(members, 'en', self.lex), 'en')}{other}")

    def fanned(self, chain: FanChain, pivot: Node | str) -> str:
        """A member of the fan, without article: "employee whose department is <pivot>", "item of <pivot>"."""
        if chain.fan_inverse:
            inverse = self.inverse(chain.fan)
            value = self.name(pivot) if isinstance(pivot, Node) else pivot
            return f"{inverse} whose {self.of_inverse(chain.fan, inverse)} is {value}"
        return noun_of(self.noun(chain.fan), naming(pivot, "en", self.lex), "en")

    def shared_with(self, chain: FanChain) -> str:
        # members are subjects: "employee who shares a department"; values: "item that shares an order"
        member, shared = (self.inverse(chain.fan), self.noun(chain.fan)) if chain.fan_inverse else \
            (self.noun(chain.fan), self.inverse(chain.fan))
        who = "who" if all(self.lex.is_person(m) for m in chain.ends if m != chain.start) else "that"
        return f"List every {member} {who} shares {_a(shared)} {shared} with {self.referent(chain.start)}."


class _Russian(_Asker):
    lang = "ru"

    def of(self, fact: Fact, subject: Node | str, case: str = "nomn") -> str:
        """The noun with its subject in the genitive, no «у» («город проживания Веры Комаровой»,
        «держатель карты «Сокол Банк» *1»), the whole phrase in ``case``."""
        noun = self.noun(fact)
        return morph.decline(noun_of(noun, naming(self.unrepeated(subject, noun), "ru", self.lex), "ru", chained=True), case)

    def value_of(self, fact: Fact, subject: Node | str) -> str:
        if self.lex.is_person(fact.object):  # «Кто держатель карты «Сокол Банк» *1?»
            return f"Кто {self.of(fact, subject)}?"
        noun = self.noun(fact)
        said = naming(self.unrepeated(subject, noun), "ru", self.lex)
        return f"{_cap(morph.agree('какой', noun))} {noun_of(noun, said, 'ru')}?"

    def described_by(self, fact: Fact) -> str:
        """The fact's subject described by its value: «заказ, у которого номер заказа — ORD-1»."""
        inverse = self.inverse(fact)
        which = morph.agree("который", inverse, "gent")
        return f"{inverse}, у {which} {self.of_inverse(fact, inverse)} — {self.name(fact.object)}"

    def reads_well(self, text: str, chained: int, intro_chained: int) -> bool:
        # a genitive inside a noun counts too («город проживания»), as "of" does in English
        return chained <= _MOST_CHAINED and intro_chained <= _MOST_CHAINED and morph.genitive_run(text) <= _MOST_CHAINED

    @staticmethod
    def links(text: str) -> int:
        return morph.genitive_run(text)

    @staticmethod
    def possessives(owner: Node | str, hops: Sequence[Fact]) -> tuple[()]:
        return ()  # Russian has none to say an owner's bridge with

    def introduce(self, owner: Node | str, noun: str) -> str:
        said = self.name(owner, "gent") if isinstance(owner, Node) else morph.decline(owner, "gent")
        return f"Возьмём {morph.accusative(noun)} {said.removesuffix('.')}."  # «… 2016 г.» ends it once

    @staticmethod
    def that(noun: str) -> str:
        return f"{morph.agree('этот', noun)} {noun}"

    def forward_set(self, facts: tuple[Fact, ...]) -> str:
        noun = self.noun(facts[0])
        return f"Перечислите {_all(noun)} {morph.accusative(noun, 'plur')} у {self.name(facts[0].subject, 'gent')}."

    def inverse_set(self, facts: tuple[Fact, ...]) -> str:
        inverse = self.inverse(facts[0])
        return (f"Перечислите {_all(inverse)} {morph.accusative(inverse, 'plur')}, у которых "
                f"{self.of_inverse(facts[0], inverse)} — {self.name(facts[0].object)}.")

    def shared_subject(self, a: Fact, b: Fact) -> str:
        inverse = self.inverse(a)
        which = f"У {morph.agree('какой', inverse, 'gent')} {morph.decline(inverse, 'gent')}"
        if a.relation == b.relation:  # «У какой причины смерти среди жертв есть и John Lennon, и Adolf Hitler?»
            among = morph.decline(self.of_inverse(a, inverse, gendered=False), "gent", "plur")
            return f"{which} среди {among} есть и {self.name(a.object)}, и {self.name(b.object)}?"
        return (f"{which} "
                f"{self.of_inverse(a, inverse)} — {self.name(a.object)}, а {self.of_inverse(b, inverse)} — {self.name(b.object)}?")

    def shared_object(self, a: Fact, b: Fact) -> str:
        noun = self.noun(a)
        which = _cap(morph.agree("какой", noun))
        if a.relation == b.relation:  # «Какой тариф у бронирования BK-1 и бронирования BK-2 общий?»
            return (f"{which} {noun} у {self.name(a.subject, 'gent')} и {self.name(b.subject, 'gent')} "
                    f"{morph.agree('общий', noun)}?")
        return f"{which} {self.of(a, a.subject)} является также {self.of(b, b.subject, 'ablt')}?"

    def chain(self, a: Fact, b: Fact) -> str:
        # the condition picks out one of several: «У какого из товаров заказа ORD-1 цена — 5 990?»
        noun, inverse = self.noun(a), self.inverse(b)
        return (f"У {morph.agree('какой', noun, 'gent')} из {morph.decline(self.of(a, a.subject), 'gent', 'plur')} "
                f"{self.of_inverse(b, inverse)} — {self.name(b.object)}?")

    def comparison(self, a: Fact, b: Fact, later: bool) -> str:
        return (f"{_cap(self.noun(a))} {'позже' if later else 'больше'} у {self.name(a.subject, 'gent')} "
                f"или у {self.name(b.subject, 'gent')}?")

    def listed(self, chain: FanChain, pivot: Node | str) -> str:
        other = f", кроме {self.name(chain.start, 'gent')}" if chain.back_to_start else ""
        head = self.inverse(chain.fan) if chain.fan_inverse else self.noun(chain.fan)
        if chain.last is None:
            return _sentence(f"Перечислите {_all(head)} {self.fanned(chain, pivot, 'accs')}{other}")
        noun = self.noun(chain.last)
        # «города проживания сотрудников, у которых отдел — …», «цели поездок, у которых …»
        members = noun_of(noun, lambda case: self.fanned(chain, pivot, case), "ru", chained=True)
        return _sentence(f"Перечислите {_all(noun)} {morph.accusative(members, 'plur')}{other}")

    def fanned(self, chain: FanChain, pivot: Node | str, case: str) -> str:
        """The fan's members in the plural, in ``case``: «сотрудников, у которых отдел — <pivot>»,
        «товары заказа <pivot>»."""
        if chain.fan_inverse:
            inverse = self.inverse(chain.fan)
            said = morph.accusative(inverse, "plur") if case == "accs" else morph.decline(inverse, case, "plur")
            return (f"{said}, у которых {self.of_inverse(chain.fan, inverse)} — "
                    f"{naming(pivot, 'ru', self.lex)('nomn')}")
        members = noun_of(self.noun(chain.fan), naming(pivot, "ru", self.lex), "ru", chained=True)
        return morph.accusative(members, "plur") if case == "accs" else morph.decline(members, case, "plur")

    def shared_with(self, chain: FanChain) -> str:
        member, shared = (self.inverse(chain.fan), self.noun(chain.fan)) if chain.fan_inverse else \
            (self.noun(chain.fan), self.inverse(chain.fan))
        return (f"Перечислите {_all(member)} {morph.accusative(member, 'plur')}, у которых "
                f"{morph.agree('тот', shared)} же {shared}, что и у {self.name(chain.start, 'gent')}.")




def _sentence(text: str) -> str:
    """``text`` with a full stop, unless it ends with one ("… 31 августа 2009 г.")."""
    return text if text.endswith(".") else f"{text}."


def _a(phrase: str) -> str:
    """The indefinite article before ``phrase``: by its first letter, but "a" before a vowel
    said as a consonant ("a usual store", "a unit", "a euro")."""
    word = phrase.casefold().lstrip("“\"'(")
    return "an" if word[:1] in tuple("aeiou") and not _SAID_WITH_Y.match(word) else "a"


_SAID_WITH_Y = re.compile(r"uni|us[aeiou]|ut[aeiou]|eu|one\b")


def _all(noun: str) -> str:
    """"все" or, before an animate plural in the accusative, "всех"."""
    return "всех" if morph.may_name_a_person(noun) else "все"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
