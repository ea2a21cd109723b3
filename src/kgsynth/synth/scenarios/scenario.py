"""Scenarios: the cheap, model-free phase of synthesis.

A scenario is everything an item needs except its wording: the entity, the episodic facts
(grouped into *pieces*, one fact-bearing turn each), the rule the dialogue must never
state, the target question, the answer format with its constraints, and the gold answer
computed by code (the rule engine, or the graph itself for retrieval shapes). Verbalisers
(template now, LLM later) only turn a scenario into a dialogue.

Difficulty counts the reasoning an answer takes (:class:`Reasoning`), not turns: each
input fact to find, each input about a bridge (a join one hop further), each addition of a
summed input, the operation that combines inputs (the rule applied, two values compared,
two conditions intersected), and, added by the dialogue, each corrected value to track and
each confusable turn (another entity's value of the topic's relation) to rule out. Easy is
1-3 steps, medium 4-5, hard 6 or more: the method's table (2, 3 and 4 fact-bearing turns
joined by 1, 2 and 3 links) counts 3, 5 and 7; its turn ranges (easy 4-6, medium 6-10, hard
10-15) stay the length envelope. The graph fixes the base: a one-input rule is 2 (the
input, the rule), a two-input rule 3, k purchases summed against a limit 2k + 1, a simple
lookup 1, a set of k members k, a comparison or a conditional 3, an h-hop chain 2h - 1
(2-hop 3, 3-hop 5, 4-hop 7: easy, medium, hard). A level above the base is reached only by
real steps, corrections and confusable turns (at most :data:`MAX_CORRECTIONS` and
:data:`MAX_DISTRACTORS`), never by turns alone; no level lies below the base. Every
fact-bearing turn states at least one input (one per turn while the envelope has room): the
entity's name, and its class when the rule depends on it, ride in the first fact turn,
never in a turn of their own.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from enum import StrEnum
from functools import cache, cached_property, lru_cache
from itertools import islice
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from kgsynth.formats import locale, morph
from kgsynth.formats.answers import AnswerFormat, Choices, Constraints, canonical_gold, class_aliases, has_word
from kgsynth.kg import KnowledgeGraph, local_name
from kgsynth.kg._terms import date_or_year
from kgsynth.kg.vocab import SET_OPERATIONS, XSD, Operation, Rule, RuleOrigin, WorldKnowledge, fact_sources
from kgsynth.queries import CachedModel, Fact, Node, Shape, Subgraph, picks_out, share_field_names
from kgsynth.synth.naming.lexicon import Lexicon, Wording, wording
from kgsynth.synth.naming.questions import fan_chain, retrieval_question, rule_question
from kgsynth.synth.scenarios.rules import RuleEvaluationError, RuleOutcome, evaluate_subgraph

LANGUAGES = ("en", "ru")
CURRENCIES = frozenset({"RUB", "USD", "EUR"})
NO_RULE = "none"  # rule_kind of retrieval items (no semantic rule)
# What to do with a subgraph whose answer is world knowledge: not build it; build it where the
# closed-book filter can check it (every format but yes/no, which its guessers never answer);
# build it. Its scenarios are flagged (Scenario.world_knowledge) when built.
WorldPolicy = Literal["skip", "closed_book", "keep"]


class Difficulty(StrEnum):
    easy = "easy"
    medium = "medium"
    hard = "hard"


class DifficultySpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    turns: tuple[int, int]  # inclusive range of dialogue turns (before length padding)
    steps: tuple[int, int | None]  # inclusive range of reasoning steps (Reasoning.steps); None: no upper bound

    def holds(self, steps: int) -> bool:
        """Whether ``steps`` reasoning steps belong to this level."""
        low, high = self.steps
        return low <= steps and (high is None or steps <= high)


DIFFICULTY: dict[Difficulty, DifficultySpec] = {
    Difficulty.easy: DifficultySpec(turns=(4, 6), steps=(1, 3)),
    Difficulty.medium: DifficultySpec(turns=(6, 10), steps=(4, 5)),
    Difficulty.hard: DifficultySpec(turns=(10, 15), steps=(6, None)),
}
MAX_CORRECTIONS = 2  # corrected values a level may add to what the graph gives
MAX_DISTRACTORS = 2  # confusable turns a level may add (the wording phase lends two other entities)
RESERVED_TURNS = 3  # turns a confusable cannot take (the opening, the reply to it, the last)


class Reasoning(BaseModel):
    """The steps an answer takes: what the graph fixes (inputs, bridged, summed, operations)
    and what the level asks the dialogue to add (corrections, distractors). An item's
    ``links`` are its realised steps: the base, and the misstatements and confusable turns
    its dialogue holds (a dialogue may add more of them, within its level)."""

    model_config = ConfigDict(frozen=True)

    inputs: int = 0  # facts the answer reads, each a value to find in the dialogue
    bridged: int = 0  # of them, facts about a bridge (a multi-hop entity the question never names): a join each
    summed: int = 0  # additions: a summed input of k values is k - 1
    operations: int = 0  # the rule applied, two values compared, two conditions intersected
    corrections: int = 0  # values misstated, then corrected: the reader keeps the final one
    distractors: int = 0  # confusable turns: another entity's value of a relation the topic has, to rule out

    @property
    def base(self) -> int:
        return self.inputs + self.bridged + self.summed + self.operations

    @property
    def steps(self) -> int:
        return self.base + self.corrections + self.distractors


class Cell(BaseModel):
    """One combination the dataset is balanced over (category x difficulty x format);
    domain and rule kind ride along for slicing."""

    model_config = ConfigDict(frozen=True)

    domain: str
    category: str
    difficulty: Difficulty
    answer_format: AnswerFormat
    rule_kind: str

    @property
    def key(self) -> str:
        return cell_key(self.category, self.difficulty, self.answer_format)


def cell_key(category: str, difficulty: str, answer_format: str) -> str:
    """The balance key of a cell: ``category/difficulty/format``."""
    return f"{category}/{difficulty}/{answer_format}"


class Piece(BaseModel):
    """What one fact-bearing turn carries: at least one fact, and in the first turn the
    entity's name and its class (never a turn of their own)."""

    model_config = ConfigDict(frozen=True)

    name: bool = False
    entity_class: bool = False
    facts: tuple[int, ...] = ()  # indices into Scenario.facts


class Scenario(CachedModel):  # model_copy drops the cached properties below
    """An item before wording: facts, rule, question, format and computed gold."""

    model_config = ConfigDict(frozen=True)

    id: str
    cell: Cell
    shape: Shape
    variant: str
    subgraph_id: str
    entity: Node
    entity_class: Node | None = None
    facts: tuple[Fact, ...]  # the episodic facts the dialogue must carry (role: the rule input each feeds)
    pieces: tuple[Piece, ...]
    rule: Rule | None = None
    topic: dict[str, str]  # by language: "payroll / tax"
    question: dict[str, str]
    wording: dict[str, Wording]  # by language: how the dialogue names the entity and says each fact
    constraints: Constraints
    gold: dict[str, str | list[str]]  # canonical gold by language
    gold_aliases: dict[str, list[str]] = {}
    answer_in_dialogue: bool  # a fact states the answer: retrieval shapes, and a rule whose answer is an input (a 100% payout)
    steps: tuple[str, ...] = ()
    reasoning: Reasoning = Reasoning()  # the steps the answer takes; the level's corrections and distractors
    branch: str = ""  # which way the rule went (RuleOutcome.branch): answers are balanced over it
    boundary: bool = False  # an input exactly on the rule's edge (RuleOutcome.boundary)
    hidden: tuple[Node, ...] = ()  # bridges: named in the dialogue, never in the question
    world_knowledge: bool = False  # every fact is world knowledge (WorldKnowledge): answerable without the dialogue
    sources: tuple[str, ...] = ()  # the documents stating its facts (kgs:sourceId, an ingested graph's provenance)

    @property
    def answer_format(self) -> AnswerFormat:
        return self.cell.answer_format

    @cached_property
    def mentioned_texts(self) -> frozenset[str]:
        """Every label (any language) of the entity, its class and the facts' nodes, casefolded:
        what a distractor must not contain."""
        nodes = [self.entity, *([self.entity_class] if self.entity_class else [])]
        nodes += [n for f in self.facts for n in (f.subject, f.object)]
        return frozenset(t.casefold() for n in nodes for t in (n.label, *n.labels.values()) if t)

    @cached_property
    def mentioned_blob(self) -> str:
        """The mentioned texts and the relations' labels, casefolded, one per line: a
        speaker's name must not occur in it as a word."""
        relations = {t.casefold() for f in self.facts for t in (f.relation.label, *f.relation.labels.values())}
        return "\n".join(sorted(self.mentioned_texts | relations))

    @cached_property
    def source_triples(self) -> tuple[str, ...]:
        return tuple(f.triple for f in self.facts)

    @cached_property
    def question_keys(self) -> dict[str, bytes]:
        """:func:`question_key` of the scenario's template question and gold, by language
        (given by the builder: a subgraph's levels share question and gold)."""
        return question_keys(self.question, self.gold)

    @cached_property
    def derived(self) -> dict[object, object]:
        """What later stages derive from this scenario alone, kept with it by their own keys
        (the dialogue's facts a confusable turn may state, per language; the facts a slip
        may misstate): a scenario drawn into several other items, or worded in several
        languages, is read once."""
        return {}


def question_keys(question: Mapping[str, str], gold: Mapping[str, str | Sequence[str]]) -> dict[str, bytes]:
    """:func:`question_key` of each language's question and gold."""
    return {lang: question_key(lang, text, gold[lang]) for lang, text in question.items()}


def question_key(language: str, question: str, gold: str | Sequence[str]) -> bytes:
    """What two items asking the same share: language, question and gold casefolded, ё as
    е, spaces collapsed, a set gold's members in any order; a 16-byte digest, since a run
    of 10^6 items keeps 10^6 of them in memory."""
    golds = [gold] if isinstance(gold, str) else gold
    parts = [language, _folded(question), *sorted(_folded(g) for g in golds)]
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).digest()


def question_digest(question: str) -> str:
    """A question casefolded, ё as е, spaces collapsed, as 16 hex digits: what two releases
    compare to tell whether one asks what the other did (any language, any gold)."""
    return hashlib.blake2b(_folded(question).encode(), digest_size=8).hexdigest()


def _folded(text: str) -> str:
    return " ".join(text.casefold().replace("ё", "е").split())


# ---------------------------------------------------------------------------- building
class ScenarioBuilder:
    """Builds scenarios from subgraphs; looks up the few labels it needs once per graph.

    Args:
        kg: the graph the subgraphs came from (for rule, class and category labels).
        rules: ``load_rules(kg)``.
        languages: the languages every scenario must be able to speak.
        world_knowledge: what to do with a subgraph a model can answer from world knowledge
            (:data:`WorldPolicy`; ``SynthConfig.world_policy`` resolves the config's setting);
            ``world_skipped`` counts the subgraphs not built for it, by shape, and
            ``world_example`` names the world-known entity of the first of them.
    """

    def __init__(self, kg: KnowledgeGraph, rules: Mapping[str, Rule], languages: Iterable[str] = LANGUAGES,
                 world_knowledge: WorldPolicy = "skip"):
        self.kg = kg
        self.world = WorldKnowledge.of(kg)
        self.sources = fact_sources(kg)
        self.world_policy = world_knowledge
        self.world_skipped: Counter[str] = Counter()
        self.world_example: str | None = None
        self.rules = rules
        self.languages = tuple(languages)
        iris = {i for r in rules.values() for i in (r.domain, r.category, r.applies_to_class) if i}
        iris |= {b.class_iri for r in rules.values() for b in r.brackets}
        self._nodes = _label_nodes(kg, iris)
        self.lexicon = Lexicon(kg)
        self._cells: dict[tuple[str, Difficulty, AnswerFormat], Cell] = {}
        self._rule_constraints: dict[tuple[str, bool], Constraints] = {}

    def node(self, iri: str) -> Node:
        return self._nodes[iri]

    def build_many(self, subgraphs: Iterable[Subgraph], batch: int = 256) -> Iterator[Scenario]:
        """:meth:`build` for each subgraph in turn, the entities of every ``batch`` of them
        looked up together first (what each is, for its name and article)."""
        subgraphs = iter(subgraphs)
        while chunk := list(islice(subgraphs, batch)):
            self.lexicon.learn(node for subgraph in chunk for fact in subgraph.facts for node in (fact.subject, fact.object))
            for subgraph in chunk:
                yield from self.build(subgraph)

    def build(self, subgraph: Subgraph) -> Iterator[Scenario]:
        """Every scenario the subgraph can fill: one per (answer format, difficulty). One
        whose answer is world knowledge is flagged, or not built (``world_knowledge``)."""
        world = self.world_answerable(subgraph)
        if world and self.world_policy == "skip":
            self._left_out(subgraph)
            return
        subgraph = numbers_as_written(subgraph)
        if subgraph.shape is Shape.rule_application:
            scenarios = self._rule_scenarios(subgraph)
        else:
            scenarios = self._retrieval_scenarios(subgraph)
        if not world:
            yield from scenarios
            return
        dropped = False
        for scenario in scenarios:
            if self.world_policy == "closed_book" and scenario.answer_format is AnswerFormat.yes_no:
                dropped = True  # its guessers never answer yes/no (right half the time by chance)
                continue
            yield scenario.model_copy(update={"world_knowledge": True})
        if dropped:
            self._left_out(subgraph)

    def _left_out(self, subgraph: Subgraph) -> None:
        """Count a world-answerable subgraph not built (or built in part), and keep the
        first one's world-known entity as the example a message names."""
        self.world_skipped[subgraph.shape.value] += 1
        if self.world_example is None:
            self.world_example = next(f.subject.value for f in subgraph.facts if self.world.entity(f.subject.value))

    def _sources_of(self, facts: tuple[Fact, ...]) -> tuple[str, ...]:
        if not self.sources:
            return ()
        return tuple(sorted({source for f in facts for source in self.sources.get(f.triple, ())}))

    def world_answerable(self, subgraph: Subgraph) -> bool:
        """Whether a model can answer the subgraph's question from world knowledge alone:
        the world-knowledge facts among its facts (:class:`WorldKnowledge`) determine the
        answer. A shape's answer needs every fact (a comparison's two values, a chain's every
        hop, every member of a set, a rule's inputs), so one fact of an invented entity ("Anna
        lives in Kazan") makes the dialogue necessary, while Sochi's UTC offset or the
        country of Kazan does not; a conditional's two facts each narrow the answer, so one
        world fact that alone picks it out of the graph is enough ("Which country of Kazan
        is also the home country of Anna?"). A rule's answer needs the rule as well: a
        library rule (an age, a density) a model knows; an invented one it cannot."""
        if subgraph.shape is Shape.rule_application and not self._library_rule(subgraph):
            return False
        facts, known = subgraph.facts, self.world.fact
        said = (known(f.subject.value, f.relation.value, f.object.value if f.object.kind == "iri" else None) for f in facts)
        if subgraph.shape is not Shape.conditional or len(subgraph.answer) != 1:
            return bool(facts) and all(said)  # stops at the first episodic fact: ~0.4 us a subgraph
        world = list(said)
        return bool(world) and (all(world) or any(w and picks_out(self.kg, f, subgraph.answer[0])
                                                  for f, w in zip(facts, world, strict=True)))

    def _library_rule(self, subgraph: Subgraph) -> bool:
        rule = self.rules.get(subgraph.rule.value) if subgraph.rule else None
        return rule is not None and rule.origin is RuleOrigin.library

    # ------------------------------------------------------------------ rule application
    def _rule_scenarios(self, subgraph: Subgraph) -> Iterator[Scenario]:
        rule = self.rules.get(subgraph.rule.value) if subgraph.rule else None
        if rule is None:
            return
        if rule.operation in SET_OPERATIONS and sum(f.role == "member" for f in subgraph.facts) < 2:
            return  # one member: its count is 1, its total, largest and earliest the member itself
        try:
            outcome = evaluate_subgraph(rule, subgraph)
        except RuleEvaluationError:
            return  # e.g. an amount outside every bracket: the graph cannot give this item
        entity = subgraph.mention[0]
        facts = _values_as_read(rule, subgraph.facts)
        entity_class = self.node(rule.applies_to_class) if rule.applies_to_class else None
        topic = self._topic(rule)
        question = {lang: rule_question(rule, entity, lang, self.lexicon, facts) for lang in self.languages}
        words = self._wording(entity, entity_class, facts)
        levels = _difficulties(_rule_reasoning(facts, entity), facts, entity, entity_class is not None, reorder=True)
        answer_in_dialogue, branch = _equals_an_input(outcome), outcome.branch
        for fmt, gold_value, constraints in self._rule_answers(rule, outcome):
            gold, aliases = self._gold(fmt, gold_value, constraints)
            if gold is None:
                continue
            if rule.operation in (Operation.century, Operation.decade):
                aliases = {lang: _period_aliases(rule.operation, gold_value, lang) for lang in self.languages}
            keys = question_keys(question, gold)
            shared = dict(
                shape=subgraph.shape, variant=subgraph.variant, subgraph_id=subgraph.id, entity=entity,
                entity_class=entity_class, facts=facts, rule=rule, topic=topic, question=question, wording=words,
                constraints=constraints, gold=gold, gold_aliases=aliases, answer_in_dialogue=answer_in_dialogue,
                steps=outcome.steps, branch=branch, boundary=outcome.boundary, hidden=_bridges(facts, entity),
                world_knowledge=False, sources=self._sources_of(facts),
            )
            for level in levels:
                yield _scenario(self._rule_cell(rule, level.difficulty, fmt), level, keys, shared)

    def _wording(self, entity: Node, entity_class: Node | None, facts: tuple[Fact, ...]) -> dict[str, Wording]:
        return {lang: wording(self.lexicon, entity, entity_class, facts, lang) for lang in self.languages}

    def _topic(self, rule: Rule) -> dict[str, str]:
        if not (rule.domain and rule.category):
            return {lang: rule.iri for lang in self.languages}
        return {lang: f"{self.node(rule.domain).label_in(lang)} / {self.node(rule.category).label_in(lang)}" for lang in self.languages}

    def _rule_cell(self, rule: Rule, difficulty: Difficulty, fmt: AnswerFormat) -> Cell:
        """The rule's cell (one object per rule, difficulty and format: scenarios share it)."""
        key = (rule.iri, difficulty, fmt)
        if key not in self._cells:
            self._cells[key] = Cell(
                domain=local_name(rule.domain) if rule.domain else "general",
                category=local_name(rule.category) if rule.category else rule.kind.value,
                difficulty=difficulty,
                answer_format=fmt,
                rule_kind=rule.kind.value,
            )
        return self._cells[key]

    def _retrieval_cell(self, shape: Shape, difficulty: Difficulty, fmt: AnswerFormat) -> Cell:
        """The shape's cell (one object per shape, difficulty and format: scenarios share it)."""
        key = (shape.value, difficulty, fmt)
        if key not in self._cells:
            self._cells[key] = Cell(domain="episodic", category=shape.value, difficulty=difficulty, answer_format=fmt,
                                    rule_kind=NO_RULE)
        return self._cells[key]

    def _rule_answers(self, rule: Rule, outcome: RuleOutcome) -> Iterator[tuple[AnswerFormat, object, Constraints]]:
        """The answer formats a rule's outcome can be asked in, with the gold value of each."""
        op, value = rule.operation, outcome.value
        constraints = self._constraints(rule, outcome)
        if op in _AMOUNTS:
            # no percent item for a case rule: asking which rate applies names the rule's constant
            yield AnswerFormat.currency if rule.unit in CURRENCIES else AnswerFormat.number, value, constraints
        elif op is Operation.percent_change:
            yield AnswerFormat.percent, value, constraints
        elif isinstance(value, bool):
            yield AnswerFormat.yes_no, value, constraints
        elif op is Operation.bracket_class:
            label = self.node(str(value))
            yield _text_format(label, self.languages), label, constraints
        elif op is Operation.day_of_week:
            day = _weekday(value)
            yield _text_format(day, self.languages), day, constraints
        elif isinstance(value, dt.date):
            yield AnswerFormat.date, value, constraints
        else:  # a count: days, years, members; a century, a decade or a year
            yield AnswerFormat.number, value, constraints

    def _constraints(self, rule: Rule, outcome: RuleOutcome) -> Constraints:
        """What the rule's answers must satisfy (one object per rule and way of counting
        years: scenarios share it)."""
        calendar_years = any(isinstance(v, int) for v in outcome.inputs.values())
        key = (rule.iri, calendar_years)
        if key not in self._rule_constraints:
            self._rule_constraints[key] = self._constraints_of(rule, calendar_years)
        return self._rule_constraints[key]

    def _constraints_of(self, rule: Rule, calendar_years: bool) -> Constraints:
        op = rule.operation
        if op in _AMOUNTS or op is Operation.percent_change:
            # a difference or a change can be negative: the instruction then says how a negative half rounds
            signed = op in (Operation.difference, Operation.percent_change, Operation.ratio)
            return Constraints(unit=rule.unit, rounding=rule.rounding, signed=signed)
        if op is Operation.days_between:
            # the instruction says how the engine counts (end minus start): 19 to 21 September is 2, not 3
            return Constraints(unit=rule.unit or "days", rounding=0, day_count=True)
        if op is Operation.years_between:
            return Constraints(unit="years", rounding=0, years="calendar" if calendar_years else "completed")
        if op in (Operation.century, Operation.decade):
            return Constraints(years=op.name)
        if op is Operation.bracket_class:
            return Constraints(choices=self._class_choices(rule))
        if op is Operation.day_of_week:
            return Constraints(choices=Choices(**{lang: WEEKDAYS[lang] for lang in self.languages}))
        return Constraints()

    def _class_choices(self, rule: Rule) -> Choices:
        """The labels of a classification rule's classes in each language, lowest bracket first."""
        brackets = sorted(rule.brackets, key=lambda b: (b.lower is not None, b.lower or 0))
        classes = [self.node(iri) for iri in dict.fromkeys(b.class_iri for b in brackets)]
        return Choices(**{lang: tuple(c.label_in(lang) for c in classes) for lang in self.languages})

    # ------------------------------------------------------------------ retrieval shapes
    def _retrieval_scenarios(self, subgraph: Subgraph) -> Iterator[Scenario]:
        shape = subgraph.shape
        facts = subgraph.facts
        entity = subgraph.mention[0]
        if not self._one_class_each(subgraph):
            return
        if shape in (Shape.set, Shape.multihop_set):
            fmt, gold_value = AnswerFormat.set, list(subgraph.answer)
        elif len(subgraph.answer) == 1:
            fmt, gold_value = _answer_format(subgraph.answer[0], self.languages), subgraph.answer[0]
        else:
            return
        if fmt is None or any(self._year_as_number(f) for f in facts):
            return
        constraints = Constraints()  # the graph's own value, not rounded
        gold, aliases = self._gold(fmt, gold_value, constraints, options=subgraph.mention)
        if gold is None:
            return
        question = {lang: retrieval_question(subgraph, lang, self.lexicon) for lang in self.languages}
        if shape is Shape.multihop_set and _names_any(question, (*subgraph.hidden, *subgraph.answer)):
            return  # a bridge or a member named in the question (in the start's name): a hop skipped
        if _says_a_named_value(question, facts, subgraph.answer):
            return  # "the order whose order number is ORD-1": the name says the node, or the answer
        words = self._wording(entity, None, facts)
        # a value ("2025-05-31", "Kazan" as an inverse set's key) is stated with its fact, never made the topic
        name_piece = shape is not Shape.comparison and entity.kind == "iri" and any(f.subject == entity for f in facts)
        keys = question_keys(question, gold)
        shared = dict(
            shape=shape, variant=subgraph.variant, subgraph_id=subgraph.id, entity=entity, entity_class=None,
            facts=facts, rule=None, topic={lang: shape.value for lang in self.languages}, question=question,
            wording=words, constraints=constraints, gold=gold, gold_aliases=aliases, answer_in_dialogue=True, steps=(),
            branch="", boundary=False, hidden=subgraph.hidden if shape in (Shape.multihop, Shape.multihop_set) else (),
            world_knowledge=False, sources=self._sources_of(facts),
        )
        for level in _difficulties(_retrieval_reasoning(subgraph), facts, entity, False, name_piece):
            yield _scenario(self._retrieval_cell(shape, level.difficulty, fmt), level, keys, shared)

    def _year_as_number(self, fact: Fact) -> bool:
        """Whether a fact's value is a year written as a number under a relation whose noun
        says a date or year (FB15k-237's "1967.91666667" for November 1967, "1995.0"): no
        person says "1,967.91666667" or compares dates as "greater", and read as its year the
        value could name several entities, so no retrieval question is built on it (rules
        read it as the year)."""
        value = fact.object
        if value.kind != "literal" or value.datatype not in _NUMBER_TYPES:
            return False
        number = value.python
        finite = isinstance(number, int) or isinstance(number, Decimal) and number.is_finite() or (
            isinstance(number, float) and math.isfinite(number))
        return (finite and 1000 <= number < 2101
                and _DATE_WORDS.search(self.lexicon.noun(fact.relation, "en")) is not None)

    def _one_class_each(self, subgraph: Subgraph) -> bool:
        """Whether the members a question names by one noun are all what that noun says: an
        inverse set's subjects ("List every hotel whose city is Sochi" may not list a store in
        Sochi; "every resident" may list employees and customers), a set-valued chain's members
        and its ends, each of one class (the start, which the answer leaves out, aside)."""
        if subgraph.shape is Shape.set and subgraph.variant == "inverse":
            return all(len({self.lexicon.inverse_noun(f.relation, lang, f.subject) for f in subgraph.facts}) == 1
                       for lang in self.languages)
        if subgraph.shape is not Shape.multihop_set:
            return True
        chain = fan_chain(subgraph)
        return all(len({getattr(self.lexicon.class_of(n), "value", None) for n in nodes if n != chain.start}) == 1
                   for nodes in (chain.members, chain.ends))

    # ------------------------------------------------------------------ gold
    def _gold(self, fmt: AnswerFormat, value: object, constraints: Constraints, options: Sequence[Node] = ()):
        """Canonical gold per language (labels differ by language) and every other accepted
        writing as aliases: the other labels, a class's short forms ("B" of "power class B"),
        and the code in an entity's label ("BK-VTBNYU" of "Booking BK-VTBNYU") unless one of
        the ``options`` the question offers has it too."""
        if fmt is AnswerFormat.set:
            gold = {lang: canonical_gold([n.label_in(lang) for n in value], fmt) for lang in self.languages}
            return gold, {}
        if isinstance(value, Node):
            if value.kind == "literal":
                return {lang: canonical_gold(value.python, fmt, constraints) for lang in self.languages}, {}
            labels = {lang: value.label_in(lang) for lang in self.languages}
            gold = {lang: canonical_gold(labels[lang], fmt) for lang in self.languages}
            codes = _code_aliases(value, options)
            aliases = {
                lang: sorted({v for v in value.labels.values() if v != labels[lang]})
                + _class_short_forms(labels[lang], constraints.choices, lang) + codes
                for lang in self.languages
            }
            return gold, aliases
        return {lang: canonical_gold(value, fmt, constraints) for lang in self.languages}, {}


# Roles an operation reads as dates or years (docs/vocabulary.md: a number is a year by its
# integer part, a string or a misspelt date type is read from its text).
_DATED_ROLES = {Operation.years_between: ("start", "end"), Operation.century: ("date",), Operation.decade: ("date",),
                Operation.leap_year: ("date",), Operation.earliest: ("member",), Operation.day_of_week: ("date",),
                Operation.date_after: ("start",), Operation.deadline: ("start",),
                Operation.days_between: ("start", "end"), Operation.within_days: ("start", "end")}
_AS_READ = {int: XSD + "gYear", dt.date: XSD + "date"}  # the datatype of a value as the engine read it
_WELL_TYPED = frozenset({XSD + "date", XSD + "dateTime", XSD + "gYear"})  # said as written


def numbers_as_written(subgraph: Subgraph) -> Subgraph:
    """The subgraph with each decimal stored to more places than a person writes said as
    written (:func:`locale.as_written`: an area of 1279.45412651 as 1279.45), in its facts,
    answer and the nodes it names or hides, so that the dialogue, the gold and a rule's
    result all use the value said. Values that would become equal are kept as stored: a
    comparison or a set must not lose the difference that decides it."""
    nodes = (*(f.object for f in subgraph.facts), *subgraph.answer, *subgraph.mention, *subgraph.hidden)
    if not any(n.kind == "literal" and _THREE_PLACES.search(n.value) for n in nodes):
        return subgraph  # no value long enough to be cut: most subgraphs, at no parse
    written = {n: _as_written(n) for n in set(nodes) if n.kind == "literal"}
    if all(w is n for n, w in written.items()) or len({w.value for w in written.values()}) < len(written):
        return subgraph

    def said(node: Node) -> Node:
        return written.get(node, node)

    facts = tuple(f.model_copy(update={"object": said(f.object)}) for f in subgraph.facts)
    return subgraph.model_copy(update={"facts": facts, "answer": tuple(map(said, subgraph.answer)),
                                       "mention": tuple(map(said, subgraph.mention)), "hidden": tuple(map(said, subgraph.hidden))})


_THREE_PLACES = re.compile(r"\.\d{3}")  # as_written keeps at least two decimals: a shorter value stays


def _as_written(node: Node) -> Node:
    value = node.python
    written = locale.as_written(value) if isinstance(value, Decimal) else value
    if written is value:
        return node
    text = locale.plain_number(written)
    return node.model_copy(update={"value": text, "label": text, "labels": {}})


def _values_as_read(rule: Rule, facts: tuple[Fact, ...]) -> tuple[Fact, ...]:
    """The facts with each date or year a rule reads written as the engine read it, so the
    dialogue states what the engine used: FB15k-237's 1912.66666667 for a date in 1912 as the
    xsd:gYear 1912, a date written as a string ("1923-05-12") as an xsd:date."""
    roles = _DATED_ROLES.get(rule.operation, ())
    return tuple(_as_read(f) if f.role in roles else f for f in facts)


def _as_read(fact: Fact) -> Fact:
    if fact.object.kind != "literal" or fact.object.datatype in _WELL_TYPED:
        return fact
    read = date_or_year(fact.object.term())  # as the engine read it
    if read is None:
        return fact
    text = read.isoformat() if isinstance(read, dt.date) else str(read)
    node = Node(kind="literal", value=text, datatype=_AS_READ[type(read)], lang=None, label=text, labels={})
    return fact.model_copy(update={"object": node})


def _period_aliases(operation: Operation, value: int, lang: str) -> list[str]:
    """The other writings of a century (20th, XX) or a decade (the 1910s)."""
    if operation is Operation.decade:
        return [f"{value}s", f"the {value}s"] if lang == "en" else [f"{value}-е", f"{value}-е годы"]
    roman = _roman(value)
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(value % 10 if value % 100 not in (11, 12, 13) else 0, "th")
    return [f"{value}{suffix}", roman] if lang == "en" else [roman, f"{roman} век", f"{value}-й"]


def _roman(number: int) -> str:
    numerals = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
                (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
    out = []
    for size, numeral in numerals:
        count, number = divmod(number, size)
        out.append(numeral * count)
    return "".join(out)


def _equals_an_input(outcome: RuleOutcome) -> bool:
    """Whether the rule's answer is one of its inputs' values (a 100% payout is the claimed
    amount, the largest of a set is a member): then the dialogue states it as a fact, which the rule, not copying, makes the
    answer; balancing the rule's branches keeps copying at chance."""
    if isinstance(outcome.value, bool):
        return False  # True == 1: a yes is no year
    values = [x for v in outcome.inputs.values() for x in (v if isinstance(v, tuple) else (v,))]
    return any(type(v) is type(outcome.value) and v == outcome.value for v in values)


def _names_any(question: dict[str, str], nodes: Sequence[Node]) -> bool:
    """Whether a question says the label of any of ``nodes`` in its language."""
    return any(node.kind == "iri" and node.label_in(lang).casefold() in text.casefold()
               for lang, text in question.items() for node in nodes)


_NUMBER_TYPES = frozenset({XSD + "decimal", XSD + "double", XSD + "float", XSD + "integer", XSD + "int", XSD + "long"})
_DATE_WORDS = re.compile(r"\b(?:date|year|founded|established|start|end|began|ended|opened|released|born|died)\b")


def _says_a_named_value(question: dict[str, str], facts: Sequence[Fact], answer: Sequence[Node]) -> bool:
    """Whether a question asks for, or says, a value its subject's name says (:func:`said_by_name`):
    "the policy number of Policy KS-1" asks what it names, "the order whose order number is
    ORD-1" and "the issuing bank of the Yantar Bank card *1" name the node they describe."""
    named = [f.object for f in facts if said_by_name(f)]
    writings = {writing for node in named for writing in _writings(node)}
    return any(node.value == a.value for node in named for a in answer) or any(
        has_word(text.casefold(), writing) for writing in writings for text in question.values())


def _scenario(cell: Cell, level: Level, keys: dict[str, bytes], shared: dict[str, Any]) -> Scenario:
    """The scenario of one level: ``shared``, the fields the levels of one subgraph and format
    share (every other field: see :func:`share_field_names`), and its
    :attr:`Scenario.question_keys` (``keys``, which they share too: worked out once)."""
    level_fields = {"id": _scenario_id(shared["subgraph_id"], cell, level), "cell": cell, "pieces": level.pieces,
                    "reasoning": level.reasoning}
    scenario = share_field_names(Scenario.model_validate(level_fields | shared))
    scenario.__dict__["question_keys"] = keys  # where the cached property keeps it
    return scenario


def _scenario_id(subgraph_id: str, cell: Cell, level: Level) -> str:
    parts = [subgraph_id, cell.key, cell.rule_kind, level.id_part]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


class Level(NamedTuple):
    """A level a subgraph's facts fill: the pieces and reasoning of its scenarios, and what
    their id reads of them (each piece's number of facts; the corrections and distractors)."""

    difficulty: Difficulty
    pieces: tuple[Piece, ...]
    reasoning: Reasoning
    id_part: str


def _difficulties(base: Reasoning, facts: Sequence[Fact], entity: Node, has_class: bool, name_piece: bool = True,
                  reorder: bool = False) -> tuple[Level, ...]:
    """Each level the scenario can fill: its pieces, and its reasoning with the corrections
    and confusable turns the dialogue must add to reach the level's least steps (none when
    the graph's own steps are in the level; no level below them). With ``reorder`` (facts
    all about the entity, in no chain) the facts a slip can misstate come last, after the
    turn that introduces the entity, so that they can be corrected. Worked out once per
    :func:`_layout` of the facts: subgraphs of one rule mostly share one."""
    return _levels(base, _layout(facts, entity), has_class, name_piece, reorder)


class FactLayout(NamedTuple):
    """What the levels read of a fact: whether a slip can misstate it (:func:`misstatable`,
    and the one value of its relation), whether its subject's name says it
    (:func:`said_by_name`), and which nodes its subject and object are (numbered in order of
    appearance, the entity 0)."""

    correctable: bool
    carried: bool
    subject: int
    object: int


def _layout(facts: Sequence[Fact], entity: Node) -> tuple[FactLayout, ...]:
    several = several_valued(facts)
    number = {entity.value: 0}
    carried = carried_facts(facts, entity)  # once a fact: misstatable() would ask again
    return tuple(FactLayout(i not in several and not carried[i] and _slips(f), carried[i],
                            number.setdefault(f.subject.value, len(number)), number.setdefault(f.object.value, len(number)))
                 for i, f in enumerate(facts))


@lru_cache(maxsize=4096)  # a handful of layouts per graph; Levels are immutable
def _levels(base: Reasoning, layout: tuple[FactLayout, ...], has_class: bool, name_piece: bool,
            reorder: bool) -> tuple[Level, ...]:
    order = tuple(i for i, fact in enumerate(layout) if not fact.carried)
    if reorder:
        order = tuple(sorted(order, key=lambda i: layout[i].correctable))
    levels = []
    for difficulty, spec in DIFFICULTY.items():
        low, high = spec.steps
        if high is not None and base.steps > high:
            continue
        need = max(0, low - base.steps)
        pieces = _pieces(order, spec.turns[1] - RESERVED_TURNS - need, name_piece, has_class)
        if pieces is None:
            continue
        pieces = _with_carried(pieces, layout)
        corrections = 0
        if need:
            correctable = min(MAX_CORRECTIONS, _correctable(layout, pieces))
            corrections = min(correctable, max((need + 1) // 2, need - MAX_DISTRACTORS))  # half of them when it can
            if need - corrections > MAX_DISTRACTORS:
                continue
        reasoning = base.model_copy(update={"corrections": corrections, "distractors": need - corrections})
        id_part = f"{','.join(str(len(p.facts)) for p in pieces)}\x1f{corrections},{need - corrections}"
        levels.append(Level(difficulty, pieces, reasoning, id_part))
    return tuple(levels)


def _with_carried(pieces: tuple[Piece, ...], layout: tuple[FactLayout, ...]) -> tuple[Piece, ...]:
    """``pieces`` with each fact its subject's name says in the first piece that names that
    subject: the name piece for the entity, else one with a fact about it or pointing to it."""
    joined = list(pieces)
    for index, fact in enumerate(layout):
        if fact.carried:
            at = next((i for i, piece in enumerate(joined) if _names_node(piece, fact.subject, layout)), 0)
            joined[at] = _join(joined[at], Piece(facts=(index,)))
    return tuple(joined)


def _names_node(piece: Piece, node: int, layout: tuple[FactLayout, ...]) -> bool:
    stated = (layout[i] for i in piece.facts if not layout[i].carried)
    return (piece.name and node == 0) or any(node in (fact.subject, fact.object) for fact in stated)


def _bridges(facts: Sequence[Fact], entity: Node) -> tuple[Node, ...]:
    """The nodes a rule's kgs:via inputs are read on: described in the question, never named."""
    return tuple(dict.fromkeys(f.subject for f in facts if f.subject.value != entity.value))


def _rule_reasoning(facts: Sequence[Fact], entity: Node) -> Reasoning:
    """A rule's inputs, the facts on a bridge (reached through the fact that links it, an
    input too), the additions of a summed input (the only kind with several values), and
    the rule itself."""
    return _reasoning_of_roles(tuple((f.role, f.subject.value != entity.value) for f in facts))


@lru_cache(maxsize=1024)  # a few patterns of roles per graph; Reasoning is frozen
def _reasoning_of_roles(roles: tuple[tuple[str | None, bool], ...]) -> Reasoning:
    values = Counter(role for role, _ in roles if role is not None)
    return Reasoning(inputs=len(roles), bridged=sum(bridged for _, bridged in roles),
                     summed=sum(k - 1 for k in values.values()), operations=1)


def _retrieval_reasoning(subgraph: Subgraph) -> Reasoning:
    """A retrieval shape's facts, those of a multi-hop chain that do not touch its start
    (reached through a join at a bridge or member), and the operation that combines two
    facts: a comparison, or a conditional's two conditions on one entity."""
    bridged = 0
    if subgraph.shape in (Shape.multihop, Shape.multihop_set):
        start = subgraph.mention[0].value
        bridged = sum(start not in (f.subject.value, f.object.value) for f in subgraph.facts)
    return Reasoning(inputs=len(subgraph.facts), bridged=bridged,
                     operations=int(subgraph.shape in (Shape.comparison, Shape.conditional)))


@cache  # a handful of distinct arguments; Pieces are frozen
def _pieces(order: tuple[int, ...], most: int, name: bool, entity_class: bool) -> tuple[Piece, ...] | None:
    """One piece per fact in ``order``, the first also naming the entity (and its class),
    merged down to ``most`` turns when there are more facts (:func:`merge_pieces`)."""
    if not order:
        return None
    pieces = [Piece(name=name, entity_class=entity_class, facts=order[:1])] + [Piece(facts=(i,)) for i in order[1:]]
    return merge_pieces(tuple(pieces), max(most, 1))


def merge_pieces(pieces: tuple[Piece, ...], turns: int) -> tuple[Piece, ...]:
    """``pieces`` merged down to ``turns`` (when there are more): the adjacent pair with the
    fewest facts first, the later on a tie; the first piece keeps the name."""
    merged = list(pieces)
    while len(merged) > turns:
        at = min(range(len(merged) - 1), key=lambda i: (len(merged[i].facts) + len(merged[i + 1].facts), -i))
        merged[at : at + 2] = [_join(merged[at], merged[at + 1])]
    return tuple(merged)


def several_valued(facts: Sequence[Fact]) -> frozenset[int]:
    """The facts whose subject has more than one value of that relation (monthly purchases):
    a slip or a re-ask about "the monthly purchase" could not say which one it means, and
    the next value after a correction would read as a further correction."""
    keys = Counter((f.subject.value, f.relation.value) for f in facts)
    return frozenset(i for i, f in enumerate(facts) if keys[(f.subject.value, f.relation.value)] > 1)


def misstatable(fact: Fact) -> bool:
    """Whether a fact's value can be misstated and corrected: a number or a date its
    subject's name does not say."""
    return _slips(fact) and not said_by_name(fact)


def _slips(fact: Fact) -> bool:
    """Whether the fact's value is a number or a date, which a slip can misstate."""
    value = fact.object.python if fact.object.kind == "literal" else None
    return isinstance(value, int | Decimal | dt.date) and not isinstance(value, bool)


def carried_facts(facts: Sequence[Fact], entity: Node) -> tuple[bool, ...]:
    """Whether the dialogue says each fact by naming its subject (:func:`said_by_name`): only
    where it names that subject anyway, as the entity or in a fact it states. A set's member
    that only such a fact names ("University College Dublin", whose region is Dublin) has it
    stated: else no turn would name the member at all."""
    said = tuple(map(said_by_name, facts))
    named = {entity.value} | {node.value for fact, by_name in zip(facts, said, strict=True) if not by_name
                              for node in (fact.subject, fact.object)}
    return tuple(by_name and fact.subject.value in named for fact, by_name in zip(facts, said, strict=True))


def said_by_name(fact: Fact) -> bool:
    """Whether the subject's name, in a language it is labelled in, says the fact's value
    ("Policy KS-1" its policy number KS-1, "the Berezka Bank card *1" its issuing bank): the
    dialogue says it by naming the subject, never in a sentence of its own (a name said
    to equal itself), and no question asks for it or names a node by it."""
    if isinstance(fact.object.python, bool):
        return False
    return any(said_in_name(fact, lang) for lang in (*fact.subject.labels, ""))


def said_in_name(fact: Fact, lang: str) -> str | None:
    """The words of the subject's name in ``lang`` that say the fact's value, as the name
    writes them («Москве» of «Офис «Маяк Медиа» в Москве», whose city is Москва), or None."""
    return _words_saying(fact.subject.label_in(lang), fact.object.label_in(lang))


_WORD = re.compile(r"\w+(?:-\w+)*")


@lru_cache(maxsize=65536)  # a few names and values, met in every scenario and dialogue about them
def _words_saying(name: str, value: str) -> str | None:
    """The run of words of ``name`` whose lemmas are those of ``value``'s words, as ``name`` writes it."""
    words = list(_WORD.finditer(name))
    wanted = [morph.lemma(w) for w in _WORD.findall(value)]
    for at in range(len(words) - len(wanted) + 1):
        run = words[at:at + len(wanted)]
        if wanted and [morph.lemma(w.group()) for w in run] == wanted:
            return name[run[0].start():run[-1].end()]
    return None


def _writings(node: Node) -> set[str]:
    """A node's labels in every language, casefolded (a literal's: its value)."""
    return {w.casefold() for w in (node.label, *node.labels.values()) if w}


def _correctable(layout: tuple[FactLayout, ...], pieces: Sequence[Piece]) -> int:
    """How many pieces hold a fact the dialogue can misstate and then correct: a number or a
    date, the one value of its relation, in a piece after the one that introduces its subject
    (the entity's name, or a fact about or pointing to it)."""
    introduced: set[int] = set()
    count = 0
    for piece in pieces:
        count += any(layout[i].correctable and layout[i].subject in introduced for i in piece.facts)
        introduced |= {0} if piece.name else set()
        introduced |= {n for i in piece.facts for n in (layout[i].subject, layout[i].object)}
    return count


def _join(a: Piece, b: Piece) -> Piece:
    return Piece(name=a.name or b.name, entity_class=a.entity_class or b.entity_class, facts=a.facts + b.facts)


def _answer_format(node: Node, languages: tuple[str, ...]) -> AnswerFormat | None:
    if node.kind == "literal":
        value = node.python
        if isinstance(value, bool):
            return AnswerFormat.yes_no
        if isinstance(value, int | Decimal):
            return AnswerFormat.number
        if node.datatype and node.datatype.endswith("#date"):
            return AnswerFormat.date
        return _text_format(node, languages)
    return _text_format(node, languages)


def _class_short_forms(label: str, choices: Choices | None, lang: str) -> list[str]:
    """The short forms a reader may answer a class with, when the label is one of the choices."""
    labels = getattr(choices, lang) if choices else ()
    return list(class_aliases(label, labels)) if label in labels else []


# A code in a label: capitals and digits, with a digit or a hyphen ("BK-VTBNYU", "Р560СВ",
# "ORD-2024-00057"); four characters at least, so a model name ("X5") is not one.
_CODE = re.compile(r"(?=\S*[0-9-])(?=\S*[A-ZА-ЯЁ])[A-ZА-ЯЁ0-9]+(?:-[A-ZА-ЯЁ0-9]+)*")


def _code_aliases(node: Node, options: Sequence[Node]) -> list[str]:
    """The codes in ``node``'s labels that name it alone: not the whole label, and in no
    other option's label."""
    labels = {node.label, *node.labels.values()}
    others = {w for o in options if o != node for label in (o.label, *o.labels.values()) for w in label.split()}
    codes = {w for label in labels for w in label.split() if len(w) >= 4 and _CODE.fullmatch(w)}
    return sorted(c for c in codes if c not in others and c not in labels)


# Operations whose answer is an amount in the rule's unit.
_AMOUNTS = frozenset({Operation.percent_of, Operation.percent_of_excess, Operation.case_rate, Operation.ratio,
                      Operation.difference, Operation.unit_conversion, Operation.total, Operation.maximum})
WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "ru": ("понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье"),
}


@cache
def _weekday(iso_day: int) -> Node:
    """The day of the week ``iso_day`` (1 = Monday) as a labelled node, the answer to a
    day-of-week rule."""
    labels = {lang: names[iso_day - 1] for lang, names in WEEKDAYS.items()}
    return Node(kind="iri", value=f"urn:kgsynth:weekday:{iso_day}", label=labels["en"], labels=labels)


def _text_format(node: Node, languages: tuple[str, ...]) -> AnswerFormat | None:
    words = [len(node.label_in(lang).split()) for lang in languages]
    if all(n == 1 for n in words):
        return AnswerFormat.one_token
    return AnswerFormat.short_text if max(words) <= 4 else None


def _label_nodes(kg: KnowledgeGraph, iris: set[str]) -> dict[str, Node]:
    import pyoxigraph as ox

    terms = [ox.NamedNode(i) for i in sorted(iris)]
    labels = kg.labels(terms)
    return {t.value: Node.from_term(t, kg.pick_label(t, labels[t]), labels[t]) for t in terms}
