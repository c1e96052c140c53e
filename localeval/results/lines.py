"""``results.jsonl`` read back one line at a time, by position (``ResultLines``).

A command-line run of a million samples does not keep their records to render
the report: the report reads the lines it needs from the file the run wrote.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ResultLines"]


class ResultLines(Sequence[dict[str, Any]]):
    """The records of a ``results.jsonl``, each parsed when it is read.

    Only the start of each line is kept (8 bytes a line, in an ``array``), so
    the records cost memory only while the reader holds them. The file is the
    one this process just wrote (whole lines, strict JSON): no repair is needed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.starts = array("q")
        pos = 0
        with open(self.path, "rb") as f:
            for line in f:
                if line.strip():
                    self.starts.append(pos)
                pos += len(line)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        from localeval.dataset import loads_strict

        with open(self.path, "rb") as f:
            f.seek(self.starts[i])
            return loads_strict(f.readline().decode("utf-8"), allow_non_finite=True)

    def __iter__(self) -> Any:
        # one open file for a pass over every record, not one per record
        from localeval.dataset import loads_strict

        with open(self.path, "rb") as f:
            for line in f:
                if line.strip():
                    yield loads_strict(line.decode("utf-8"), allow_non_finite=True)
