"""``load_embedder``: a user's ``--embedder`` value (or an embedder object) to a cached embedder.

The one entry point the runner uses: it resolves the value to a local
folder (``catalog.locate_model``), loads it with sentence-transformers and
wraps it in ``CachedEmbedder``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from localeval.embed.base import Embedder
from localeval.embed.cached import CachedEmbedder
from localeval.embed.sentence_transformer import SentenceTransformerEmbedder

if TYPE_CHECKING:  # pragma: no cover
    from localeval.cache import Cache

__all__ = ["load_embedder"]


def load_embedder(spec: str | os.PathLike[str] | Embedder | None = None, *,
                  device: str = "auto", batch_size: int = 64,
                  models_dir: str | os.PathLike[str] | None = None,
                  cache: Cache | None = None) -> CachedEmbedder:
    """Resolve ``spec`` (see ``catalog.locate_model``), load it and wrap it in a cache.

    An embedder object (for example ``HashEmbedder``) is wrapped as is. With
    ``cache=None`` vectors are cached in memory only.
    """
    if isinstance(spec, CachedEmbedder):
        return spec
    if spec is not None and not isinstance(spec, (str, os.PathLike)):
        if not isinstance(spec, Embedder):
            raise TypeError(f"not an embedder: {spec!r}")
        return CachedEmbedder(spec, cache)
    inner = SentenceTransformerEmbedder(spec, device=device, batch_size=batch_size,
                                        models_dir=models_dir)
    return CachedEmbedder(inner, cache)
