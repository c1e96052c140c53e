"""Scoring one sample: its model metrics back to back, failures recorded as unscored.

Every execution strategy (one process, worker processes, judge-pool threads,
Ray actors) scores a sample through ``score_sample``; each metric is scored by
``metrics.score_one``, which the judge check and the RAGAS-style metric
objects use too, so a judge failure means the same unscored reason wherever
it happens.
"""

from __future__ import annotations

import statistics
import time
from typing import Protocol, Sequence

from localeval.metrics import Judging, Metric, score_one
from localeval.types import Sample, Score

__all__ = ["MetricObserver", "score_sample"]


class MetricObserver(Protocol):
    """Told when each model metric of a sample starts and ends: to time it or attribute judge calls.

    Pass one as ``evaluate(..., observer=...)``. ``started`` comes just
    before the metric asks the judge or embedder (all its repeats included),
    ``finished`` right after, with the wall seconds in between. Metrics a
    sample lacks the fields for, and metrics that use no model, are not
    observed. With a judge pool the calls come from several threads at once.
    """

    def started(self, sample: Sample, metric: Metric) -> None: ...

    def finished(self, sample: Sample, metric: Metric, score: Score, seconds: float) -> None: ...


def score_sample(s: Sample, model_metrics: Sequence[Metric], ctx: Judging, repeats: int,
                 observer: MetricObserver | None = None) -> dict[str, Score]:
    """All model metrics of one sample, back to back (they share the KV prefix).

    Steps whose prompt does not start with the sample block (answer_relevancy
    must not see the question it is to regenerate) go first: the change of
    sample breaks the prefix then anyway, so they cost no reuse.

    With ``ctx.fanout > 1`` (a judge that serves several calls at once) the
    metrics run side by side in threads, so their independent calls join one
    batch; the scores are the same, since each call's reply is. Repeats change
    ``ctx.seed`` between rounds, so with ``repeats > 1`` metrics go one by one.
    """
    ctx.begin_sample()
    ordered = sorted(model_metrics, key=lambda m: getattr(m, "shares_sample_prefix", True))
    if repeats > 1:
        return {m.key: _observed(m, s, ctx, repeats, observer) for m in ordered}
    scores = ctx.map(lambda m: _observed(m, s, ctx, repeats, observer), ordered)
    return {m.key: sc for m, sc in zip(ordered, scores)}


def _observed(m: Metric, s: Sample, ctx: Judging, repeats: int,
              observer: MetricObserver | None) -> Score:
    if observer is None or m.missing_fields(s):
        return _score_repeated(m, s, ctx, repeats)
    observer.started(s, m)
    t0 = time.perf_counter()
    score = _score_repeated(m, s, ctx, repeats)
    observer.finished(s, m, score, time.perf_counter() - t0)
    return score


def _score_repeated(m: Metric, s: Sample, ctx: Judging, repeats: int) -> Score:
    """One metric of one sample; judge metrics ``repeats`` times with seeds seed, seed+1, ..."""
    if m.missing_fields(s) or not m.uses_judge or repeats == 1:
        return score_one(m, s, ctx)
    # Each round on a door of its own seed (and memo); usage is counted in the run's.
    results = [score_one(m, s, ctx.for_sample(seed=ctx.seed + r)) for r in range(repeats)]
    vals = [r.value for r in results if r.value is not None]
    if not vals:
        return results[0]
    details = dict(results[0].details)
    details["repeats"] = [r.value for r in results]
    details["std"] = statistics.pstdev(vals) if len(vals) > 1 else 0.0
    return Score(sum(vals) / len(vals), None, details)
