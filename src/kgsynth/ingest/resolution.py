"""Entity resolution across documents: which mentions name one entity, and which relation
names one relation.

Mentions with the same name (case, spacing and ё folded) are one entity when their kinds
agree: a person "Jordan" and a country "Jordan" stay two. Relations are written under one
name when they read alike (see :func:`relation_names`). Every decision that joins names
from more than one document, or keeps a name apart, is logged with its reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from pydantic import BaseModel
from rapidfuzz import fuzz, process

from kgsynth.ingest.extraction import fold


class Mention(BaseModel):
    name: str  # as the document writes it
    kind: str  # the entity's type as extracted ("" when not given), folded
    document: str
    lang: str
    subject: bool  # named as a fact's subject: the name is then in its dictionary form more often


class Decision(BaseModel):
    name: str
    documents: list[str]
    decision: str  # "merged" or "kept apart"
    reason: str


class Entity(BaseModel):
    key: str  # folded name: the IRI is minted from it
    kind: str
    labels: dict[str, str]  # language -> the name written most often in that language (a subject's twice)
    documents: list[str]


def resolve(mentions: Sequence[Mention]) -> tuple[list[Entity], list[int], list[Decision]]:
    """The entities, the entity index of each mention, and the logged decisions."""
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
