"""Where samples are scored: in this process, in worker processes, in judge-pool threads or on Ray.

Every strategy yields each sample's model scores in input order and merges
usage and prompt versions into the driver's ``Judging`` in that order, so
``evaluate`` writes the same ``results.jsonl`` and summary whichever runs.
``score_stream`` picks one; Ray's lives in ``run.ray``.
"""

from __future__ import annotations

from contextlib import closing, contextmanager
from functools import partial
from typing import Any, Iterator, Sequence

from localeval.concurrency import ordered_map
from localeval.judge import Judge
from localeval.metrics import Accounting, Judging, Metric
from localeval.run.sample_scoring import MetricObserver, score_sample
from localeval.run.wiring import open_cache
from localeval.run.workers import SampleScorer, ScoredSample, WorkerSpec
from localeval.types import Sample, Score

__all__ = ["score_stream", "pool_capacity", "samples_in_flight"]


def score_stream(samples: Sequence[Sample], metrics: Sequence[Metric], ctx: Judging,
                 repeats: int, *, judge: Any, judge_options: dict[str, Any] | None,
                 embedder: Any, store: Any, device: str, workers: int,
                 ray: str | bool | None, ray_actors: int | None,
                 observer: MetricObserver | None) -> Iterator[dict[str, Score]]:
    """The model scores of each sample, in order, from the strategy the run asked for.

    ``judge`` and ``embedder`` are as the caller named them (workers load
    their own); ``ctx`` holds the driver's loaded ones.
    """
    if ray and metrics:
        from localeval.run.ray import ray_stream

        return ray_stream(samples, metrics, ctx, judge, judge_options, embedder,
                          str(store.path) if store is not None else None, device,
                          repeats, address=ray, num_actors=ray_actors)
    if workers > 1 and metrics:
        return process_stream(samples, metrics, ctx, judge, judge_options, embedder, store,
                              device, repeats, workers)
    if metrics and pool_capacity(ctx.judge) > 1:
        return threaded_stream(samples, metrics, ctx, repeats, pool_capacity(ctx.judge),
                               observer)
    return (score_sample(s, metrics, ctx, repeats, observer) for s in samples)


# -- several judge processes ------------------------------------------------------------
_SCORER: SampleScorer | None = None


def _start_worker(spec: WorkerSpec, cache_path: str | None) -> None:
    global _SCORER
    _SCORER = SampleScorer(spec, open_cache(cache_path if cache_path else False))


def _score_in_worker(s: Sample) -> ScoredSample:
    assert _SCORER is not None, "worker not started"
    return _SCORER.score(s)


def process_stream(samples: Sequence[Sample], metrics: Sequence[Metric], ctx: Judging,
                   judge: Any, judge_options: dict[str, Any] | None, embedder: Any, store: Any,
                   device: str, repeats: int, workers: int) -> Iterator[dict[str, Score]]:
    """Score samples in ``workers`` processes, each with its own model; yield in order.

    Judge and embedder must be given as paths or names (each process loads
    its own copy); the cache file is shared safely (SQLite WAL).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    spec = WorkerSpec.for_run(judge, judge_options, embedder, device, metrics, repeats, ctx,
                              flag="--workers", forms="a path or name")
    init = (spec, str(store.path) if store is not None else None)
    with ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=init,
                             mp_context=multiprocessing.get_context("spawn")) as ex:
        for done in ex.map(_score_in_worker, samples):
            yield done.merge_into(ctx)


# -- several samples at once: a judge that declares capacity above 1 -------------------
def pool_capacity(judge: Judge | None) -> int:
    """Calls the judge says it can serve at once (``Judge.capacity``; 1 without a judge).

    A server pool's is servers x calls per server, a batched in-process
    judge's its ``parallel`` sequences, a backend's whatever it declares.
    """
    return max(1, int(judge.capacity)) if judge is not None else 1


def samples_in_flight(capacity: int, n_metrics: int, *, at_least: int = 2) -> int:
    """Samples scored at once for a judge serving ``capacity`` calls at once.

    One sample's metrics, per-context verdicts and statement checks offer
    about ``2 x metrics`` calls at its first wave and fewer later, so
    ``capacity / 4`` samples (at least ``at_least``) keep the slots full with
    a queue behind them; a single metric gives fewer calls per sample, so then
    one sample per slot, as before fan-out.

    ``at_least=1`` for the in-process batched judge: its slots hold KV
    prefixes, and two samples sharing two to four slots evict each other's
    prefix on every switch (SmolLM2 at ``--parallel 2``: 35 % more prompt
    tokens evaluated, docs/performance.md), while one sample's own calls fill
    them. Servers keep their prefixes apart, so a pool keeps two.
    """
    if capacity <= 1:
        return 1
    if n_metrics <= 1:
        return capacity
    return max(at_least, -(-capacity // 4))


def threaded_stream(samples: Sequence[Sample], metrics: Sequence[Metric], ctx: Judging,
                    repeats: int, threads: int,
                    observer: MetricObserver | None = None) -> Iterator[dict[str, Score]]:
    """Score samples at once, each with its own Judging; yield in order.

    ``threads`` is the calls the judge serves at once: a pool of servers, or
    the sequences of a batched in-process judge. Each sample's independent
    calls go out together (``fanout``), and ``samples_in_flight`` samples run
    at once. Usage and prompt versions are
    merged into ``ctx`` in input order, so the summary equals a sequential run's.
    """
    capacity = threads

    def one(s: Sample) -> tuple[dict[str, Score], Judging]:
        c = ctx.for_sample(fanout=capacity, accounting=Accounting())
        return score_sample(s, metrics, c, repeats, observer), c

    # A sample fans its independent calls out (``Judging.fanout``), so a few
    # samples keep every slot busy; more would only spread the judge's KV
    # cache over more prefixes. Twice that are queued, ready to start.
    batches = ctx.judge is not None and ctx.judge.batches
    threads = samples_in_flight(threads, len(metrics), at_least=1 if batches else 2)
    # Leaving with samples still running (Ctrl-C, or the caller stopped reading): cut
    # their judge calls short, or the wait for them would last; a no-op for judges
    # with nothing to cut. On Ctrl-C the samples finished before it are still yielded.
    scored = ordered_map(one, samples, workers=threads, window=2 * threads, inline=False,
                         abandon=None if ctx.judge is None else partial(_cut_short, ctx.judge),
                         name="localeval-judge")
    with closing(scored):  # a caller that stops reading stops the map at once
        for scores, c in scored:
            ctx.accounting.merge(c.usage, c.prompt_versions)
            yield scores


@contextmanager
def _cut_short(judge: Judge) -> Iterator[None]:
    judge.interrupt()
    try:
        yield
    finally:
        judge.resume()

