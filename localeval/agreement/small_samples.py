"""Intervals for few samples, and what to say where none is reliable.

A percentile bootstrap undercovers badly with few samples (a correlation's
"95%" interval from 8 pairs holds the truth about 80% of the time). Below
:data:`SMALL_N` paired samples ``compare`` and ``validate`` therefore use
closed-form intervals instead, each a textbook method:

- Pearson's r: Fisher's z, ``atanh(r) +- z * 1/sqrt(n - 3)`` (n >= 4);
- Spearman's rho: Fisher's z with the Bonett-Wright standard error
  ``sqrt((1 + rho^2 / 2) / (n - 3))`` (n >= 4);
- Kendall's tau: Fisher's z with the Fieller-Hartley-Pearson standard error
  ``sqrt(0.437 / (n - 4))`` (n >= 5);
- mean absolute difference, bias and a label group's mean score: a Student t
  interval, ``mean +- t(n-1) * sd / sqrt(n)``; a group of 0/1 scores gets the
  Clopper-Pearson interval of its proportion;
- verdict agreement: the Clopper-Pearson ("exact") interval of a proportion.

From :data:`SMALL_N` samples up the bootstrap covers (tests/unit/
test_agreement_small_samples.py measures it) and stays, so large-sample
numbers are those of earlier versions. Kappa, weighted kappa, ROC AUC and
pairwise accuracy have no closed form that holds at a few samples; they keep
the bootstrap, and below the sizes where it covers 93% of the time their
interval carries a caveat (:func:`caveat`) with the coverage measured there.
The vectorised functions here are the ones the simulations check.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SMALL_N", "correlation_interval", "mean_interval", "proportion_interval",
           "group_mean_interval", "caveat", "MEASURED", "method_name"]

#: Below this many paired samples the closed-form intervals replace the bootstrap.
SMALL_N = 30
_Z = 1.959963984540054  # the 97.5% normal quantile

#: Closed-form method names, as printed beside an interval.
_METHODS = {
    "pearson": "Fisher z (SE 1/sqrt(n-3))",
    "spearman": "Fisher z, Bonett-Wright SE",
    "kendall": "Fisher z, Fieller SE",
    "mean": "Student t",
    "proportion": "Clopper-Pearson (exact binomial)",
}
#: The fewest samples each closed form needs.
_MIN = {"pearson": 4, "spearman": 4, "kendall": 5}

#: Measured coverage (%) of the 95% intervals that stay unreliable at some sizes, by the
#: least n (or n per group / groups) of each band: tests/unit/agreement_sim.py,
#: ``python tests/unit/agreement_sim.py``; the test checks these figures still hold.
#: A size at or above the last band's limit has no caveat.
MEASURED: dict[str, tuple[int, dict[int, int]]] = {
    # statistic: (reliable from this size, {first size of a band: coverage % measured there})
    "kappa": (20, {3: 20, 4: 42, 5: 55, 7: 73, 10: 89, 15: 90}),
    "weighted_kappa": (40, {3: 37, 4: 62, 5: 72, 7: 79, 10: 87, 15: 90, 20: 92, 30: 92}),
    "auc": (15, {2: 52, 3: 70, 4: 84, 5: 88, 7: 91, 10: 92}),
    "pairwise": (30, {2: 45, 3: 64, 4: 73, 5: 78, 7: 84, 10: 88, 15: 91, 20: 92}),
    "spearman": (5, {4: 86}),
    "mad": (8, {3: 92}),
    # the t interval of 0/0.5/1 scores: covers at 3-5 (it is wide), dips at 6-13
    "group_mean": (14, {6: 89, 7: 92}),
}
_WHAT = {"auc": "{n} per label group", "pairwise": "{n} groups"}


def method_name(kind: str) -> str:
    """The printed name of a closed-form method (``pearson``, ``mean``, ``proportion`` ...)."""
    return _METHODS[kind]


def _fisher(r: np.ndarray, se: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z = np.arctanh(np.clip(r, -1 + 1e-12, 1 - 1e-12))
    return np.tanh(z - _Z * se), np.tanh(z + _Z * se)


def correlation_interval(kind: str, r: np.ndarray | float, n: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Fisher-z 95% interval of Pearson / Spearman / Kendall correlations ``r`` of n pairs.

    NaN bounds below the fewest pairs the method needs (4; Kendall 5).
    """
    r = np.asarray(r, dtype=float)
    if n < _MIN[kind]:
        nan = np.full(r.shape, np.nan)
        return nan, nan
    if kind == "pearson":
        se = np.full(r.shape, 1 / math.sqrt(n - 3))
    elif kind == "spearman":
        se = np.sqrt((1 + r * r / 2) / (n - 3))
    else:
        se = np.full(r.shape, math.sqrt(0.437 / (n - 4)))
    return _fisher(r, se)


def mean_interval(mean: np.ndarray | float, sd: np.ndarray | float, n: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Student t 95% interval of a mean from its sample standard deviation (ddof=1)."""
    from scipy.stats import t

    half = t.ppf(0.975, n - 1) * np.asarray(sd, dtype=float) / math.sqrt(n)
    m = np.asarray(mean, dtype=float)
    return m - half, m + half


def proportion_interval(k: np.ndarray | int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson 95% interval of k successes in n (``binomtest(k, n).proportion_ci``)."""
    from scipy.stats import beta

    k = np.asarray(k, dtype=float)
    with np.errstate(all="ignore"):
        lo = np.where(k > 0, beta.ppf(0.025, k, n - k + 1), 0.0)
        hi = np.where(k < n, beta.ppf(0.975, k + 1, n - k), 1.0)
    return lo, hi


def group_mean_interval(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """95% interval of the mean of each row of scores: Clopper-Pearson where a row is all
    0s and 1s, else Student t."""
    v = np.atleast_2d(np.asarray(v, dtype=float))
    n = v.shape[1]
    binary = np.all((v == 0) | (v == 1), axis=1)
    lo, hi = mean_interval(v.mean(axis=1), v.std(axis=1, ddof=1), n)
    plo, phi = proportion_interval(v.sum(axis=1), n)
    return np.where(binary, plo, lo), np.where(binary, phi, hi)


def caveat(stat: str, n: int) -> str | None:
    """"95% CI not reliable at n=8 (covers about 80% in simulations)", or None where the
    statistic's interval covers at this size."""
    if stat not in MEASURED:
        return None
    reliable, bands = MEASURED[stat]
    if n >= reliable or not bands or n < min(bands):
        return None
    start = max(b for b in bands if b <= n)
    what = _WHAT.get(stat, "n={n}")
    return (f"95% CI not reliable at {what.format(n=n)}: in simulations with known truth it "
            f"held the truth only about {bands[start]}% of the time at this size "
            f"(reliable from {what.format(n=reliable)}; docs/judging-the-judges.md)")
