"""Persistent store of judge calls and embeddings (SQLite in WAL mode).

Every finished judge call is committed at once, so a run killed at any point
and started again repeats no finished call. Embeddings are keyed by
(embedder fingerprint, sha256 of the text) so no text is embedded twice.
SQLite is the right tool here: one file, safe across processes, no server.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable

import numpy as np

__all__ = ["Cache", "default_cache_path", "text_key"]


def default_cache_path() -> Path:
    """``$LOCALEVAL_CACHE`` if set, else ``~/.cache/localeval/cache.sqlite``."""
    env = os.environ.get("LOCALEVAL_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "localeval" / "cache.sqlite"


def text_key(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


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


class Cache:
    """A thread-safe handle on one SQLite cache file."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False,
                                   isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    # -- judge calls -------------------------------------------------------
    def get_call(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM judge_calls WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_call(self, key: str, judge: str, step: str, value: dict[str, Any]) -> None:
        blob = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO judge_calls(key, judge, step, value) VALUES (?,?,?,?)",
                (key, judge, step, blob),
            )

    # -- embeddings --------------------------------------------------------
    def get_vectors(self, embedder: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        keys = list(keys)
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                q = ",".join("?" * len(chunk))
                for k, dim, blob in self._db.execute(
                    f"SELECT key, dim, vector FROM embeddings WHERE embedder=? AND key IN ({q})",
                    (embedder, *chunk),
                ):
                    out[k] = np.frombuffer(blob, dtype=np.float32, count=dim).copy()
        return out

    def put_vectors(self, embedder: str, items: dict[str, np.ndarray]) -> None:
        rows = [(embedder, k, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                for k, v in items.items()]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings(embedder, key, dim, vector) VALUES (?,?,?,?)",
                rows,
            )
            self._db.execute("COMMIT")

    # -- maintenance -------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        with self._lock:
            calls = self._db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0]
            by_judge = self._db.execute(
                "SELECT judge, COUNT(*) FROM judge_calls GROUP BY judge ORDER BY 2 DESC"
            ).fetchall()
            vecs = self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*"))
        return {
            "path": str(self.path),
            "judge_calls": calls,
            "judges": {j: n for j, n in by_judge},
            "embeddings": vecs,
            "bytes": size,
        }

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM judge_calls")
            self._db.execute("DELETE FROM embeddings")
            self._db.execute("VACUUM")

    def close(self) -> None:
        with self._lock:
            self._db.close()
