"""The one-sided tests behind a version diff's gates, and the most each could show.

A gate asks a one-sided question, so it tests one-sided at the level it
states (5%):

- ``--fail-if-worse METRIC=MARGIN`` ("worse"): is the mean loss of new against
  base larger than MARGIN? It fails when the one-sided p is below 5%.
- ``--require-not-worse METRIC=MARGIN`` ("not_worse", non-inferiority): is
  the mean loss smaller than MARGIN? It passes only when the one-sided p is
  below 5%: pass means evidence of no regression beyond the margin.

The test is the diff's own, made one-sided, on the per-pair losses (base -
new, or new - base where lower is better) shifted by the margin:

- paired 0/1 scores, margin 0: the exact McNemar (sign) test on the changed
  pairs (``stats.mcnemar_p``); a margin above 0 has no exact conditional form,
  so the test inverts Newcombe's interval at the one-sided level (the p is
  the level at which its bound reaches the margin);
- graded scores below ``estimate.SMALL_SAMPLE`` pairs: the paired
  randomization (sign-flip) test of the shifted losses, its one-sided tail
  (``stats.sign_flip``'s ``p_greater`` / ``p_less``), same draws as the diff;
- from ``SMALL_SAMPLE`` pairs: the bootstrap test read from the diff's own
  resamples (the share of resampled mean losses on the wrong side of the margin).

``p_min`` is the smallest p this test can give at this size (every changed
pair the gate's way): where even that is not below the level, the gate could
not have failed (or, for "not_worse", could not have passed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from localeval.versions.diff import MetricDiff
from localeval.versions.estimate import SMALL_SAMPLE

__all__ = ["OneSided", "one_sided"]


@dataclass(frozen=True)
class OneSided:
    """A one-sided test of a gate: its p, the smallest p possible at this size, how."""

    p: float
    p_min: float
    method: str
    #: the mean loss (base - new, direction-aware; > 0 is worse) over the scored pairs
    loss: float
    n: int
    changed: int


def _newcombe_p(both: int, gained: int, lost: int, neither: int, margin: float,
                worse: bool) -> float:
    """The one-sided level at which Newcombe's bound of the loss reaches ``margin``."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    from localeval.stats import newcombe_interval

    def beyond(a: float) -> float:
        lo, hi = newcombe_interval(both, gained, lost, neither, z=float(norm.isf(a)))
        # the loss is -(new - base): its lower bound is -hi, its upper bound -lo
        return (-hi - margin) if worse else (margin - (-lo))

    if beyond(0.5) <= 0:  # not even the point is past the margin
        return 1.0
    if beyond(1e-12) > 0:
        return 1e-12
    return float(brentq(beyond, 1e-12, 0.5, xtol=1e-12))


def _binary(gain: np.ndarray, base: np.ndarray, margin: float, worse: bool
            ) -> tuple[float, float, str]:
    from localeval.stats import mcnemar_p

    gained, lost = int(np.sum(gain > 0)), int(np.sum(gain < 0))
    kept = gain == 0
    both = int(np.sum(kept & (base > 0.5)))
    neither = int(np.sum(kept)) - both
    if margin == 0:
        alt = "less" if worse else "greater"  # worse: few gained of the changed
        p = mcnemar_p(lost, gained, alt)
        p_min = 0.5 ** (gained + lost) if gained + lost else 1.0
        return p, p_min, "exact McNemar (sign) test, one-sided"
    p = _newcombe_p(both, gained, lost, neither, margin, worse)
    m = gained + lost
    extreme = (both, 0, m, neither) if worse else (both, m, 0, neither)
    return p, _newcombe_p(*extreme, margin, worse), \
        "Newcombe's interval (method 10) inverted at the one-sided level"


def one_sided(md: MetricDiff, margin: float, worse: bool, *, n_resamples: int, seed: int
              ) -> OneSided | None:
    """The gate's one-sided test on ``md``'s pairs scored in both; None without any pair."""
    from localeval.stats import bootstrap_means, sign_flip

    sc = md.scored
    if not sc:
        return None
    gain = np.array([s.gain for s in sc], dtype=float)  # > 0: better, whatever the direction
    loss = -gain
    n = int(gain.size)
    changed = int(np.count_nonzero(np.abs(gain) > 1e-9))
    e = md.judge
    if e.binary:
        # "good" in base: 1, or 0 where lower is better (the table's rows, gain's way)
        good = np.array([(s.base or 0.0) < 0.5 if md.lower_is_better else (s.base or 0.0) > 0.5
                         for s in sc], dtype=float)
        p, p_min, method = _binary(np.sign(np.round(gain)), good, margin, worse)
    elif n < SMALL_SAMPLE:
        x = loss - margin  # worse: is its mean > 0? not_worse: is it < 0?
        r = sign_flip(x, n_resamples=n_resamples, seed=seed)
        p = float(r.p_greater if worse else r.p_less)
        # every nonzero change the gate's way: only the arrangements that flip none of
        # them reach the observed sum (with random sign vectors, at least 1 of B + 1)
        nonzero = int(np.count_nonzero(np.abs(x) > 1e-9 * float(np.max(np.abs(x)))))
        p_min = max(0.5 ** nonzero, 1 / r.arrangements)
        method = "paired randomization (sign-flip) test, one-sided"
    else:
        boot = bootstrap_means(loss[None, :], n_resamples=n_resamples, seed=seed)[0]
        p = float(np.mean(boot <= margin)) if worse else float(np.mean(boot >= margin))
        p_min = 0.0
        method = "bootstrap test from the diff's resamples, one-sided"
    return OneSided(min(1.0, p), min(1.0, p_min), method, float(np.mean(loss)), n, changed)


def fmt_p(p: float) -> str:
    """A p-value in words that never reads as 0."""
    return f"{p:.3f}" if p >= 0.001 else "< 0.001" if p > 0 else "0"


def one_way_needed(alpha: float) -> int:
    """Changed pairs, all one way, a one-sided exact test needs at ``alpha`` (5 at 5%)."""
    from localeval.stats import changed_pairs_needed

    return changed_pairs_needed(alpha, sided=1)


def isclose(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
