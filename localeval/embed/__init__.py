"""Local embeddings: the embedder protocol, sentence-transformers loading with
no hub access, the vector cache and the language check.

Modules: ``base`` (the protocol), ``resolve`` (a model folder's manifest entry
and its files' digest; the folder comes from ``catalog.locate_model``), ``offline`` (the no-Hub guards),
``sentence_transformer`` (the model and its device), ``cached``
(``CachedEmbedder``), ``load`` (``load_embedder``), ``language`` (the
English-only check).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "CachedEmbedder": ".cached",
    "SentenceTransformerEmbedder": ".sentence_transformer",
    "load_embedder": ".load",
    "prep_text": ".base",
    "warn_if_language_mismatch": ".language",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
