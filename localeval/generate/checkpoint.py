"""The candidates written so far, kept line by line so that Ctrl-C loses no judge work.

``generate_testset`` appends each candidate the judge writes to
``OUT/candidates.partial.jsonl`` as soon as it is written (one JSON line, flushed),
after a first line that names what they were written for (``key``: the generator's
signature, the corpus hash, chunking, seed, n, distribution, personas, styles and
the prompt versions). Run again with the same key, the command takes them back and
asks the judge only for the rest; with another key the file is started afresh. The
file is removed once the test set is written. The judge cache (on by default) keeps
the judge's replies as well, but this file also resumes with ``--no-cache``, and it
is what the interrupted command points the user to.

A candidate whose judge call failed is not kept: the next run asks again.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any, Callable, Mapping

from localeval.errors import os_reason
from localeval.generate.candidates import Candidate
from localeval.output import AppendFile, OutputPolicy, dumps_strict, whole_lines

__all__ = ["Checkpoint", "PARTIAL_FILE", "JUDGE_FAILED"]

#: The checkpoint's file name in the output folder.
PARTIAL_FILE = "candidates.partial.jsonl"
#: The reason of a candidate whose judge call failed (it is asked again on resume).
JUDGE_FAILED = "judge failed"


class Checkpoint:
    """Earlier candidates of the same key, and an appender for the new ones.

    Written through the output policy's ``AppendFile``: each candidate one whole
    line, on disk before the next; a full disk is an ``OutputError`` naming the
    file (exit 2) that keeps the lines before. Read back with ``output.whole_lines``,
    so a last line cut short (inside a multi-byte character too) loses that line
    alone, never the lines before it.
    """

    def __init__(self, folder: Path, key: Mapping[str, Any], *, enabled: bool = True,
                 on_note: Callable[[str], None] | None = None,
                 policy: OutputPolicy | None = None) -> None:
        self.path = Path(folder) / PARTIAL_FILE
        self.key = json.loads(dumps_strict(dict(key)))
        self.enabled = enabled
        self._note = on_note or (lambda _text: None)
        self._policy = policy or OutputPolicy()
        self._file: AppendFile | None = None
        self._lock = threading.Lock()
        self.earlier: dict[str, Candidate] = self._read() if enabled else {}

    def _read(self) -> dict[str, Candidate]:
        try:
            raw = whole_lines(self.path.read_bytes(), self.path)
        except FileNotFoundError:
            return {}
        except OSError as e:
            self._note(f"{self.path}: not read ({os_reason(e)}); starting afresh")
            return {}
        lines = raw.split(b"\n")
        try:
            head = json.loads(lines[0].decode("utf-8")) if lines else None
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            head = None
        if not isinstance(head, dict) or head.get("checkpoint") != self.key:
            self._note(f"{self.path} was written for other settings (judge, corpus, seed, n "
                       "or prompts); starting afresh")
            return {}
        out: dict[str, Candidate] = {}
        for line in lines[1:]:
            try:
                c = Candidate.from_row(json.loads(line.decode("utf-8")))
            except (ValueError, KeyError, TypeError):
                continue  # a damaged line: that question is asked again
            if not (c.dropped or "").startswith(JUDGE_FAILED):
                out[c.id] = c
        return out

    def open(self) -> "Checkpoint":
        """Replace the file (atomically) with its header and the earlier candidates, then
        append: a failure here leaves the earlier file as it was."""
        if not self.enabled:
            return self
        sink = self._policy.appender(self.path)
        sink.start([dumps_strict({"checkpoint": self.key}),
                    *(dumps_strict(c.to_row()) for c in self.earlier.values())])
        self._file = sink
        return self

    def add(self, c: Candidate) -> None:
        """Keep one new candidate (thread-safe: synthesis may run in threads)."""
        if self._file is None or (c.dropped or "").startswith(JUDGE_FAILED):
            return
        with self._lock:
            self._file.add(dumps_strict(c.to_row()))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def remove(self) -> None:
        """The test set is written: the checkpoint is no longer needed."""
        self.close()
        with contextlib.suppress(OSError):  # the set is complete; a stale file is harmless
            self.path.unlink(missing_ok=True)
