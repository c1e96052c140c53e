"""The diff's statistics: from 100 pairs the paired interval equals scipy's bootstrap,
covers the truth at its nominal rate in simulation, and the gate rarely fires when
nothing changed (fewer pairs: tests/unit/test_versions_small_samples.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap

from localeval.resultsets import ResultSet
from localeval.versions import diff_runs, paired_difference, worse_failures
from localeval.versions.estimate import holm


@pytest.mark.parametrize("n,seed", [(100, 0), (130, 3), (200, 11)])
def test_interval_equals_scipy_paired_bootstrap(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    y = np.clip(x + rng.normal(0.05, 0.2, n), 0, 1)
    e = paired_difference(x, y, seed=seed)
    res = bootstrap((x, y), lambda a, b, axis=-1: np.mean(b - a, axis=axis), paired=True,
                    vectorized=True, method="percentile", rng=np.random.default_rng(seed))
    assert e.ci == pytest.approx((res.confidence_interval.low, res.confidence_interval.high),
                                 abs=1e-9)
    assert e.diff == pytest.approx(float(np.mean(y - x)))
    inside = e.ci[0] <= 0 <= e.ci[1]
    assert (e.p >= 0.05) == inside or abs(e.p - 0.05) < 0.01  # same resamples, same answer


def test_degenerate_inputs():
    assert paired_difference([], []).reason == "no sample scored in both runs"
    assert paired_difference([0.5], [0.7]).ci is None
    assert paired_difference([0.2, 0.4], [0.2, 0.4]).ci is None  # below 6 pairs: none
    e = paired_difference([0.2, 0.4] * 60, [0.2, 0.4] * 60)
    assert e.ci == (0.0, 0.0) and e.p == 1.0
    e = paired_difference([0.2, 0.4] * 3, [0.2, 0.4] * 3)  # six pairs, none changed
    assert e.ci == (0.0, 0.0) and e.p == 1.0


def test_holm_matches_hand_computed():
    # p = .01, .04, .03 -> sorted .01*3, .03*2, .04*1 -> .03, .06, .06 (monotone)
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert holm([0.5]) == [0.5]


def _sets(rng, n: int, true_diff: float) -> tuple[ResultSet, ResultSet]:
    base = rng.uniform(0, 1, n)
    new = base + true_diff + rng.normal(0, 0.25, n)
    ids = [f"s{i}" for i in range(n)]
    return (ResultSet.from_scores({i: {"m": float(v)} for i, v in zip(ids, base)}),
            ResultSet.from_scores({i: {"m": float(v)} for i, v in zip(ids, new)}))


@pytest.mark.slow
def test_simulated_coverage_and_gate_false_alarms():
    """500 synthetic pairs of runs through diff_runs (the command's path), 1000 percentile
    resamples each for speed (the interval's method is the same at any count)."""
    rng = np.random.default_rng(20240601)
    covered = false_alarms = 0
    trials, n, truth = 500, 80, 0.05
    for _ in range(trials):
        b, nw = _sets(rng, n, truth)
        d = diff_runs(b, nw, n_resamples=1000, seed=int(rng.integers(1 << 31)))
        lo, hi = d.metrics[0].judge.ci
        # the truth of this data set: its population mean difference is `truth`
        covered += lo <= truth <= hi
        b0, n0 = _sets(rng, n, 0.0)
        d0 = diff_runs(b0, n0, n_resamples=1000, seed=int(rng.integers(1 << 31)))
        false_alarms += bool(worse_failures(d0, {"m": 0.0}))
    assert 0.93 <= covered / trials <= 0.97, covered / trials
    # the gate is one-sided at 5% (it was the two-sided interval's 2.5%): at most 5%,
    # within three standard errors of a 5% rate over these trials
    assert false_alarms / trials < 0.05 + 3 * (0.05 * 0.95 / trials) ** 0.5, \
        false_alarms / trials
