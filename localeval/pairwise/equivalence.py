"""The zone of practical equivalence of a preference, and the preference's interval.

A preference for NEW of 0.5 is no preference. A judge whose probabilities lean by
one in a hundred thousand, over pairs judged alike, gives an interval that can lie
above 0.5 and still mean nothing: the **margin** ``m`` (default ``DEFAULT_MARGIN``,
0.05) says how far from 0.5 a preference must be to matter. Read against the
95% interval ``[low, high]`` of the preference (``zone``):

- ``low > 0.5 + m``: NEW is preferred (the interval leaves the zone on NEW's side);
- ``high < 0.5 - m``: BASE is preferred;
- ``0.5 - m <= low`` and ``high <= 0.5 + m``: no practical difference (the whole
  interval lies inside the zone: two one-sided tests at 2.5% each, read off one
  95% interval);
- anything else: not shown, in either direction.

For Bradley-Terry strengths the same margin is ``strength_margin(m)``: the strength
difference d of two versions is the log-odds of one preferred to the other, so
P in [0.5 - m, 0.5 + m] exactly when |d| <= log((0.5 + m) / (0.5 - m)) (0.20 at 0.05).

The interval (``preference_interval``) is that of ``diff``: below
``SIGN_FLIP_BELOW`` pairs the paired randomization (sign-flip) test of the
per-pair preferences about 0.5 and Hartigan's interval (``stats.sign_flip``), at and
above it ``stats``' percentile bootstrap over pairs. Why the sign flip: "no
preference" means the two versions are exchangeable, and swapping them turns every
pair's order-averaged preference x into 1 - x (a win into a loss, a tie into a tie),
so under no preference the per-pair values are symmetric about 0.5 and the test is
exact at every size; the percentile bootstrap is not (three pairs of three wins give
[1.00, 1.00], which a judge with no preference produces one time in eight). With
fewer than 6 pairs no arrangement is rare enough for a 95% interval, and none is
given.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from localeval.errors import UsageError
from localeval.stats import Interval, bootstrap_ci, min_pairs, sign_flip

__all__ = ["DEFAULT_MARGIN", "SIGN_FLIP_BELOW", "NEW", "BASE", "EQUIVALENT", "NOT_SHOWN",
           "NO_ESTIMATE", "BOOTSTRAP_METHOD", "EXACT_METHOD", "RANDOM_METHOD", "check_margin",
           "zone", "strength_margin", "preference_interval", "margin_text"]

#: The documented default margin of a preference: 0.5 +/- 0.05.
DEFAULT_MARGIN = 0.05
#: Below this many pairs the randomization interval, at and above it the bootstrap (as diff).
SIGN_FLIP_BELOW = 100
#: ``zone``'s answers.
NEW, BASE, EQUIVALENT, NOT_SHOWN, NO_ESTIMATE = (
    "NEW preferred", "BASE preferred", "no practical difference", "not shown", "no estimate")
BOOTSTRAP_METHOD = "percentile bootstrap over pairs"
EXACT_METHOD = ("exact randomization (sign-flip) test of the per-pair preferences about "
                "0.5, Hartigan's subset-mean interval")
RANDOM_METHOD = ("randomization (sign-flip) test of the per-pair preferences about 0.5 on "
                 "random sign vectors, Hartigan's random-subset interval")


def check_margin(margin: object, option: str = "margin") -> float:
    """The margin as a float in [0, 0.5); a UsageError naming ``option`` otherwise (before
    any work: a margin of 0.5 or more would call every preference no difference)."""
    if isinstance(margin, bool):
        raise UsageError(f"{option} must be a number from 0 to below 0.5, not {margin!r}")
    try:
        m = float(margin)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UsageError(f"{option} must be a number from 0 to below 0.5, not {margin!r}"
                         ) from None
    if not (math.isfinite(m) and 0.0 <= m < 0.5):
        raise UsageError(f"{option} must be a number from 0 to below 0.5 (a preference of "
                         f"0.5 +/- the margin counts as none), not {margin!r}")
    return m


def zone(interval: Interval, margin: float, centre: float = 0.5) -> str:
    """Where ``interval`` lies against ``centre +/- margin``: ``NEW`` (above), ``BASE``
    (below), ``EQUIVALENT`` (inside), ``NOT_SHOWN`` (across an edge, or no interval) or
    ``NO_ESTIMATE`` (no value)."""
    if interval.value is None:
        return NO_ESTIMATE
    if interval.low is None or interval.high is None:
        return NOT_SHOWN
    if interval.low > centre + margin:
        return NEW
    if interval.high < centre - margin:
        return BASE
    if centre - margin <= interval.low and interval.high <= centre + margin:
        return EQUIVALENT
    return NOT_SHOWN


def strength_margin(margin: float) -> float:
    """The Bradley-Terry strength difference that is a preference of 0.5 + ``margin``."""
    return math.log((0.5 + margin) / (0.5 - margin))


def margin_text(margin: float) -> str:
    """"0.5 ± 0.05" (the zone in words)."""
    return f"0.5 ± {margin:.2g}"


def preference_interval(values: Sequence[float], *, n_resamples: int, seed: int,
                        what: str) -> Interval:
    """The mean of per-pair preferences with its 95% interval (see the module docstring).

    No value: no estimate, with the reason (never NaN). Fewer than 6 values: the mean
    with the reason there is no interval. ``what``: the pairs counted, plural ("judged
    pairs"), for the reasons.
    """
    n = len(values)
    if n == 0:
        return Interval(None, None, None, 0, BOOTSTRAP_METHOD, reason=f"no {what}")
    mean = float(sum(values) / n)
    if n >= SIGN_FLIP_BELOW:
        ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        if ci is None:
            return Interval(mean, None, None, n, BOOTSTRAP_METHOD, reason="no interval")
        return Interval(mean, ci[0], ci[1], n, BOOTSTRAP_METHOD)
    sf = sign_flip(np.asarray(values, dtype=float) - 0.5, n_resamples=n_resamples, seed=seed)
    method = EXACT_METHOD if sf.exact else RANDOM_METHOD
    if sf.ci is None:
        need = min_pairs()
        one = what.replace("pairs", "pair", 1) if n == 1 else what
        reason = (f"no 95% interval from {n} {one} (a randomization test cannot reach 95% "
                  f"with fewer than {need})"
                  if n < need else sf.reason)
        return Interval(mean, None, None, n, method, p=sf.p, reason=reason)
    low, high = 0.5 + sf.ci[0], 0.5 + sf.ci[1]
    # rounding in the shift back: an interval never leaves [0, 1] nor misses its own mean
    # by a last bit where every value is the same
    low, high = max(0.0, min(low, mean)), min(1.0, max(high, mean))
    return Interval(mean, low, high, n, method, p=sf.p)
