"""``--checker``'s metrics: what a run or a judge check scores when a checker is the judge.

A checker answers faithfulness's steps only (``localeval.judge.CHECKER_METRICS``),
so a metric that asks a generative judge anything else is refused before any
model loads, naming it, rather than left unscored on every sample and failing
its judge check; with no ``-m`` the checker's metrics are the run's.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from localeval.errors import UsageError

__all__ = ["checker_metrics"]


def checker_metrics(args: argparse.Namespace, metrics: Any,
                    info: Callable[[str], None] | None = None) -> Any:
    """``metrics`` (``-m``, or the metrics of ``--metrics-file``) checked against
    ``--checker``; without ``--checker`` returned as given."""
    checker = getattr(args, "checker", None)
    if not checker:
        return metrics
    from localeval.judge import CHECKER_METRICS
    from localeval.metrics import parse_metrics

    if not metrics:
        if info is not None:
            info(f"--checker scores {', '.join(CHECKER_METRICS)}; add judge-free metrics "
                 "with -m (e.g. -m faithfulness,ndcg@10,rougeL)")
        return ",".join(CHECKER_METRICS)
    parsed = parse_metrics(metrics) if isinstance(metrics, str) else list(metrics)
    refused = [m.key for m in parsed if m.uses_judge and m.name not in CHECKER_METRICS]
    if refused:
        raise UsageError(f"--checker scores only {', '.join(CHECKER_METRICS)}; "
                         f"{', '.join(refused)} need{'s' if len(refused) == 1 else ''} a "
                         "generative judge: score them in another run with --judge "
                         "(docs/checkers.md)")
    return metrics
