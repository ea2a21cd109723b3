"""Typed subgraphs: what a SPARQL template found, with labels, ready for a question."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping
from enum import StrEnum
from functools import cache, cached_property
from typing import TYPE_CHECKING, Literal, Self, TypeVar

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict

from kgsynth.kg import Term, to_python

if TYPE_CHECKING:
    import networkx as nx


Model = TypeVar("Model", bound=BaseModel)
_FIELD_NAMES: dict[type[BaseModel], set[str]] = {}


def share_field_names(model: Model) -> Model:
    """``model`` (frozen), when it was given every field, holding the set of its given fields'
    names that every such model of its class shares: pydantic keeps a set per instance (0.2
    to 2 KB), and a 1M-triple run keeps some 900,000 of them (subgraphs, scenarios and their
    wording): 700 MB. Pydantic never changes that set in place (``model_copy`` copies it)."""
    names = _FIELD_NAMES.get(type(model))
    if names is None:
        names = _FIELD_NAMES[type(model)] = set(type(model).model_fields)
    if len(model.__pydantic_fields_set__) == len(names):  # a subset of the same size: equal
        object.__setattr__(model, "__pydantic_fields_set__", names)
    return model


class CachedModel(BaseModel):
    """A model with ``functools.cached_property`` values: ``model_copy`` leaves them out, since
    pydantic would carry them along, stale once ``update`` changes a field they read."""

    def model_copy(self, *, update: Mapping[str, object] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            copied.__dict__.pop(name, None)
        return copied


@cache
def _cached_names(model: type) -> tuple[str, ...]:
    return tuple(name for name in dir(model) if isinstance(inspect.getattr_static(model, name), cached_property))


class Shape(StrEnum):
    """Question shapes; each has one or more SPARQL templates."""

    simple = "simple"
    set = "set"
    conditional = "conditional"
    multihop = "multihop"
    multihop_set = "multihop_set"
    comparison = "comparison"
    rule_application = "rule_application"


class Node(CachedModel):
    """An IRI or literal with its labels (by language tag) and the label picked for display."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["iri", "literal"]
    value: str  # the IRI, or the literal's lexical form
    datatype: str | None = None
    lang: str | None = None
    label: str
    labels: dict[str, str] = {}

    @classmethod
    def from_term(cls, term: Term, label: str, labels: dict[str, str]) -> Node:
        # every field given (see share_field_names); a literal's labels too, which pydantic
        # would otherwise deep-copy from the default
        if isinstance(term, ox.Literal):
            datatype = None if term.language else term.datatype.value
            node = cls(kind="literal", value=term.value, datatype=datatype, lang=term.language, label=label, labels={})
        else:
            node = cls(kind="iri", value=term.value, datatype=None, lang=None, label=label, labels=labels)
        return share_field_names(node)

    def term(self) -> Term:
        """The pyoxigraph term, e.g. to bind it in a further query."""
        if self.kind == "iri":
            return ox.NamedNode(self.value)
        if self.lang:
            return ox.Literal(self.value, language=self.lang)
        return ox.Literal(self.value, datatype=ox.NamedNode(self.datatype) if self.datatype else None)

    def label_in(self, lang: str) -> str:
        """The label in ``lang``, else the display label."""
        return self.labels.get(lang) or self.label

    @cached_property  # a dialogue and its filters read a value several times; a Node never changes
    def python(self) -> object:
        """Typed value of a literal (Decimal, int, date, ...); the IRI string otherwise."""
        return to_python(self.value, self.datatype) if self.kind == "literal" else self.value

    @property
    def is_year(self) -> bool:
        """A literal typed xsd:gYear: a year, said as written ("2013", never "2,013")."""
        return bool(self.datatype) and self.datatype.endswith("#gYear")

    def __hash__(self) -> int:  # labels are a dict; the term identifies the node
        return hash((self.kind, self.value, self.datatype, self.lang))

    def __str__(self) -> str:
        return self.label


class Fact(BaseModel):
    """One triple of a subgraph; ``role`` is the rule input role in rule_application."""

    model_config = ConfigDict(frozen=True)

    subject: Node
    relation: Node
    object: Node
    role: str | None = None

    def __str__(self) -> str:
        return f"({self.subject.label} | {self.relation.label} | {self.object.label})"

    @property
    def triple(self) -> str:
        """The triple in N-Triples."""
        return f"{self.subject.term()} {self.relation.term()} {self.object.term()} ."


class Subgraph(BaseModel):
    """A question-shaped piece of the graph.

    Attributes:
        shape: the question shape; ``variant`` refines it (set direction, conditional
            form, number of hops, rule kind).
        facts: the triples the question is about.
        answer: the gold answer node(s); empty for rule_application, whose answer the
            rule engine computes from ``facts``.
        mention: nodes the question must name (they identify the answer uniquely).
        hidden: nodes the question must not state: multi-hop bridges (described, never
            named) and the values a comparison or rule application is decided by.
            A multihop_set's facts come in chain order: the hops before the fan, the fan's
            facts (by member), then, when the fan is not the last hop, each member's last
            hop; a fact met twice (a chain back to its start) is kept once.
        rule: the rule IRI node of a rule_application.
        template: the SPARQL template that produced it.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    shape: Shape
    variant: str
    template: str
    facts: tuple[Fact, ...]
    answer: tuple[Node, ...]
    mention: tuple[Node, ...]
    hidden: tuple[Node, ...] = ()
    rule: Node | None = None

    @staticmethod
    def make_id(shape: Shape, variant: str, facts: tuple[Fact, ...], answer: tuple[Node, ...], rule: Node | None) -> str:
        """A content hash: the same subgraph always gets the same id, on any backend."""
        parts = [shape.value, variant, rule.value if rule else ""]
        parts += [f"{f.subject.value}\x1f{f.relation.value}\x1f{f.object.value}\x1f{f.object.datatype}" for f in facts]
        parts += [a.value for a in answer]
        return hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:16]

    def to_networkx(self) -> nx.MultiDiGraph:
        """The facts as a networkx graph; node ``role`` is answer, mention, hidden or None."""
        import networkx as nx

        graph = nx.MultiDiGraph()
        roles = {n.value: r for r, nodes in (("hidden", self.hidden), ("mention", self.mention), ("answer", self.answer)) for n in nodes}
        for fact in self.facts:
            for node in (fact.subject, fact.object):
                graph.add_node(node.value, label=node.label, kind=node.kind, role=roles.get(node.value))
            graph.add_edge(fact.subject.value, fact.object.value, key=fact.relation.value, label=fact.relation.label)
        return graph

    def __str__(self) -> str:
        answer = ", ".join(a.label for a in self.answer) or "(computed by the rule)"
        return f"{self.shape.value}/{self.variant}: {'; '.join(map(str, self.facts))} -> {answer}"
