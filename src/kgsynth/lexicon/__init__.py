"""Words for a graph's relations and classes, proposed for review: ``kgsynth lexicon suggest``.

For every relation a fact uses and every class an entity has, the forms
``docs/vocabulary.md`` defines (``kgs:nounForm``, ``kgs:inverseNounForm``, class labels),
in English and Russian, each with where it came from: the graph's own label in that
language, a rule over the label and the IRI, the glossary of ``synth/naming/words.toml``,
or the configured model (one structured call per relation the rules could not word,
cached, and checked: a form that names no noun or breaks Russian agreement is refused with
its reason). :meth:`WordSuggestion.turtle` writes them as a Turtle file to review and pass
to ``kgsynth synth`` as one more graph path; forms the graph already gives are left alone.
The words are the ones synthesis falls back on (``kgsynth.synth.naming.lexicon``), so a
file written without a model records what items already say, for a person to correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from kgsynth.kg import KnowledgeGraph
from kgsynth.kg.vocab import RDF_TYPE, SCHEMA_NAMESPACES, XSD, is_fact_relation
from kgsynth.lexicon._checks import refusal
from kgsynth.lexicon._model import ModelWords, ask_model, copied
from kgsynth.lexicon._turtle import write_turtle
from kgsynth.llm import LLMGateway
from kgsynth.queries import Node
from kgsynth.synth.naming.lexicon import Lexicon
from kgsynth.synth.naming.words import relation_words, russian_of, singular

__all__ = ["Form", "TermWords", "WordSuggestion", "suggest_words"]

LANGUAGES = ("en", "ru")
_RELATIONS = f"""SELECT ?p (COUNT(*) AS ?n) (SUM(IF(isIRI(?o), 1, 0)) AS ?iris)
  (SUM(IF(isLiteral(?o) && DATATYPE(?o) = <{XSD}boolean>, 1, 0)) AS ?booleans)
WHERE {{ ?s ?p ?o }} GROUP BY ?p"""
_EXAMPLES = "SELECT ?s ?o WHERE {\n  #VALUES\n  ?s ?p ?o .\n  FILTER(isIRI(?s))\n} ORDER BY ?s ?o LIMIT 3"
_CLASSES = f"SELECT ?c (COUNT(*) AS ?n) WHERE {{ ?e <{RDF_TYPE}> ?c . FILTER(isIRI(?c)) }} GROUP BY ?c"


@dataclass(frozen=True)
class Form:
    """One form in one language, and where it came from."""

    text: str
    source: str


@dataclass
class TermWords:
    """The words proposed for one relation or class."""

    iri: str
    kind: str  # "relation" or "class"
    uses: int  # triples of the relation, instances of the class
    label: str | None = None  # the graph's English label, if any
    forms: dict[tuple[str, str], Form] = field(default_factory=dict)  # (form, language) -> the form
    missing: dict[tuple[str, str], str] = field(default_factory=dict)  # (form, language) -> why it has none


@dataclass(frozen=True)
class WordSuggestion:
    terms: tuple[TermWords, ...]
    given: int  # relations whose forms the graph gives already

    @property
    def unworded(self) -> list[TermWords]:
        return [t for t in self.terms if t.missing]

    def turtle(self, header: str) -> str:
        return write_turtle(self.terms, header, self.given)


def suggest_words(kg: KnowledgeGraph, gateway: LLMGateway | None = None) -> WordSuggestion:
    """The words for every relation and class of ``kg`` (see the module docstring);
    ``gateway``: a model asked for the forms the graph and the rules leave unworded."""
    lexicon = Lexicon(kg)
    rows = [(p, int(n.value), int(iris.value), int(booleans.value)) for p, n, iris, booleans in kg.select(_RELATIONS)
            if isinstance(p, ox.NamedNode) and is_fact_relation(p.value)]
    relations = sorted(rows, key=lambda r: r[0].value)
    labels = kg.labels([r[0] for r in relations])
    terms, given = [], 0
    for prop, uses, iris, booleans in relations:
        node = Node.from_term(prop, kg.pick_label(prop, labels[prop]), labels[prop])
        if lexicon.form(node, "noun", "en") and lexicon.form(node, "noun", "ru"):
            given += 1
            continue
        terms.append(_relation_words(kg, lexicon, node, uses, entity_valued=iris * 2 > uses, boolean=booleans * 2 > uses))
    terms += _class_words(kg)
    if gateway is not None:
        _worded_by_model(kg, gateway, [t for t in terms if t.kind == "relation" and t.missing])
    return WordSuggestion(terms=tuple(terms), given=given)


def _relation_words(kg: KnowledgeGraph, lexicon: Lexicon, node: Node, uses: int, entity_valued: bool,
                    boolean: bool) -> TermWords:
    term = TermWords(iri=node.value, kind="relation", uses=uses, label=node.labels.get("en") or node.labels.get(""))
    subject, value = _example(kg, node)
    english = lexicon.noun(node, "en", value)
    _offer(term, "noun", "en", english, _english_source(node, english))
    russian = lexicon.noun(node, "ru", value)
    source = "the graph's Russian label" if russian == node.labels.get("ru") else f"the glossary, for “{english}”"
    _offer(term, "noun", "ru", russian, source)
    if entity_valued:
        for lang in LANGUAGES:
            inverse = lexicon.inverse_noun(node, lang, subject)
            _offer(term, "inverse_noun", lang, inverse, "the class of its subjects, or the type its IRI names")
    if boolean:
        for lang in LANGUAGES:
            term.missing["yes", lang] = "a yes/no relation needs a sentence: give kgs:yesForm and kgs:questionForm"
    return term


def _offer(term: TermWords, form: str, lang: str, text: str, source: str) -> None:
    """Keep ``text`` as the form unless it is the placeholder synthesis falls back on."""
    why = refusal(text, lang, form)
    if why:
        term.missing[form, lang] = why
    else:
        term.forms[form, lang] = Form(text, source)


def _english_source(node: Node, noun: str) -> str:
    label = node.labels.get("en") or node.labels.get("")
    words = relation_words(node.value, label)
    if label and words.name == label.replace("_", " ").strip():
        return "the graph's English label" if noun == label else f"a rule over the English label “{label}”"
    return "a rule over the IRI" + (f" (the type “{words.subject}”)" if words.subject else "")


def _example(kg: KnowledgeGraph, node: Node) -> tuple[Node | None, Node | None]:
    """One subject and value of the relation, for the class-based forms."""
    rows = list(kg.select(_EXAMPLES, (("p",), [(ox.NamedNode(node.value),)])))
    if not rows:
        return None, None
    s, o = rows[0]
    return Node.from_term(s, s.value, {}), (Node.from_term(o, o.value, {}) if isinstance(o, ox.NamedNode) else None)


def _class_words(kg: KnowledgeGraph) -> list[TermWords]:
    """A label in each language for every class: the graph's, else its English label (or
    the IRI's words) and that label's Russian from the glossary."""
    classes = sorted(((c, int(n.value)) for c, n in kg.select(_CLASSES) if not c.value.startswith(SCHEMA_NAMESPACES)),
                     key=lambda cn: cn[0].value)
    labels = kg.labels([c for c, _ in classes])
    terms = []
    for cls, uses in classes:
        own = labels[cls]
        if all(own.get(lang) for lang in LANGUAGES):
            continue
        term = TermWords(iri=cls.value, kind="class", uses=uses)
        english = own.get("en") or own.get("") or singular(relation_words(cls.value, None).name)
        if not own.get("en"):
            _offer(term, "label", "en", english, "the graph's untagged label" if own.get("") else "the IRI's words")
        if not own.get("ru"):
            _offer(term, "label", "ru", russian_of(english.casefold()) or "", f"the glossary, for “{english}”")
        terms.append(term)
    return terms


def _worded_by_model(kg: KnowledgeGraph, gateway: LLMGateway, terms: list[TermWords]) -> None:
    """Ask the model for each relation's missing forms; a checked answer fills them."""
    asked = [(t, _examples_of(kg, t.iri)) for t in terms]
    for term, reply in zip(terms, ask_model(gateway, asked), strict=True):
        if isinstance(reply, str):
            for key in term.missing:
                term.missing[key] = f"{term.missing[key]}; the model: {reply}"
            continue
        _take_model_words(term, reply)


def _take_model_words(term: TermWords, reply: ModelWords) -> None:
    for (form, lang) in list(term.missing):
        text = reply.form(form, lang)
        if text is None:
            term.missing[form, lang] = f"{term.missing[form, lang]}; the model gave none"
            continue
        ours = term.forms.get((form, "en"))
        english = ours.text if ours else reply.form(form, "en")
        why = refusal(text, lang, form) or ("the prompt's example, copied" if copied(text, english) else None)
        if why:
            term.missing[form, lang] = f"the model's “{text}” is refused: {why}"
        else:
            del term.missing[form, lang]
            term.forms[form, lang] = Form(text, "the model")


def _examples_of(kg: KnowledgeGraph, iri: str) -> list[tuple[str, str]]:
    """Up to three (subject, value) pairs of the relation as a reader sees them, for the model."""
    rows = list(kg.select(_EXAMPLES, (("p",), [(ox.NamedNode(iri),)])))
    labels = kg.labels([t for row in rows for t in row])

    def said(term: ox.NamedNode | ox.Literal) -> str:
        return term.value if isinstance(term, ox.Literal) else kg.pick_label(term, labels.get(term, {}))
    return [(said(s), said(o)) for s, o in rows]
