"""The knowledge graph: store, loading, labels, statistics, networkx view, rule vocabulary."""

from kgsynth.kg._backends import Credentials, EndpointBackend, OxigraphBackend, Rows
from kgsynth.kg._graph import KnowledgeGraph
from kgsynth.kg._load import demo_graph_path
from kgsynth.kg._stats import GraphStats
from kgsynth.kg._terms import REGION_MARK, Term, local_name, readable_name, spells_a_path, to_python
from kgsynth.kg.vocab import Rule, RuleKind, load_rules

__all__ = [
    "Credentials",
    "EndpointBackend",
    "OxigraphBackend",
    "GraphStats", "KnowledgeGraph", "REGION_MARK", "Rows", "Rule", "RuleKind", "Term", "demo_graph_path", "load_rules", "local_name",
    "readable_name", "spells_a_path", "to_python"]
