"""Corrected estimates for ``localeval run ... --labels FILE``: the summary's ``corrected`` section.

The run computes and writes its judge-only means first (it knows nothing of
labels: ``run`` sits below ``estimate``); the command then checks the labels
against the finished run exactly as ``localeval estimate`` does, and this
module turns the result into plain data for ``summary.json``, which the
reports (terminal table, summary.md, report.html) show beside the judge-only
means, with the judge's calibration on the labelled rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from localeval.estimate.analysis import estimate
from localeval.estimate.pages import JUDGE_WARNING
from localeval.estimate.reliability import calibration
from localeval.estimate.uncertainty import run_uncertainty

__all__ = ["run_corrections"]


def run_corrections(run: str | Path, labels: str | Path, *, random_draw: bool = False,
                    scale: tuple[float, float] | None = None,
                    metrics: Sequence[str] | None = None,
                    reference: bool = False) -> dict[str, Any]:
    """The ``corrected`` section of a run's summary.json (DataError / UsageError on bad labels).

    Per labelled metric: the judge-only, labels-only and corrected means with
    their intervals, the judge's bias and worth in labels (as ``estimate.json``
    has them), and ``calibration``: the reliability table of the judge's scores
    against the labels, with the Brier score when the scores are soft verdicts.
    """
    from localeval.agreement import load_result_set

    rs = load_result_set(run)
    r = estimate(rs, labels, metrics=metrics, random_draw=random_draw, scale=scale,
                 reference=reference)
    out: dict[str, Any] = {"labels": r.labels, "draw": r.draw, "level": r.level,
                           "interval": r.method,
                           "judge_only_warning": JUDGE_WARNING, "metrics": {}}
    for m in r.metrics:
        a = m.arrays
        ids = [sid for sid in rs.scores if rs.scores[sid].get(m.metric) is not None]
        soft = run_uncertainty(rs, ids, [m.metric])[1] == "soft verdicts"
        out["metrics"][m.metric] = {**m.to_dict(), "calibration": calibration(
            a["judge"][a["labelled"]], a["labels"], soft=soft)}
    return out
