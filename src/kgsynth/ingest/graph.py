"""The ingested facts as RDF: one named graph per document holding the facts it states and,
per fact, a statement node with the evidence (provenance per triple); labels, classes and
relation units in the default graph. TriG or N-Quads; ``KnowledgeGraph.load`` reads either
and queries the union, so every shape samples from it."""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from itertools import groupby
from pathlib import Path
from urllib.parse import quote

import pyoxigraph as ox
from pydantic import BaseModel

from kgsynth.ingest.documents import Document
from kgsynth.ingest.extraction import ObjectKind, Triple, fold
from kgsynth.ingest.resolution import Decision, Entity, Mention, relation_names, resolve
from kgsynth.ingest.wikidata import Claim, Contamination, Verdict
from kgsynth.kg.vocab import FACT_OBJECT, FACT_RELATION, FACT_SUBJECT, KGS, RDF, RDFS, XSD

FORMATS = {".trig": ox.RdfFormat.TRIG, ".nq": ox.RdfFormat.N_QUADS, ".nquads": ox.RdfFormat.N_QUADS}
PREFIXES = {"kgs": KGS, "rdfs": RDFS, "xsd": XSD}
_LABEL, _TYPE = ox.NamedNode(f"{RDFS}label"), ox.NamedNode(f"{RDF}type")


class DocumentFacts(BaseModel):
    """A document's checked triples, with what the graph says about the document."""

    document: Document
    model: str
    triples: list[Triple]


class Built(BaseModel):
    quads: int
    entities: int
    relations: int
    facts: int  # distinct triples written
    statements: int  # facts with their provenance: a fact two documents state counts twice
    merged: int  # entities named in more than one document
    decisions: list[Decision]
    contamination: dict[str, int] = {}  # distinct facts by label, dropped ones included
    dropped: int = 0  # distinct facts left out as known
    checks: list[dict] = []  # one row per distinct fact checked: its names, documents, label and reason
    unchecked: dict[str, str] = {}  # document id -> why some of its facts could not be checked


Check = Callable[[Sequence[Claim]], list[Verdict]]
Resolve = Callable[[Sequence[Mention]], tuple[list[Entity], list[int], list[Decision]]]


def write_graph(path: Path, namespace: str, documents: Sequence[DocumentFacts], relations_vocabulary: Sequence[str] = (),
                relation_score: float = 90.0, check: Check | None = None, keep_known: bool = False,
                resolve_entities: Resolve = resolve) -> Built:
    """Write the graph of ``documents`` to ``path`` (.trig, .nq) and say what it holds. With
    ``check`` (the Wikidata check) each distinct fact is labelled, the label kept in its
    provenance, and a ``known`` one left out unless ``keep_known``. ``resolve_entities``
    (by default: the same name merges) may ask a model about names that differ."""
    documents, relation_decisions = _renamed_relations(documents, relations_vocabulary, relation_score)
    mentions, owners = _mentions(documents)
    entities, assignment, decisions = resolve_entities(mentions)
    decisions += relation_decisions
    iris = _entity_iris(namespace, entities)
    relations = _RelationNames(namespace, documents)
    entity_of = {owner: assignment[i] for i, owner in enumerate(owners)}
    stated = []  # (document index, triple, subject entity, relation IRI, object entity or literal)
    for d, facts_of in enumerate(documents):
        for t, triple in enumerate(facts_of.triples):
            obj = entity_of[(d, t, "object")] if triple.object_kind is ObjectKind.entity else _literal(triple, facts_of.document.lang)
            stated.append((d, triple, entity_of[(d, t, "subject")], relations.iri(triple), obj))
    facts = list(dict.fromkeys((s, r, o) for _, _, s, r, o in stated))
    verdicts = _verdicts(check, facts, stated, entities, relations, documents) if check else {}
    kept = [row for row in stated if not (verdicts and verdicts[row[2:]].label is Contamination.known and not keep_known)]

    used = sorted({row[2] for row in kept} | {row[4] for row in kept if isinstance(row[4], int)})
    quads: list[ox.Quad] = []
    for e in used:
        quads += [ox.Quad(iris[e], _LABEL, ox.Literal(label, language=lang)) for lang, label in entities[e].labels.items()]
        if entities[e].kind:
            quads.append(ox.Quad(iris[e], _TYPE, _class_iri(namespace, entities[e].kind)))
    by_document = {d: list(rows) for d, rows in groupby(kept, key=lambda row: row[0])}  # kept in document order
    for d, facts_of in enumerate(documents):  # a document with no fact kept still says what it is
        doc = facts_of.document
        graph = _document_iri(namespace, doc.id)
        quads += _about_document(graph, facts_of)
        for _, triple, subject, relation, obj in by_document.get(d, []):
            s, o = iris[subject], iris[obj] if isinstance(obj, int) else obj
            statement = _statement_node(doc.id, s, relation, o)
            quads += [
                ox.Quad(s, relation, o, graph),
                ox.Quad(statement, ox.NamedNode(FACT_SUBJECT), s, graph),
                ox.Quad(statement, ox.NamedNode(FACT_RELATION), relation, graph),
                ox.Quad(statement, ox.NamedNode(FACT_OBJECT), o, graph),
                ox.Quad(statement, ox.NamedNode(f"{KGS}statedIn"), graph, graph),
                ox.Quad(statement, ox.NamedNode(f"{KGS}evidence"), ox.Literal(triple.evidence, language=doc.lang), graph),
                ox.Quad(statement, ox.NamedNode(f"{KGS}evidenceOffset"), ox.Literal(str(triple.evidence_start), datatype=ox.NamedNode(f"{XSD}integer")), graph),
            ]
            if verdict := verdicts.get((subject, relation, obj)):
                quads += [ox.Quad(statement, ox.NamedNode(f"{KGS}contamination"), ox.Literal(verdict.label.value), graph),
                          ox.Quad(statement, ox.NamedNode(f"{KGS}contaminationReason"), ox.Literal(verdict.reason), graph)]
    quads += relations.quads({row[3] for row in kept})
    kinds = {entities[e].kind for e in used}
    quads += [ox.Quad(_class_iri(namespace, kind), _LABEL, ox.Literal(kind, language=lang)) for kind, lang in _kinds(documents) if kind in kinds]
    unique = list(dict.fromkeys(quads))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    ox.serialize(unique, str(partial), FORMATS[path.suffix.lower()], prefixes=PREFIXES | {"": namespace})
    partial.replace(path)
    merged = sum(1 for e in used if len(entities[e].documents) > 1)
    labels = Counter(v.label.value for v in verdicts.values())
    return Built(quads=len(unique), entities=len(used), relations=len({row[3] for row in kept}), facts=len({row[2:] for row in kept}),
                 statements=len(kept), merged=merged, decisions=decisions, contamination=dict(sorted(labels.items())),
                 dropped=len(facts) - len({row[2:] for row in kept}), checks=_check_rows(verdicts, stated, entities, relations, documents),
                 unchecked=_unchecked(verdicts, stated, documents))


def _verdicts(check: Check, facts: list[tuple], stated: list[tuple], entities: list[Entity], relations: _RelationNames,
              documents: Sequence[DocumentFacts]) -> dict[tuple, Verdict]:
    """The check's verdict on each distinct fact (subject entity, relation IRI, object)."""
    triple_of = {row[2:]: row[1] for row in stated}
    claims = []
    for subject, relation, obj in facts:
        triple = triple_of[(subject, relation, obj)]
        names = _names(entities[obj]) if isinstance(obj, int) else [" ".join(triple.object.split())]
        said = " ".join(triple.relation.split())  # without the unit a relation split by unit is labelled with
        claims.append(Claim(subject=_names(entities[subject]), relation=list(dict.fromkeys([said, *relations.labels(relation)])),
                            kind=triple.object_kind, object=names, value=triple.value, unit=triple.unit))
    return dict(zip(facts, check(claims), strict=True))


def _names(entity: Entity) -> list[str]:
    return list(dict.fromkeys(entity.labels.values()))


def _check_rows(verdicts: dict[tuple, Verdict], stated: list[tuple], entities: list[Entity], relations: _RelationNames,
                documents: Sequence[DocumentFacts]) -> list[dict]:
    by_fact: dict[tuple, list[str]] = defaultdict(list)
    for d, _, *fact in stated:
        by_fact[tuple(fact)].append(documents[d].document.id)
    rows = []
    for (subject, relation, obj), verdict in verdicts.items():
        shown = _names(entities[obj])[0] if isinstance(obj, int) else obj.value
        rows.append({"subject": _names(entities[subject])[0], "relation": relations.labels(relation)[0], "object": shown,
                     "documents": sorted(set(by_fact[(subject, relation, obj)])), "label": verdict.label.value, "reason": verdict.reason})
    return rows


def _unchecked(verdicts: dict[tuple, Verdict], stated: list[tuple], documents: Sequence[DocumentFacts]) -> dict[str, str]:
    found = {}
    for d, _, *fact in stated:
        verdict = verdicts.get(tuple(fact))
        if verdict and verdict.label is Contamination.unchecked:
            found.setdefault(documents[d].document.id, verdict.reason)
    return found


def _renamed_relations(documents: Sequence[DocumentFacts], vocabulary: Sequence[str],
                       score: float) -> tuple[list[DocumentFacts], list[Decision]]:
    names, decisions = relation_names([(t.relation, f.document.id) for f in documents for t in f.triples], vocabulary, score)
    renamed = [f.model_copy(update={"triples": [t.model_copy(update={"relation": names[" ".join(t.relation.split())]})
                                                for t in f.triples]}) for f in documents]
    return renamed, decisions


def _mentions(documents: Sequence[DocumentFacts]) -> tuple[list[Mention], list[tuple[int, int, str]]]:
    """Every entity mention, with (document index, triple index, role) for each."""
    mentions, owners = [], []
    for d, facts in enumerate(documents):
        lang = facts.document.lang or ""
        for t, triple in enumerate(facts.triples):
            said = {"document": facts.document.id, "lang": lang, "context": triple.evidence}
            mentions.append(Mention(name=triple.subject, kind=fold(triple.subject_type), subject=True, **said))
            owners.append((d, t, "subject"))
            if triple.object_kind is ObjectKind.entity:
                mentions.append(Mention(name=triple.object, kind=fold(triple.object_type), subject=False, **said))
                owners.append((d, t, "object"))
    return mentions, owners


def _entity_iris(namespace: str, entities: list[Entity]) -> list[ox.NamedNode]:
    """One IRI per entity from its name; namesakes kept apart get -2, -3 (in order of appearance)."""
    taken: dict[str, int] = defaultdict(int)
    iris = []
    for entity in entities:
        slug = _slug(entity.key)
        taken[slug] += 1
        iris.append(ox.NamedNode(f"{namespace}entity/{slug}" + (f"-{taken[slug]}" if taken[slug] > 1 else "")))
    return iris


class _RelationNames:
    """Relation IRIs and labels. A relation whose numbers come in more than one unit (revenue
    in USD and in RUB) becomes one relation per unit ("revenue (USD)"); one with a single
    unit declares it (``kgs:unit``)."""

    def __init__(self, namespace: str, documents: Sequence[DocumentFacts]):
        self.namespace = namespace
        units: dict[str, set[str | None]] = defaultdict(set)
        labels: dict[str, dict[str, str]] = defaultdict(dict)
        for facts in documents:
            for triple in facts.triples:
                if triple.object_kind is ObjectKind.number:
                    units[fold(triple.relation)].add(triple.unit)
        self.split = {name for name, found in units.items() if len(found) > 1}
        self.units = {name: next(iter(found)) for name, found in units.items() if len(found) == 1 and None not in found}
        for facts in documents:
            for triple in facts.triples:
                name = self._name(triple)
                labels[name].setdefault(facts.document.lang or "", self._label(triple))
        self.names = dict(labels)
        self._by_iri = {ox.NamedNode(f"{namespace}relation/{_slug(name)}"): name for name in self.names}

    def _name(self, triple: Triple) -> str:
        return fold(triple.relation) + self._unit(triple)

    def _label(self, triple: Triple) -> str:
        return " ".join(triple.relation.split()) + self._unit(triple)

    def _unit(self, triple: Triple) -> str:
        """" (USD)" for a number of a relation split by unit, else nothing."""
        split = triple.object_kind is ObjectKind.number and triple.unit and fold(triple.relation) in self.split
        return f" ({triple.unit})" if split else ""

    def iri(self, triple: Triple) -> ox.NamedNode:
        return ox.NamedNode(f"{self.namespace}relation/{_slug(self._name(triple))}")

    def labels(self, iri: ox.NamedNode) -> list[str]:
        return list(dict.fromkeys(self.names[self._by_iri[iri]].values()))

    def quads(self, used: set[ox.NamedNode]) -> list[ox.Quad]:
        quads = []
        for name, labels in self.names.items():
            iri = ox.NamedNode(f"{self.namespace}relation/{_slug(name)}")
            if iri not in used:
                continue
            quads += [ox.Quad(iri, _LABEL, ox.Literal(label, language=lang)) for lang, label in labels.items()]
            if name in self.units:
                quads.append(ox.Quad(iri, ox.NamedNode(f"{KGS}unit"), ox.Literal(self.units[name])))
        return quads


def _about_document(graph: ox.NamedNode, facts: DocumentFacts) -> list[ox.Quad]:
    doc = facts.document
    said = [(f"{KGS}sourceId", ox.Literal(doc.id)), (f"{KGS}sourceLanguage", ox.Literal(doc.lang or "")),
            (f"{KGS}sourceSha256", ox.Literal(doc.sha256)), (f"{KGS}extractionModel", ox.Literal(facts.model))]
    if doc.date:
        said.append((f"{KGS}sourceDate", ox.Literal(doc.date.isoformat(), datatype=ox.NamedNode(f"{XSD}date"))))
    if doc.title:
        said.append((f"{KGS}sourceTitle", ox.Literal(doc.title, language=doc.lang)))
    return [ox.Quad(graph, ox.NamedNode(p), value, graph) for p, value in said]


def _statement_node(doc_id: str, subject: ox.NamedNode, relation: ox.NamedNode, obj: ox.NamedNode | ox.Literal) -> ox.BlankNode:
    """A blank node named by what it describes: the same documents give the same file."""
    return ox.BlankNode("f" + hashlib.sha256(f"{doc_id}\n{subject}\n{relation}\n{obj}".encode()).hexdigest()[:24])


def _literal(triple: Triple, lang: str | None) -> ox.Literal:
    if triple.object_kind is ObjectKind.number:
        return ox.Literal(str(triple.value), datatype=ox.NamedNode(f"{XSD}decimal"))
    if triple.object_kind is ObjectKind.date:
        year = isinstance(triple.value, int)
        return ox.Literal(str(triple.value), datatype=ox.NamedNode(f"{XSD}{'gYear' if year else 'date'}"))
    return ox.Literal(" ".join(triple.object.split()), language=lang)


def _kinds(documents: Sequence[DocumentFacts]) -> list[tuple[str, str]]:
    """(folded kind, language) of every entity kind named, each with its first language."""
    seen: dict[str, str] = {}
    for facts in documents:
        for triple in facts.triples:
            for kind in (triple.subject_type, triple.object_type if triple.object_kind is ObjectKind.entity else ""):
                if kind.strip():
                    seen.setdefault(fold(kind), facts.document.lang or "")
    return list(seen.items())


def _class_iri(namespace: str, kind: str) -> ox.NamedNode:
    return ox.NamedNode(f"{namespace}class/{_slug(kind)}")


def _document_iri(namespace: str, doc_id: str) -> ox.NamedNode:
    return ox.NamedNode(f"{namespace}document/{quote(doc_id, safe='')}")


def _slug(name: str) -> str:
    """The letters and digits of ``name`` (any script), words joined by -."""
    words = re.findall(r"\w+", name.casefold())
    return "-".join(words) or "_"  # an IRI may hold letters of any script
