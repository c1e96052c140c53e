"""``CachedEmbedder``: embed each distinct text once per embedder fingerprint, ever.

It wraps any embedder: texts are de-duplicated, repeats come from an
in-memory LRU and then from the SQLite cache (keyed by the embedder's
fingerprint and the text's hash), and only what is missing goes to the
model, in one batched call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from localeval.cache import text_key
from localeval.embed.base import Embedder, normalise_rows, prep_text

if TYPE_CHECKING:  # pragma: no cover
    from localeval.cache import Cache

__all__ = ["CachedEmbedder"]


class CachedEmbedder:
    """Embeds each distinct text once per embedder fingerprint, ever.

    Lookups go to an in-memory LRU (bounded by ``max_memory_bytes``), then to
    the SQLite cache; the missing distinct texts are embedded in one call,
    so the model batches them as densely as it can. The runner calls
    ``prefetch`` with every text of a dataset, after which metric calls are
    memory hits. ``hits``/``misses`` count distinct texts per call.
    """

    def __init__(self, inner: Embedder, cache: Cache | None = None, *,
                 max_memory_bytes: int = 256 << 20) -> None:
        self.inner = inner
        self.cache = cache
        self.max_memory_bytes = max_memory_bytes
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.memory_hits = 0
        self.disk_hits = 0

    # Identity is the inner model's: cached and uncached vectors are the same.
    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def english_only(self) -> bool:
        return self.inner.english_only

    @property
    def dim(self) -> int | None:
        return getattr(self.inner, "dim", None)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, hits={self.hits}, misses={self.misses})"

    def _remember(self, key: str, vec: np.ndarray) -> None:
        old = self._memory.pop(key, None)
        if old is not None:
            self._memory_bytes -= old.nbytes
        self._memory[key] = vec
        self._memory_bytes += vec.nbytes
        while self._memory_bytes > self.max_memory_bytes and len(self._memory) > 1:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= dropped.nbytes

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        batch = [prep_text(t) for t in texts]
        if not batch:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        with self._lock:
            position: dict[str, int] = {}
            for t in batch:
                position.setdefault(t, len(position))
            unique = list(position)
            keys = [text_key(t) for t in unique]
            rows: list[np.ndarray | None] = [None] * len(unique)

            todo: list[int] = []
            for i, k in enumerate(keys):
                v = self._memory.get(k)
                if v is None:
                    todo.append(i)
                else:
                    self._memory.move_to_end(k)
                    rows[i] = v
            self.memory_hits += len(unique) - len(todo)

            if todo and self.cache is not None:
                # The cache leaves out damaged vectors (wrong length, zero, not finite);
                # one of another width than the model's is a miss too, not a stack error.
                found = self.cache.get_vectors(self.fingerprint, [keys[i] for i in todo])
                want = self.dim
                still = []
                for i in todo:
                    v = found.get(keys[i])
                    if v is None or (want is not None and v.shape[0] != want):
                        still.append(i)
                    else:
                        rows[i] = v
                        self._remember(keys[i], v)
                self.disk_hits += len(todo) - len(still)
                todo = still

            if todo:
                fresh = normalise_rows(self.inner.embed([unique[i] for i in todo]))
                if fresh.shape[0] != len(todo):
                    raise RuntimeError(f"embedder {self.name} returned {fresh.shape[0]} rows "
                                       f"for {len(todo)} texts")
                new = {}
                for j, i in enumerate(todo):
                    vec = fresh[j].copy()  # own row, so the memory bound counts true bytes
                    rows[i] = vec
                    new[keys[i]] = vec
                    self._remember(keys[i], vec)
                if self.cache is not None:
                    self.cache.put_vectors(self.fingerprint, new)
            self.hits += len(unique) - len(todo)
            self.misses += len(todo)

            mat = np.stack(rows)  # type: ignore[arg-type]  # every row is filled above (cache or model)
        return mat[[position[t] for t in batch]]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed (and cache) every text now, so later ``embed`` calls are hits."""
        self.embed(texts)

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "memory_hits": self.memory_hits,
                "disk_hits": self.disk_hits}
