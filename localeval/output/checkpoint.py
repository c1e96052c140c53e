"""Rows kept line by line under a key, so that an interrupted command loses none.

The one implementation behind ``generate``'s candidates and ``simulate``'s
conversations: a first line ``{"checkpoint": KEY}`` names what the rows were made
for (the settings a command's result depends on), then one JSON row per line,
appended through ``AppendFile`` (on disk before the next; a full disk is an
``OutputError`` naming the file that keeps the lines before). Read back with
``whole_lines``, a last line cut short loses that line alone. Run again with the
same key, the rows are taken back; with another key the file is started afresh,
and the command is told why (``on_note``). What a row is, and which rows are worth
keeping, is the command's business: here a row is a JSON object.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from localeval.errors import os_reason
from localeval.output.files import AppendFile, whole_lines
from localeval.output.policy import OutputPolicy
from localeval.output.text import dumps_strict

__all__ = ["RowCheckpoint"]


class RowCheckpoint:
    """The rows an earlier run of the same key left (``earlier``), and an appender."""

    def __init__(self, path: str | Path, key: Mapping[str, Any], *, policy: OutputPolicy,
                 on_note: Callable[[str], None], settings: str, enabled: bool = True) -> None:
        """``settings`` names what the key holds, for the note when it differs."""
        self.path = Path(path)
        self.key = json.loads(dumps_strict(dict(key)))
        self._policy = policy
        self._note = on_note
        self._settings = settings
        self._file: AppendFile | None = None
        self._lock = threading.Lock()
        #: rows added in this run
        self.added = 0
        self.earlier: list[dict[str, Any]] = self._read() if enabled else []

    def _read(self) -> list[dict[str, Any]]:
        try:
            raw = whole_lines(self.path.read_bytes(), self.path)
        except FileNotFoundError:
            return []
        except OSError as e:
            self._note(f"{self.path}: not read ({os_reason(e)}); starting afresh")
            return []
        lines = raw.split(b"\n")
        try:
            head = json.loads(lines[0].decode("utf-8")) if lines else None
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            head = None
        if not isinstance(head, dict) or head.get("checkpoint") != self.key:
            self._note(f"{self.path} was written for other settings ({self._settings}); "
                       "starting afresh")
            return []
        rows = []
        for line in lines[1:]:
            try:
                row = json.loads(line.decode("utf-8"))
            except ValueError:
                continue  # a damaged line: the command makes that row again
            if isinstance(row, dict):
                rows.append(row)
        return rows

    def open(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Replace the file (atomically) with the header and ``rows``, then append: a
        failure here leaves the earlier file as it was."""
        sink = self._policy.appender(self.path)
        sink.start([dumps_strict({"checkpoint": self.key}), *(dumps_strict(dict(r)) for r in rows)])
        self._file = sink

    def add(self, row: Mapping[str, Any]) -> None:
        """Keep one row (thread-safe: commands work on rows side by side)."""
        if self._file is None:
            return
        with self._lock:
            self._file.add(dumps_strict(dict(row)))
            self.added += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def remove(self) -> None:
        """The result is written: the checkpoint is no longer needed."""
        self.close()
        with contextlib.suppress(OSError):  # a stale file is harmless
            self.path.unlink(missing_ok=True)
