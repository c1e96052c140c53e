"""Paired 0/1 scores (hit rate, exact match, a pass/fail verdict): the exact test and an interval.

When every paired value is 0 or 1, the only pairs that carry evidence are the
ones that changed: ``lost`` (1 in base, 0 in new) and ``gained`` (0 -> 1).
Under "no difference" each changed pair is lost or gained with probability
1/2, so the exact McNemar test is the sign test on the changed pairs
(``scipy.stats.binomtest(gained, lost + gained, 0.5)``), one- or two-sided.
It needs no symmetry assumption and no large sample, and it says plainly what
a small comparison can show: five changed pairs, all lost, have a two-sided
p of 2/32 = 0.0625, so at least six changed pairs, all one way, are needed at
5% (five one-sided: 1/32).

The interval for the difference of the two rates (new - base) is Newcombe's
hybrid score ("square-and-add") interval for paired proportions, his method 10
(Newcombe 1998, Statistics in Medicine 17:2635), with the correlation term as
Fagerland, Lydersen and Laake (2014, Statistical Methods in Medical Research
23:...; "Recommended tests and confidence intervals for paired binomial
proportions") write it. Chosen over Tango's score interval because it is in
closed form from two Wilson intervals (scipy's), covers close to 95% from a few
pairs up, and Fagerland et al. recommend both. Like every asymptotic interval
it can exclude 0 where the exact test does not reject (five lost of ten: the
interval ends at -0.14, p = 0.0625), so it is widened to reach 0 exactly where
the exact two-sided test does not reject: the interval then excludes 0 exactly
when p < alpha, as the sign-flip interval does for graded scores, and widening
never lowers coverage. Hand-written: scipy has the Wilson interval and the
binomial test, not this combination.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

__all__ = ["is_binary", "PairedBinary", "paired_binary", "mcnemar_p", "newcombe_interval",
           "changed_pairs_needed", "smallest_shown", "BINARY_METHOD"]

BINARY_METHOD = ("exact McNemar (sign) test on the changed pairs; Newcombe's hybrid score "
                 "interval for paired proportions (method 10), reaching 0 where the exact "
                 "test does not reject")


def is_binary(*columns: Iterable[float | None]) -> bool:
    """Every value of every column is 0 or 1 (and there is at least one)."""
    seen = False
    for col in columns:
        for v in col:
            if v is None or v not in (0, 1):
                return False
            seen = True
    return seen


def mcnemar_p(lost: int, gained: int, alternative: str = "two-sided") -> float:
    """The exact McNemar p of ``gained`` against ``lost``: ``"two-sided"``, ``"greater"``
    (new gained more: evidence it is better) or ``"less"`` (evidence it is worse).
    1.0 when nothing changed."""
    from scipy.stats import binomtest

    m = lost + gained
    if m == 0:
        return 1.0
    return float(binomtest(gained, m, 0.5, alternative=alternative).pvalue)


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    # the Wilson score interval in closed form at any z (scipy's proportion_ci takes a
    # confidence level; here z is needed directly to invert the interval for a p-value)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def newcombe_interval(both: int, gained: int, lost: int, neither: int, *, z: float = 1.959963984540054
                      ) -> tuple[float, float]:
    """Newcombe's method 10 interval for (new rate - base rate) of a paired 2x2 table.

    ``both``: 1 in both; ``gained``: 0 in base, 1 in new; ``lost``: 1 in base, 0 in
    new; ``neither``: 0 in both. ``z``: the normal quantile (1.96 for 95%).
    """
    n = both + gained + lost + neither
    p_new, p_base = (both + gained) / n, (both + lost) / n
    d = p_new - p_base
    l1, u1 = _wilson(both + gained, n, z)
    l2, u2 = _wilson(both + lost, n, z)
    margins = (both + gained) * (lost + neither) * (both + lost) * (gained + neither)
    phi = 0.0
    if margins > 0:
        a = both * neither - gained * lost
        # Newcombe's correction of the correlation: a positive one shrunk by n/2
        phi = (a - n / 2) / math.sqrt(margins) if a > n / 2 else (
            a / math.sqrt(margins) if a < 0 else 0.0)
    lo = d - math.sqrt(max(0.0, (p_new - l1) ** 2 + (u2 - p_base) ** 2
                           - 2 * phi * (p_new - l1) * (u2 - p_base)))
    hi = d + math.sqrt(max(0.0, (p_base - l2) ** 2 + (u1 - p_new) ** 2
                           - 2 * phi * (p_base - l2) * (u1 - p_new)))
    return max(-1.0, lo), min(1.0, hi)


@dataclass(frozen=True)
class PairedBinary:
    """The difference of two paired 0/1 columns: its counts, interval and exact p."""

    n: int
    both: int
    gained: int
    lost: int
    neither: int
    diff: float
    ci: tuple[float, float]
    p: float
    #: the interval was widened to reach 0 because the exact test does not reject
    widened: bool

    @property
    def changed(self) -> int:
        return self.gained + self.lost


def paired_binary(base: Sequence[float], new: Sequence[float], *, level: float = 0.95
                  ) -> PairedBinary:
    """Counts, the exact two-sided McNemar p and the (widened) Newcombe interval."""
    from scipy.stats import norm

    b = np.asarray(base, dtype=float) > 0.5
    w = np.asarray(new, dtype=float) > 0.5
    both, neither = int(np.sum(b & w)), int(np.sum(~b & ~w))
    gained, lost = int(np.sum(~b & w)), int(np.sum(b & ~w))
    n = both + gained + lost + neither
    diff = (gained - lost) / n
    p = mcnemar_p(lost, gained)
    lo, hi = newcombe_interval(both, gained, lost, neither,
                               z=float(norm.ppf(1 - (1 - level) / 2)))
    lo, hi = min(lo, diff), max(hi, diff)  # the point always lies in its interval
    widened = False
    if p >= 1 - level and not lo <= 0 <= hi:
        lo, hi, widened = min(lo, 0.0), max(hi, 0.0), True
    return PairedBinary(n, both, gained, lost, neither, diff, (lo, hi), p, widened)


def changed_pairs_needed(alpha: float = 0.05, sided: int = 2) -> int:
    """The fewest changed pairs, all one way, whose exact p is below ``alpha``
    (6 two-sided at 5%: 2/64; 5 one-sided: 1/32)."""
    m = 1
    while sided * 0.5 ** m >= alpha:
        m += 1
    return m


def smallest_shown(changed: int, n: int, alpha: float = 0.05, sided: int = 2
                   ) -> tuple[int, float] | None:
    """With ``changed`` changed pairs of ``n``: the fewest of them that must go one way
    for the exact test to show a difference, and the difference that makes,
    ``(k, (2k - changed) / n)``; None when even all of them one way would not."""
    from scipy.stats import binom

    if n <= 0 or changed <= 0:
        return None
    ks = np.arange((changed + 1) // 2, changed + 1)
    tails = sided * binom.sf(ks - 1, changed, 0.5)  # P(X >= k), doubled when two-sided
    ok = ks[np.minimum(tails, 1.0) < alpha]
    if ok.size == 0:
        return None
    k = int(ok[0])
    return k, (2 * k - changed) / n
