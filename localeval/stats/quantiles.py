"""The normal and Student-t quantiles the intervals use, without importing ``scipy.stats``.

``scipy.stats`` costs about 70 MB of memory and a second to import; the
corrected estimates that ``localeval run --labels`` adds at the end of a
million-row run need only these two quantiles, so they come from the standard
library's ``NormalDist`` and ``scipy.special.stdtrit`` (the function behind
``scipy.stats.t.ppf``: tests/unit/test_stats_interval.py holds both to scipy.stats).
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = ["normal_quantile", "t_quantile"]


def normal_quantile(p: float) -> float:
    """The standard normal quantile of ``p`` (1.96 at 0.975)."""
    return NormalDist().inv_cdf(p)


def t_quantile(p: float, df: Any) -> Any:
    """Student's t quantile of ``p`` with ``df`` degrees of freedom (a float for a scalar
    ``df``, an array for an array); fractional degrees of freedom are fine."""
    from scipy.special import stdtrit

    out = stdtrit(np.asarray(df, dtype=float), p)
    return float(out) if np.ndim(out) == 0 else out
