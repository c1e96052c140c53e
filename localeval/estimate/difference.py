"""The corrected difference new - old of two versions of a pipeline scored on the same rows.

The difference of paired rows is one more mean, so the estimators of one
version apply to it: judge-only (biased by the judge's habits), labels-only
and corrected (``ppi`` for a uniform draw, ``active`` for an active one). A
difference of two values in [0, 1] lies in [-1, 1], and so does its interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localeval.estimate.active import active_mean
from localeval.estimate.ppi import Estimate, corrected_mean, judge_only, labels_only

__all__ = ["corrected_difference", "DIFFERENCE_BOUNDS"]

#: The range of a difference of two means in [0, 1].
DIFFERENCE_BOUNDS = (-1.0, 1.0)


def corrected_difference(judge_new: Any, judge_old: Any, labels_new: Any, labels_old: Any,
                      labelled: Any, *, prob: Any | None = None, level: float = 0.95,
                      reference: bool = False) -> dict[str, Estimate]:
    """Corrected difference new - old of two versions scored on the same rows.

    Both versions' judge scores cover all rows (paired by the alignment); both have
    labels on the same drawn rows. ``prob``: inclusion probabilities of an active
    draw (all rows), None for a uniform draw. ``reference``: the plain PPI++
    interval of a uniform draw (ppi-python's), without the pseudo-rows.
    """
    f = np.asarray(judge_new, dtype=float) - np.asarray(judge_old, dtype=float)
    y = np.asarray(labels_new, dtype=float) - np.asarray(labels_old, dtype=float)
    b = DIFFERENCE_BOUNDS
    if prob is None:
        return {"judge_only": judge_only(f, level),
                "labels_only": labels_only(y, level, reference=reference, bounds=b),
                "corrected": corrected_mean(f, y, labelled, level=level, reference=reference,
                                            bounds=b)}
    return {"judge_only": judge_only(f, level),
            "labels_only": active_mean(f, y, labelled, prob, level=level, lam=0.0, bounds=b),
            "corrected": active_mean(f, y, labelled, prob, level=level, bounds=b)}
