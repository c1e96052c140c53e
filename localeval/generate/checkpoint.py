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

from pathlib import Path
from typing import Any, Callable, Mapping

from localeval.generate.candidates import Candidate
from localeval.output import OutputPolicy, RowCheckpoint

__all__ = ["Checkpoint", "PARTIAL_FILE", "JUDGE_FAILED"]

#: The checkpoint's file name in the output folder.
PARTIAL_FILE = "candidates.partial.jsonl"
#: The reason of a candidate whose judge call failed (it is asked again on resume).
JUDGE_FAILED = "judge failed"


def _failed(c: Candidate) -> bool:
    return (c.dropped or "").startswith(JUDGE_FAILED)


class Checkpoint:
    """Earlier candidates of the same key (``earlier``, by id), and an appender for the
    new ones: ``output.RowCheckpoint`` (one whole line at a time, a torn last line
    losing that line alone) with candidates for rows."""

    def __init__(self, folder: Path, key: Mapping[str, Any], *, enabled: bool = True,
                 on_note: Callable[[str], None] | None = None,
                 policy: OutputPolicy | None = None) -> None:
        self.enabled = enabled
        self._rows = RowCheckpoint(Path(folder) / PARTIAL_FILE, key,
                                   policy=policy or OutputPolicy(),
                                   on_note=on_note or (lambda _text: None),
                                   settings="judge, corpus, seed, n or prompts", enabled=enabled)
        self.path = self._rows.path
        self.earlier: dict[str, Candidate] = {}
        for row in self._rows.earlier:
            try:
                c = Candidate.from_row(row)
            except (ValueError, KeyError, TypeError):
                continue  # a damaged line: that question is asked again
            if not _failed(c):
                self.earlier[c.id] = c

    def open(self) -> "Checkpoint":
        """Replace the file (atomically) with its header and the earlier candidates, then
        append: a failure here leaves the earlier file as it was."""
        if self.enabled:
            self._rows.open(c.to_row() for c in self.earlier.values())
        return self

    def add(self, c: Candidate) -> None:
        """Keep one new candidate (thread-safe: synthesis may run in threads)."""
        if not _failed(c):
            self._rows.add(c.to_row())

    def close(self) -> None:
        self._rows.close()

    def remove(self) -> None:
        """The test set is written: the checkpoint is no longer needed."""
        self._rows.remove()
