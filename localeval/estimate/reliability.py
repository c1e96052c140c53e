"""How well the judge's scores match the labels on the labelled rows: the reliability table.

For a judge whose scores read as probabilities (soft verdicts), a score of
0.8 should come with a label of 1 four times in five. The reliability table
bins the labelled rows by the judge's score (equal-width bins over [0, 1])
and gives, per bin, the mean score and the mean label; the Brier score is the
mean squared gap between score and label (0 is perfect; 0.25 is what a
constant 0.5 scores on balanced 0/1 labels). Computed from plain arrays, so
the run report (``report``, a lower layer) only draws it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["calibration", "CALIBRATION_BINS"]

#: Bins of the reliability table: few, because a few dozen labels fill them.
CALIBRATION_BINS = 5


def calibration(judge: Sequence[float], labels: Sequence[float], *, soft: bool,
                bins: int = CALIBRATION_BINS) -> dict[str, Any]:
    """The reliability table of the judge on labelled rows, and the Brier score when ``soft``.

    Only meaningful for scores in [0, 1]; values outside are clipped into the
    edge bins. ``brier`` is None unless the scores are soft-verdict probabilities.
    """
    f = np.asarray(judge, dtype=float)
    y = np.asarray(labels, dtype=float)
    which = np.minimum((np.clip(f, 0.0, 1.0) * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        sel = which == b
        k = int(sel.sum())
        rows.append({"low": b / bins, "high": (b + 1) / bins, "n": k,
                     "mean_score": float(f[sel].mean()) if k else None,
                     "mean_label": float(y[sel].mean()) if k else None})
    return {"bins": rows, "n": int(len(f)),
            "brier": float(np.mean((f - y) ** 2)) if soft else None}
