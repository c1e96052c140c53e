"""Signs of life for long runs: a stage line while models load, then a live progress bar.

With a 7B judge on CPU one sample takes minutes, so the bar must move between
samples: its statistics (judge calls, cache hits, tokens/s) are read from the
run's live ``Usage`` at every refresh (rich redraws ~4 times a second from its
own thread), so they change with every judge call, not with every sample. The
ETA is computed from tokens: once the first calls finish, the tokens a sample
costs (the mean over finished samples; before the first finishes, what the
first has cost so far) times the samples left, minus what the current sample
has already processed, at the measured tokens/s. It is re-estimated whenever a
call finishes and counts down in between.

rich draws on stderr only when stderr is a terminal; in CI logs and pipes
the run stays quiet (``--quiet`` forces that).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from localeval.judge import Usage

__all__ = ["RunProgress", "loading_stage", "model_label", "TokenEta"]


def _tty(enabled: bool | None) -> bool:
    return sys.stderr.isatty() if enabled is None else enabled


def model_label(model: Any, default: str) -> str:
    """A short name for a stage line: a file's name, a URL, a judge's name, or ``default``."""
    if isinstance(model, (str, os.PathLike)) and str(model):
        s = str(model)
        return s if "://" in s else Path(s).name
    return str(getattr(model, "name", "") or default)


@contextlib.contextmanager
def loading_stage(text: str, enabled: bool | None = None) -> Iterator[None]:
    """Show ``text`` with a spinner while the block runs (loading a model takes 15-30 s),
    then one line saying how long it took. Nothing when stderr is not a terminal."""
    if not _tty(enabled):
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    t0 = time.perf_counter()
    with console.status(f"{text}…"):
        yield
    console.print(f"[dim]{text}: done in {time.perf_counter() - t0:.1f} s[/dim]",
                  soft_wrap=True)


class TokenEta:
    """Seconds left, from tokens processed and tokens per second (see the module doc).

    ``update`` is called on every refresh with the run's usage and the samples
    finished; a new estimate is made only when the token count changed (a call
    finished), and between calls the estimate counts down with the clock.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self._tokens_at_finish = 0  # tokens when the last sample finished
        self._finished = 0
        self._seen_tokens = -1
        self._deadline: float | None = None

    def update(self, usage: Usage, finished: int, now: float | None = None) -> float | None:
        now = time.perf_counter() if now is None else now
        tokens = usage.evaluated_tokens + usage.generated_tokens
        changed = finished != self._finished
        if changed:
            self._finished, self._tokens_at_finish = finished, tokens
        if changed or tokens != self._seen_tokens:
            self._seen_tokens = tokens
            self._deadline = self._estimate(usage, tokens, finished, now)
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - now)

    def _estimate(self, usage: Usage, tokens: int, finished: int, now: float) -> float | None:
        if tokens <= 0 or usage.seconds <= 0 or finished >= self.total:
            return None if finished < self.total else now
        rate = tokens / usage.seconds
        if finished:
            per_sample = self._tokens_at_finish / finished
        else:
            per_sample = tokens  # the first sample: at least what it has cost so far
        in_current = tokens - self._tokens_at_finish
        left = max(0.0, per_sample * (self.total - finished) - in_current)
        return now + left / rate


class RunProgress:
    """Wraps ``rich.progress``; a no-op when disabled.

    ``usage``: the run's live Usage object (``Judging.usage``). When given, the
    statistics and the ETA follow it on every refresh, i.e. per judge call;
    otherwise they follow the usage passed to :meth:`update`.
    """

    def __init__(self, total: int, *, enabled: bool | None = None,
                 description: str = "evaluating", usage: Usage | None = None) -> None:
        self.enabled = _tty(enabled) and total > 0
        self.total = total
        self._usage = usage if usage is not None else Usage()
        self._live = usage is not None
        self._finished = 0
        self._eta = TokenEta(total)
        self._bar: Any = None
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                ProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.text import Text

            owner = self

            class _Live(ProgressColumn):
                """ETA and judge statistics, recomputed from the live usage on every refresh."""

                max_refresh = 0.25

                def render(self, task: Any) -> Text:
                    return Text(owner.status_text(), style="progress.remaining")

            self._bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("samples"), TimeElapsedColumn(), _Live(),
                console=Console(stderr=True), transient=False, refresh_per_second=4,
            )
            self._bar.start()
            self._task = self._bar.add_task(description, total=total)

    def status_text(self) -> str:
        """``eta 0:03:10 · calls 12 · cache 3 · 41 tok/s`` from the usage now."""
        u = self._usage
        left = self._eta.update(u, self._finished)
        eta = "eta -:--:--" if left is None else f"eta {_clock(left)}"
        if not u.calls and not u.cache_hits:
            return eta
        secs = max(u.seconds, 1e-9)
        tps = (u.evaluated_tokens + u.generated_tokens) / secs if u.calls else 0.0
        return f"{eta} · calls {u.calls} · cache {u.cache_hits} · {tps:,.0f} tok/s"

    def update(self, usage: Usage, advance: int = 1) -> None:
        """A sample (``advance`` samples) finished; ``usage`` is the run's usage so far."""
        self._finished += advance
        if not self._live:
            self._usage = usage
        if self._bar:
            self._bar.update(self._task, advance=advance)

    def close(self) -> None:
        if self._bar:
            self._bar.stop()
            self._bar = None


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
