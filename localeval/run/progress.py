"""A live progress bar for long runs: samples, judge calls, tokens/s, cache hits, ETA.

rich draws it on stderr only when stderr is a terminal; in CI logs and pipes
the run stays quiet (``--quiet`` forces that).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from localeval.judge import Usage

__all__ = ["RunProgress"]


class RunProgress:
    """Wraps ``rich.progress``; a no-op when disabled."""

    def __init__(self, total: int, *, enabled: bool | None = None,
                 description: str = "evaluating") -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.enabled = enabled and total > 0
        self.total = total
        self._start = time.perf_counter()
        self._bar: Any = None
        if self.enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("samples"), TimeElapsedColumn(), TextColumn("eta"),
                TimeRemainingColumn(), TextColumn("{task.fields[stats]}"),
                console=Console(stderr=True), transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(description, total=total, stats="")

    def update(self, usage: Usage, advance: int = 1) -> None:
        if not self._bar:
            return
        secs = max(usage.seconds, 1e-9)
        tps = (usage.evaluated_tokens + usage.generated_tokens) / secs if usage.calls else 0.0
        stats = (f"calls {usage.calls} · cache {usage.cache_hits} · "
                 f"{tps:,.0f} tok/s" if usage.calls else "")
        self._bar.update(self._task, advance=advance, stats=stats)

    def close(self) -> None:
        if self._bar:
            self._bar.stop()
            self._bar = None
