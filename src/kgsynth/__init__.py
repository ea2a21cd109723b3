"""kgsynth: contamination-resistant LLM benchmark items from a knowledge graph.

Data flows one way: ``kg`` (graph) -> ``queries`` (subgraphs) -> ``synth`` (scenarios,
dialogues, items; answer formats from ``formats``) -> ``filters`` -> ``dataset`` (files),
driven by ``pipeline``; ``release`` publishes a dataset, ``eval`` and ``pressure`` put it
to models. No module imports one further along (tests/test_import_layers.py).
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
