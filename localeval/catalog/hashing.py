"""The one sha256-of-a-file function, with the one memo every caller shares.

Hashing a 5 GB judge or a 2 GB embedder takes seconds, and every run needs
the hash (it is part of the judge's and the embedder's identity). So a hash
is memoised by (resolved path, size, mtime) in this process and, when the
caller passes a memo file, in a small JSON file shared across runs:
``{"/abs/path": {"size": ..., "mtime_ns": ..., "sha256": ...}}``. A changed
size or mtime invalidates the entry. ``models verify``, ``models add`` and
``scripts/fetch_models.py`` pass ``fresh=True``: a check must read the bytes,
not trust size and mtime.

Standard library only at import time: ``scripts/fetch_models.py`` imports
this on a connected machine where localeval's dependencies need not be
installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from localeval.errors import OutputError
from localeval.output import make_folder, move_into_place, write_text

__all__ = ["CHUNK_BYTES", "MEMO_NAME", "file_sha256", "files_digest", "hash_memo_path"]

#: Hash in 8 MiB chunks: big enough that Python's loop overhead is noise,
#: small enough that a progress bar moves smoothly on multi-GB files.
CHUNK_BYTES = 8 * 1024 * 1024
#: The shared memo's file name, beside the SQLite cache.
MEMO_NAME = "file-hashes.json"

_memo_lock = threading.Lock()
_memo: dict[tuple[str, int, int], str] = {}
_memo_file_lock = threading.Lock()  # one writer of a memo file per process at a time


def hash_memo_path() -> Path:
    """The memo file every caller shares: ``file-hashes.json`` beside the SQLite cache.

    Beside the cache so that a test's private ``$LOCALEVAL_CACHE`` keeps its own memo.
    """
    # Imported here, not at the top: localeval.cache needs numpy, and the fetch
    # script (which never calls this) must import this module with the stdlib only.
    from localeval.cache import default_cache_path

    return default_cache_path().parent / MEMO_NAME


def _read_memo_file(memo_file: Path) -> dict[str, Any]:
    try:
        stored = json.loads(memo_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def _write_memo_file(memo_file: Path, path: str, size: int, mtime_ns: int, digest: str) -> None:
    with _memo_file_lock:
        stored = _read_memo_file(memo_file)  # re-read: another run may have added entries
        stored[path] = {"size": size, "mtime_ns": mtime_ns, "sha256": digest}
        # a name of this process's own: two processes never write one temporary file
        mine = memo_file.with_name(f"{memo_file.name}.{os.getpid()}")
        try:
            make_folder(memo_file.parent)
            write_text(mine, json.dumps(stored, indent=1))
            move_into_place(mine, memo_file)
        except OutputError:
            with contextlib.suppress(OSError):
                mine.unlink(missing_ok=True)
            # the memo is an optimisation; a read-only cache dir is fine


def _hash_bytes(path: Path, size: int, on_progress: Callable[[int], None] | None) -> str:
    h = hashlib.sha256()
    buf = bytearray(min(CHUNK_BYTES, max(size, 1)))  # a small file needs no 8 MiB buffer
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            h.update(view[:n])
            if on_progress:
                on_progress(n)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike[str], memo_file: str | os.PathLike[str] | None = None,
                *, on_progress: Callable[[int], None] | None = None, fresh: bool = False) -> str:
    """sha256 of a (large) file, memoised by (path, size, mtime).

    ``memo_file``: the JSON memo shared across runs (usually ``hash_memo_path()``);
    ``None`` keeps the memo in this process only. ``on_progress(nbytes)`` is
    called after each chunk read. ``fresh=True`` reads the bytes even when a
    memo has the file, and records the result.
    """
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    mf = Path(memo_file) if memo_file is not None else None
    if not fresh:
        with _memo_lock:
            if key in _memo:
                return _memo[key]
        if mf is not None:
            e = _read_memo_file(mf).get(str(p))
            if isinstance(e, dict) and e.get("size") == st.st_size and e.get(
                    "mtime_ns") == st.st_mtime_ns and isinstance(e.get("sha256"), str):
                with _memo_lock:
                    _memo[key] = e["sha256"]
                return e["sha256"]
    digest = _hash_bytes(p, st.st_size, on_progress)
    with _memo_lock:
        _memo[key] = digest
    if mf is not None:
        _write_memo_file(mf, str(p), st.st_size, st.st_mtime_ns, digest)
    return digest


def files_digest(root: str | os.PathLike[str], files: Iterable[Path]) -> str:
    """sha256 over each file's path relative to ``root`` and its ``file_sha256`` (memoised in
    ``hash_memo_path()``): the one digest of a model folder (embedders and checkers); a file
    renamed, added, removed or changed changes it."""
    root = Path(root).resolve()
    memo = hash_memo_path()
    combined = hashlib.sha256()
    for p in files:
        combined.update(f"{p.relative_to(root).as_posix()}\0{file_sha256(p, memo)}\n".encode())
    return combined.hexdigest()
