"""Persistent store of judge calls and embeddings (SQLite in WAL mode).

Every finished judge call is committed at once, so a run killed at any point
and started again repeats no finished call. Embeddings are keyed by
(embedder fingerprint, sha256 of the text) so no text is embedded twice.
SQLite is the right tool here: one file, safe across processes, no server.

The cache is only ever a saving, never a source of truth, so damage is
recovered from rather than fatal: a file SQLite calls corrupt (truncated,
garbage header or pages) or with foreign tables is moved aside under a new
name, with a warning, and a fresh cache takes its place; a single entry that
cannot be read (value not a JSON object, embedding blob of the wrong length,
all zeros or not finite) is a miss that is recomputed and overwritten. What
cannot be recovered from (the file cannot be opened or written, stays locked)
is one ``CacheError`` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

import numpy as np

from localeval.config import env_text
from localeval.errors import CacheDamaged, CacheError, LocalevalError, UsageError, os_reason, printable

__all__ = ["Cache", "CacheError", "default_cache_path", "text_key", "judge_label"]

T = TypeVar("T")


#: What a user may write meaning "no cache"; as a file name it would be a surprise file.
_OFF_WORDS = frozenset({"0", "off", "false", "no", "none", "disable", "disabled"})


def default_cache_path() -> Path:
    """``$LOCALEVAL_CACHE`` if set, else ``~/.cache/localeval/cache.sqlite``.

    The variable names a file; ``LOCALEVAL_CACHE=off`` (or 0, false, none...) is
    refused with the ways to switch the cache off, rather than creating a cache file
    called ``off`` in the working folder.
    """
    env = env_text("LOCALEVAL_CACHE")
    if env and env.strip().lower() in _OFF_WORDS:
        raise UsageError(f"LOCALEVAL_CACHE='{printable(env)}' names the cache file, it cannot "
                         "switch the cache off: use --no-cache (localeval run, diff, judge "
                         "check) or cache=False from Python, or give LOCALEVAL_CACHE a file path")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "localeval" / "cache.sqlite"


def text_key(*parts: str | Iterable[str]) -> str:
    """sha256 of the texts (``output.hash_bytes``), each ended by NUL; a part may be pieces."""
    h = hashlib.sha256()
    for p in parts:
        for piece in (p,) if isinstance(p, str) else p:
            h.update(piece.encode("utf-8", "surrogatepass"))  # output.hash_bytes: one rule
        h.update(b"\x00")
    return h.hexdigest()


def judge_label(name: str, fingerprint: str) -> str:
    """How an entry names its judge: ``NAME@FP`` (FP: the fingerprint's first 12 digits).

    The fingerprint (the model file's sha256 and every setting that changes an answer) is
    what the keys are made of, so ``--judge demo``, the same file by its path or a copy
    under another name share their entries; ``stats`` counts a judge once by it, under
    the name it was last used with. A judge's calls and its judge check results both
    write this label.
    """
    return f"{name}@{fingerprint[:12]}"


_HEX = frozenset("0123456789abcdef")


def _judge_identity(label: str) -> str:
    """The fingerprint part of a judge label (entries of earlier versions: a bare name, or
    the judge check's bare 64-digit fingerprint), by which ``stats`` counts judges."""
    head, sep, tail = label.rpartition("@")
    if sep and len(tail) == 12 and set(tail) <= _HEX:
        return tail
    if len(label) == 64 and set(label) <= _HEX:
        return label[:12]
    return label


_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_calls (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    step TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now'))
);
CREATE TABLE IF NOT EXISTS embeddings (
    embedder TEXT NOT NULL,
    key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (embedder, key)
);
"""
#: The columns each table must have; anything else is a foreign or damaged file.
_COLUMNS = {"judge_calls": {"key", "judge", "step", "value"},
            "embeddings": {"embedder", "key", "dim", "vector"}}


def _is_damage(e: sqlite3.DatabaseError) -> bool:
    """SQLITE_CORRUPT / SQLITE_NOTADB (any extended code): the file, not the situation."""
    name = getattr(e, "sqlite_errorname", "") or ""
    text = str(e).lower()
    return (name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
            or "malformed" in text or "not a database" in text)


def _is_missing_table(e: sqlite3.DatabaseError) -> bool:
    """A table of the schema is gone (dropped by hand or by another tool while open)."""
    return isinstance(e, sqlite3.OperationalError) and "no such table" in str(e).lower()


def _say(msg: str) -> None:
    # The cache sits below every caller that has a warning hook; a recovery is rare
    # and the user must see it, so it goes straight to stderr (printable: it names a file).
    print(printable(f"localeval: warning: {msg}"), file=sys.stderr)


class Cache:
    """A thread-safe handle on one SQLite cache file (recovers from a damaged one)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 on_warning: Callable[[str], None] | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self.warn = on_warning or _say
        #: Files moved aside because they were damaged, and entries ignored as unreadable.
        self.set_aside: list[Path] = []
        self.bad_entries = 0
        if self.path.is_dir():
            raise UsageError(f"cache {self.path} is a directory; pass a file path "
                             "(e.g. --cache DIR/cache.sqlite) or --no-cache")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            blocker = next((p for p in (self.path.parent, *self.path.parent.parents)
                            if p.is_file()), None)
            why = f"{blocker} is a file" if blocker is not None else os_reason(e)
            raise UsageError(f"cannot create the folder of the cache file {self.path}: {why}; "
                             "pass --cache PATH or --no-cache") from None
        self._lock = threading.Lock()
        self._recreated = False  # a dropped table was recreated (said once)
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None
        with self._lock:
            self._open()

    # -- opening, damage and recovery ---------------------------------------------------
    def _open(self) -> None:
        """Connect and check the schema; a damaged file is moved aside once."""
        for attempt in range(2):
            try:
                self._connect()
                return
            except (CacheDamaged, sqlite3.DatabaseError) as e:
                if isinstance(e, sqlite3.DatabaseError) and not _is_damage(e):
                    self._close_db()
                    raise self._fatal(e) from None
                if attempt:
                    raise CacheError(f"cache {self.path} is still unusable after moving the "
                                     f"damaged file aside ({e})") from None
                self._move_aside(str(e))

    def _connect(self) -> None:
        db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False,
                             isolation_level=None)
        self._db = db
        # Text that is not UTF-8 (a damaged or foreign row) must read as a bad entry,
        # not raise from inside sqlite3.
        db.text_factory = lambda b: b.decode("utf-8", "replace")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        for table, want in _COLUMNS.items():
            have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if not want <= have:
                raise CacheDamaged(f"table {table} has columns {sorted(have)}, not {sorted(want)}")
        try:
            self._inode = os.stat(self.path).st_ino
        except OSError:
            self._inode = None

    def _close_db(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None

    def _fatal(self, e: sqlite3.Error) -> LocalevalError:
        name = getattr(e, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
            return UsageError(f"cannot write the cache file {self.path} ({e}); pass "
                              "--cache PATH or --no-cache")
        return CacheError(f"cache {self.path}: {e}")

    def _move_aside(self, why: str) -> None:
        """Rename the damaged file (and its -wal/-shm) to ``NAME.damaged-TIME``."""
        self._close_db()
        try:
            same = self._inode is None or os.stat(self.path).st_ino == self._inode
        except OSError:
            same = False  # already gone: another process moved it aside
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
                                    f"-{os.getpid()}")
        if same and self.path.exists():
            try:
                for suffix in ("", "-wal", "-shm"):
                    src = Path(str(self.path) + suffix)
                    if src.exists():
                        os.replace(src, Path(str(aside) + suffix))
            except OSError as e:
                raise CacheError(f"cache {self.path} is damaged ({why}) and could not be moved "
                                 f"aside ({os_reason(e)}); delete it or pass --no-cache"
                                 ) from None
            self.set_aside.append(aside)
            self.warn(f"cache {self.path} is damaged ({why}); moved it to {aside.name} and "
                      "started a new cache (its calls will be recomputed)")
        self._inode = None

    def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``op`` under the lock; on damage move the file aside and run it once more."""
        with self._lock:
            if self._db is None:
                raise CacheError(f"cache {self.path} is closed")
            try:
                return op(self._db)
            except sqlite3.DatabaseError as e:
                if _is_missing_table(e):
                    self._recreate_tables(str(e))
                elif not _is_damage(e):
                    raise self._fatal(e) from None
                else:
                    self._move_aside(str(e))
                    self._open()
                try:
                    return op(self._db)
                except sqlite3.DatabaseError as e2:
                    raise self._fatal(e2) from None

    def _recreate_tables(self, why: str) -> None:
        """Create the schema's missing tables again (their entries are gone: recomputed)."""
        assert self._db is not None
        try:
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as e:
            raise self._fatal(e) from None
        if not self._recreated:
            self._recreated = True
            self.warn(f"cache {self.path}: a table was removed while in use ({why}); recreated "
                      "it, and its calls will be recomputed (further ones are not said)")

    def _bad_entry(self, what: str) -> None:
        self.bad_entries += 1
        if self.bad_entries == 1:
            self.warn(f"cache {self.path}: ignoring an unreadable {what}; it is recomputed "
                      "and overwritten (further ones are counted silently)")

    # -- judge calls -------------------------------------------------------
    def get_call(self, key: str) -> dict[str, Any] | None:
        """The stored value for ``key``; None when absent or unreadable (then a miss)."""
        row = self._run(lambda db: db.execute("SELECT value FROM judge_calls WHERE key=?",
                                              (key,)).fetchone())
        if row is None:
            return None
        try:
            value = json.loads(row[0]) if isinstance(row[0], (str, bytes)) else None
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            self._bad_entry("judge call")
            return None
        return value

    def put_call(self, key: str, judge: str, step: str, value: dict[str, Any]) -> None:
        blob = json.dumps(value, ensure_ascii=False)
        self._run(lambda db: db.execute(
            "INSERT OR REPLACE INTO judge_calls(key, judge, step, value) VALUES (?,?,?,?)",
            (key, judge, step, blob)))

    # -- embeddings --------------------------------------------------------
    def get_vectors(self, embedder: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """Stored unit vectors by key; damaged ones (wrong length, zero, not finite) left out."""
        keys = list(keys)

        def read(db: sqlite3.Connection) -> list[tuple[Any, Any, Any]]:
            rows: list[tuple[Any, Any, Any]] = []
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                q = ",".join("?" * len(chunk))
                rows += db.execute(
                    f"SELECT key, dim, vector FROM embeddings WHERE embedder=? AND key IN ({q})",
                    (embedder, *chunk)).fetchall()
            return rows

        out: dict[str, np.ndarray] = {}
        for k, dim, blob in self._run(read):
            vec = _vector(dim, blob)
            if vec is None:
                self._bad_entry("embedding")
            else:
                out[k] = vec
        return out

    def put_vectors(self, embedder: str, items: dict[str, np.ndarray]) -> None:
        rows = [(embedder, k, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                for k, v in items.items()]

        def write(db: sqlite3.Connection) -> None:
            db.execute("BEGIN")
            try:
                db.executemany("INSERT OR REPLACE INTO embeddings(embedder, key, dim, vector) "
                               "VALUES (?,?,?,?)", rows)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        self._run(write)

    # -- maintenance -------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        def count(db: sqlite3.Connection) -> tuple[int, list[Any], int]:
            calls = db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0]
            by_judge = db.execute(
                "SELECT judge, COUNT(*) FROM judge_calls GROUP BY judge ORDER BY 2 DESC"
            ).fetchall()
            return calls, by_judge, db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]

        calls, by_judge, vecs = self._run(count)
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*")
                   if ".damaged-" not in p.name)
        return {
            "path": str(self.path),
            "judge_calls": calls,
            "judges": _by_identity(by_judge),
            "embeddings": vecs,
            "bytes": size,
        }

    def clear(self) -> None:
        def wipe(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM judge_calls")
            db.execute("DELETE FROM embeddings")
            db.execute("VACUUM")

        self._run(wipe)

    def close(self) -> None:
        with self._lock:
            self._close_db()


def _by_identity(by_judge: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Entries per judge, one judge per fingerprint, shown as ``NAME@FP`` (a named label of
    it when there is one), most entries first."""
    counts: dict[str, int] = {}
    shown: dict[str, str] = {}
    for label, n in by_judge:
        ident = _judge_identity(str(label))
        counts[ident] = counts.get(ident, 0) + int(n)
        if ident not in shown or (shown[ident] == ident and "@" in str(label)):
            shown[ident] = str(label)
    return {shown[i]: n for i, n in sorted(counts.items(), key=lambda kv: -kv[1])}


def _vector(dim: Any, blob: Any) -> np.ndarray | None:
    """The float32 unit vector in ``blob``, or None when the entry is damaged.

    Stored vectors are unit-norm (``embed.normalise_rows``): a short blob, an
    all-zero or non-finite one would otherwise become a silent 0.0 score.
    """
    if not isinstance(dim, int) or dim <= 0 or not isinstance(blob, bytes) \
            or len(blob) != 4 * dim:
        return None
    vec = np.frombuffer(blob, dtype=np.float32).copy()
    if not np.isfinite(vec).all():
        return None
    norm = float(np.linalg.norm(vec))
    return vec if abs(norm - 1.0) < 1e-2 else None
