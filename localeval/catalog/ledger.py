"""The hash ledger, ``models/models.lock.json``: what each model file hashed to, and when.

Every file that was fetched, verified or added gets a record of its sha256,
size and mtime, so ``models list`` can say "verified" without re-hashing
gigabytes (a file whose size or mtime changed is no longer trusted), and a
file without a published hash is checked later against the hash recorded
when it was downloaded.

Standard library only (``localeval.output``, its writer, is too):
``scripts/fetch_models.py`` writes this file on a connected machine where
localeval's dependencies need not be installed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from localeval.catalog.entry import ManifestError
from localeval.output import make_folder, write_text

__all__ = ["Lock", "LockRecord", "LOCK_NAME"]

LOCK_NAME = "models.lock.json"


@dataclass
class LockRecord:
    """What was true of one file when it was last hashed."""

    name: str
    file: str
    sha256: str
    size: int
    mtime_ns: int
    recorded_at: str
    how: str                           # "fetch", "verify" or "add"
    matches_manifest: bool | None      # None: the manifest had no hash to compare with
    url: str = ""
    fetched_at: str = ""               # set by `models fetch`, kept by later verifies

    def still_valid(self, path: Path) -> bool:
        """The file has the size and mtime it had when hashed (so the hash still holds)."""
        try:
            st = path.stat()
        except OSError:
            return False
        return st.st_size == self.size and st.st_mtime_ns == self.mtime_ns


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Lock:
    """``models/models.lock.json``: one record per file, keyed by its path in models/."""

    VERSION = 1

    def __init__(self, path: Path, records: dict[str, LockRecord] | None = None) -> None:
        self.path = Path(path)
        self.records: dict[str, LockRecord] = records or {}

    @classmethod
    def load(cls, models_dir: Path) -> "Lock":
        path = Path(models_dir) / LOCK_NAME
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text("utf-8"))
            raw = data["files"]
            records = {k: LockRecord(**v) for k, v in raw.items()}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ManifestError(f"{path}: unreadable lock file ({e}); delete it and run "
                                "'localeval models verify' to rebuild it") from None
        return cls(path, records)

    def save(self) -> None:
        """Replace the lock file atomically; a fault is an OutputError naming it (exit 2)."""
        make_folder(self.path.parent, option="--models-dir")
        data = {"version": self.VERSION,
                "files": {k: vars(r) for k, r in sorted(self.records.items())}}
        write_text(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    @staticmethod
    def key(path: Path, models_dir: Path) -> str:
        """Path relative to models/ (posix), or absolute for files kept elsewhere."""
        path = Path(path).absolute()
        try:
            return path.relative_to(Path(models_dir).absolute()).as_posix()
        except ValueError:
            return path.as_posix()

    def get(self, path: Path, models_dir: Path) -> LockRecord | None:
        return self.records.get(self.key(path, models_dir))

    def valid(self, path: Path, models_dir: Path) -> LockRecord | None:
        """The record for ``path`` if the file is unchanged since it was hashed."""
        rec = self.get(path, models_dir)
        return rec if rec is not None and rec.still_valid(path) else None

    def record(self, path: Path, models_dir: Path, *, name: str, sha256: str, how: str,
               matches_manifest: bool | None, url: str = "", fetched_at: str = "") -> LockRecord:
        st = Path(path).stat()
        key = self.key(path, models_dir)
        now = _now()
        rec = LockRecord(name=name, file=key, sha256=sha256, size=st.st_size,
                         mtime_ns=st.st_mtime_ns, recorded_at=now, how=how,
                         matches_manifest=matches_manifest, url=url,
                         fetched_at=fetched_at or (now if how == "fetch" else ""))
        self.records[key] = rec
        return rec

    def forget(self, path: Path, models_dir: Path) -> None:
        self.records.pop(self.key(path, models_dir), None)
