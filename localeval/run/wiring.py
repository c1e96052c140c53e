"""Model wiring: building the judge, embedder and cache a run uses from what a caller named.

A judge or embedder may be given as an object, a path, a name, a URL, None
(the configured or default one) or False (none). Every entry point that
scores (``evaluate``, worker processes, Ray actors, the RAGAS-style metric
objects) builds them here, so all of them load and cache models the same way. The
file a name or path stands for is found by ``catalog.locate_model``, for both kinds.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from localeval.judge import Judge

__all__ = ["open_cache", "build_judge", "build_embedder", "choose_embedder"]


def build_judge(judge: Any, cache: Any, options: dict[str, Any] | None = None) -> Judge | None:
    """The judge to ask, wrapped in the cache when there is one; None when there is no judge.

    ``judge``: a Judge, a GGUF path, an ``http(s)://`` URL, None (the single
    GGUF in ``models/`` if any) or False: any spec the judge registry
    (``load_judge``) takes. ``options`` go to ``load_judge``.
    """
    if judge is False:
        return None
    from localeval.judge import load_judge, with_cache

    loaded = load_judge(judge, **(options or {}))
    if loaded is None:
        return None
    return with_cache(loaded, cache) if cache is not None else loaded


def build_embedder(embedder: Any, cache: Any, device: str) -> Any:
    """The embedder to use, with its vectors cached; None when embedding is switched off."""
    if embedder is False:
        return None
    from localeval.embed import CachedEmbedder, load_embedder

    if embedder is None or isinstance(embedder, (str, os.PathLike)):
        return load_embedder(str(embedder) if embedder is not None else None, device=device,
                             cache=cache)
    if not isinstance(embedder, CachedEmbedder):
        embedder = CachedEmbedder(embedder, cache)
    return embedder


def choose_embedder(embedder: Any, texts: Sequence[str | None],
                    load: Callable[[Any], Any]) -> tuple[Any, list[str]]:
    """The embedder every verb that embeds uses (``run``, ``generate``), loaded by ``load``
    (``build_embedder`` with the caller's cache, device and progress), and the notes to say.

    None asks for the default, which for Japanese or Chinese texts is a multilingual model
    when one is installed (``embed.multilingual_default``, said in a note); an English-only
    model on such texts gets the warning of ``embed.warn_if_language_mismatch``.
    """
    notes: list[str] = []
    if embedder is None:  # Japanese or Chinese data: a multilingual default
        from localeval.embed import multilingual_default

        embedder, why = multilingual_default(texts)
        notes.extend([why] if why else [])
    loaded = load(embedder)
    if loaded is not None:
        from localeval.embed import warn_if_language_mismatch

        msg = warn_if_language_mismatch(loaded, texts)
        notes.extend([msg] if msg else [])
    return loaded, notes


def open_cache(cache: Any) -> Any:
    """A ``Cache`` from True (the default file), a path, a ``Cache`` or False (None: no cache)."""
    if cache is False:
        return None
    from localeval.cache import Cache

    if isinstance(cache, Cache):
        return cache
    return Cache(cache if cache not in (None, True) else None)
