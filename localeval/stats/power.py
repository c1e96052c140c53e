"""What a paired comparison could show, and how many questions would show a given change.

Two kinds of paired scores, two rules:

- **0/1 scores** (``mcnemar``'s exact McNemar test): power is computed
  exactly. With ``n`` questions and a discordance rate ``q`` (the share of
  questions whose score changes) the number of changed pairs is Binomial(n, q);
  given ``m`` changed, the number that moved the way of a true difference
  ``delta`` is Binomial(m, (q + |delta|) / 2q); the test rejects when that count
  reaches the exact critical value. Summing over ``m`` gives the exact power
  (no normal approximation), so the number of questions needed is the fewest
  from Connor's normal formula (1987, Biometrics 43:207) upwards whose exact
  power reaches the target: the exact test's power is not monotone in ``n``
  (it jumps with the discrete critical values), and Connor's formula is often
  a little optimistic for few questions (above 5000 questions it stands as it is).
- **graded scores** (the sign-flip test or the bootstrap): the normal
  approximation of the paired t-test, ``delta = (t_{1-alpha/s} + t_{power}) *
  sd / sqrt(n)`` with ``n - 1`` degrees of freedom: the randomization test's
  power is close to the t-test's for symmetric changes, and a formula keeps
  the diff fast (simulating the randomization test's power per metric would
  cost seconds). tests/unit/test_verdicts_power.py checks it against the
  simulated detection rate of the diff's own test.

Hand-written: scipy has the distributions, not these power calculations, and
statsmodels (which has the t-test's) would be a large dependency for them.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["binary_power", "binary_questions", "graded_detectable", "graded_questions",
           "interval_detectable", "POWER", "MAX_QUESTIONS"]

#: The power the smallest detectable difference and the questions needed are stated at.
POWER = 0.8
#: The planner stops counting here (a difference this small is not worth a test set).
MAX_QUESTIONS = 1_000_000
#: Above this many questions Connor's normal formula stands for the exact search.
EXACT_UP_TO = 5000


def _critical(m: np.ndarray, alpha: float, sided: int) -> np.ndarray:
    """Per number of changed pairs m: the smallest count k (in one direction) with
    sided * P(Bin(m, 1/2) >= k) < alpha; m + 1 where none."""
    from scipy.stats import binom

    # isf: the smallest x with P(X > x) <= q; shrunk by 1e-12 so that a tail equal to
    # alpha does not count as below it
    x = binom.isf(alpha / sided * (1 - 1e-12), m, 0.5)
    return np.minimum(np.asarray(x, dtype=np.int64) + 1, m + 1)


def binary_power(n: int, discordance: float, delta: float, *, alpha: float = 0.05,
                 sided: int = 2) -> float:
    """Exact power of the exact McNemar test with ``n`` questions, a share
    ``discordance`` of them changing, and a true difference ``delta`` of the rates."""
    if n <= 0:
        return 0.0
    return _power(n, discordance, delta, _critical(np.arange(n + 1), alpha, sided), alpha,
                  sided)


def _power(n: int, discordance: float, delta: float, crit: np.ndarray, alpha: float,
           sided: int) -> float:
    """``binary_power`` with the critical counts of 0..n changed pairs given (``crit``:
    they depend on neither n nor the rates, so a search computes them once)."""
    from scipy.stats import binom

    q, d = float(discordance), abs(float(delta))
    if n <= 0 or q <= 0 or d == 0:
        return 0.0 if d else alpha
    q = max(q, d)  # a difference delta needs at least a share delta of the pairs to change
    pi = min(1.0, (q + d) / (2 * q))
    m = np.arange(n + 1)
    k = crit[: n + 1]
    reach = binom.sf(k - 1, m, pi)  # P(X >= k) in delta's direction
    if sided == 2:
        reach = reach + binom.cdf(m - k, m, pi) * (m - k >= 0)
    return float(np.sum(binom.pmf(m, n, q) * np.minimum(reach, 1.0)))


@lru_cache(maxsize=1024)
def binary_questions(discordance: float, delta: float, *, alpha: float = 0.05,
                     power: float = POWER, sided: int = 2) -> int | None:
    """The fewest questions whose exact power reaches ``power`` for a difference ``delta``,
    given the pilot's ``discordance`` (share of changed pairs); None past MAX_QUESTIONS.

    Bisection from Connor's estimate (power rises with n, up to the exact test's small
    jumps), then, below 2000 questions, a scan of the 50 sizes under it for the first
    that reaches the power: a jump can make a smaller size enough. Above EXACT_UP_TO
    questions, Connor's normal formula (measured within 2% of the exact count there, which
    would take seconds to search)."""
    from scipy.stats import norm

    d = abs(float(delta))
    if d <= 0 or d > 1:
        return None
    q = max(float(discordance), d)
    za, zb = norm.ppf(1 - alpha / sided), norm.ppf(power)
    start = (za * math.sqrt(q) + zb * math.sqrt(max(q - d * d, 0.0))) ** 2 / (d * d)
    if not math.isfinite(start) or start > MAX_QUESTIONS:
        return None
    if start > EXACT_UP_TO:  # the exact power is within 2% of the normal one there
        return math.ceil(start)
    crit = _critical(np.arange(2 * int(start) + 3), alpha, sided)

    def enough(n: int) -> bool:
        nonlocal crit
        if n >= crit.size:
            crit = _critical(np.arange(n + 1), alpha, sided)
        return _power(n, q, d, crit, alpha, sided) >= power

    hi = max(2, int(start) + 1)
    while not enough(hi):
        if hi >= MAX_QUESTIONS:
            return None
        hi = min(MAX_QUESTIONS, hi * 2)
    lo = max(0, int(start * 0.7))  # Connor is a little optimistic, never by 30%
    if enough(lo):
        lo = 0  # not enough at 0 (no question shows anything)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    if hi <= 2000:
        return next(n for n in range(max(1, hi - 50), hi + 1) if enough(n))
    return hi


def _t(p: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(p, df))


def graded_detectable(sd: float, n: int, *, alpha: float = 0.05, power: float = POWER,
                      sided: int = 2) -> float | None:
    """The smallest mean change that ``n`` pairs with changes of spread ``sd`` show with
    ``power`` (normal approximation of the paired t-test); None below 2 pairs."""
    if n < 2 or not math.isfinite(sd):
        return None
    return (_t(1 - alpha / sided, n - 1) + _t(power, n - 1)) * sd / math.sqrt(n)


@lru_cache(maxsize=1024)
def graded_questions(sd: float, delta: float, *, alpha: float = 0.05, power: float = POWER,
                     sided: int = 2) -> int | None:
    """The fewest pairs that show a mean change ``delta`` with ``power`` when the changes
    spread as ``sd``; None for a zero delta or past MAX_QUESTIONS."""
    from scipy.stats import norm

    d = abs(float(delta))
    if d <= 0 or not math.isfinite(sd):
        return None
    if sd <= 0:
        return 2
    z = (norm.ppf(1 - alpha / sided) + norm.ppf(power)) * sd / d
    n = max(2, int(z * z))
    if n > MAX_QUESTIONS:
        return None
    while (graded_detectable(sd, n, alpha=alpha, power=power, sided=sided) or math.inf) > d:
        n += 1
    return n


def interval_detectable(low: float, high: float, *, level: float = 0.95,
                        power: float = POWER) -> float:
    """From an interval's half-width: the change its test would show with ``power``
    (half-width * (z_{1-alpha/2} + z_power) / z_{1-alpha/2}), for estimates that hold no
    per-pair changes (a difference corrected by labels)."""
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - level) / 2)
    return (high - low) / 2 * (z + norm.ppf(power)) / z
