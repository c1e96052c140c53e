"""The statistics behind the diff's verdicts for paired 0/1 scores, and the power figures.

The exact McNemar test is scipy's binomial test on the changed pairs; Newcombe's
interval (method 10) is checked against its formula, its coverage by seeded
simulation at n = 2 to 200, and its agreement with the exact test (it excludes 0
exactly when p < 0.05). The power of the exact test is checked against a
simulation of the test itself, and the graded formula against the simulated
detection rate of the diff's randomization test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from localeval.stats import (
    binary_power,
    binary_questions,
    changed_pairs_needed,
    graded_detectable,
    graded_questions,
    is_binary,
    mcnemar_p,
    newcombe_interval,
    paired_binary,
    sign_flip,
    smallest_shown,
)

SIZES = (2, 3, 5, 10, 20, 50, 200)


def test_binary_is_decided_from_the_values():
    assert is_binary([1, 0, 1.0], [0.0, 0, 1])
    assert not is_binary([1, 0, 0.5], [0, 1, 1])
    assert not is_binary([1, None], [0, 1])
    assert not is_binary([], [])


def test_the_exact_test_is_scipy_s_binomial_test_on_the_changed_pairs():
    assert mcnemar_p(5, 0) == pytest.approx(0.0625)  # five lost of five: 2/32
    assert mcnemar_p(5, 0, "less") == pytest.approx(1 / 32)  # one-sided: evidence of worse
    assert mcnemar_p(5, 0, "greater") == pytest.approx(1.0)
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(7, 2) == pytest.approx(binomtest(2, 9, 0.5).pvalue)
    assert changed_pairs_needed(0.05, 2) == 6 and changed_pairs_needed(0.05, 1) == 5


def test_the_trial_five_lost_of_ten_is_not_shown_and_says_what_could_be():
    # hit rate 0.9 -> 0.4: 4 kept hits, 5 lost, 1 miss in both
    r = paired_binary([1] * 9 + [0], [1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    assert (r.both, r.gained, r.lost, r.neither) == (4, 0, 5, 1)
    assert r.diff == pytest.approx(-0.5) and r.p == pytest.approx(0.0625)
    # Newcombe's own interval excludes 0 ([-0.746, -0.082]); the exact test does not
    # reject, so the interval reaches 0
    lo, hi = newcombe_interval(4, 0, 5, 1)
    assert lo == pytest.approx(-0.7459, abs=1e-4) and hi < 0
    assert r.widened and r.ci[1] == 0.0 and r.ci[0] == pytest.approx(lo)
    assert smallest_shown(5, 10) is None  # five changed pairs can show nothing
    assert smallest_shown(6, 10) == (6, pytest.approx(0.6))


def test_newcombe_matches_its_formula_on_a_table():
    # Fagerland et al.'s example layout: 59 / 6 / 16 / 80 (both, gained, lost, neither)
    both, gained, lost, neither = 59, 6, 16, 80
    n = both + gained + lost + neither
    z = 1.959963984540054

    def wilson(k):
        p = k / n
        c = (p + z * z / (2 * n)) / (1 + z * z / n)
        h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return c - h, c + h

    p1, p2 = (both + gained) / n, (both + lost) / n
    (l1, u1), (l2, u2) = wilson(both + gained), wilson(both + lost)
    a = both * neither - gained * lost
    phi = (a - n / 2) / math.sqrt((both + gained) * (lost + neither) * (both + lost)
                                  * (gained + neither))
    lo = p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2))
    hi = p1 - p2 + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1))
    assert newcombe_interval(both, gained, lost, neither) == pytest.approx((lo, hi), abs=1e-12)


@pytest.mark.parametrize("n", range(1, 21))
def test_the_interval_excludes_0_exactly_when_the_exact_test_rejects(n):
    """Every table of n pairs: the verdict (exact p) and the interval never disagree."""
    for gained in range(n + 1):
        for lost in range(n + 1 - gained):
            for both in range(n + 1 - gained - lost):
                base = [1] * both + [0] * gained + [1] * lost + [0] * (n - both - gained - lost)
                new = [1] * both + [1] * gained + [0] * lost + [0] * (n - both - gained - lost)
                r = paired_binary(base, new)
                lo, hi = r.ci
                assert (lo > 0 or hi < 0) == (r.p < 0.05), (both, gained, lost)
                assert lo <= r.diff <= hi


def _coverage(n: int, p_base: float, p_new: float, rho: float, trials: int, rng) -> float:
    """Share of seeded trials whose interval holds the true difference p_new - p_base."""
    # a joint distribution of (base, new) with these margins and some dependence
    p11 = min(p_base, p_new) * rho + p_base * p_new * (1 - rho)
    probs = np.array([p11, p_new - p11, p_base - p11, 1 - p_base - p_new + p11])
    assert np.all(probs >= -1e-12)
    counts = rng.multinomial(n, np.clip(probs, 0, None) / np.clip(probs, 0, None).sum(),
                             size=trials)
    truth = p_new - p_base
    hit = 0
    for both, gained, lost, neither in counts:
        base = [1] * both + [0] * gained + [1] * lost + [0] * neither
        new = [1] * both + [1] * gained + [0] * lost + [0] * neither
        lo, hi = paired_binary(base, new).ci
        hit += lo - 1e-12 <= truth <= hi + 1e-12
    return hit / trials


@pytest.mark.parametrize("n", SIZES)
def test_the_interval_covers_at_every_size(n):
    """Seeded simulation, 600 trials a cell, over no change, a loss and a gain with
    independent and correlated pairs: the mean coverage is at least 95% (Monte-Carlo
    tolerance), and no cell falls below 90%."""
    rng = np.random.default_rng(1000 + n)
    cells = [(0.9, 0.9, 0.5), (0.7, 0.7, 0.0), (0.9, 0.4, 0.5), (0.5, 0.6, 0.3),
             (0.3, 0.1, 0.0), (0.8, 0.7, 0.8)]
    cov = [_coverage(n, pb, pn, rho, 600, rng) for pb, pn, rho in cells]
    assert np.mean(cov) >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / (600 * len(cells))), cov
    assert min(cov) >= 0.90, cov


def test_exact_power_matches_a_simulation_of_the_test():
    rng = np.random.default_rng(7)
    n, q, delta, trials = 30, 0.4, 0.25, 4000
    pi = (q + delta) / (2 * q)
    hits = 0
    for _ in range(trials):
        m = rng.binomial(n, q)
        gained = rng.binomial(m, pi)
        hits += mcnemar_p(m - gained, gained) < 0.05
    assert binary_power(n, q, delta) == pytest.approx(hits / trials, abs=0.025)


def test_questions_needed_reach_the_power_and_one_fewer_may_not():
    for q, d in ((0.5, 0.5), (0.3, 0.1), (0.2, 0.05)):
        n = binary_questions(q, d)
        assert n is not None and binary_power(n, q, d) >= 0.8
    assert binary_questions(0.5, 0.5) == 15  # the trial: 5 of 10 changed, all lost


@pytest.mark.parametrize("n", (10, 20, 50))
def test_graded_detectable_difference_is_detected_about_80_percent(n):
    """At the smallest detectable difference the diff's own randomization test (two-sided,
    5%) detects normal changes about 80% of the time (normal approximation, t quantiles)."""
    rng = np.random.default_rng(n)
    sd = 0.2
    delta = graded_detectable(sd, n)
    assert delta is not None
    trials = 300 if n < 20 else 150
    hits = sum(sign_flip(rng.normal(delta, sd, n), n_resamples=999, seed=1).p < 0.05
               for _ in range(trials))
    assert abs(hits / trials - 0.8) < 0.1, hits / trials


def test_graded_questions_invert_the_detectable_difference():
    n = graded_questions(0.3, 0.1)
    assert n is not None and graded_detectable(0.3, n) <= 0.1 < graded_detectable(0.3, n - 1)
    assert graded_detectable(0.3, 1) is None
