"""A byte-progress bar for hashing large model files (``models verify`` and ``models add``).

rich is imported only when the bar is shown, on a terminal.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["HashProgress"]


class HashProgress:
    """A rich byte-progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, total: int, description: str, enabled: bool | None = None) -> None:
        self.enabled = (sys.stderr.isatty() if enabled is None else enabled) and total > 0
        self._bar: Any = None
        if self.enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                                       TimeRemainingColumn, TransferSpeedColumn)

            self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(description, total=total)

    def describe(self, text: str) -> None:
        if self._bar:
            self._bar.update(self._task, description=text)

    def advance(self, n: int) -> None:
        if self._bar:
            self._bar.advance(self._task, n)

    def close(self) -> None:
        if self._bar:
            self._bar.stop()
            self._bar = None

