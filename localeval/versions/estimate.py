"""The paired difference of one metric between two versions, with its interval and p-value.

One estimator for every kind of difference: an :class:`Estimate` is what a
metric row of a version diff holds a *list* of. Today the list holds the
judge-only difference (``kind="judge"``); a label-corrected difference can
be appended beside it with another ``kind`` and the same fields, and every
page and table shows it without a second code path.

The interval is the run report's percentile bootstrap
(``localeval.stats``: the draws of ``scipy.stats.bootstrap`` with
``default_rng(seed)``) over the per-sample differences ``new - base``:
resampling those differences is resampling the pairs, so it equals
``scipy.stats.bootstrap((base, new), paired=True, method="percentile")``
(tests/unit/test_versions_stats.py checks it to 1e-9). The p-value is the
bootstrap test read from the same resamples, twice the smaller tail at 0,
so "interval excludes 0" and "p < 0.05" agree; with several metrics the
verdict uses Holm's correction of those p-values (:func:`holm`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

__all__ = ["Estimate", "paired_difference", "holm", "CI_METHOD", "DEFAULT_RESAMPLES", "LEVEL"]

#: Bootstrap resamples by default (scipy.stats.bootstrap's default).
DEFAULT_RESAMPLES = 9999
LEVEL = 0.95
CI_METHOD = "percentile paired bootstrap over samples (the report's resampler)"


@dataclass
class Estimate:
    """One estimate of the mean difference new - base: the point, its 95% interval, its test.

    ``kind`` says what was estimated ("judge": the judge's scores as they are;
    "corrected": the labels' difference, the judge's corrected by labels).
    ``p_holm`` is filled in by :func:`holm` once every metric's p of the same
    kind is known; ``family`` is how many estimates that correction spanned.
    """

    kind: str
    diff: float | None
    ci: tuple[float, float] | None
    n: int
    p: float | None = None
    p_holm: float | None = None
    method: str = CI_METHOD
    reason: str = ""
    family: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "diff": self.diff,
                "ci95": list(self.ci) if self.ci else None, "n": self.n, "p": self.p,
                "p_holm": self.p_holm, "method": self.method, "reason": self.reason,
                **self.extra}


def paired_difference(base: Sequence[float], new: Sequence[float], *, kind: str = "judge",
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> Estimate:
    """Mean of ``new - base`` over paired samples, with a percentile bootstrap 95% interval."""
    from localeval.stats import bootstrap_means, percentile_interval

    d = np.asarray(new, dtype=float) - np.asarray(base, dtype=float)
    n = int(d.size)
    if n == 0:
        return Estimate(kind, None, None, 0, reason="no sample scored in both runs")
    point = float(d.mean())
    if n < 2:
        return Estimate(kind, point, None, n, reason="one paired sample: no interval")
    if np.all(d == d[0]):  # every resample gives the same mean: no draw needed
        return Estimate(kind, point, (point, point), n, p=1.0 if point == 0 else 0.0)
    boot = bootstrap_means(d[None, :], n_resamples=n_resamples, seed=seed)[0]
    ci, _, _ = percentile_interval(boot, level=LEVEL)  # every resample mean is defined
    p = min(1.0, 2 * min(float(np.mean(boot <= 0)), float(np.mean(boot >= 0))))
    return Estimate(kind, point, ci, n, p=p)


def holm(ps: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None).

    Hand-written: scipy has Benjamini-Hochberg (``false_discovery_control``)
    but not Holm, and statsmodels would be a large dependency for six lines.
    """
    known = [(p, i) for i, p in enumerate(ps) if p is not None]
    known.sort()
    m = len(known)
    out: list[float | None] = [None] * len(ps)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
