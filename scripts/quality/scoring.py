"""Scoring the drawn rows with localeval, through the public ``localeval.evaluate``.

The public API, not internals, so that the figures are those of the code path
a user runs (``localeval run``): same prompts, grammar, retries and cache.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Mapping, Sequence

__all__ = ["Progress", "score_rows"]


class Progress:
    """A ``localeval.run.MetricObserver`` that prints one stderr line per scored row."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.t0 = label, total, 0, time.perf_counter()

    def started(self, sample: Any, metric: Any) -> None:
        pass

    def finished(self, sample: Any, metric: Any, score: Any, seconds: float) -> None:
        self.done += 1
        value = "unscored" if score.value is None else f"{score.value:.3f}"
        print(f"  {self.label}: {self.done}/{self.total} {sample.id} {metric.key}={value} "
              f"({seconds:.1f} s, {time.perf_counter() - self.t0:.0f} s so far)",
              file=sys.stderr, flush=True)


def score_rows(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str], *, judge: Any,
               embedder: Any, verdicts: str, lang: str, cache: Any, label: str = "",
               quiet: bool = False, judge_check: bool = False
               ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Score ``rows`` with ``metrics`` through ``localeval.evaluate``.

    Returns ({row id: {metric: Score}}, the run summary). Each row is a sample
    (question, contexts, answer, reference); the labels never reach the judge.
    The run's judge check is off unless ``judge_check``: this benchmark is
    the larger check, and the judge check's probes would double a small run.
    """
    import localeval

    data = [{"id": r["id"], "question": r["question"], "contexts": r["contexts"],
             "answer": r.get("answer"), "reference": r.get("reference")} for r in rows]
    observer = None if quiet else Progress(label, len(rows) * len(metrics))
    res = localeval.evaluate(data, list(metrics), judge=judge, embedder=embedder, lang=lang,
                             verdicts=verdicts, cache=cache, progress=False,
                             observer=observer, judge_check=judge_check,
                             on_warning=lambda m: print(f"  note: {m}", file=sys.stderr))
    return {s.id: dict(sc) for s, sc in zip(res.samples, res.scores)}, res.summary
