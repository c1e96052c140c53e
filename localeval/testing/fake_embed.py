"""A deterministic embedder with no model, for unit tests of metric arithmetic.

Character trigrams (lower-cased, with the text padded by spaces)
are hashed into ``dim`` signed buckets (the "hashing trick"), and the
vector is L2-normalised. Strings sharing many n-grams therefore get a high
cosine, unrelated strings one near 0, and identical strings exactly 1.0,
which is all metric tests need; it loads in microseconds and never changes
between runs or machines (crc32, not Python's salted ``hash``).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

__all__ = ["HashEmbedder"]


class HashEmbedder:
    """Implements ``localeval.embed.Embedder`` without any model file."""

    english_only = False

    def __init__(self, dim: int = 64, ngrams: tuple[int, ...] = (3,)) -> None:
        if dim < 2:
            raise ValueError("dim must be >= 2")
        self.dim = dim
        self.ngrams = ngrams
        self.name = f"hash-{dim}"
        self.fingerprint = f"hash-{dim}"
        self.model_calls = 0
        self.texts_encoded = 0

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        padded = f" {(text or ' ').lower()} "
        for n in self.ngrams:
            for i in range(len(padded) - n + 1):
                h = zlib.crc32(f"{n}:{padded[i:i + n]}".encode())
                vec[h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        if not vec.any():  # every bucket cancelled out: any fixed unit vector will do
            vec[0] = 1.0
        vec = vec.astype(np.float32)
        return vec / np.linalg.norm(vec)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.model_calls += 1
        self.texts_encoded += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])
