"""Asking the judge for the planned questions: in order, or several at once, resumable.

Each planned question (a ``Job``) is one judge call. The prompt of a question lists
the questions already written from the same chunks (so the judge asks about
another fact), so the questions of one chunk set form a chain asked in plan order;
different chains are independent. ``run_jobs`` therefore gives the same candidates
at any ``parallel``: chains run side by side, each one in order. Candidates of an
interrupted run (``done``) are taken as they are and still count in their chain.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from localeval.corpus import Chunk
from localeval.generate.candidates import Candidate

__all__ = ["Job", "run_jobs"]


@dataclass(frozen=True)
class Job:
    """One question to ask: its id, synthesizer, chunks (in corpus order), persona, style."""

    id: str
    synthesizer: str
    chunks: tuple[Chunk, ...]
    persona: str | None = None
    style: str | None = None

    @property
    def chain(self) -> tuple[str, ...]:
        """The chunk set whose questions are asked one after another."""
        return tuple(c.id for c in self.chunks)


def run_jobs(jobs: Sequence[Job], write: Callable[[Job, list[str]], Candidate], *,
             parallel: int = 1, done: Mapping[str, Candidate] | None = None,
             on_candidate: Callable[[Candidate, bool], None] | None = None,
             avoid_last: int = 5) -> list[Candidate]:
    """The candidates of ``jobs``, in plan order.

    ``write(job, avoid)`` asks the judge (``avoid``: the last ``avoid_last``
    questions kept in the job's chain); ``on_candidate(c, resumed)`` is told of each
    candidate as it is ready (from the worker threads when ``parallel`` > 1).
    A KeyboardInterrupt stops the asking: no new question starts, the ones in
    flight finish, and the interrupt is raised again.
    """
    done = done or {}
    chains: dict[tuple[str, ...], list[Job]] = defaultdict(list)
    for job in jobs:
        chains[job.chain].append(job)
    history: dict[tuple[str, ...], list[str]] = defaultdict(list)
    stop = threading.Event()
    out: dict[str, Candidate] = {}

    def one(job: Job) -> None:
        earlier = done.get(job.id)
        c = earlier if earlier is not None else write(job, history[job.chain][-avoid_last:])
        if c.dropped is None:
            history[job.chain].append(c.question)
        out[job.id] = c
        if on_candidate is not None:
            on_candidate(c, earlier is not None)

    def chain(members: list[Job]) -> None:
        for job in members:
            if stop.is_set():
                return
            one(job)

    if parallel <= 1 or len(chains) <= 1:
        for job in jobs:
            one(job)
    else:
        pool = ThreadPoolExecutor(max_workers=min(parallel, len(chains)),
                                  thread_name_prefix="localeval-generate")
        futures: list[Future[None]] = [pool.submit(chain, m) for m in chains.values()]
        try:
            finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for f in futures:
                if f in finished:
                    f.result()  # the first failure (not a judge failure: those are candidates)
        except BaseException:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return [out[job.id] for job in jobs]
