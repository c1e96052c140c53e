"""The paired difference of one metric between two versions, with its interval and p-value.

One estimator for every kind of difference: a :class:`Difference` is what a
metric row of a version diff holds a *list* of. Today the list holds the
judge-only difference (``kind="judge"``); a label-corrected difference can
be appended beside it with another ``kind`` and the same fields, and every
page and table shows it without a second code path.

Two rules, chosen by the number of pairs n (``SMALL_SAMPLE``):

- **n >= SMALL_SAMPLE**: the run report's percentile bootstrap
  (``localeval.stats``: the draws of ``scipy.stats.bootstrap`` with
  ``default_rng(seed)``) over the per-sample differences ``new - base``:
  resampling those differences is resampling the pairs, so it equals
  ``scipy.stats.bootstrap((base, new), paired=True, method="percentile")``
  (tests/unit/test_versions_stats.py checks it to 1e-9). The p-value is the
  bootstrap test read from the same resamples, twice the smaller tail at 0.
- **n < SMALL_SAMPLE**: the paired randomization (sign-flip) test and the
  interval that inverts it (Hartigan's subset means, ``stats.sign_flip``):
  exact over all 2^n sign vectors up to 20 pairs, random sign vectors
  (``n_resamples``, seeded) above. The bootstrap is too sure of itself with
  few pairs (6 pairs, no true difference: it covers 83%, and the gate fails
  9% of the time); this interval covers at least 95% of the time when the
  differences are symmetric, and below 6 pairs no 95% interval exists, so
  none is shown. ``caveat`` says so on every page.

Paired 0/1 scores (every value 0 or 1: hit rate, exact match, tool-call
accuracy, a pass/fail verdict) take neither: the exact McNemar test on the
changed pairs and Newcombe's interval for paired proportions, at any number of
pairs (``stats.mcnemar``).

Either way "interval excludes 0" and "p < 0.05" agree; with several metrics
the verdict uses Holm's correction of those p-values (:func:`holm`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from localeval.stats import BINARY_METHOD, Interval

__all__ = ["Difference", "paired_difference", "holm", "small_sample_caveat", "CI_METHOD",
           "EXACT_METHOD", "RANDOM_METHOD", "DEFAULT_RESAMPLES", "LEVEL", "SMALL_SAMPLE",
           "BINARY_METHOD"]

#: Bootstrap resamples by default (scipy.stats.bootstrap's default); also the random
#: sign vectors of the randomization test above 20 pairs.
DEFAULT_RESAMPLES = 9999
LEVEL = 0.95
#: Below this many pairs the randomization (sign-flip) interval replaces the bootstrap.
SMALL_SAMPLE = 100
CI_METHOD = "percentile paired bootstrap over samples (the report's resampler)"
EXACT_METHOD = "exact paired randomization (sign-flip) test, Hartigan's subset-mean interval"
RANDOM_METHOD = ("paired randomization (sign-flip) test on random sign vectors, Hartigan's "
                 "random-subset interval")


@dataclass
class Difference:
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
    #: a plain warning shown beside the interval (few pairs: what it assumes)
    caveat: str = ""
    family: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    #: the standard deviation of the per-pair changes and how many are not 0 (what
    #: the power of the comparison rests on; None where the estimate holds no pairs)
    spread: float | None = None
    changed: int | None = None
    #: every paired value was 0 or 1: the exact McNemar test and Newcombe's interval
    binary: bool = False

    def interval(self) -> Interval:
        """This difference as the one interval value of the analyses (``stats.Interval``)."""
        lo, hi = self.ci if self.ci else (None, None)
        return Interval(self.diff, lo, hi, self.n, self.method, LEVEL, p=self.p,
                        reason=self.reason or None)

    def to_dict(self) -> dict[str, Any]:
        """The one interval shape (``stats.Interval``), then what a difference adds."""
        return {"kind": self.kind, **self.interval().to_dict(), "p_holm": self.p_holm,
                "caveat": self.caveat, **self.extra}


def paired_difference(base: Sequence[float], new: Sequence[float], *, kind: str = "judge",
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> Difference:
    """Mean of ``new - base`` over paired samples with its 95% interval and p-value:
    the randomization test below ``SMALL_SAMPLE`` pairs, the percentile bootstrap above."""
    d = np.asarray(new, dtype=float) - np.asarray(base, dtype=float)
    n = int(d.size)
    if n == 0:
        return Difference(kind, None, None, 0, reason="no sample scored in both runs")
    est = _estimate(kind, base, new, d, n_resamples, seed)
    est.spread = float(np.std(d, ddof=1)) if n > 1 else None
    est.changed = int(np.count_nonzero(np.abs(d) > 1e-9))
    return est


def _estimate(kind: str, base: Sequence[float], new: Sequence[float], d: np.ndarray,
              n_resamples: int, seed: int) -> Difference:
    from localeval.stats import bootstrap_means, is_binary, percentile_interval

    n = int(d.size)
    point = float(d.mean())
    if is_binary(base, new):
        return _binary(kind, base, new)
    if n < SMALL_SAMPLE:
        return _randomization(kind, d, point, n_resamples, seed)
    if np.all(d == d[0]):  # every resample gives the same mean: no draw needed
        return Difference(kind, point, (point, point), n, p=1.0 if point == 0 else 0.0)
    boot = bootstrap_means(d[None, :], n_resamples=n_resamples, seed=seed)[0]
    ci, _, _ = percentile_interval(boot, level=LEVEL)  # every resample mean is defined
    p = min(1.0, 2 * min(float(np.mean(boot <= 0)), float(np.mean(boot >= 0))))
    return Difference(kind, point, ci, n, p=p, caveat=_bootstrap_caveat(n))


def _binary(kind: str, base: Sequence[float], new: Sequence[float]) -> Difference:
    """Paired 0/1 scores: the exact McNemar test and Newcombe's interval, at any size."""
    from localeval.stats import paired_binary

    r = paired_binary(base, new, level=LEVEL)
    return Difference(kind, r.diff, r.ci, r.n, p=r.p, method=BINARY_METHOD, binary=True,
                      extra={"pairs_changed": {"gained": r.gained, "lost": r.lost,
                                               "unchanged": r.both + r.neither,
                                               "interval_reaches_0_by_the_exact_test":
                                                   r.widened}})


def _bootstrap_caveat(n: int) -> str:
    from localeval.versions.reliability import unreliable_at

    worst = unreliable_at(n)
    return f"{n} pairs, bootstrap interval: not reliable at this size for {worst}" if worst \
        else ""


def _randomization(kind: str, d: np.ndarray, point: float, n_resamples: int, seed: int
                   ) -> Difference:
    from localeval.stats import sign_flip

    r = sign_flip(d, level=LEVEL, n_resamples=n_resamples, seed=seed)
    method = EXACT_METHOD if r.exact else RANDOM_METHOD
    if r.ci is None:
        return Difference(kind, point, None, int(d.size), method=method, reason=r.reason)
    return Difference(kind, point, r.ci, int(d.size), p=r.p, method=method,
                    caveat=small_sample_caveat(int(d.size)),
                    extra={"arrangements": r.arrangements,
                           "coverage_at_least": round(r.coverage, 4)})


def small_sample_caveat(n: int) -> str:
    """What an interval from ``n`` pairs (fewer than SMALL_SAMPLE) can and cannot say."""
    from localeval.versions.reliability import unreliable_at

    text = (f"only {n} pairs: a randomization interval, sure to cover 95% only if the "
            "per-sample changes are symmetric about their mean")
    worst = unreliable_at(n)
    if worst:
        text += f"; not reliable at this size for {worst}"
    return text


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
