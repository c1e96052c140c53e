"""The model catalog: the models manifest and lock file, resolving a judge or
embedder name to a file, verifying and adding models, GGUF headers, and the
one memoised file hash.

Modules: ``entry`` (one model and its checks), ``manifest`` (manifest.toml /
local.toml), ``lock`` (models.lock.json), ``hashing`` (file sha256 and its
memo), ``resolve`` (name to file, placement hint), ``status`` / ``verify`` /
``add`` (``models list|verify|add``), ``command`` (their arguments), ``gguf``.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "check_gguf": ".gguf",
    "file_sha256": ".hashing",
    "hash_memo_path": ".hashing",
    "load_models": ".resolve",
    "models_main": ".command",
    "read_gguf_metadata": ".gguf",
    "resolve_model": ".resolve",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
