"""The model catalog: the models manifest and lock file, resolving a judge or
embedder name to a file, verifying and adding models, GGUF headers, and the
one memoised file hash.

Modules: ``entry`` (one model and its checks), ``manifest`` (manifest.toml /
local.toml), ``ledger`` (models.lock.json, the hash ledger), ``hashing`` (file sha256 and its
memo), ``resolve`` (a manifest name to its file, placement hint), ``locate`` (any
``--judge`` / ``--embedder`` spec to its file: the one path for both kinds), ``status`` / ``verify`` /
``add`` / ``fetch`` (``models list|verify|add|fetch``; ``fetch`` is the only module
that downloads), ``args`` (the command's arguments), ``command`` (running it), ``gguf``,
``walk`` (the one walk over a model folder, ending on symbolic link loops).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "check_gguf": ".gguf",
    "file_sha256": ".hashing",
    "files_digest": ".hashing",
    "hash_memo_path": ".hashing",
    "add_models_arguments": ".args",
    "load_models": ".resolve",
    "models_dir_default": ".resolve",
    "models_main": ".command",
    "run_models": ".command",
    "read_gguf_metadata": ".gguf",
    "manifest_model_path": ".resolve",
    "DEFAULT_EMBEDDER": ".locate",
    "default_model_path": ".locate",
    "is_default_spec": ".locate",
    "locate_model": ".locate",
    "model_files": ".walk",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
