"""Entity resolution across documents: which mentions name one entity, and which relation
names one relation.

Mentions with the same name (case, spacing and ё folded) are one entity when their kinds
agree: a person "Jordan" and a country "Jordan" stay two. Entities with different names may
then be one ("Мария Лопес" and "Марии Лопес", "Lopez Bakery" and "Lopez Bakery Inc."): the
candidates are names of the same kind that are spelt alike (rapidfuzz) or mean alike (MiniLM
embeddings, when installed), and a model picks the one that is the same entity, or none.
Guards: an identifier-like name (a code, a number: "SR-2023-052") is merged on its exact
name only; a merge joins two entities that no other merge touched, so no chain of weak
merges (nor a hub name two others joined) links two names that were never compared. Relations are written under one name when they read alike (see
:func:`relation_names`). Every decision that joins names from more than one document, or
keeps a name apart, is logged with its reason and score.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz, process

from kgsynth.ingest.extraction import fold
from kgsynth.llm import LLMGateway, LLMResult, LLMUnreachableError, Request


class Mention(BaseModel):
    name: str  # as the document writes it
    kind: str  # the entity's type as extracted ("" when not given), folded
    document: str
    lang: str
    subject: bool  # named as a fact's subject: the name is then in its dictionary form more often
    context: str = ""  # the evidence naming it


class Decision(BaseModel):
    name: str
    documents: list[str]
    decision: str  # "merged", "merged into 'X'", "kept apart", "relation written as 'X'"
    reason: str
    score: float | None = None  # the similarity behind it (rapidfuzz 0-100, or cosine 0-1)


class Candidate(BaseModel):
    name: str
    kind: str
    context: str  # a sentence naming it
    spelling: float  # rapidfuzz WRatio with the name asked about, 0-100
    meaning: float | None  # cosine of the names' embeddings


class SameEntityQuestion(BaseModel):
    """Is ``name`` one of ``candidates``? (The model's answer: a candidate's number, or none.)"""

    name: str
    kind: str
    context: str
    candidates: list[Candidate]


class Pick(BaseModel):
    """The judge's answer to one question: a candidate's index, or None (none is the same)."""

    index: int | None = None
    error: str | None = None  # the model's answer could not be used: nothing is merged


Judge = Callable[[Sequence[SameEntityQuestion]], list[Pick]]
Embed = Callable[[Sequence[str]], np.ndarray]

STAGE = "resolve"
SAME_SYSTEM = """You decide whether names found in different documents refer to the same real-world entity.
You get a name with the sentence it was read in, and numbered candidates, each with its sentence.
Answer with JSON only: {"same_as": N}, N the number of the candidate that is the same entity (the same person,
company, place... written another way: another grammatical case, a suffix such as "Inc.", a full or short form),
or {"same_as": 0} when none is. Different entities with similar names are not the same."""


class SameAs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    same_as: int


def model_judge(gateway: LLMGateway, costs: Counter | None = None) -> Judge:
    """The judge that asks the model through the gateway (cached: a rerun asks nothing twice);
    ``costs`` adds up the calls and tokens its answers took, asked now or read from the cache."""

    def judge(questions: Sequence[SameEntityQuestion]) -> list[Pick]:
        try:
            replies = gateway.complete_all([Request(_same_messages(q), output=SameAs, stage=STAGE) for q in questions])
        except LLMUnreachableError as e:  # the names stay apart, each decision saying why; the graph is still written
            return [Pick(error=str(e)) for _ in questions]
        if costs is not None:
            costs.update(calls=sum(r.attempts for r in replies),
                         tokens=sum(r.prompt_tokens + r.completion_tokens for r in replies))
        return [_pick(reply, len(q.candidates)) for q, reply in zip(questions, replies, strict=True)]

    return judge


def _same_messages(question: SameEntityQuestion) -> list[dict[str, str]]:
    def shown(name: str, kind: str, context: str) -> str:
        return f'"{name}"' + (f" ({kind})" if kind else "") + (f', in: "{context}"' if context else "")

    lines = [f"Name: {shown(question.name, question.kind, question.context)}", "Candidates:"]
    lines += [f"{n}. {shown(c.name, c.kind, c.context)}" for n, c in enumerate(question.candidates, 1)]
    return [{"role": "system", "content": SAME_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def _pick(reply: LLMResult, candidates: int) -> Pick:
    if not reply.ok:
        return Pick(error=reply.error)
    number = reply.value.same_as
    if not 0 <= number <= candidates:
        return Pick(error=f"the model answered {number}, not a candidate's number (1-{candidates}) or 0")
    return Pick(index=number - 1 if number else None)


class Entity(BaseModel):
    key: str  # folded name: the IRI is minted from it
    kind: str
    labels: dict[str, str]  # language -> the name written most often in that language (a subject's twice)
    documents: list[str]


def resolve(mentions: Sequence[Mention], judge: Judge | None = None, embed: Embed | None = None, spelling: float = 88.0,
            meaning: float = 0.85) -> tuple[list[Entity], list[int], list[Decision]]:
    """The entities, the entity index of each mention, and the logged decisions. Without
    ``judge`` only the same name merges; with it, candidates spelt alike (WRatio >= ``spelling``)
    or, with ``embed``, meaning alike (cosine >= ``meaning``) go to the judge."""
    entities, assignment, decisions = _same_names(mentions)
    if judge is None:
        return entities, assignment, decisions
    questions, pairs, apart = _questions(entities, mentions, assignment, embed, spelling, meaning)
    decisions += apart
    picks = judge(questions) if questions else []
    into, merge_decisions = _star_merges(entities, pairs, picks, questions)
    decisions += merge_decisions
    return _merged(entities, assignment, mentions, into) + (decisions,)


def _same_names(mentions: Sequence[Mention]) -> tuple[list[Entity], list[int], list[Decision]]:
    by_name: dict[str, list[int]] = defaultdict(list)
    for index, mention in enumerate(mentions):
        by_name[fold(mention.name)].append(index)
    entities: list[Entity] = []
    assignment = [0] * len(mentions)
    decisions: list[Decision] = []
    for key, indices in by_name.items():
        kinds = Counter(mentions[i].kind for i in indices if mentions[i].kind)
        groups = {kind: [i for i in indices if mentions[i].kind == kind] for kind in kinds} or {"": list(indices)}
        untyped = [i for i in indices if not mentions[i].kind]
        if kinds:  # a mention of no kind joins the name's most frequent kind
            groups[kinds.most_common(1)[0][0]] += untyped
        documents = sorted({mentions[i].document for i in indices})
        if len(groups) > 1:
            decisions.append(Decision(name=mentions[indices[0]].name, documents=documents, decision="kept apart",
                                      reason=f"kinds disagree: {', '.join(sorted(groups))}"))
        for kind, members in groups.items():
            group_documents = sorted({mentions[i].document for i in members})
            if len(group_documents) > 1:
                decisions.append(Decision(name=mentions[members[0]].name, documents=group_documents, decision="merged",
                                          reason=f"the same name{f' and kind {kind!r}' if kind else ''}"))
            for i in members:
                assignment[i] = len(entities)
            entities.append(Entity(key=key, kind=kind, labels=_labels([mentions[i] for i in members]), documents=group_documents))
    return entities, assignment, decisions


_IDENTIFIER = re.compile(r"\d|^[A-ZА-ЯЁ]{2,6}$")  # a digit anywhere, or a short all-capitals code


def identifier_like(name: str) -> bool:
    """A code, a number or an acronym: similar spelling says nothing of sameness ("SR-2023-052")."""
    return bool(_IDENTIFIER.search(" ".join(name.split())))


_MAX_CANDIDATES = 3


def _questions(entities: list[Entity], mentions: Sequence[Mention], assignment: list[int], embed: Embed | None, spelling: float,
               meaning: float) -> tuple[list[SameEntityQuestion], list[tuple[int, list[int]]], list[Decision]]:
    """One question per entity with candidates (entities of its kind spelt or meaning alike),
    ``pairs``: (entity, its candidates' indices) in the same order, and the guards' decisions."""
    context = {assignment[i]: m.context for i, m in enumerate(mentions) if m.context}
    names = [_display(e) for e in entities]
    by_kind: dict[str, list[int]] = defaultdict(list)
    for index, entity in enumerate(entities):
        by_kind[entity.kind].append(index)
    questions, pairs, decisions = [], [], []
    for members in by_kind.values():
        plain = [i for i in members if not identifier_like(names[i])]
        texts = [names[i] for i in plain]
        vectors = embed(texts) if embed is not None and len(plain) > 1 else None
        for a, found in _alike(texts, fuzz.WRatio, spelling, vectors, meaning):
            found.sort(key=lambda f: (-f[1] - 100 * (f[2] or 0), plain[f[0]]))
            chosen, i = found[:_MAX_CANDIDATES], plain[a]
            pairs.append((i, [plain[b] for b, _, _ in chosen]))
            questions.append(SameEntityQuestion(name=names[i], kind=entities[i].kind, context=context.get(i, ""), candidates=[
                Candidate(name=names[plain[b]], kind=entities[plain[b]].kind, context=context.get(plain[b], ""), spelling=s_, meaning=m_)
                for b, s_, m_ in chosen]))
        codes = [i for i in members if identifier_like(names[i])]
        for a, found in _alike([names[i] for i in codes], fuzz.ratio, spelling):
            b, score, _ = max(found, key=lambda f: (f[1], -f[0]))
            decisions.append(Decision(name=names[codes[a]], documents=entities[codes[a]].documents, decision="kept apart",
                                      reason=f"identifier-like: merged on its exact name only (spelt like {names[codes[b]]!r})",
                                      score=round(score, 1)))
    return questions, pairs, decisions


_ROWS = 512  # names compared with all the others at a time: memory stays rows x names, not names x names


def _alike(texts: list[str], scorer, spelling: float, vectors: np.ndarray | None = None,
           meaning: float = 1.0) -> Iterator[tuple[int, list[tuple[int, float, float | None]]]]:
    """For each text with others spelt (``scorer`` >= ``spelling``) or, given ``vectors``,
    meaning (cosine >= ``meaning``) alike: its index and theirs, with both scores."""
    for start in range(0, len(texts) if len(texts) > 1 else 0, _ROWS):
        spelt = process.cdist(texts[start:start + _ROWS], texts, scorer=scorer, processor=fold, workers=1)
        cosine = vectors[start:start + _ROWS] @ vectors.T if vectors is not None else None
        near = spelt >= spelling if cosine is None else (spelt >= spelling) | (cosine >= meaning)
        for row in range(near.shape[0]):
            near[row, start + row] = False
            hits = np.flatnonzero(near[row])
            if hits.size:
                yield start + row, [(int(b), float(spelt[row, b]), float(cosine[row, b]) if cosine is not None else None) for b in hits]


def _star_merges(entities: list[Entity], pairs: list[tuple[int, list[int]]], picks: list[Pick],
                 questions: list[SameEntityQuestion]) -> tuple[dict[int, int], list[Decision]]:
    """Entity -> the entity it joins. The entity named in more documents (then more often
    first) leads; a merge joins two lone entities: one joined by "Kang Won-yong" is joined
    by no "Kim Won-yong", as the two were never compared (a hub name would chain them)."""
    into: dict[int, int] = {}
    led: dict[int, int] = {}  # lead -> the entity that joined it
    decisions = []
    order = sorted(range(len(pairs)), key=lambda q: (-len(entities[pairs[q][0]].documents), pairs[q][0]))
    for q in order:
        entity, candidates = pairs[q]
        pick, question = picks[q].index, questions[q]
        if pick is None:
            why = (f"the model's answer could not be used: {picks[q].error}" if picks[q].error
                   else f"the model found none of {[c.name for c in question.candidates]} the same")
            decisions.append(Decision(name=question.name, documents=entities[entity].documents, decision="kept apart", reason=why,
                                      score=question.candidates[0].spelling))
            continue
        other = candidates[pick]
        lead, joining = sorted((entity, other), key=lambda e: (-len(entities[e].documents), e))
        if into.get(joining) == lead:
            continue  # the same merge, asked from the other side
        if joining in into or joining in led or lead in into or lead in led:
            taken = f"{_display(entities[led[lead]])!r} joined {_display(entities[lead])!r}" if lead in led else "one side is merged"
            decisions.append(Decision(name=question.name, documents=entities[entity].documents, decision="kept apart",
                                      reason=f"the model picked {question.candidates[pick].name!r}, but {taken} already: merges "
                                             "do not chain names never compared", score=question.candidates[pick].spelling))
            continue
        into[joining] = lead
        led[lead] = joining
        c = question.candidates[pick]
        meaning = f", meaning {c.meaning:.2f}" if c.meaning is not None else ""
        decisions.append(Decision(name=_display(entities[joining]), documents=sorted({*entities[joining].documents, *entities[lead].documents}),
                                  decision=f"merged into {_display(entities[lead])!r}",
                                  reason=f"the model picked it among {len(question.candidates)} candidate(s) (spelling {c.spelling:.0f}{meaning})",
                                  score=c.spelling))
    return into, decisions


def _merged(entities: list[Entity], assignment: list[int], mentions: Sequence[Mention],
            into: dict[int, int]) -> tuple[list[Entity], list[int]]:
    """The entities after the merges, and each mention's new index."""
    keep = [i for i in range(len(entities)) if i not in into]
    index = {old: new for new, old in enumerate(keep)}
    final = [index[into.get(old, old)] for old in assignment]
    members: dict[int, list[Mention]] = defaultdict(list)
    for mention, entity in zip(mentions, final, strict=True):
        members[entity].append(mention)
    merged = [entities[old].model_copy(update={"labels": _labels(members[new]), "documents": sorted({m.document for m in members[new]})})
              for new, old in enumerate(keep)]
    return merged, final


def _display(entity: Entity) -> str:
    return next(iter(entity.labels.values()))


def _labels(mentions: list[Mention]) -> dict[str, str]:
    by_lang: dict[str, Counter[str]] = defaultdict(Counter)
    for mention in mentions:
        by_lang[mention.lang][" ".join(mention.name.split())] += 2 if mention.subject else 1
    return {lang: min(names.items(), key=lambda item: (-item[1], item[0]))[0] for lang, names in sorted(by_lang.items())}


# words that carry no relation of their own: "is located in" is "located in"
_AUXILIARIES = {"is", "are", "was", "were", "be", "been", "has", "have", "had", "the", "a", "an", "its", "their",
                "является", "являлся", "являлась", "был", "была", "было", "были", "есть"}


def relation_names(relations: Sequence[tuple[str, str]], vocabulary: Sequence[str], score: float) -> tuple[dict[str, str], list[Decision]]:
    """The name each relation (given as (name, document) pairs) is written under, and the
    merges. Names compare by their core (folded, auxiliary words dropped) with rapidfuzz's
    ratio: at ``score`` or more (90: "headquarter city" joins "headquarters city", "founded in"
    stays apart from "founded by" at 80) a name joins the vocabulary entry it matches best;
    without a vocabulary, the most frequent of the names that match it (the corpus's own)."""
    counts = Counter(" ".join(name.split()) for name, _ in relations)
    documents: dict[str, set[str]] = defaultdict(set)
    for name, document in relations:
        documents[" ".join(name.split())].add(document)
    targets = list(vocabulary)
    cores = [_core(t) for t in targets]
    mapping, decisions = {}, []
    for name, _ in sorted(counts.items(), key=lambda item: (-item[1], len(item[0]), item[0])):  # frequent, then short, first
        match = process.extractOne(_core(name), cores, scorer=fuzz.ratio, score_cutoff=score)
        if match is None:
            if not vocabulary:
                targets.append(name)
                cores.append(_core(name))
            mapping[name] = name
            continue
        mapping[name] = targets[match[2]]
        if mapping[name] != name:
            source = "the vocabulary's" if vocabulary else "a more frequent relation"
            decisions.append(Decision(name=name, documents=sorted(documents[name]), decision=f"relation written as {mapping[name]!r}",
                                      reason=f"{source} name reads alike (ratio {match[1]:.0f})"))
    return mapping, decisions


def _core(name: str) -> str:
    return " ".join(word for word in fold(name).split() if word not in _AUXILIARIES) or fold(name)
