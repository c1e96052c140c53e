"""An embedder folder's identity: its manifest entry and the digest of its files.

The folder itself comes from ``catalog.locate_model`` (the one path from a
``--judge`` / ``--embedder`` spec to a file). ``model_files_digest`` hashes the
files that decide a model's output, through the catalog's memoised file hash.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from localeval.catalog import files_digest, load_models, model_files
from localeval.errors import ModelError

__all__ = ["manifest_entry", "model_files_digest"]

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
    """The weight and config files, through the catalog's walk (links followed, each real
    folder once, so a link loop in the folder ends)."""
    return model_files(root, skip_dir=lambda d: d.startswith(".") or d in _SKIPPED_DIRS,
                       keep_file=lambda f: not f.startswith(".")
                       and Path(f).suffix.lower() in _HASHED_SUFFIXES)


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
    return files_digest(root, files)
