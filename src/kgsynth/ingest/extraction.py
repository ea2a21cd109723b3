"""Triples from a chunk of text through the model gateway, each checked by code against the
text: the evidence sentence must occur in it, the names and the value in the evidence, a
number or a date must read as one. A triple that fails goes back to the model once with the
reason; failing again, it is rejected with that reason (never dropped silently)."""

from __future__ import annotations

import json
import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rapidfuzz import fuzz

from kgsynth.ingest.values import date_of, dates_in, number_of, numbers_in
from kgsynth.llm import LLMGateway, LLMResult, Request

PROMPT_VERSION = "1"  # part of a finished document's record: a new prompt redoes the documents
STAGE = "extract"
_MAX_EVIDENCE_CHARS = 600  # a sentence or two: a whole chunk quoted as evidence would check nothing
_SENTENCE_BREAK = re.compile(r"[.!?…][\"'»”)\]]*\s+(?=[\"«“]?[A-ZА-ЯЁ])")  # "D.C. and" is no break
_PRONOUNS = {"he", "she", "it", "they", "him", "her", "them", "this", "that", "он", "она", "оно", "они", "его", "её", "ее", "их", "это"}

SYSTEM = """You extract facts from a text to build a knowledge graph.
Answer with JSON only: {"triples": [ ... ]}. Each triple has these fields:
- "subject": a named entity, copied exactly as the text writes it;
- "subject_type": what the subject is, one or two words;
- "relation": a short phrase saying how the subject and the object are related;
- "object": copied exactly as the text writes it: a name, a number with its unit or currency, a date, or a short text;
- "object_kind": "entity" for a name, "number", "date", or "text";
- "object_type": for an entity object, what it is; otherwise "";
- "evidence": the sentence of the text that states the fact, copied word for word (two sentences when the first names the subject).
Use only what the text states, never your own knowledge. Write every field in the language of the text.
At most 12 triples."""

# one worked example per language: a small model copies the form of an example far better
# than it follows a description (its facts never pass the checks on another text)
EXAMPLES = {
    "en": ("Maria Lopez founded Lopez Bakery in Austin in 2011. The bakery had revenue of $2.4 million in 2023.", [
        ("Maria Lopez", "person", "founder of", "Lopez Bakery", "entity", "company", "Maria Lopez founded Lopez Bakery in Austin in 2011."),
        ("Lopez Bakery", "company", "city", "Austin", "entity", "city", "Maria Lopez founded Lopez Bakery in Austin in 2011."),
        ("Lopez Bakery", "company", "founding year", "2011", "date", "", "Maria Lopez founded Lopez Bakery in Austin in 2011."),
        ("Lopez Bakery", "company", "revenue in 2023", "$2.4 million", "number", "",
         "Maria Lopez founded Lopez Bakery in Austin in 2011. The bakery had revenue of $2.4 million in 2023."),
    ]),
    "ru": ("Иван Петров возглавляет компанию «Северный ветер» с 5 марта 2019 г. Выручка компании в 2023 году составила 15,6 млн руб.", [
        ("Иван Петров", "человек", "руководитель компании", "Северный ветер", "entity", "компания",
         "Иван Петров возглавляет компанию «Северный ветер» с 5 марта 2019 г."),
        ("Иван Петров", "человек", "руководит компанией с", "5 марта 2019 г.", "date", "",
         "Иван Петров возглавляет компанию «Северный ветер» с 5 марта 2019 г."),
        ("Северный ветер", "компания", "выручка в 2023 году", "15,6 млн руб.", "number", "",
         "Иван Петров возглавляет компанию «Северный ветер» с 5 марта 2019 г. Выручка компании в 2023 году составила 15,6 млн руб."),
    ]),
}
_FIELDS = ("subject", "subject_type", "relation", "object", "object_kind", "object_type", "evidence")


class ObjectKind(StrEnum):
    entity = "entity"
    number = "number"
    date = "date"
    text = "text"


class ProposedTriple(BaseModel):
    """A fact as the model states it (the typed output of one extraction call)."""

    model_config = ConfigDict(extra="ignore")  # a model's extra fields do not make the whole reply garbage

    subject: str
    subject_type: str = ""
    relation: str
    object: str
    object_kind: ObjectKind
    object_type: str = ""
    evidence: str


class Extraction(BaseModel):
    model_config = ConfigDict(extra="ignore")

    triples: list[ProposedTriple] = Field(default_factory=list)


class Triple(BaseModel):
    """A checked fact: the model's fields, the evidence as the document writes it (and where),
    and the object's value for a typed literal (``value``, ``unit``)."""

    subject: str
    subject_type: str
    relation: str
    object: str
    object_kind: ObjectKind
    object_type: str
    evidence: str
    evidence_start: int
    value: str | int | None = None  # a number (decimal text), an ISO date, or a year
    unit: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return fold(self.subject), fold(self.relation), fold(self.object)


class Rejection(BaseModel):
    triple: ProposedTriple
    code: str  # evidence_not_found, subject_not_in_evidence, not_a_number ...
    reason: str


class ChunkResult(BaseModel):
    """What one chunk gave: kept triples, rejected ones with reasons, or the call's error."""

    start: int
    end: int
    triples: list[Triple] = Field(default_factory=list)
    rejections: list[Rejection] = Field(default_factory=list)
    proposed: int = 0
    error: str | None = None
    cut_short: int = 0  # replies that did not parse, whose complete triples were used
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Checker:
    """The code checks of a proposed triple against its chunk of text."""

    def __init__(self, lang: str, evidence_score: float, mention_score: float):
        self.lang, self.evidence_score, self.mention_score = lang, evidence_score, mention_score

    def check(self, proposed: ProposedTriple, text: str, offset: int) -> Triple | Rejection:
        """``text`` is the chunk, starting at ``offset`` in its document."""
        p = proposed
        empty = next((name for name in ("subject", "relation", "object", "evidence") if not getattr(p, name).strip()), None)
        if empty:
            return Rejection(triple=p, code="empty_field", reason=f"the {empty} is empty")
        if fold(p.subject) in _PRONOUNS:
            return Rejection(triple=p, code="pronoun_subject", reason=f"the subject {p.subject!r} is a pronoun: name the entity")
        if fold(p.subject) == fold(p.object):
            return Rejection(triple=p, code="same_subject_object", reason="the subject and the object are the same")
        if len(p.relation.split()) > 6:
            return Rejection(triple=p, code="relation_too_long", reason=f"the relation {p.relation!r} is a sentence, not a short phrase")
        if len(p.evidence) > _MAX_EVIDENCE_CHARS or len(_SENTENCE_BREAK.findall(p.evidence)) > 1:
            return Rejection(triple=p, code="evidence_too_long",
                             reason="the evidence is longer than two sentences: quote only the sentence that states the fact")
        folded, where = _folded_with_offsets(text)
        found = fuzz.partial_ratio_alignment(fold(p.evidence), folded, score_cutoff=self.evidence_score)
        if found is None:
            return Rejection(triple=p, code="evidence_not_found", reason="the evidence is not in the text (quote it word for word)")
        start, end = where[found.dest_start], where[found.dest_end - 1] + 1
        evidence = text[start:end]
        valued = p.object_kind in (ObjectKind.number, ObjectKind.date)  # checked by value below, in any writing
        for role in ("subject",) if valued else ("subject", "object"):
            if not self._mentioned(getattr(p, role), evidence):
                return Rejection(triple=p, code=f"{role}_not_in_evidence",
                                 reason=f"the {role} {getattr(p, role)!r} does not occur in the evidence {evidence!r}")
        value, unit = None, None
        if p.object_kind is ObjectKind.number:
            number = number_of(p.object, self.lang)
            if number is None:
                return Rejection(triple=p, code="not_a_number", reason=f"the object {p.object!r} is not a number with at most a unit")
            if number[0] not in numbers_in(evidence, self.lang):
                return _value_not_in(p, format(number[0], "f"), evidence)
            value, unit = format(number[0], "f"), number[1]
        elif p.object_kind is ObjectKind.date:
            date = date_of(p.object, self.lang)
            if date is None:
                return Rejection(triple=p, code="not_a_date", reason=f"the object {p.object!r} is neither a full date nor a year")
            value = date if isinstance(date, int) else date.isoformat()
            if date not in dates_in(evidence, self.lang, years_only=isinstance(date, int)):
                return _value_not_in(p, str(value), evidence)
        return Triple(**(p.model_dump() | {"evidence": evidence}), evidence_start=offset + start, value=value, unit=unit)

    def _mentioned(self, name: str, evidence: str) -> bool:
        name, evidence = fold(name), fold(evidence)
        if len(name) <= 3:  # a short name or code must stand as a word
            return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", evidence) is not None
        return fuzz.partial_ratio(name, evidence) >= self.mention_score


def _value_not_in(p: ProposedTriple, value: str, evidence: str) -> Rejection:
    return Rejection(triple=p, code="value_not_in_evidence",
                     reason=f"the object {p.object!r} ({value}) is not what the evidence says: {evidence!r} (copy the value as the text gives it)")


def extract_chunks(gateway: LLMGateway, checker: Checker, text: str, spans: list[tuple[int, int]]) -> list[ChunkResult]:
    """Extract and check the triples of each chunk of ``text``; a chunk's failed triples go
    back to the model once (one more call), all chunks' calls concurrently."""
    chunks = [text[start:end] for start, end in spans]
    first = gateway.complete_all([_request(_ask(chunk, checker.lang)) for chunk in chunks])
    results, retries = [], {}
    for k, ((start, end), chunk, reply) in enumerate(zip(spans, chunks, first, strict=True)):
        result = ChunkResult(start=start, end=end)
        _count(result, reply)
        proposed = _proposed(reply, result)
        if proposed is None:
            result.error = reply.error
        else:
            result.proposed = len(proposed)
            failed = _sort(result, checker, proposed, chunk, start)
            if failed:
                retries[k] = (failed, reply.text)
        results.append(result)
    if retries:
        order = sorted(retries)
        second = gateway.complete_all([_request(_ask(chunks[k], checker.lang) + _feedback(*retries[k])) for k in order])
        for k, reply in zip(order, second, strict=True):
            _settle(results[k], checker, retries[k][0], reply, chunks[k])
    return results


def _sort(result: ChunkResult, checker: Checker, proposed: list[ProposedTriple], chunk: str, offset: int) -> list[Rejection]:
    """Add the triples that pass to ``result`` (once each); return the failures."""
    failed = []
    for triple in proposed:
        checked = checker.check(triple, chunk, offset)
        if isinstance(checked, Rejection):
            failed.append(checked)
        elif checked.key not in {t.key for t in result.triples}:
            result.triples.append(checked)
    return failed


def _settle(result: ChunkResult, checker: Checker, failed: list[Rejection], reply: LLMResult, chunk: str) -> None:
    """The retry's answer: corrections that pass are kept; a correction that fails is
    rejected with its reason in place of the triple it corrects; a failure the model left
    uncorrected keeps its first reason. A triple the retry adds counts as proposed."""
    _count(result, reply)
    proposed = _proposed(reply, result)
    if proposed is None:
        result.rejections += [r.model_copy(update={"reason": f"{r.reason}; the retry failed: {reply.error}"}) for r in failed]
        return
    originals = {_about(r.triple): r for r in failed}
    before = len(result.triples)
    still = _sort(result, checker, proposed, chunk, result.start)
    kept = {_about(t) for t in result.triples}
    replaced = set()
    for rejection in still:
        about = _about(rejection.triple)
        if about in replaced or (about in originals and about in kept):
            continue  # corrected twice, or fixed by another correction: one outcome per triple
        replaced.add(about)
        result.proposed += about not in originals
        result.rejections.append(rejection)
    result.proposed += sum(1 for t in result.triples[before:] if _about(t) not in originals)
    result.rejections += [r for about, r in originals.items() if about not in kept and about not in replaced]


def _proposed(reply: LLMResult, result: ChunkResult) -> list[ProposedTriple] | None:
    """The reply's triples; from a reply that does not parse (a small model repeating itself
    until max_tokens cuts it off), its complete triples, once each (counted in
    ``result.cut_short``: every one is still checked); None when there is none."""
    if reply.ok:
        return reply.value.triples
    salvaged = _complete_triples(reply.text or "")
    if salvaged:
        result.cut_short += 1
    return salvaged or None


def _complete_triples(text: str) -> list[ProposedTriple]:
    found: dict[tuple[str, str, str], ProposedTriple] = {}
    at = text.find("[", max(text.find('"triples"'), 0))
    decoder = json.JSONDecoder(strict=False)
    while at >= 0 and (brace := text.find("{", at)) >= 0:
        try:
            value, at = decoder.raw_decode(text, brace)
        except json.JSONDecodeError:
            break  # the object the reply was cut in
        try:
            triple = ProposedTriple.model_validate(value)
        except ValidationError:
            continue
        found.setdefault((fold(triple.subject), fold(triple.relation), fold(triple.object)), triple)
    return list(found.values())


def _about(triple: ProposedTriple | Triple) -> tuple[str, str]:
    return fold(triple.subject), fold(triple.relation)


def _count(result: ChunkResult, reply: LLMResult) -> None:
    """Add what the reply cost, asked now or read from the cache: a run resumed after a kill
    counts the chunks the killed run had asked as an uninterrupted run does."""
    result.calls += reply.attempts
    result.prompt_tokens += reply.prompt_tokens
    result.completion_tokens += reply.completion_tokens


def _ask(chunk: str, lang: str) -> list[dict[str, str]]:
    text, triples = EXAMPLES.get(lang, EXAMPLES["en"])
    example = json.dumps({"triples": [dict(zip(_FIELDS, t, strict=True)) for t in triples]}, ensure_ascii=False)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Text:\n{text}"},
            {"role": "assistant", "content": example}, {"role": "user", "content": f"Text:\n{chunk}"}]


def _feedback(failed: list[Rejection], reply: str | None) -> list[dict[str, str]]:
    lines = [f"{i}. {json.dumps(r.triple.model_dump(mode='json'), ensure_ascii=False)}: {r.reason}" for i, r in enumerate(failed, 1)]
    return [
        {"role": "assistant", "content": reply or ""},
        {"role": "user", "content": "These triples failed the checks:\n" + "\n".join(lines)
         + '\nAnswer with JSON {"triples": [...]} holding only the corrected triples, in the same order; '
           "leave out a triple the text does not support."},
    ]


def _request(messages: list[dict[str, str]]) -> Request:
    return Request(messages, output=Extraction, stage=STAGE)


def fold(text: str) -> str:
    """Case, ё and spacing folded: how names and relations compare."""
    return " ".join(text.casefold().replace("ё", "е").split())


def _folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """:func:`fold` of ``text`` and, for each of its characters, the offset in ``text`` it
    comes from (a run of spaces folds to one), so a match is cut from the text as written."""
    chars, offsets = [], []
    for i, c in enumerate(text):
        if c.isspace():
            if not chars or chars[-1] == " ":
                continue
            c = " "
        for folded in c.casefold().replace("ё", "е"):
            chars.append(folded)
            offsets.append(i)
    if chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    return "".join(chars), offsets
