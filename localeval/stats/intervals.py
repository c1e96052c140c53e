"""Percentile bootstrap intervals: the one "95% CI" method of localeval.

An interval is the (alpha/2, 1 - alpha/2) quantiles of the bootstrap
distribution, with scipy's quantile arithmetic so it equals
``scipy.stats.bootstrap(..., method="percentile")`` to the last bit.
Resamples where a statistic is undefined (NaN) are dropped and counted.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from localeval.stats.resampling import bootstrap_means

__all__ = ["quantile", "percentile_interval", "bootstrap_cis", "bootstrap_ci"]


def quantile(sorted_row: np.ndarray, p: float) -> float:
    """Hyndman-Fan type 7 ("linear", numpy's and scipy.stats.quantile's default),
    written as scipy 1.15+ writes it, (1 - g) * y[j] + g * y[j + 1], so the CI
    matches scipy's to the last bit rather than to the last ulp."""
    n = sorted_row.size
    jg = p * n + (1 - p)
    j = int(jg // 1) - 1
    g = jg % 1
    if j < 0:
        j, g = 0, 0.0
    lo, hi = min(max(j, 0), n - 1), min(max(j + 1, 0), n - 1)
    return float((1 - g) * sorted_row[lo] + g * sorted_row[hi])


def percentile_interval(boot: np.ndarray, *, level: float = 0.95
                        ) -> tuple[tuple[float, float] | None, int, str | None]:
    """Percentile interval over the defined resamples: (interval or None, dropped, reason).

    With more than half of the resamples undefined there is no interval: the
    rest would be a biased sample of the bootstrap distribution.
    """
    boot = np.asarray(boot, dtype=float)
    ok = np.sort(boot[np.isfinite(boot)])
    dropped = int(boot.size - ok.size)
    if ok.size < max(2, boot.size // 2):
        return None, dropped, f"undefined in {dropped} of {boot.size} resamples; no CI"
    alpha = (1 - level) / 2
    return (quantile(ok, alpha), quantile(ok, 1 - alpha)), dropped, None


def bootstrap_cis(columns: Sequence[Sequence[float]], *, n_resamples: int = 2000, seed: int = 0,
                  level: float = 0.95) -> list[list[float] | None]:
    """Percentile bootstrap CIs of the mean of several columns.

    Same estimator and seed semantics as ``scipy.stats.bootstrap(method="percentile")``
    with ``default_rng(seed)`` per column (tests/unit/test_report_scale.py checks
    it). Columns of equal length are resampled together with one draw. None for
    fewer than two values; a constant column gives a zero-width interval.
    """
    out: list[list[float] | None] = [None] * len(columns)
    by_n: dict[int, list[int]] = {}
    arrays = [np.asarray(c, dtype=float) for c in columns]
    for i, x in enumerate(arrays):
        if x.size < 2:
            continue
        if np.all(x == x[0]):
            out[i] = [float(x[0]), float(x[0])]
        else:
            by_n.setdefault(x.size, []).append(i)
    for group in by_n.values():
        means = bootstrap_means(np.stack([arrays[i] for i in group]),
                                n_resamples=n_resamples, seed=seed)
        for i, row in zip(group, means):
            ci, _, _ = percentile_interval(row, level=level)
            out[i] = list(ci) if ci else None
    return out


def bootstrap_ci(values: Sequence[float], *, n_resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap CI of the mean of one column (see ``bootstrap_cis``)."""
    return bootstrap_cis([values], n_resamples=n_resamples, seed=seed, level=level)[0]
