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

import json
import threading
from pathlib import Path
from typing import IO, Any, Callable, Mapping

from localeval.errors import OutputError
from localeval.generate.candidates import Candidate
from localeval.results import dumps_strict

__all__ = ["Checkpoint", "PARTIAL_FILE", "JUDGE_FAILED"]

#: The checkpoint's file name in the output folder.
PARTIAL_FILE = "candidates.partial.jsonl"
#: The reason of a candidate whose judge call failed (it is asked again on resume).
JUDGE_FAILED = "judge failed"


class Checkpoint:
    """Earlier candidates of the same key, and an appender for the new ones."""

    def __init__(self, folder: Path, key: Mapping[str, Any], *, enabled: bool = True,
                 on_note: Callable[[str], None] | None = None) -> None:
        self.path = Path(folder) / PARTIAL_FILE
        self.key = json.loads(dumps_strict(dict(key)))
        self.enabled = enabled
        self._note = on_note or (lambda _text: None)
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self.earlier: dict[str, Candidate] = self._read() if enabled else {}

    def _read(self) -> dict[str, Candidate]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as e:
            self._note(f"{self.path}: not read ({e}); starting afresh")
            return {}
        try:
            head = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            head = None
        if not isinstance(head, dict) or head.get("checkpoint") != self.key:
            self._note(f"{self.path} was written for other settings (judge, corpus, seed, n "
                       "or prompts); starting afresh")
            return {}
        out: dict[str, Candidate] = {}
        for line in lines[1:]:
            try:
                c = Candidate.from_row(json.loads(line))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue  # a line cut short by the interruption: asked again
            if not (c.dropped or "").startswith(JUDGE_FAILED):
                out[c.id] = c
        return out

    def open(self) -> "Checkpoint":
        """Rewrite the file with its header and the earlier candidates, ready to append."""
        if not self.enabled:
            return self
        try:
            self._file = self.path.open("w", encoding="utf-8", newline="\n")
            self._file.write(dumps_strict({"checkpoint": self.key}) + "\n")
            for c in self.earlier.values():
                self._file.write(dumps_strict(c.to_row()) + "\n")
            self._file.flush()
        except OSError as e:
            raise OutputError(f"{self.path}: cannot write the checkpoint: {e}") from e
        return self

    def add(self, c: Candidate) -> None:
        """Keep one new candidate (thread-safe: synthesis may run in threads)."""
        if self._file is None or (c.dropped or "").startswith(JUDGE_FAILED):
            return
        with self._lock:
            self._file.write(dumps_strict(c.to_row()) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def remove(self) -> None:
        """The test set is written: the checkpoint is no longer needed."""
        self.close()
        self.path.unlink(missing_ok=True)
