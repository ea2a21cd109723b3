"""kgsynth: contamination-resistant LLM benchmark items from a knowledge graph.

Data flows one way: ``kg`` (graph) -> ``queries`` (subgraphs) -> ``synth`` (items)
-> ``filters`` -> datasets -> ``eval`` (results).
"""

from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import Shape, Subgraph, enumerate_subgraphs, sample_subgraphs

__version__ = "0.1.0"

__all__ = [
    "KgsynthError",
    "KnowledgeGraph",
    "Shape",
    "Subgraph",
    "enumerate_subgraphs",
    "sample_subgraphs",
    "__version__",
]
