"""SPARQL subgraph templates (package data ``templates/*.rq``) and the code that runs them."""

from kgsynth.queries._anchors import Anchors
from kgsynth.queries._extract import enumerate_subgraphs, sample_subgraphs, templates_for
from kgsynth.queries._identify import picks_out
from kgsynth.queries._subgraph import CachedModel, Fact, Node, Shape, Subgraph, share_field_names
from kgsynth.queries._templates import Template, load_template, template_names

__all__ = [
    "CachedModel",
    "Anchors",
    "Fact",
    "Node",
    "Shape",
    "Subgraph",
    "Template",
    "enumerate_subgraphs",
    "load_template",
    "picks_out",
    "sample_subgraphs",
    "share_field_names",
    "template_names",
    "templates_for",
]
