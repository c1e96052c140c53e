"""``localeval models add``: register the user's own GGUF judge, embedder or checker folder.

The model is described (GGUF metadata, or the embedder's config), every file
is hashed and recorded in the lock, and the entry is written to
``models/local.toml``; the shipped ``manifest.toml`` is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from localeval.catalog.entry import ManifestError, ModelEntry
from localeval.catalog.gguf import check_gguf, gguf_summary
from localeval.catalog.hashing import file_sha256
from localeval.catalog.manifest import MANIFEST_NAME, Manifest, entries_to_toml, load_manifest, manifest_paths
from localeval.catalog.progress import HashProgress
from localeval.catalog.resolve import load_lock, load_models, models_dir_default
from localeval.catalog.walk import loop_guard
from localeval.errors import ModelError, OutputError, UsageError, os_reason, printable
from localeval.output import atomic_file, make_folder, move_into_place

__all__ = ["add_model"]

_EMBEDDER_MARKERS = ("config.json", "modules.json", "config_sentence_transformers.json")
_SKIP_DIRS = {"onnx", "openvino", ".git", ".cache", "__pycache__"}


def _embedder_files(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if not p.is_file() or rel.parts[0] in _SKIP_DIRS or any(
                part.startswith(".") for part in rel.parts):
            continue
        out.append(p)
    return out


def _embedder_summary(root: Path) -> dict[str, Any]:
    info: dict[str, Any] = {}
    try:
        cfg = json.loads((root / "config.json").read_text("utf-8"))
        info["architecture"] = str(cfg.get("model_type", ""))
        if cfg.get("max_position_embeddings"):
            info["context_length"] = int(cfg["max_position_embeddings"])
    except (OSError, ValueError):
        pass
    try:
        st = json.loads((root / "sentence_bert_config.json").read_text("utf-8"))
        if st.get("max_seq_length"):
            info["context_length"] = int(st["max_seq_length"])
    except (OSError, ValueError):
        pass
    return info


#: The ends of a ``config.json`` architecture that make a folder a checker (a classifier or
#: an encoder-decoder read for a verdict), not an embedder: ``localeval.checker`` reads them.
_CHECKER_ARCHS = ("ForSequenceClassification", "ForTokenClassification",
                  "ForConditionalGeneration")


def _is_checker(root: Path) -> bool:
    """Whether a model folder is a checker: no sentence-transformers files, and a config whose
    architecture is a classifier (``localeval.checker`` decides the rest when it loads)."""
    if (root / "modules.json").is_file() or (root / "config_sentence_transformers.json").is_file():
        return False
    try:
        archs = json.loads((root / "config.json").read_text("utf-8")).get("architectures")
    except (OSError, ValueError, AttributeError):
        return False
    return bool(archs) and isinstance(archs[0], str) and archs[0].endswith(_CHECKER_ARCHS)


def _unique_name(manifest: Manifest, wanted: str) -> None:
    clash = manifest.find(wanted)
    if clash is not None and clash.source == "shipped":
        raise UsageError(f"the name '{wanted}' belongs to the shipped model '{clash.name}'; "
                         "choose another with --name")


def _copy_into(src: Path, target: Path) -> Path:
    """Copy the model (a GGUF file or an embedder folder) to ``target``; returns ``target``.

    The copy is made under a hidden temporary name beside ``target`` and renamed into place
    only when whole, so a failed or interrupted copy (a full disk, Ctrl-C) never leaves half
    a model that ``models list`` would show; the partial copy is removed and a fault is an
    OutputError naming the file (exit 2). shutil copies: gigabytes of bytes, and a folder's
    tree, which the output policy's text writers are not for.
    """
    make_folder(target.parent, option="--models-dir")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if src.is_file():
            shutil.copy2(src, tmp)
        else:
            shutil.copytree(src, tmp, ignore=loop_guard())  # each real folder once
    except BaseException as e:
        with contextlib.suppress(OSError):
            if tmp.is_dir():
                shutil.rmtree(tmp)
            else:
                tmp.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise _copy_fault(e, src, tmp, target) from None
        raise
    return move_into_place(tmp, target, then="nothing was added")


def _copy_fault(err: OSError, src: Path, tmp: Path, target: Path) -> OutputError:
    """One message for a failed copy, naming the file it failed on (the temporary name shown
    as the target's)."""
    where: object = err.filename or tmp
    reason = os_reason(err)
    if isinstance(err, shutil.Error) and err.args and isinstance(err.args[0], list) \
            and err.args[0]:  # copytree: a list of (source, destination, reason)
        _, where, reason = err.args[0][0]
    shown = Path(str(where))
    if shown == tmp or shown.is_relative_to(tmp):
        shown = target / shown.relative_to(tmp)
    return OutputError(f"cannot copy {printable(str(src))} to {printable(str(target))}: "
                       f"{printable(str(shown))}: {printable(reason)}; nothing was added "
                       "(the partial copy was removed)")


def add_model(path: Path | str, name: str | None = None, *, copy: bool = False,
              models_dir: Path | str | None = None, progress: bool | None = None,
              inspect_checker: Callable[[Path], dict[str, Any]] | None = None
              ) -> ModelEntry:
    """Register a GGUF judge, an embedder folder or a checker folder in ``models/local.toml``.

    Reads the GGUF's metadata (or the folder's config), hashes every file,
    records the hashes in the lock, and never touches ``manifest.toml``.
    Without ``copy`` nothing is copied: the entry points at ``path``.
    ``inspect_checker`` (the command line passes ``localeval.checker``'s, a higher
    layer) checks a checker folder's architecture and label map before anything is
    recorded, raising ``ModelError`` naming the folder, and returns its facts.
    """
    mdir = Path(models_dir) if models_dir else models_dir_default()
    src = Path(path).expanduser()
    if not src.exists():
        raise ModelError(f"{src}: no such file or folder")
    manifest = load_models(mdir)
    shipped_path, local_path = manifest_paths(mdir)
    local = [e for e in manifest if e.source == "local"]
    is_judge = src.is_file()
    if is_judge:
        check_gguf(src)
        meta = gguf_summary(src)
        default_name = src.stem
    else:
        if not any((src / m).is_file() for m in _EMBEDDER_MARKERS):
            raise ModelError(f"{src}: not a model folder (no config.json or modules.json); "
                             "pass a GGUF file or a sentence-transformers folder")
        meta = _embedder_summary(src)
        if _is_checker(src):
            meta = {**meta, "kind": "checker", **(inspect_checker(src) if inspect_checker
                                                   else {})}
        default_name = src.name
    name = (name or default_name).strip()
    if not name:
        raise UsageError("the model name is empty; pass --name")
    _unique_name(manifest, name)

    target = mdir / src.name
    if copy and src.absolute() != target.absolute():
        if target.exists():
            raise ModelError(f"{target} already exists; remove it or add without --copy")
        src = _copy_into(src, target)
    inside = src.absolute().parent == mdir.absolute()

    files = [src] if is_judge else _embedder_files(src)
    lock = load_lock(mdir)
    bar = HashProgress(sum(p.stat().st_size for p in files), "hashing", progress)
    digests: dict[Path, str] = {}
    try:
        for p in files:
            bar.describe(p.name)
            digests[p] = file_sha256(p, on_progress=bar.advance, fresh=True)
    finally:
        bar.close()
    entry = ModelEntry(name=name, kind="judge" if is_judge else meta.get("kind", "embedder"),
                       file=src.name,
                       path="" if inside else str(src.absolute()), source="local",
                       added_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       size_approx=False)
    if is_judge:
        entry.sha256 = digests[src]
        entry.size_bytes = src.stat().st_size
        entry.architecture = meta["architecture"]
        entry.parameters = meta["parameters"]
        entry.quantisation = meta["quantisation"]
        entry.context_length = meta["context_length"]
        entry.chat_template = meta["has_chat_template"]
        entry.note = ("chat template embedded in the GGUF" if meta["has_chat_template"] else
                      "no chat template in the GGUF: pass --chat-format when judging")
    else:
        entry.files = [{"path": p.relative_to(src).as_posix(), "size_bytes": p.stat().st_size,
                        "size_approx": False, "sha256": digests[p]} for p in files]
        entry.size_bytes = sum(p.stat().st_size for p in files)
        entry.architecture = meta.get("architecture", "")
        entry.context_length = meta.get("context_length")
        entry.note = meta.get("note", "")
    for p in files:
        lock.record(p, mdir, name=name, sha256=digests[p], how="add", matches_manifest=True)
    kept = [e for e in local if e.name.lower() != name.lower()]
    kept.append(entry)
    header = ("Your own models, registered with `localeval models add`. localeval reads this\n"
              f"after {MANIFEST_NAME}; edit or delete entries freely.")
    try:
        load_check = entries_to_toml(kept, header)
        make_folder(local_path.parent, option="--models-dir")
        with atomic_file(local_path) as f:  # LOCAL.tmp, renamed once read back
            f.write(load_check)
            f.flush()
            load_manifest(mdir, shipped=shipped_path, local=Path(f.name))  # refuse to write
            # what we cannot read; the temporary file goes with the error
    except ManifestError as e:
        raise ModelError(f"could not write {local_path}: {e}") from None
    lock.save()
    return entry
