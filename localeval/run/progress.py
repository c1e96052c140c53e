"""Signs of life for long runs: a stage line while models load, then a live progress bar.

With a 7B judge on CPU one sample takes minutes, so the bar must move between
samples: its statistics (judge calls, cache hits, tokens/s) are read from the
run's live ``Usage`` at every refresh (rich redraws ~4 times a second from its
own thread), so they change with every judge call, not with every sample. The
ETA is computed from the work left (``WorkEta``): the model metrics each
remaining sample needs, at the wall seconds per metric measured so far.

rich draws on stderr only when stderr is a terminal. In CI logs and pipes a
plain line goes to stderr instead, at least every ``PLAIN_INTERVAL`` seconds
(``localeval: evaluating 3/40 samples, 0:06:10 elapsed, eta 1:12:00 · calls ...``),
so a CI job's "no output" timeout does not kill a run whose samples take minutes;
``--quiet`` (``progress=False``) silences both.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from localeval.errors import printable
from localeval.judge import Usage

__all__ = ["RunProgress", "loading_stage", "model_label", "WorkEta", "PLAIN_INTERVAL"]

#: Seconds between two plain progress lines when stderr is not a terminal (a CI log).
PLAIN_INTERVAL = 30.0


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
    from rich.text import Text

    # the text names a model (a file, a URL, a judge's name): Text, never markup, and
    # printable, so "[red]" or an escape sequence in a name is shown as written
    shown = printable(text)
    console = Console(stderr=True)
    t0 = time.perf_counter()
    with console.status(Text(f"{shown}…")):
        yield
    console.print(Text(f"{shown}: done in {time.perf_counter() - t0:.1f} s", style="dim"),
                  soft_wrap=True)


class WorkEta:
    """Seconds left, from the work left and the wall time the work done has taken.

    A sample's work is the number of model metrics it needs (a sample that lacks
    a metric's fields costs nothing for it): samples are not equal work, and
    the judge's own seconds leave out what surrounds each call (prompt
    rendering, grammar, re-asking a judge that copied the example), which is
    most of the time of a small judge. So the estimate is the wall seconds per
    unit of work measured up to the last finished sample, times the units left,
    less the share of the current samples' work already done (their judge
    tokens against the tokens a unit has cost). It is re-estimated when a
    sample or a call finishes and counts down with the clock in between.
    """

    def __init__(self, work: Sequence[int] | int, start: float | None = None) -> None:
        self.work = [1] * work if isinstance(work, int) else [max(1, w) for w in work]
        self.total = len(self.work)
        self._done = [0]  # units of work in the first k samples
        for w in self.work:
            self._done.append(self._done[-1] + w)
        self._start = start  # when scoring began (default: the first update)
        self._finished = 0
        self._at_finish = 0.0  # clock when the last sample finished
        self._tokens_at_finish = 0
        self._seen_tokens = -1
        self._deadline: float | None = None

    def update(self, usage: Usage, finished: int, now: float | None = None) -> float | None:
        """Seconds left, given the run's usage and the samples finished so far."""
        now = time.perf_counter() if now is None else now
        if self._start is None:
            self._start = now
        tokens = usage.evaluated_tokens + usage.generated_tokens
        changed = finished != self._finished
        if changed:
            self._finished, self._at_finish, self._tokens_at_finish = finished, now, tokens
        if changed or tokens != self._seen_tokens:
            self._seen_tokens = tokens
            self._deadline = self._estimate(tokens, finished, now)
        if finished >= self.total:
            return 0.0
        return None if self._deadline is None else max(0.0, self._deadline - now)

    def _estimate(self, tokens: int, finished: int, now: float) -> float | None:
        if not finished or self._start is None:
            return None  # no sample finished: no measured cost per unit yet
        done = self._done[min(finished, self.total)]
        per_unit = (self._at_finish - self._start) / done
        left = self._done[-1] - done
        tokens_per_unit = self._tokens_at_finish / done
        if finished >= self.total or not tokens_per_unit or tokens == self._tokens_at_finish:
            return self._at_finish + left * per_unit
        # calls of the next sample have finished: the share of its work they did
        begun = min((tokens - self._tokens_at_finish) / tokens_per_unit,
                    float(self.work[finished]))
        return now + (left - begun) * per_unit


class RunProgress:
    """Wraps ``rich.progress``; a no-op when disabled.

    ``usage``: the run's live Usage object (``Judging.usage``). When given, the
    statistics and the ETA follow it on every refresh, i.e. per judge call;
    otherwise they follow the usage passed to :meth:`update`. ``work``: each
    sample's units of work (its model metrics) for the ETA; one each by default.
    ``unit``: what is counted ("samples", "questions").
    """

    def __init__(self, total: int, *, enabled: bool | None = None,
                 description: str = "evaluating", usage: Usage | None = None,
                 work: Sequence[int] | None = None, interval: float | None = None,
                 unit: str = "samples") -> None:
        self.enabled = _tty(enabled) and total > 0
        # not a terminal and not switched off: plain lines every `interval` seconds
        self.plain = enabled is None and not self.enabled and total > 0
        self.interval = PLAIN_INTERVAL if interval is None else float(interval)
        self.description = description
        self.unit = unit
        self.total = total
        self._t0 = time.perf_counter()
        self._last_line = self._t0
        self._stop = threading.Event()
        self._count_lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        self._usage = usage if usage is not None else Usage()
        self._live = usage is not None
        self._finished = 0
        self._eta = WorkEta(work if work is not None else total, time.perf_counter())
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
                # markup=False: a description or unit is never parsed as rich markup
                TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                MofNCompleteColumn(), TextColumn(unit, markup=False), TimeElapsedColumn(),
                _Live(),
                console=Console(stderr=True), transient=False, refresh_per_second=4,
            )
            self._bar.start()
            self._task = self._bar.add_task(printable(description), total=total)
        elif self.plain:
            self._ticker = threading.Thread(target=self._tick_loop, name="localeval-progress",
                                            daemon=True)
            self._ticker.start()

    def plain_line(self, now: float | None = None) -> str:
        """``localeval: evaluating 3/40 samples, 0:06:10 elapsed, eta ...`` (a CI log's line)."""
        now = time.perf_counter() if now is None else now
        return (f"localeval: {self.description} {self._finished}/{self.total} {self.unit}, "
                f"{_clock(now - self._t0)} elapsed, {self.status_text()}")

    def tick(self, now: float | None = None) -> bool:
        """Print a plain line when ``interval`` seconds have passed since the last one."""
        now = time.perf_counter() if now is None else now
        if not self.plain or now - self._last_line < self.interval:
            return False
        self._last_line = now
        print(printable(self.plain_line(now)), file=sys.stderr, flush=True)
        return True

    def _tick_loop(self) -> None:
        step = min(max(self.interval / 4, 0.01), 1.0)
        while not self._stop.wait(step):
            self.tick()

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
        """A sample (``advance`` samples) finished; ``usage`` is the run's usage so far.
        Thread-safe: the workers of a threaded run call it as they finish."""
        with self._count_lock:
            self._finished += advance
            if not self._live:
                self._usage = usage
            if self._bar:
                self._bar.update(self._task, advance=advance)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._ticker = None
        if self._bar:
            self._bar.stop()
            self._bar = None


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
