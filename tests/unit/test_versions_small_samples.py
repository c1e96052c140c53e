"""The diff with few pairs: the exact randomization (sign-flip) test and Hartigan's interval.

The bootstrap it replaces below ``SMALL_SAMPLE`` pairs covered 83% with 6 pairs
and failed the gate 9% of the time with no true difference; two identical
differences gave "worse by 0.100 [0.100, 0.100], p = 0.000". Checked here:
the p-value is scipy's exact permutation test, the interval is Hartigan's
subset-mean interval and inverts that test (excludes 0 exactly when p < 0.05),
no interval below 6 pairs (the one-sided gate then says whether it could have
failed at all, and ``--fail-if-underpowered`` fails it where it could not),
and a simulation with known truth (tests/unit/versions_sim.py) meets 93%
coverage, and the one-sided ``--fail-if-worse`` gate at most 5% false failures,
wherever the caveat does not say otherwise.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import permutation_test
from versions_sim import ALPHA, DISTRIBUTIONS, gate_p, rates, tail_counts

from localeval.cli.app import main
from localeval.stats import sign_flip
from localeval.versions import paired_difference
from localeval.versions.estimate import CI_METHOD, EXACT_METHOD, RANDOM_METHOD, SMALL_SAMPLE
from localeval.versions.reliability import SHORTFALLS, unreliable_at

NO_INTERVAL = ("fewer than 6 paired samples: no 95% interval can be shown (a paired "
               "randomization test cannot reach 95% with {n} pairs)")


def test_six_pairs_with_no_true_difference_cover_and_rarely_fail_the_gate():
    """The hostile round's case: 6 pairs, no true difference (the bootstrap: 83%, 9%)."""
    rng = np.random.default_rng(5)
    trials, covered, failed = 1000, 0, 0
    for _ in range(trials):
        base = rng.uniform(0, 1, 6)
        e = paired_difference(base, base + rng.normal(0, 0.2, 6))
        covered += e.ci[0] <= 0 <= e.ci[1]
        failed += e.ci[1] < 0
    assert covered / trials >= 0.95 and failed / trials <= 0.025 + 0.015, (covered, failed)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_fewer_than_six_pairs_have_no_interval(n):
    e = paired_difference([0.5] * n, [0.4] * n)
    assert e.ci is None and e.p is None and e.diff == pytest.approx(-0.1)
    assert e.reason == NO_INTERVAL.format(n=n).replace("1 pairs", "1 pair")


def _run(d: Path, scores: list[float], metric: str = "faithfulness") -> Path:
    d.mkdir(parents=True)
    (d / "results.jsonl").write_text("".join(
        json.dumps({"id": f"s{i}", "question": f"Q{i}?", "scores": {metric: v}}) + "\n"
        for i, v in enumerate(scores)))
    return d


def test_two_identical_differences_cannot_fail_the_gate_and_say_so(tmp_path, capsys):
    base = _run(tmp_path / "a", [0.5, 0.6])
    new = _run(tmp_path / "b", [0.4, 0.5])
    code = main(["diff", str(base), str(new), "-o", str(tmp_path / "out"),
                 "--fail-if-worse", "faithfulness"])
    cap = capsys.readouterr()
    # two pairs: the one-sided gate could not have failed (its smallest p is 1/4); it says
    # so and passes, and --fail-if-underpowered turns that into a failure
    assert code == 0
    assert "gate passed: faithfulness: not shown worse" in cap.err
    assert "this gate could not have failed at this size" in cap.err
    assert "[0.100, 0.100]" not in cap.out + cap.err and "p = 0.000" not in cap.out
    assert "not compared" in cap.out
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "out")]) == 0
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "out2"),
                 "--fail-if-worse", "faithfulness", "--fail-if-underpowered"]) == 1
    assert "gate failed: faithfulness: not shown worse" in capsys.readouterr().err


@pytest.mark.parametrize("n,seed", [(6, 0), (7, 1), (9, 2), (12, 3)])
def test_p_is_scipy_s_exact_permutation_test_and_the_interval_hartigan_s(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    y = x + rng.normal(0.1, 0.2, n)
    e = paired_difference(x, y)
    res = permutation_test((x, y), lambda a, b, axis=-1: np.mean(b - a, axis=axis),
                           permutation_type="samples", n_resamples=np.inf, vectorized=True)
    assert e.p == pytest.approx(res.pvalue, abs=1e-12) and e.method == EXACT_METHOD
    d = y - x
    means = sorted(np.mean(c) for r in range(1, n + 1)
                   for c in itertools.combinations(d, r))
    k = math.floor(0.025 * 2 ** n)
    assert e.ci == pytest.approx((means[k - 1], means[-k]), abs=1e-12)
    assert e.extra["coverage_at_least"] == pytest.approx(1 - 2 * k / 2 ** n, abs=1e-4)


@pytest.mark.parametrize("n", [6, 8, 13, 20, 25, 60])
def test_interval_excludes_zero_exactly_when_p_is_below_5_percent(n):
    """Coherent on continuous and on tied (judge-like) differences, exact and random."""
    rng = np.random.default_rng(n)
    agree = 0
    for trial in range(40 if n <= 13 else 8):
        if trial % 2:
            d = rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0], n)
        else:
            d = rng.normal(0.4, 1.0, n)
        e = paired_difference(np.zeros(n), d, n_resamples=999)
        excludes = e.ci[0] > 0 or e.ci[1] < 0
        assert excludes == (e.p < 0.05), (d, e)
        agree += 1
    assert agree


@pytest.mark.parametrize("n", [7, 30])
def test_interval_ends_are_where_the_test_turns(n):
    """Inverting the test: at each end the test at that centre does not reject; just
    outside it does (the same sign vectors: the same seed)."""
    rng = np.random.default_rng(n)
    d = rng.normal(0.2, 1.0, n)
    lo, hi = sign_flip(d, n_resamples=999).ci
    eps = 1e-7
    for t, inside in ((lo, True), (hi, True), (lo - eps, False), (hi + eps, False)):
        assert (sign_flip(d - t, n_resamples=999).p >= 0.05) == inside, (t, inside)


def test_methods_by_size_and_large_runs_keep_the_bootstrap():
    rng = np.random.default_rng(0)
    for n, method in ((6, EXACT_METHOD), (20, EXACT_METHOD), (21, RANDOM_METHOD),
                      (SMALL_SAMPLE - 1, RANDOM_METHOD), (SMALL_SAMPLE, CI_METHOD)):
        x = rng.uniform(size=n)
        e = paired_difference(x, x + rng.normal(0, 0.1, n))
        assert e.method == method, n
        assert bool(e.caveat) == (n < 500)  # the bootstrap's: skewed changes (reliability)
        assert e.to_dict()["method"] == method


def test_the_simulation_counts_are_the_diff_s_own_interval():
    """versions_sim's vectorised counts give what paired_difference gives, trial by trial."""
    rng = np.random.default_rng(3)
    for n in (6, 9, 20, 30):
        d = rng.normal(0.1, 1.0, (12, n))
        d[::3] = rng.choice([-1.0, 0.0, 1.0], (4, n))
        for t in (0.0, 0.25):
            le, ge, k = tail_counts(d, t, n_resamples=999)
            for row, a, b in zip(d, le, ge):
                e = paired_difference(np.zeros(n), row, n_resamples=999)
                assert (a > k and b > k) == (e.ci[0] <= t <= e.ci[1]), (n, t, row)
        # the gate's one-sided p of a loss (gate_tests: sign_flip's p_greater of -d)
        for row, p in zip(d, gate_p(d, n_resamples=999)):
            assert p == sign_flip(-row, n_resamples=999).p_greater, (n, row)


def test_simulated_coverage_and_gate_false_failures():
    """Known truth, 1000 trials a cell: every cell meets 93% coverage and the one-sided
    gate's 5% false-failure rate, within simulation error (2 and 3 standard errors),
    unless ``reliability`` names it, and then every interval from that many pairs says so.
    (``python tests/unit/versions_sim.py --trials 10000`` gives the documented table.)"""
    rng = np.random.default_rng(20240611)
    trials = 1000
    cov_se = math.sqrt(0.93 * 0.07 / trials)
    short = []
    for name, (draw, shift) in DISTRIBUTIONS.items():
        for n in (2, 3, 5, 6, 8, 10, 15, 20, 40, 200):
            zero = draw(rng, trials, n, False)
            cov0, fail, se = rates(zero, 0.0, n_resamples=999)
            cov1, _, _ = rates(draw(rng, trials, n, True), shift, n_resamples=999)
            if cov0 is None:  # no interval below 6 pairs; the one-sided gate still tests
                assert n < 6
                # 5 pairs all worse: p = 1/32; fewer can never fail. Right-skewed changes
                # are all losses often enough to fail (0.63^5): no interval, no caveat
                assert fail == 0.0 if n < 5 else (
                    fail <= ALPHA + 3 * se or "right-skewed" in name), (name, n, fail)
                continue
            ok = min(cov0, cov1) >= 0.93 - 2 * cov_se and fail <= ALPHA + 3 * se
            named = any(s.first <= n <= s.last and name in s.kinds for s in SHORTFALLS)
            if not ok:
                short.append((name, n, cov0, cov1, fail))
                assert named and unreliable_at(n), (name, n, cov0, cov1, fail)
                assert "not reliable at this size" in paired_difference(
                    np.zeros(n), rng.normal(size=n)).caveat
    # the skewed distributions are the ones that fall short, and only they
    assert short and all("skewed" in s[0] for s in short)
