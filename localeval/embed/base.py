"""The embedder protocol, and the two rules every embedder follows.

An embedder takes texts and returns an L2-normalised float32 matrix, one row
per text, so a dot product is the cosine. ``prep_text`` and
``normalise_rows`` are those rules, shared by the sentence-transformers
embedder and the cache wrapper so cached and fresh vectors agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "prep_text", "normalise_rows"]


@runtime_checkable
class Embedder(Protocol):
    """What the metrics need of an embedding model (``HashEmbedder`` in tests, or a real one)."""

    #: Stable identity of the model (hash of its files) and settings.
    fingerprint: str
    name: str
    #: True for English-only models; the runner warns on CJK data.
    english_only: bool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 matrix with unit-norm rows."""
        ...


def prep_text(text: str) -> str:
    """The text as embedded: a string, with the empty string as " "."""
    # The empty string is embedded as " " (as ragas does), so
    # every text has a defined, non-degenerate vector.
    if not isinstance(text, str):
        raise TypeError(f"embed() takes strings, got {type(text).__name__}")
    return text if text else " "


def normalise_rows(mat: np.ndarray) -> np.ndarray:
    """float32 copy with unit-norm rows (re-done in float32 after fp16 inference)."""
    out = np.asarray(mat, dtype=np.float32).copy()
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out

