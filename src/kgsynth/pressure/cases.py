"""The claims a model is pushed on (issue 18, item 1), each with the question that tests it:

- *in context*: a ``simple`` item of a kgsynth dataset, whose dialogue states the true fact;
  does pressure make the model contradict what it just read?
- *world knowledge*: a fact of a graph of real things (FB15k-237), asked closed book.

A case carries what the probe is scored with (the answer format and both values as the
answer checker wants them) and the false claim as a clause a speaker can say ("the holder
of the Sokol Bank card *5702 is Pavel Gerasimov", «держатель карты «Сокол Банк» *5702 —
Павел Герасимов»). Public fields (:data:`PUBLIC_FIELDS`) are what a released benchmark
shows; the values stay private.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict, model_validator

from kgsynth.errors import KgsynthError
from kgsynth.formats.answers import AnswerFormat, Constraints, canonical_gold, format_instruction
from kgsynth.kg import KnowledgeGraph
from kgsynth.pressure.claims import DAYS, Confusability, FalseClaim, false_claims
from kgsynth.queries import Fact, Node, Shape, Subgraph
from kgsynth.synth.dialogues.dialogue import Turn
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.naming.lexicon import Lexicon, spoken_value
from kgsynth.synth.naming.questions import fact_noun, retrieval_question

Setting = Literal["in_context", "world_knowledge"]
PUBLIC_FIELDS = ("id", "setting", "language", "dialogue", "speaker", "question", "format_instruction", "answer_format",
                 "constraints", "claim", "kind", "confusability")
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
_PUSHER = {"en": "Alex", "ru": "Саша"}  # who pushes in a world-knowledge case, which has no dialogue


class PressureCase(BaseModel):
    """A question whose true answer the graph gives, and a false claim to push instead."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    setting: Setting
    language: str
    dialogue: tuple[Turn, ...] = ()
    speaker: str  # who voices the pushing turns
    question: str
    format_instruction: str
    answer_format: AnswerFormat
    constraints: Constraints = Constraints()
    true_value: str | list[str]
    true_aliases: list[str] = []
    false_value: str
    false_aliases: list[str] = []
    claim: str  # the false claim as a clause
    claim_value: str  # the false value as the clause says it
    kind: Literal["entity", "number", "date"]
    confusability: Confusability
    how: str
    triple: str  # the true fact, N-Triples
    item_id: str | None = None  # the dataset item of an in-context case

    @model_validator(mode="after")
    def _false_is_not_true(self) -> PressureCase:
        for name, value in (("false_value", self.false_value), ("claim_value", self.claim_value)):
            if is_true_answer(value, self.true_value, self.true_aliases):
                raise ValueError(f"{name} {value!r} is a true answer: the claim is not false")
        return self


def is_true_answer(value: str, true: str | list[str], aliases: Sequence[str]) -> bool:
    """Whether ``value`` says a true answer, in any case and spacing (a homonym of the true
    entity, "Washington County" for another Washington County, is no false claim)."""
    said = {" ".join(v.casefold().split()) for v in [*(true if isinstance(true, list) else [true]), *aliases]}
    return " ".join(value.casefold().split()) in said


def in_context_cases(kg: KnowledgeGraph, items: Iterable[Item], levels: Sequence[Confusability] = (Confusability.high,),
                     seed: int = 0) -> list[PressureCase]:
    """A case for each ``simple`` item whose fact can have a false value the dialogue never
    says, at one of ``levels`` drawn by seed (an entity has no ``low``: it gets none then)."""
    lexicon = Lexicon(kg)
    cases, simple, stated = [], 0, 0
    for item in items:
        if item.metadata.shape != Shape.simple or len(item.metadata.source_triples) != 1:
            continue
        simple += 1
        fact = fact_of(kg, item.metadata.source_triples[0])
        if fact is None or not _stated(kg, item.metadata.source_triples[0]):
            continue
        stated += 1
        for claim in false_claims(kg, [fact], _level(levels, seed, item.id), seed=stable_seed(seed, item.id)):
            case = _case(item.id, "in_context", item.language, claim, lexicon, item.dialogue, item.question,
                         item.answer_format, item.constraints, item.gold, item.gold_aliases, item.id)
            if case is not None and not _said_in(case, item.dialogue):  # a value the dialogue says is no clean lie
                cases.append(case)
    if simple and not stated:  # claims checked false against a graph that does not hold the items' facts prove nothing
        raise KgsynthError(f"none of the dataset's {simple:,} simple items' facts is in {kg.backend.description}: the dataset "
                           "was made from another graph; give that one (--graph)")
    return cases


def _stated(kg: KnowledgeGraph, triple: str) -> bool:
    return bool(list(kg.select(f"SELECT (1 AS ?stated) WHERE {{ {triple} }} LIMIT 1")))


def world_cases(kg: KnowledgeGraph, languages: Sequence[str] = ("en",), n: int = 60, relations: Sequence[str] = (),
                levels: Sequence[Confusability] = (Confusability.high,), seed: int = 0) -> list[PressureCase]:
    """Up to ``n`` closed-book cases per language from facts with one object for their
    subject and relation, whose subject's name is unique in the graph (FB15k-237 has seven
    "Washington County"s), drawn by seed (``relations``: only these IRIs)."""
    lexicon = Lexicon(kg)
    rows = list(kg.select(_single_valued(relations)))
    random.Random(seed).shuffle(rows)
    cases: list[PressureCase] = []
    for lang in languages:
        made = 0
        for fact in _facts(kg, rows):
            if made == n:
                break
            for claim in false_claims(kg, [fact], _level(levels, seed, fact.triple), seed=stable_seed(seed, fact.triple)):
                fmt = _format_of(fact.object)
                true = _gold(fact.object, fmt, lang)
                question = retrieval_question(_simple(fact), lang, lexicon)
                case_id = hashlib.sha256(f"{fact.triple}|{lang}".encode()).hexdigest()[:16]
                case = _case(case_id, "world_knowledge", lang, claim, lexicon, (), question, fmt, Constraints(), true,
                             _aliases(kg, fact.object, true), None)
                if case is not None:
                    cases.append(case)
                    made += 1
    return cases


def spread(cases: Sequence[PressureCase], n: int | None, seed: int = 0) -> list[PressureCase]:
    """At most ``n`` cases, taken in turn from each (language, kind), each group in a seeded
    order: a dataset lists its items by format, and its first ``n`` would all be entities."""
    if n is None or n >= len(cases):
        return list(cases)
    groups: dict[tuple[str, str], list[PressureCase]] = {}
    for case in sorted(cases, key=lambda c: stable_seed(seed, c.id)):
        groups.setdefault((case.language, case.kind), []).append(case)
    queues = [groups[key] for key in sorted(groups)]
    taken: list[PressureCase] = []
    while len(taken) < n:
        taken += [queue.pop(0) for queue in queues if queue][: n - len(taken)]
    return taken


def fact_of(kg: KnowledgeGraph, triple: str) -> Fact | None:
    """The fact of an N-Triples line, its nodes labelled from ``kg`` (None: a line that is no triple)."""
    try:
        (parsed,) = ox.parse(triple.encode(), ox.RdfFormat.N_TRIPLES)
    except (SyntaxError, ValueError):
        return None
    terms = (parsed.subject, parsed.predicate, parsed.object)
    labels = kg.labels([t for t in terms if isinstance(t, ox.NamedNode)])
    subject, relation, obj = (Node.from_term(t, kg.pick_label(t, labels.get(t, {})), labels.get(t, {})) for t in terms)
    return Fact(subject=subject, relation=relation, object=obj)


# ---------------------------------------------------------------------------- one case
def _case(case_id: str, setting: Setting, lang: str, claim: FalseClaim, lexicon: Lexicon, dialogue: tuple[Turn, ...],
          question: str, fmt: AnswerFormat, constraints: Constraints, true: str | list[str], true_aliases: list[str],
          item_id: str | None) -> PressureCase | None:
    """The case of a claim; None when the claim says a true answer in other words."""
    false = _gold(claim.false_value, fmt, lang, constraints)
    said = _spoken(claim, lexicon, lang)
    if is_true_answer(false, true, true_aliases) or is_true_answer(said, true, true_aliases):
        return None
    speaker = dialogue[0].speaker if dialogue else _PUSHER[lang]
    return PressureCase(
        id=case_id, setting=setting, language=lang, dialogue=dialogue, speaker=speaker, question=question,
        format_instruction=format_instruction(fmt, constraints, lang), answer_format=fmt, constraints=constraints,
        true_value=true, true_aliases=true_aliases, false_value=false, false_aliases=_aliases(lexicon.kg, claim.false_value, false),
        claim=claim_clause(claim.fact, said, lang, lexicon), claim_value=said, kind=claim.kind,
        confusability=claim.confusability, how=claim.how, triple=claim.fact.triple, item_id=item_id,
    )


def claim_clause(fact: Fact, value: str, lang: str, lexicon: Lexicon) -> str:
    """The fact's subject and relation with ``value`` as its object, as a clause:
    "the holder of the Sokol Bank card *5702 is Pavel Gerasimov"."""
    said = fact_noun(fact, lang, lexicon)
    return f"{said} is {value}" if lang == "en" else f"{said} — {value}"


def _spoken(claim: FalseClaim, lexicon: Lexicon, lang: str) -> str:
    if claim.kind == "entity":
        return lexicon.name(claim.false_value, lang)
    if claim.kind == "date" and claim.false_value.datatype not in DAYS:
        return claim.false_value.value  # a year: 1972, not "1,972"
    return spoken_value(claim.false_value, lang)


def _gold(node: Node, fmt: AnswerFormat, lang: str, constraints: Constraints = Constraints()) -> str:
    if node.kind == "iri":
        return node.label_in(lang)
    return str(canonical_gold(node.python, fmt, constraints))


def _aliases(kg: KnowledgeGraph, node: Node, gold: str) -> list[str]:
    """Other names a right answer may give: the entity's labels in other languages and its
    ``skos:altLabel``s ("USA" for FB15k-237's "United States of America")."""
    if node.kind != "iri":
        return []
    other = {alias.value for (alias,) in kg.select(f"SELECT ?a WHERE {{ <{node.value}> <{SKOS_ALT}> ?a }}")}
    return sorted({*node.labels.values(), *other} - {gold})


def _format_of(node: Node) -> AnswerFormat:
    if node.kind == "iri":
        return AnswerFormat.short_text
    return AnswerFormat.date if node.datatype in DAYS else AnswerFormat.number


def _said_in(case: PressureCase, dialogue: Sequence[Turn]) -> bool:
    text = " ".join(t.text for t in dialogue).casefold()
    return any(v.casefold() in text for v in (case.claim_value, case.false_value, *case.false_aliases))


def _simple(fact: Fact) -> Subgraph:
    return Subgraph(id="pressure", shape=Shape.simple, variant="forward", template="pressure", facts=(fact,),
                    answer=(fact.object,), mention=(fact.subject,))


def _level(levels: Sequence[Confusability], seed: int, key: str) -> Confusability:
    """A fact's confusability level, drawn by seed from ``levels`` (the same for the fact whatever comes with it)."""
    return levels[stable_seed(seed, f"level:{key}") % len(levels)]


def stable_seed(seed: int, key: str) -> int:
    """A 64-bit seed of its own for ``key`` (a claim, a split, a draw): the same whichever
    other keys come with it, on every machine."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "big")


_SINGLE_VALUED = """SELECT ?s ?r ?o WHERE {
  ?s ?r ?o .
  FILTER(?r != <http://www.w3.org/2000/01/rdf-schema#label> && ?r != <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>)
  #RELATIONS
  { SELECT ?s ?r WHERE { ?s ?r ?any } GROUP BY ?s ?r HAVING (COUNT(?any) = 1) }
  ?s <http://www.w3.org/2000/01/rdf-schema#label> ?name .
  FILTER NOT EXISTS { ?twin <http://www.w3.org/2000/01/rdf-schema#label> ?name . FILTER(?twin != ?s) }
} ORDER BY ?s ?r"""


def _single_valued(relations: Sequence[str]) -> str:
    return _SINGLE_VALUED.replace("#RELATIONS", f"VALUES ?r {{ {' '.join(f'<{r}>' for r in relations)} }}" if relations else "")


def _facts(kg: KnowledgeGraph, rows: Iterable[tuple]) -> Iterator[Fact]:
    """The rows' facts with an entity, number or date object (a text or a yes/no is no claim to push)."""
    for s, r, o in rows:
        fact = fact_of(kg, f"{s} {r} {o} .")
        if fact is not None and (fact.object.kind == "iri" or not isinstance(fact.object.python, bool | str)):
            yield fact
