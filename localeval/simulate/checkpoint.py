"""The conversations finished so far, kept line by line so that Ctrl-C loses none.

``simulate`` appends each finished conversation's row to
``OUT/conversations.partial.jsonl`` (``output.AppendFile``: one whole line, on disk
before the next), after a first line naming what they were made for (``key``: the
judge, the scenarios, the agent's spec and file hash, ``max_turns``, the seed and the
prompt versions). Run again with the same key, they are taken back and only the other
scenarios are simulated; the rows are then written in scenario order, so the result
is the same file, byte for byte, as one uninterrupted run's. With another key (another
agent version too) the file is started afresh. It is removed once the result is
written. A conversation the judge failed is not kept: the next run tries it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from localeval.output import OutputPolicy, RowCheckpoint

__all__ = ["Checkpoint", "PARTIAL_FILE"]

PARTIAL_FILE = "conversations.partial.jsonl"


class Checkpoint:
    """Earlier rows of the same key (``earlier``, by scenario id), and an appender:
    ``output.RowCheckpoint`` with conversation rows."""

    def __init__(self, folder: Path, key: Mapping[str, Any], *, policy: OutputPolicy,
                 on_note: Callable[[str], None]) -> None:
        self._rows = RowCheckpoint(
            Path(folder) / PARTIAL_FILE, key, policy=policy, on_note=on_note,
            settings="judge, scenarios, agent, max turns, seed or prompts")
        self.path = self._rows.path
        # a row without an id is a damaged line: that scenario is simulated again
        self.earlier: dict[str, dict[str, Any]] = {
            str(r["id"]): r for r in self._rows.earlier if "id" in r}

    @property
    def added(self) -> int:
        """Conversations added in this call."""
        return self._rows.added

    def open(self) -> None:
        """Replace the file (atomically) with its header and the earlier rows, then append."""
        self._rows.open(self.earlier.values())

    def add(self, row: dict[str, Any]) -> None:
        """Keep one finished conversation (thread-safe: scenarios run side by side)."""
        self._rows.add(row)

    def close(self) -> None:
        self._rows.close()

    def remove(self) -> None:
        self._rows.remove()
