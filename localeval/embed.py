"""Embedders: texts in, L2-normalised float32 matrix out.

(Protocol only for now; the sentence-transformers implementation, model
resolution and the caching wrapper are added by the embeddings work.)
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    #: Stable identity of the model (hash of its files) and settings.
    fingerprint: str
    name: str
    #: True for English-only models; the runner warns on CJK data.
    english_only: bool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 matrix with unit-norm rows."""
        ...
