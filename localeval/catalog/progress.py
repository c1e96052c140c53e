"""Byte-progress bars: hashing large model files (``models verify`` and ``models add``) and
downloading them (``models fetch``).

rich (or tqdm) is imported only when a bar is shown, on a terminal: ``models fetch``
runs from ``scripts/fetch_models.py`` where neither need be installed.
"""

from __future__ import annotations

import sys
from typing import Any

from localeval.errors import printable

__all__ = ["HashProgress", "DownloadProgress"]


class HashProgress:
    """A rich byte-progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, total: int, description: str, enabled: bool | None = None) -> None:
        self.enabled = (sys.stderr.isatty() if enabled is None else enabled) and total > 0
        self._bar: Any = None
        if self.enabled:
            self._bar = _bytes_bar(transient=True)
            self._bar.start()
            self._task = self._bar.add_task(printable(description), total=total)

    def describe(self, text: str) -> None:
        if self._bar:
            self._bar.update(self._task, description=printable(text))

    def advance(self, n: int) -> None:
        if self._bar:
            self._bar.advance(self._task, n)

    def close(self) -> None:
        if self._bar:
            self._bar.stop()
            self._bar = None


class DownloadProgress:
    """A download's bar: rich, else tqdm, else nothing; only on a terminal unless forced."""

    def __init__(self, name: str, total: int | None, done: int, enabled: bool) -> None:
        self._rich: Any = None
        self._tqdm: Any = None
        if not enabled:
            return
        try:
            self._rich = _bytes_bar(transient=False)
            self._rich.start()
            self._task = self._rich.add_task(printable(name), total=total, completed=done)
            return
        except ImportError:
            pass
        try:
            from tqdm import tqdm

            self._tqdm = tqdm(total=total, initial=done, unit="B", unit_scale=True,
                             desc=printable(name),
                              file=sys.stderr)
        except ImportError:
            pass

    def advance(self, n: int) -> None:
        if self._rich is not None:
            self._rich.advance(self._task, n)
        elif self._tqdm is not None:
            self._tqdm.update(n)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self._tqdm is not None:
            self._tqdm.close()


def _bytes_bar(*, transient: bool) -> Any:
    """A rich bar counting bytes (size, speed, time left) on stderr; ImportError without rich."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    # markup=False: the label is a manifest file name, shown as written, never read as markup
    return Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                    DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=transient)
