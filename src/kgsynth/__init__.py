"""kgsynth: contamination-resistant LLM benchmark items from a knowledge graph.

Data flows one way: ``kg`` (graph) -> ``queries`` (subgraphs) -> ``synth`` (scenarios,
dialogues, items; answer formats from ``formats``) -> ``filters`` -> ``dataset`` (files),
driven by ``pipeline``; ``release`` publishes a dataset, ``eval`` and ``pressure`` put it
to models. No module imports one further along (tests/test_import_layers.py).
"""

from __future__ import annotations

import importlib

from kgsynth.errors import KgsynthError

__version__ = "0.1.0"

# loaded when first asked for: ``import kgsynth`` (and the command's start) stays light
_LAZY = {"KnowledgeGraph": "kgsynth.kg", "Shape": "kgsynth.queries", "Subgraph": "kgsynth.queries",
         "enumerate_subgraphs": "kgsynth.queries", "sample_subgraphs": "kgsynth.queries"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'kgsynth' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value

__all__ = [
    "KgsynthError",
    "KnowledgeGraph",
    "Shape",
    "Subgraph",
    "enumerate_subgraphs",
    "sample_subgraphs",
    "__version__",
]
