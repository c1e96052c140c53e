"""The paired randomization (sign-flip) test of a mean difference, and the interval it inverts to.

For few paired samples the bootstrap is too optimistic (with 6 pairs and no
true difference its 95% interval covers about 83% of the time). The
randomization test is exact instead: if the differences ``d`` are symmetric
about 0, every one of the 2^n sign vectors ``s`` gives ``sum(s * d)`` with
the same probability (Fisher's test, ``scipy.stats.permutation_test`` with
``permutation_type="samples"`` on the pairs).

Inverting it gives the interval: Hartigan (1969, "Using subsample values as
typical values", JASA 64) shows that the means of the 2^n - 1 nonempty subsets
of ``d``, sorted ``m_(1) <= ... <= m_(M)``, cut the line into 2^n intervals,
each holding the centre of a symmetric distribution with probability 1/2^n.
So ``[m_(k), m_(M+1-k)]`` covers it with probability at least 1 - 2k/2^n;
``k`` is the largest count with a one-sided tail below alpha/2, so the
interval excludes 0 exactly when the two-sided p (twice the smaller tail,
as scipy computes it) is below alpha. With B random sign vectors (Hartigan's
random subgroups, seeded) the same holds with 2^n replaced by B + 1.

The flipped set of a sign vector is the subset ``S`` whose signs change:
``sum(s * (d - t)) >= sum(d - t)`` exactly when ``sum_S (d - t) <= 0``, which
is why the tail counts of the test at ``t`` and the subset means below ``t``
are one and the same count. The empty set (no sign flipped, the observed
arrangement) counts in both tails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from localeval.stats.resampling import check_draws

__all__ = ["SignFlip", "sign_flip", "min_pairs", "EXACT_MAX"]

#: Up to this many pairs every sign vector is enumerated (2^20 subset means, ~30 ms);
#: above it, random sign vectors.
EXACT_MAX = 20
#: Differences whose subset sum is this close to 0 (relative to the largest |d|)
#: count as ties: scores computed twice differ in the last bits.
TIE = 1e-9


@dataclass(frozen=True)
class SignFlip:
    """The randomization test's interval (None when none reaches the level) and p-value.

    ``arrangements`` is 2^n when exact, else the draws plus the observed one (B + 1);
    the interval's coverage is at least ``coverage`` (1 - 2k / arrangements).
    """

    ci: tuple[float, float] | None
    p: float
    exact: bool
    arrangements: int
    coverage: float
    reason: str = ""
    #: one-sided p-values: of a mean above 0 (share of arrangements whose sum is at least
    #: the observed one) and of a mean below 0 (at most it)
    p_greater: float | None = None
    p_less: float | None = None


def min_pairs(level: float = 0.95) -> int:
    """The fewest pairs for which an exact randomization interval reaches ``level`` (6 at 95%)."""
    n = 1
    while _k(2 ** n, level) < 1:
        n += 1
    return n


def _k(arrangements: int, level: float) -> int:
    """How many subset means each end leaves out: the most with a tail strictly under alpha/2."""
    return math.ceil((1 - level) / 2 * arrangements - 1e-12) - 1


def _subset_sums(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums and sizes of all 2^n subsets of ``d`` (index 0: the empty set), by doubling."""
    sums = np.zeros(1)
    sizes = np.zeros(1, dtype=np.int64)
    for x in d:
        sums = np.concatenate([sums, sums + x])
        sizes = np.concatenate([sizes, sizes + 1])
    return sums, sizes


def _random_subsets(d: np.ndarray, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sums and sizes of ``draws`` random subsets (each pair flipped with probability 1/2)."""
    rng = np.random.default_rng(seed)
    n = d.size
    rows = max(1, min(draws, (1 << 20) // max(n, 1)))
    sums, sizes = [], []
    for done in range(0, draws, rows):
        flips = rng.integers(0, 2, size=(min(rows, draws - done), n), dtype=np.int8)
        sums.append(flips @ d)
        sizes.append(flips.sum(axis=1, dtype=np.int64))
    return np.concatenate(sums), np.concatenate(sizes)


def sign_flip(d: np.ndarray, *, level: float = 0.95, n_resamples: int = 9999, seed: int = 0,
              exact_max: int = EXACT_MAX) -> SignFlip:
    """The sign-flip test of mean(d) = 0 and Hartigan's interval for the centre of ``d``.

    Exact (every sign vector) for ``len(d) <= exact_max``, else ``n_resamples``
    random sign vectors drawn from ``default_rng(seed)``. Below
    :func:`min_pairs` no interval reaches ``level``: ``ci`` is None and
    ``reason`` says why; ``p`` is given still.
    """
    check_draws(n_resamples, seed)  # a negative seed or a huge count: a usage error, at once
    d = np.asarray(d, dtype=float)
    n = int(d.size)
    exact = n <= exact_max
    if exact:
        sums, sizes = _subset_sums(d)
        sums, sizes = sums[1:], sizes[1:]  # the observed arrangement is counted apart
        arrangements = 1 << n
    else:
        sums, sizes = _random_subsets(d, n_resamples, seed)
        arrangements = n_resamples + 1
    tie = TIE * float(np.max(np.abs(d), initial=0.0))
    empty = sizes == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(np.abs(sums) <= tie, 0.0, sums / np.maximum(sizes, 1))
    # the observed arrangement (no flip) and any drawn empty subset are in both tails
    below = 1 + int(np.count_nonzero(empty | (means <= 0)))
    above = 1 + int(np.count_nonzero(empty | (means >= 0)))
    p = min(1.0, 2 * min(below, above) / arrangements)
    # a flipped subset with mean <= 0 gives a sum >= the observed one (module docstring)
    p_greater, p_less = below / arrangements, above / arrangements
    k = _k(arrangements, level)
    if k < 1:
        return SignFlip(None, p, exact, arrangements, 0.0,
                        f"fewer than {min_pairs(level)} paired samples: no "
                        f"{level:.0%} interval can be shown (a paired randomization test "
                        f"cannot reach {level:.0%} with {n} pair{'s' if n != 1 else ''})",
                        p_greater, p_less)
    lows = np.where(empty, -np.inf, means)
    highs = np.where(empty, np.inf, means)
    lo = float(np.partition(lows, k - 1)[k - 1])
    hi = float(-np.partition(-highs, k - 1)[k - 1])
    coverage = 1 - 2 * k / arrangements
    if not (math.isfinite(lo) and math.isfinite(hi)):  # k random draws were all empty
        return SignFlip(None, p, exact, arrangements, coverage,
                        "too few random sign vectors for an interval", p_greater, p_less)
    return SignFlip((lo, hi), p, exact, arrangements, coverage, "", p_greater, p_less)
