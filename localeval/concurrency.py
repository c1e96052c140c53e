"""The one bounded, in-order thread map (layer 0: the standard library only).

Three parts of localeval call a function on many items in threads and need the
results back in input order, with only a few items ahead of the one being
used: the judge-pool strategy (samples, ``run.strategies``), the judge door's
fan-out (a sample's independent calls, ``metrics.Judging.map``) and
``localeval answer`` (a user's pipeline on each row, ``pipeline.filling``).
:func:`ordered_map` is that loop, written once. ``concurrent.futures``'
``Executor.map`` is not enough: it submits every item at once (a million rows
queued), cannot stop starting items after a failure, and keeps nothing of the
finished results when Ctrl-C arrives.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, ContextManager, Generator, Iterable, TypeVar, cast

__all__ = ["ordered_map"]

T = TypeVar("T")
R = TypeVar("R")
_END = object()


def ordered_map(fn: Callable[[T], R], items: Iterable[T], *, workers: int,
                window: int | None = None, stop_on_failure: bool = False,
                wait: bool = True, abandon: Callable[[], ContextManager[object]] | None = None,
                inline: bool = True, name: str = "localeval") -> Generator[R, None, None]:
    """``fn(x)`` for each of ``items`` in up to ``workers`` threads, yielded in input order.

    - ``workers`` <= 1 and ``inline``: in the calling thread, one after the other, as a
      plain loop (without ``inline``, in one worker thread, the caller free to take Ctrl-C).
    - ``window``: at most this many items submitted and not yet yielded
      (default ``2 * workers``); ``items`` is read only as far as that, so a
      generator of a million rows is never all queued.
    - a failure is raised at its place in the order: the results before it
      are yielded first. ``stop_on_failure``: once any item has failed, the
      items not started are cancelled and no more are submitted (a failure
      every item would meet costs a few calls, not one per item).
    - leaving early (the failure, the consumer stops reading, Ctrl-C): items
      not started are cancelled; with ``wait`` the running ones are waited
      for. ``abandon``: a context manager entered around that wait when items
      are still running (a judge's ``interrupt`` ... ``resume``, to cut them short).
    - Ctrl-C (``KeyboardInterrupt`` while waiting for a result): the results
      already finished, in order up to the first not finished or failed, are
      yielded before ``KeyboardInterrupt`` is raised again, so the caller keeps
      them.
    """
    if workers <= 1 and inline:
        for x in items:
            yield fn(x)
        return
    limit = max(1, window if window is not None else 2 * workers)
    pending: deque[Future[R]] = deque()
    lock = threading.Lock()  # pending is read by worker threads' callbacks
    failed = threading.Event()

    def settle(f: Future[R]) -> None:
        if stop_on_failure and not f.cancelled() and f.exception() is not None:
            failed.set()
            with lock:
                queued = list(pending)
            for g in queued:
                g.cancel()  # only those not started yet

    ready: list[R] = []
    interrupted = False
    it = iter(items)
    ex = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=name)
    try:
        while True:
            while len(pending) < limit and not failed.is_set():
                nxt = next(it, _END)
                if nxt is _END:
                    break
                f = ex.submit(fn, cast(T, nxt))
                with lock:
                    pending.append(f)
                f.add_done_callback(settle)
            if not pending:
                break
            result = pending[0].result()  # a cancelled head comes only after a failure
            with lock:
                pending.popleft()
            yield result
    except KeyboardInterrupt:
        interrupted = True
        for f in list(pending):
            if not f.done() or f.cancelled() or f.exception() is not None:
                break
            ready.append(f.result())
    finally:
        with lock:
            left = list(pending)
        for f in left:
            f.cancel()
        running = abandon is not None and any(not f.done() for f in left)
        with abandon() if running and abandon is not None else contextlib.nullcontext():
            ex.shutdown(wait=wait, cancel_futures=True)
    yield from ready
    if interrupted:
        raise KeyboardInterrupt
