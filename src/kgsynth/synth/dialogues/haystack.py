"""A haystack: what a dialogue is padded with up to a target length, in synthesis
(``DialogueSettings.target_tokens``) and in evaluation (the length and position sweeps).

Padding from one small bank of digit-free lines left the facts as the only numbers in a
long context, and at 128,000 tokens the most frequent line was said some 200 times: a
model could find the facts by looking for digits. The haystack is three kinds of material, each
drawn by seed:

- **blocks**: the fact turns of another scenario's dialogue (in evaluation: another item's
  of the dataset, in the same language): its entity named first, then its values, said
  the way the item says its own ("Next on my list is Claim CL-0046. The claimed amount
  is 27,700 roubles.");
- **other entities' facts**: one turn stating another entity's value of a relation the
  topic has, naming that entity ("Different case, but the claimed amount of Claim CL-0046
  is 27,700 roubles."): the confusable turns of the item, in the haystack;
- **small talk with numbers**: times, counts, rooms, routes, dates ("The 42 bus was 15
  minutes late again this morning."), from ``phrases.TALK`` in English and Russian: a
  bank of 12,000 sentences per language, so that an item of 128,000 tokens says none twice.

Gold safety. No haystack turn contains a label of the item's entities (or of its
speakers), a value of its facts or its answer, nor a number of its rule (the rule
leakage filter would reject the item): numbers are compared by value in every reading
the filters give (``numbers_in``: 15600 and 15.6 of "15,600"), a label or value with a
digit also as a word ("11" in "11,816"), dates also by day and month. A block or an
entity's fact names an entity, and a reader gives a statement without a name to the
last entity named: such a unit goes only where the item's next turn that states or asks
about a value of the topic names the topic, or where none follows (the attribution
filter's rule). A unit is never split, nothing goes between a question and its answer (a
clarification, a re-ask and its restatement, an opening and its reply), before the
item's opening or after its closing. Every
haystack turn is a ``distractor`` turn stating no fact of the item, said by the item's
own speakers, never one of them twice in a row.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from pydantic import TypeAdapter

from kgsynth.errors import KgsynthError
from kgsynth.formats import locale
from kgsynth.formats.answers import dates_in, has_any_word, has_word, numbers_in
from kgsynth.queries import Node
from kgsynth.synth.dialogues.dialogue import (
    Dialogue,
    DialogueSettings,
    Turn,
    VerbaliserError,
    as_topic_says,
    build_dialogue,
    count_tokens,
    render_value,
)
from kgsynth.synth.dialogues.phrases import PHRASES, TALK, TALK_OPENERS, YES_NO
from kgsynth.synth.dialogues.statements import STATEMENTS
from kgsynth.synth.scenarios.rules import rule_numbers
from kgsynth.synth.scenarios.scenario import Scenario

# turns that state, correct or ask about a value: after another entity is named, the next of
# them must name the topic
VALUE_KINDS = frozenset({"fact", "misstatement", "reask", "restate", "clarify_q", "clarify_a"})
# turns that answer or refer to the turn before them: nothing goes between the two
BOUND_KINDS = frozenset({"reply", "clarify_q", "clarify_a", "restate"})
# the share of draws that are a block and an entity's fact; the rest is small talk. By tokens
# about 30% blocks, 10% entities' facts, 60% talk
BLOCK_SHARE, FACT_SHARE = 0.15, 0.12
TWO_SENTENCES = 0.3  # the chance that a talk turn says two things
OPENER = 0.35  # the chance that a talk line starts with "By the way, " or the like
_MISSES = 4  # draws of a kind that found nothing, in a row, before it is given up for the item
POOL_SIZE = 2048  # scenarios of a run lent to padded dialogues (their blocks are built once)
_BLOCK_SETTINGS = DialogueSettings(noise=0, clarifications=0, reasks=0, corrections=0, confusables=0)
_DIGITS = re.compile(r"[0-9]+")


class HaystackError(KgsynthError):
    """Nothing can be said in the haystack without touching the item (every line names it)."""


# ---------------------------------------------------------------------------- what a line must not say
def readings(text: str) -> tuple[frozenset[Decimal], frozenset[tuple[int, int]]]:
    """Every value a number in ``text`` can be read as, the way the filters read it
    (``numbers_in``: 15600 and 15.6 of "15,600", 9 and 5 of "9:05"; a date's day and year
    are no numbers), and the (month, day) of every date in it."""
    if not _DIGITS.search(text):
        return frozenset(), frozenset()
    return numbers_in(text), frozenset((d.month, d.day) for d in dates_in(text))


@dataclass(frozen=True)
class Guard:
    """What no haystack line of one item may contain: ``words`` (casefolded, as whole words:
    labels, values, the answer, speakers' names), ``numbers`` and ``days`` (month, day)."""

    words: frozenset[str]
    numbers: frozenset[Decimal]
    days: frozenset[tuple[int, int]]

    @classmethod
    def of(cls, words: Iterable[str], values: Iterable[str], numbers: Iterable[Decimal] = ()) -> Guard:
        """From the texts to avoid as words (one character is never looked for: "B" of
        "class B", «в»), the texts whose numbers and dates to avoid, and more numbers."""
        words = [w.casefold() for w in words if len(w.strip()) > 1]
        found, days = set(numbers), set()
        for value in values:
            n, d = readings(value)
            found |= n
            days |= d
        return cls(frozenset(words), frozenset(found), frozenset(days))

    def allows(self, folded: str, numbers: frozenset[Decimal], days: frozenset[tuple[int, int]]) -> bool:
        """Whether a line (``folded``: casefolded) with these readings may be said."""
        return self.allows_numbers(numbers, days) and not any(has_word(folded, w) for w in self.words)

    def allows_numbers(self, numbers: frozenset[Decimal], days: frozenset[tuple[int, int]]) -> bool:
        return self.numbers.isdisjoint(numbers) and self.days.isdisjoint(days)


# ---------------------------------------------------------------------------- small talk
_SLOT = re.compile(r"\{(n|time\+?|date|wd)(?: (\d+)-(\d+))?(?: ([^}]+))?\}")
_WEEKDAYS = {
    "en": ("on Monday", "on Tuesday", "on Wednesday", "on Thursday", "on Friday", "on Saturday", "on Sunday"),
    "ru": ("в понедельник", "во вторник", "в среду", "в четверг", "в пятницу", "в субботу", "в воскресенье"),
}
_FIRST_PERSON = re.compile(r"I\b")  # "I", "I'm", "I've" keep their capital after an opener
BANK_SIZE = 12_000  # talk sentences per language: a 128k haystack says about 6,000, none twice


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str  # as a line starts
    after_opener: str  # after "By the way, ": the first letter in lower case ("I" kept)
    numbers: frozenset[Decimal]
    days: frozenset[tuple[int, int]]
    template: int
    tokens: int


class Talk:
    """Small talk with numbers in one language: a bank of ``BANK_SIZE`` sentences made
    once from the templates of ``phrases.TALK`` by a fixed seed (each slot filled, two
    times in a line in order), from which an item draws its lines by its own seed: one
    or two sentences, now and then after an opener; never a sentence the item has said,
    nor a template it used in its last few lines. Each sentence's numbers are known from
    its slots, so a guard checks it without scanning it."""

    def __init__(self, lang: str):
        self.lang = lang
        self.bank = _bank(lang)
        self.templates = len(TALK[lang])
        self.openers = tuple((o, count_tokens(o)) for o in TALK_OPENERS[lang])
        # the words any line could hold, to tell which of a guard's words need looking for
        self.vocabulary = "\n".join([*TALK[lang], *TALK_OPENERS[lang], *_WEEKDAYS[lang],
                                     *(locale.MONTHS_EN if lang == "en" else locale.MONTHS_RU_GENITIVE)]).casefold()

    def words(self, guard: Guard) -> re.Pattern | None:
        """The guard's words a line could hold, as one pattern of whole words: most labels
        share no word with small talk, but a word with a digit may be in any line ("11" of
        "11,816 steps")."""
        words = sorted(w for w in guard.words if w in self.vocabulary or _DIGITS.search(w))
        return re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, words))})(?!\w)") if words else None

    def line(self, rng: random.Random, guard: Guard, words: re.Pattern | None, said: set[int], recent: list[int],
             tries: int = 32) -> tuple[str, int] | None:
        """A line the guard allows and its tokens, or None after ``tries`` draws. ``words``:
        :meth:`words` of the guard; ``said``: the sentences the item has, ``recent``: the
        templates of its last lines (both updated)."""
        bank, size, draw = self.bank, len(self.bank), rng.random
        numbers, days = guard.numbers, guard.days
        if len(said) > size - 2:  # every sentence said (a haystack of some 250k tokens): again from the start
            said.clear()
        for attempt in range(tries):
            fresh = attempt < tries // 2  # then any template will do
            i = int(draw() * size)
            while i in said:  # the next one not said (a 128k haystack says half the bank)
                i = (i + 1) % size
            first = bank[i]
            if ((fresh and first.template in recent) or not numbers.isdisjoint(first.numbers)
                    or (first.days and not days.isdisjoint(first.days))):
                continue
            text, tokens = first.text, first.tokens
            if draw() < OPENER:
                opener, more = self.openers[int(draw() * len(self.openers))]
                text, tokens = opener + first.after_opener, tokens + more
            picked = [i]
            if draw() < TWO_SENTENCES:  # a second one, if it fits as well (else the line is one sentence)
                j = int(draw() * size)
                second = bank[j]
                if (j not in said and j != i and second.template != first.template and second.template not in recent
                        and numbers.isdisjoint(second.numbers) and (not second.days or days.isdisjoint(second.days))):
                    text, tokens = f"{text} {second.text}", tokens + second.tokens
                    picked.append(j)
            if words and words.search(text.casefold()):
                continue
            said.update(picked)
            recent += [bank[k].template for k in picked]
            del recent[: -(self.templates // 4)]
            return text, tokens
        return None


@functools.cache
def _bank(lang: str) -> tuple[_Sentence, ...]:
    rng = random.Random(f"kgsynth talk {lang}")
    templates = _templates(lang)
    bank = []
    seen: set[str] = set()
    known: dict[str, frozenset[Decimal]] = {}
    while len(bank) < BANK_SIZE:
        index = rng.randrange(len(templates))
        text, numbers, days = _fill(templates[index], lang, rng, known)
        if text in seen:
            continue
        seen.add(text)
        lowered = text if _FIRST_PERSON.match(text) else text[:1].lower() + text[1:]
        bank.append(_Sentence(text[:1].upper() + text[1:], lowered, numbers, days, index, count_tokens(text)))
    return tuple(bank)


@dataclass(frozen=True)
class _Template:
    parts: tuple[str, ...]  # static text around the slots: len(slots) + 1
    slots: tuple[tuple[str, int, int, tuple[str, ...]], ...]  # kind, low, high, noun forms
    times: int  # {time} slots, put in order


@functools.cache
def _templates(lang: str) -> tuple[_Template, ...]:
    templates = []
    for text in TALK[lang]:
        parts, slots, at = [], [], 0
        for m in _SLOT.finditer(text):
            parts.append(text[at : m.start()])
            kind, low, high, forms = m.groups()
            default = (7, 21) if kind == "time" else (20, 150) if kind == "time+" else (0, 0)
            slots.append((kind, int(low or default[0]), int(high or default[1]), tuple(forms.split("/")) if forms else ()))
            at = m.end()
        parts.append(text[at:])
        templates.append(_Template(tuple(parts), tuple(slots), sum(s[0] == "time" for s in slots)))
    return tuple(templates)


def _fill(template: _Template, lang: str, rng: random.Random,
          known: dict[str, frozenset[Decimal]]) -> tuple[str, frozenset[Decimal], frozenset[tuple[int, int]]]:
    """The template with its slots filled, and the numbers and (month, day)s it says
    (``known``: the numbers of each slot's text, as far as read)."""
    filled: list[str] = []
    days = set()
    for kind, low, high, forms in template.slots:
        if kind == "time+":  # a while after the time before it, the same day
            hours, minutes = map(int, filled[-1].split(":"))
            minutes = min(hours * 60 + minutes + rng.randint(low // 5, high // 5) * 5, 23 * 60 + 55)
            filled.append(f"{minutes // 60}:{minutes % 60:02d}")
        elif kind == "time":
            filled.append(f"{rng.randint(low, high)}:{rng.randrange(0, 60, 5):02d}")
        elif kind == "wd":
            filled.append(rng.choice(_WEEKDAYS[lang]))
        elif kind == "date":
            month, day = rng.randint(1, 12), rng.randint(1, 28)
            days.add((month, day))
            filled.append(f"{locale.MONTHS_EN[month - 1]} {day}" if lang == "en" else f"{day} {locale.MONTHS_RU_GENITIVE[month - 1]}")
        else:
            n = rng.randint(low, high)
            number = str(n) if n < 1000 else locale.format_number(n, lang)
            if forms:
                noun = (forms[0] if n == 1 else forms[-1]) if lang == "en" else locale.plural_ru(n, *forms)
                number = f"{number} {noun}"
            filled.append(number)
    if template.times > 1:  # two times in a line: the earlier first ("opens at 7:00 ... gone by 12:30")
        times = sorted((f for f, s in zip(filled, template.slots, strict=True) if s[0] == "time"), key=lambda t: tuple(map(int, t.split(":"))))
        filled = [times.pop(0) if s[0] == "time" else f for f, s in zip(filled, template.slots, strict=True)]
    text = template.parts[0] + "".join(f + part for f, part in zip(filled, template.parts[1:], strict=True))
    numbers = set()
    for f in filled:
        if f not in known:
            known[f] = readings(f)[0]  # "March 14" is no date to dates_in: its day is known here
        numbers |= known[f]
    return text, frozenset(numbers), frozenset(days)


# ---------------------------------------------------------------------------- units and where they go
class Unit(NamedTuple):  # a tuple: a 128k haystack makes thousands
    """Haystack turns said together, in order: a block, an entity's fact, a line of talk.
    ``names``: it names another entity, so the item's next statement about a value must
    name the topic. ``ties``: (i, j, same): text j is said by the speaker of text i (a
    block's "Sorry, I misspoke earlier" after its own slip), or by another one."""

    texts: tuple[str, ...]
    tokens: int  # of the texts, without the speakers' names
    names: bool = False
    ties: tuple[tuple[int, int, bool], ...] = ()


class Source:
    """Where one item's haystack comes from (see :class:`ScenarioSource`, and
    ``kgsynth.eval.render`` for items): blocks and entities' facts, each None once none
    is left, and talk."""

    def __init__(self, lang: str, guard: Guard):
        self.talk, self.guard = Talk(lang), guard
        self.lang = lang
        self.said: set[int] = set()
        self.recent: list[int] = []
        self.words = self.talk.words(guard)
        self.lines: set[str] = set()  # what the blocks and entities' facts have said: no line twice

    def fresh(self, texts: Sequence[str]) -> bool:
        """Whether none of ``texts`` has been said (a block's "The limit is 50,000 roubles."
        is another card's too); if so, they are now."""
        if any(t in self.lines for t in texts):
            return False
        self.lines.update(texts)
        return True

    def block(self, rng: random.Random) -> Unit | None:
        return None

    def fact(self, rng: random.Random) -> Unit | None:
        return None

    def line(self, rng: random.Random) -> Unit:
        """A line of talk; a digit-free line of the old distractor bank if the guard allows
        no number the talk could say (an item whose facts hold most small numbers)."""
        said = self.talk.line(rng, self.guard, self.words, self.said, self.recent)
        if said is None:
            bank = [x for x in PHRASES[self.lang]["distractor"] if self.guard.allows(x.casefold(), frozenset(), frozenset())]
            if not bank:
                raise HaystackError("no line of talk is free of the item's labels and numbers; cannot pad")
            line = rng.choice(bank)
            said = (line, count_tokens(line))
        return Unit((said[0],), said[1])


def gaps(turns: Sequence[Turn], names_topic: Callable[[Turn], bool]) -> tuple[list[int], list[int]]:
    """Where haystack may go among ``turns`` (gap g is before turn g; len(turns) is the end):
    every gap but one inside a question and its answer, before the opening or after the
    closing; and of those, the gaps where a unit naming another entity may go (the next
    turn about a value names the topic, or none follows)."""
    n = len(turns)
    allowed = [g for g in range(1, n) if turns[g].kind not in BOUND_KINDS]
    if n and turns[0].kind != "opening":  # the item's opening stays first, its closing last
        allowed.insert(0, 0)
    if n and turns[-1].kind != "closing" or not allowed:
        allowed.append(n)
    opened = [True] * (n + 1)  # whether the next turn about a value from gap g on names the topic (or none follows)
    for g in range(n - 1, -1, -1):
        opened[g] = names_topic(turns[g]) if turns[g].kind in VALUE_KINDS else opened[g + 1]
    return allowed, [g for g in allowed if opened[g]]


def fill(item: Sequence[Turn], tokens: int, source: Source, rng: random.Random,
         names_topic: Callable[[Turn], bool]) -> tuple[list[Turn], int]:
    """``item``'s turns with about ``tokens`` tokens of haystack among them (at least that many);
    returns the turns and how many were added. Units go to gaps drawn at random, in the
    order drawn within a gap; the speakers are the turns' own (see :func:`voices`)."""
    speakers = sorted({(t.speaker, t.role) for t in item})
    allowed, opened = gaps(item, names_topic)
    at: dict[int, list[Unit]] = {}
    for unit in units(tokens, source, rng, naming=bool(opened), speakers=speakers):
        at.setdefault(rng.choice(opened if unit.names else allowed), []).append(unit)
    out: list[Turn] = []
    added: list[dict] = []
    for g in range(len(item) + 1):
        if g in at:
            after = item[g].speaker if g < len(item) else None
            voiced, _ = voices(at[g], speakers, item[g - 1].speaker if g else None, after, rng, source)
            added += voiced
            out += voiced
        if g < len(item):
            out.append(item[g])
    made = iter(turns(added))
    return [next(made) if isinstance(t, dict) else t for t in out], len(added)


def units(tokens: int, source: Source, rng: random.Random, naming: bool, speakers: Sequence[tuple[str, str]]) -> list[Unit]:
    """Units of about ``tokens`` tokens in all (a turn counted with its speaker's name):
    blocks, entities' facts (only when ``naming``) and talk, drawn by their shares."""
    per_turn = max(count_tokens(name) for name, _ in speakers) + 1  # "Name:"
    drawn: list[Unit] = []
    misses = {"block": 0 if naming else _MISSES, "fact": 0 if naming else _MISSES}  # a kind is given up after a few
    while tokens > 0:
        r = rng.random()
        kind = "block" if r < BLOCK_SHARE else "fact" if r < BLOCK_SHARE + FACT_SHARE else None
        unit = None
        if kind and misses[kind] < _MISSES:
            unit = source.block(rng) if kind == "block" else source.fact(rng)
            misses[kind] = 0 if unit else misses[kind] + 1
        if unit is None:
            unit = source.line(rng)
        drawn.append(unit)
        tokens -= unit.tokens + per_turn * len(unit.texts)
    return drawn


def voices(units: Sequence[Unit], speakers: Sequence[tuple[str, str]], before: str | None, after: str | None,
           rng: random.Random, source: Source) -> tuple[list[dict], list[int]]:
    """``units`` as distractor turns (the fields of each, see :func:`turns`) between a turn
    of ``before`` and one of ``after`` (None: the start or the end), and where each unit
    ends. No one speaks twice in a row and a unit's ties hold: where the speakers left
    cannot do both (two speakers), a line of talk by someone else goes first, or last."""
    if len({name for name, _ in speakers}) < 2:  # nothing to alternate with
        name, role = speakers[0]
        said = [{"speaker": name, "role": role, "text": t, "kind": "distractor"} for unit in units for t in unit.texts]
        return said, list(itertools.accumulate(len(u.texts) for u in units))
    out: list[dict] = []
    ends: list[int] = []
    others = {name: [s for s in speakers if s[0] != name] for name in {None, before, after, *(n for n, _ in speakers)}}
    previous = before

    def say(speaker: tuple[str, str], text: str) -> None:
        nonlocal previous
        out.append({"speaker": speaker[0], "role": speaker[1], "text": text, "kind": "distractor"})
        previous = speaker[0]

    last = len(units) - 1
    for u, unit in enumerate(units):
        said: dict[int, str] = {}
        ties = {j: (i, same) for i, j, same in unit.ties}
        for k, text in enumerate(unit.texts):
            choices = others[previous]
            if k in ties:
                i, same = ties[k]
                choices = [s for s in choices if (s[0] == said[i]) == same]
                if not choices:
                    say(rng.choice(others[previous]), source.line(rng).texts[0])
                    choices = [s for s in others[previous] if (s[0] == said[i]) == same]
            if u == last and k == len(unit.texts) - 1 and after is not None:
                choices = [s for s in choices if s[0] != after] or choices
            speaker = choices[int(rng.random() * len(choices))]
            said[k] = speaker[0]
            say(speaker, text)
        ends.append(len(out))
    if after is not None and previous == after:
        say(rng.choice(others[previous]), source.line(rng).texts[0])
        ends[-1] = len(out)
    return out, ends


_TURNS = TypeAdapter(list[Turn])


def turns(fields: list[dict]) -> list[Turn]:
    """Turns of their fields, validated in one call (twice as fast as one by one)."""
    return _TURNS.validate_python(fields)


# ---------------------------------------------------------------------------- synthesis: other scenarios
@dataclass(frozen=True)
class _Block:
    """One scenario's fact turns in one language, with what the guard of another item checks."""

    texts: tuple[str, ...]
    tokens: int
    ties: tuple[tuple[int, int, bool], ...]
    folded: str
    numbers: frozenset[Decimal]
    days: frozenset[tuple[int, int]]
    entities: frozenset[str]  # IRIs of its entities
    names: tuple[str, ...]  # its entities' labels, casefolded: none may be a word of the item's names


class Pool:
    """Scenarios of the same graph lent to padded dialogues: a seeded sample of up to
    ``size``, one per entity, by relation of their topic. Each one's block (its fact turns,
    from a dialogue seeded by the scenario, without noise, clarifications, re-asks or
    corrections by chance; a slip its level needs stays, tied to its correction) is built
    once per language, so a padded item costs no dialogue building."""

    def __init__(self, scenarios: Iterable[Scenario] | Callable[[], Iterable[Scenario]], seed: int, size: int = POOL_SIZE):
        self._scenarios, self.seed, self.size = scenarios, seed, size
        self._all: list[Scenario] | None = None
        self.by_relation: dict[str, list[Scenario]] = {}
        self._blocks: dict[tuple[str, str], _Block | None] = {}
        self._facts: dict[tuple[str, str], tuple] = {}

    @property
    def scenarios(self) -> list[Scenario]:
        if self._all is None:  # on first use: a run that pads nothing never builds it
            source = self._scenarios() if callable(self._scenarios) else self._scenarios
            one_each: dict[str, Scenario] = {}
            for s in source:
                one_each.setdefault(s.entity.value, s)
            chosen = list(one_each.values())
            if len(chosen) > self.size:
                chosen = random.Random(f"{self.seed}:haystack").sample(chosen, self.size)
            self._all = chosen
            for s in chosen:
                for relation in sorted({f.relation.value for f in s.facts if f.subject.value == s.entity.value}):
                    self.by_relation.setdefault(relation, []).append(s)
        return self._all

    def block(self, other: Scenario, lang: str) -> _Block | None:
        key = (other.id, lang)
        if key not in self._blocks:
            self._blocks[key] = self._build(other, lang)
        return self._blocks[key]

    def _build(self, other: Scenario, lang: str) -> _Block | None:
        if lang not in other.wording:
            return None
        dialogue = build_dialogue(other, lang, _BLOCK_SETTINGS, random.Random(f"{self.seed}:{other.id}:{lang}:haystack"))
        turns = [t for t in dialogue.turns if t.kind in ("fact", "misstatement")]
        if not turns or turns[0].kind != "fact" or not has_any_word(turns[0].text, other.wording[lang].entity.writings()):
            return None  # its first turn must name its entity: the rest may be said without the name
        ties = slip_ties(turns)
        if ties is None:
            return None
        texts = tuple(t.text for t in turns)
        numbers, days = readings(" ".join(texts))
        names = tuple(sorted({label.casefold() for node in _named_nodes(other) for label in (node.label, *node.labels.values()) if label}))
        return _Block(texts, sum(map(count_tokens, texts)), ties, " ".join(texts).casefold(), numbers, days, _entities(other), names)

    def facts(self, other: Scenario, lang: str) -> tuple:
        """(relation, the noun with its subject, value, yes/no sentence, value object, readings) of
        each fact of ``other`` about its own entity."""
        key = (other.id, lang)
        if key not in self._facts:
            said = []
            for fact, words in zip(other.facts, other.wording[lang].facts, strict=True):
                if fact.subject.value == other.entity.value:
                    value = words.spoken or words.value or render_value(fact, other, lang)
                    said.append((fact.relation.value, words.noun_of, value, words.statement, fact.object.python, readings(value)))
            self._facts[key] = tuple(said)
        return self._facts[key]


class Others(list):
    """The scenarios lent to one item (a list, what its confusable turns draw from) and
    ``haystack``, the pool its padding draws from: how the pipeline hands both through
    ``make_item`` to ``build_dialogue`` and ``pad_dialogue``."""

    def __init__(self, scenarios: Iterable[Scenario] = (), haystack: Pool | None = None):
        super().__init__(scenarios)
        self.haystack = haystack


def slip_ties(turns: Sequence[Turn]) -> tuple[tuple[int, int, bool], ...] | None:
    """For a block's turns (fact turns and slips): each slip tied to its correction, the
    next fact turn that repeats the wrong value ("..., not 27,000"), said by the same
    speaker ("Sorry, I misspoke earlier") or not; None if a slip has no correction."""
    ties = []
    named = _values_in(turns[0].text) if turns else set()
    for i, slip in enumerate(turns):
        if slip.kind == "misstatement":
            wrong = _values_in(slip.text) - named
            j = next((j for j in range(i + 1, len(turns)) if turns[j].kind == "fact" and wrong & _values_in(turns[j].text)), None)
            if j is None:
                return None
            ties.append((i, j, turns[j].speaker == slip.speaker))
    return tuple(ties)


def _named_nodes(scenario: Scenario) -> list[Node]:
    """The entity and every entity its facts name (not its class: "insurance claim" names no one)."""
    return [n for n in (scenario.entity, *(n for f in scenario.facts for n in (f.subject, f.object))) if n.kind == "iri"]


def _entities(scenario: Scenario) -> frozenset[str]:
    return frozenset(n.value for n in _named_nodes(scenario))


def _values_in(text: str) -> set:
    return {*numbers_in(text), *dates_in(text)}


def scenario_guard(scenario: Scenario, lang: str, speakers: Iterable[str] = ()) -> Guard:
    """What the haystack of ``scenario``'s item in ``lang`` must not say: every label it
    mentions, its facts' values in every writing the dialogue uses, its answer and aliases,
    its rule's numbers, and its speakers' names."""
    gold = scenario.gold[lang]
    golds = [gold] if isinstance(gold, str) else list(gold)
    values = [*golds, *scenario.gold_aliases.get(lang, [])]
    for fact, words in zip(scenario.facts, scenario.wording[lang].facts, strict=True):
        values += [w for w in (words.value, words.spoken, words.statement) if w]
        values.append(render_value(fact, scenario, lang))
    numbers = rule_numbers(scenario.rule) if scenario.rule else ()
    yes_no = {w.casefold() for w in YES_NO[lang]}  # "yes" in small talk states nothing
    words = [w for w in (*scenario.mentioned_texts, *values, *speakers) if w.casefold() not in yes_no]
    return Guard.of(words, values, numbers)


class ScenarioSource(Source):
    """One item's haystack in synthesis: blocks and facts of the pool's scenarios (half
    the draws among those sharing a relation of the topic, the hardest to tell apart)."""

    def __init__(self, scenario: Scenario, lang: str, pool: Pool | None, guard: Guard):
        super().__init__(lang, guard)
        self.scenario, self.pool = scenario, pool
        self.entities = _entities(scenario)
        self.blob = scenario.mentioned_blob
        self.relations = sorted({f.relation.value for f in scenario.facts if f.subject.value == scenario.entity.value})
        self.relation_set = frozenset(self.relations)
        self.objects = {f.object.python for f in scenario.facts if f.object.kind == "literal" and not isinstance(f.object.python, bool)}
        self.used: set[str] = set()  # scenarios whose block is said
        self.said: set[tuple[str, int]] = set()  # (scenario, fact) said as an entity's fact
        self.checked: dict[str, bool] = {}

    def _draw(self, rng: random.Random, related: bool) -> Scenario | None:
        if self.pool is None:
            return None
        everyone = self.pool.scenarios
        candidates = self.pool.by_relation.get(rng.choice(self.relations)) if related and self.relations else everyone
        return candidates[rng.randrange(len(candidates))] if candidates else None

    def _fits(self, other: Scenario) -> bool:
        """Whether ``other``'s block may be said in this item: other entities, none of the
        item's labels, values or numbers in it, none of its labels a word of the item's names."""
        if other.id not in self.checked:
            block = self.pool.block(other, self.lang) if self.pool else None
            self.checked[other.id] = (
                block is not None and self.entities.isdisjoint(block.entities)
                and self.guard.allows(block.folded, block.numbers, block.days)
                and not any(has_word(self.blob, name) for name in block.names)
            )
        return self.checked[other.id]

    def block(self, rng: random.Random) -> Unit | None:
        for attempt in range(12):
            other = self._draw(rng, related=attempt < 6 and rng.random() < 0.5)
            if other is not None and other.id not in self.used and self._fits(other):
                self.used.add(other.id)
                block = self.pool.block(other, self.lang)
                if self.fresh(block.texts):
                    return Unit(block.texts, block.tokens, names=True, ties=block.ties)
        return None

    def fact(self, rng: random.Random) -> Unit | None:
        for _ in range(8):
            other = self._draw(rng, related=True)
            if other is None or not self._fits(other):
                continue
            shared = ((i, self._in_topic_terms(f)) for i, f in enumerate(self.pool.facts(other, self.lang))
                      if f[0] in self.relation_set and (other.id, i) not in self.said and f[4] not in self.objects)
            options = [(i, f) for i, f in shared if self.guard.allows(f[2].casefold(), *f[5])]
            if options:
                i, (_, noun_of, value, statement, _, _) = rng.choice(options)
                self.said.add((other.id, i))
                text = entity_fact(noun_of, value, statement, self.lang, rng)
                if self.fresh((text,)):
                    return Unit((text,), count_tokens(text), names=True)
        return None

    def _in_topic_terms(self, said: tuple) -> tuple:
        """A fact of :meth:`Pool.facts` with its value said as the topic says its own."""
        relation, noun_of, value, statement, python, _ = said
        written = as_topic_says(self.scenario, relation, python, value, self.lang)
        return said if written == value else (relation, noun_of, written, statement, python, readings(written))


def entity_fact(noun_of: str, value: str, statement: str | None, lang: str, rng: random.Random) -> str:
    """Another entity's fact, named, as the verbaliser's confusable turns say it."""
    if statement:
        return rng.choice(STATEMENTS[lang]["yes_no"]).format(statement=statement)
    the_noun = f"the {noun_of}" if lang == "en" else noun_of
    text = rng.choice(STATEMENTS[lang]["confusable"]).format(the_noun=the_noun, The_noun=the_noun[:1].upper() + the_noun[1:], value=value)
    return text.replace("..", ".")


def pad(turns: Sequence[Turn], scenario: Scenario, lang: str, target_tokens: int, rng: random.Random,
        pool: Pool | None) -> tuple[list[Turn], int]:
    """``turns`` of ``scenario``'s dialogue with a haystack up to ``target_tokens``."""
    tokens = target_tokens - count_tokens("\n".join(f"{t.speaker}: {t.text}" for t in turns))
    if tokens <= 0:
        return list(turns), 0
    speakers = {t.speaker for t in turns}
    guard = scenario_guard(scenario, lang, speakers)
    writings = scenario.wording[lang].entity.writings()
    return fill(turns, tokens, ScenarioSource(scenario, lang, pool, guard), rng, lambda t: has_any_word(t.text, writings))


def pad_dialogue(dialogue: Dialogue, scenario: Scenario, lang: str, target_tokens: int, rng: random.Random,
                 others: Sequence[Scenario] = ()) -> Dialogue:
    """``dialogue`` (``build_dialogue``'s) with a haystack until the transcript has ``target_tokens``:
    other scenarios' fact turns, other entities' facts, small talk with numbers, none with
    a label, value or number of the scenario, an entity named only where the next
    statement about the topic names it. The haystack comes from ``others.haystack`` (the
    pipeline's pool of the graph's scenarios), else from ``others`` themselves; without
    either it is small talk alone. Fact-turn indices are shifted. ``make_item`` calls it
    with the rng that built the dialogue, when ``DialogueSettings.target_tokens`` is set."""
    pool = getattr(others, "haystack", None) or (Pool(others, seed=0) if others else None)
    try:
        turns, padding = pad(dialogue.turns, scenario, lang, target_tokens, rng, pool)
    except HaystackError as e:
        raise VerbaliserError(str(e)) from None
    fact_turns = tuple(i for i, t in enumerate(turns) if t.kind == "fact")
    return dialogue.model_copy(update={"turns": tuple(turns), "fact_turns": fact_turns, "padding_turns": padding})
