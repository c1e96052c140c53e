"""Seeded simulations: corrected 95% intervals cover the true mean 93-97% of the time, and
are no wider than labels alone with a useless judge and clearly narrower with a good one.

Vectorised over 2,000 data sets per setting. For large N the unlabelled judge
scores enter through their sufficient statistics (their mean and variance,
drawn exactly for binary scores), which is all the estimator reads.
"""

from __future__ import annotations

import numpy as np
import pytest

from scipy import stats

from localeval.estimate import corrected_mean
from localeval.estimate.ppi import Moments, ppi_from_moments, pseudo_from_moments, z_value

S = 2000
Z = z_value(0.95)
TRUE_P = 0.6


def _labels(rng: np.random.Generator, shape: tuple[int, ...], graded: bool) -> np.ndarray:
    if graded:  # 1-5 rescaled to 0-1, mean 0.6
        return rng.choice([0, .25, .5, .75, 1], size=shape, p=[.1, .15, .2, .25, .3])
    return (rng.random(shape) < TRUE_P).astype(float)


def _true_mean(graded: bool) -> float:
    return float(np.dot([0, .25, .5, .75, 1], [.1, .15, .2, .25, .3])) if graded else TRUE_P


def _judge(rng: np.random.Generator, y: np.ndarray, quality: float,
           lenient: bool = False) -> np.ndarray:
    """Binary judge: agrees with the (binarised) label with probability 0.5 + quality / 2.

    ``lenient``: it errs only by saying yes (on a share (1 - quality) / 2 of all rows), so
    its bias is its whole disagreement rate, as with an LLM judge that passes too much.
    """
    truth = (y >= 0.5).astype(float)
    if lenient:
        return np.where(rng.random(y.shape) < (1 - quality) / 2 / (1 - TRUE_P), 1.0, truth)
    right = rng.random(y.shape) < 0.5 + quality / 2
    return np.where(right, truth, 1 - truth)


def _judge_rate(quality: float, graded: bool, lenient: bool) -> float:
    """The share of 1s among the judge's scores (exact for binary labels)."""
    if lenient and not graded:
        return TRUE_P + (1 - TRUE_P) * min(1.0, (1 - quality) / 2 / (1 - TRUE_P))
    if not graded:
        return TRUE_P * (0.5 + quality / 2) + (1 - TRUE_P) * (0.5 - quality / 2)
    return float(np.mean(_judge(np.random.default_rng(0), _labels(np.random.default_rng(1),
                                                                   (200000,), graded),
                                quality, lenient)))


def _moments(y: np.ndarray, fl: np.ndarray, nu: int, mfu: np.ndarray, vfu: np.ndarray
             ) -> Moments:
    cov = ((y - y.mean(1, keepdims=True)) * (fl - fl.mean(1, keepdims=True))).mean(1)
    return Moments(y.shape[1], y.mean(1), fl.mean(1), y.var(1), fl.var(1), cov, nu, mfu, vfu)


def _corrected(y: np.ndarray, fl: np.ndarray, nu: int, mfu: np.ndarray, vfu: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """(point, half-width) as ``corrected_mean`` computes them: the reference's point, its
    residual variance with the pseudo-rows, Student's t with n - 1 degrees of freedom."""
    n = y.shape[1]
    binary = np.isin(y, (0.0, 1.0)).all(1)
    point, se, _ = pseudo_from_moments(_moments(y, fl, nu, mfu, vfu), binary=binary)
    return point, float(stats.t.ppf(0.975, n - 1)) * se


def _labels_hw(y: np.ndarray) -> np.ndarray:
    """The labels-only half-width as ``labels_only`` reports it (the same with lam = 0)."""
    n = y.shape[1]
    zero = np.zeros(len(y))
    _, se, _ = pseudo_from_moments(Moments(n, y.mean(1), zero, y.var(1), zero, zero, 0, zero,
                                           zero), binary=np.isin(y, (0.0, 1.0)).all(1), lam=0.0)
    return float(stats.t.ppf(0.975, n - 1)) * se


def _simulate(rng: np.random.Generator, n: int, N: int, quality: float, graded: bool,
              lenient: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(corrected point, half-width, labels-only half-width) over S data sets of N rows, n
    labelled."""
    y = _labels(rng, (S, n), graded)
    fl = _judge(rng, y, quality, lenient)
    nu = N - n
    # unlabelled judge scores: a binary judge's count of 1s is binomial -> exact mean and var
    mfu = rng.binomial(nu, _judge_rate(quality, graded, lenient), S) / nu
    point, hw = _corrected(y, fl, nu, mfu, mfu * (1 - mfu))
    return point, hw, _labels_hw(y)


#: Every judge quality from random to perfect (agreeing 50% to 100%), binary and graded
#: labels, 20 to 500 labels, 200 to 100,000 rows.
GRID = [(n, N, q, graded) for n in (20, 30, 40) for N in (200, 5000, 100_000)
        for q in (0.0, 0.5, 0.8, 0.9, 0.95, 1.0) for graded in (False, True)]
GRID += [(n, N, q, graded) for n in (50, 100, 200, 500) for N in (20 * n, 100_000)
         for q in (0.0, 0.8, 0.9, 0.95, 0.98, 1.0) for graded in (False, True)]


def _upper(n: int, quality: float) -> float:
    """The most coverage a setting may reach.

    When the labelled set is expected to hold fewer than about 15
    disagreements with the judge, it often holds only a few or none; a perfect
    judge and one that is wrong on a few percent of rows then give about the
    same data, so an interval valid for the second
    (``test_a_lenient_judge_is_covered``) over-covers for the first: no
    interval can stay below 97% for both.
    """
    return 0.97 if n * (1 - quality) / 2 >= 15 else 1.0


@pytest.mark.parametrize("n,N,quality,graded", GRID)
def test_corrected_interval_covers_the_true_mean(n: int, N: int, quality: float,
                                                  graded: bool) -> None:
    point, hw, _ = _simulate(np.random.default_rng(n * 7 + N), n, N,
                             quality, graded)
    cover = np.mean(np.abs(point - _true_mean(graded)) <= hw)
    assert 0.93 <= cover <= _upper(n, quality), cover


@pytest.mark.parametrize("n", [20, 30, 40, 50, 100, 200, 500])
@pytest.mark.parametrize("quality", [0.5, 0.8, 0.9, 0.95, 0.98])
@pytest.mark.parametrize("graded", [False, True])
def test_a_lenient_judge_is_covered(n: int, quality: float, graded: bool) -> None:
    """A judge that errs only by passing too much: its bias is its whole disagreement rate."""
    for N in (20 * n, 100_000):
        point, hw, _ = _simulate(np.random.default_rng(n + N), n, N, quality, graded, True)
        cover = np.mean(np.abs(point - _true_mean(graded)) <= hw)
        assert 0.93 <= cover <= _upper(n, quality), (N, cover)


def test_a_perfect_judge_still_narrows_the_small_sample_interval() -> None:
    """The price of the pseudo-rows, bounded: with 20 agreeing labels the interval is at
    most about two-thirds of the labels-only one (0.58 measured; 0.08 without them)."""
    _, hw, hw_labels = _simulate(np.random.default_rng(3), 20, 5000, 1.0, False)
    assert np.mean(hw / hw_labels) <= 0.66


@pytest.mark.parametrize("n", [20, 30, 40, 50, 100])
@pytest.mark.parametrize("graded", [False, True])
def test_labels_only_interval_covers(n: int, graded: bool) -> None:
    from localeval.estimate import labels_only

    y = _labels(np.random.default_rng(n + graded), (S, n), graded)
    truth = _true_mean(graded)
    hits = [(e.low <= truth <= e.high) for e in map(labels_only, y)]
    assert 0.93 <= np.mean(hits) <= 0.97
    wald = [labels_only(r, reference=True) for r in y]
    assert all(e.df is None for e in wald)


def test_the_default_path_is_the_array_function() -> None:
    rng = np.random.default_rng(9)
    for n, graded in ((24, False), (60, True)):
        y = _labels(rng, (1, n), graded)
        f = np.concatenate([_judge(rng, y, 0.8)[0], rng.random(500)])
        est = corrected_mean(f, y[0], np.arange(n))
        point, hw = _corrected(y, f[None, :n], 500, np.array([f[n:].mean()]),
                               np.array([f[n:].var()]))
        assert est.df == n - 1
        assert est.mean == pytest.approx(float(point[0]), abs=1e-12)
        assert est.half_width == pytest.approx(float(hw[0]), abs=1e-12)


@pytest.mark.parametrize("n", [50, 100, 200, 500])
@pytest.mark.parametrize("graded", [False, True])
def test_a_useless_judge_costs_almost_nothing(n: int, graded: bool) -> None:
    _, hw, hw_labels = _simulate(np.random.default_rng(5 + n), n, 20 * n, 0.0, graded)
    assert np.mean(hw / hw_labels) <= 1.05


@pytest.mark.parametrize("n", [30, 40, 50, 100, 200, 500])
def test_a_judge_correlating_0_8_narrows_the_interval_by_a_quarter(n: int) -> None:
    # the binary judge's correlation with binary labels is its quality (balanced errors);
    # at 20 labels the pseudo-rows' share (3.84 of 23.84) leaves 0.77 (docs/calibrated-estimates.md)
    _, hw, hw_labels = _simulate(np.random.default_rng(6 + n), n, 20 * n, 0.8, False)
    assert np.mean(hw / hw_labels) <= 0.75


def test_moment_core_equals_the_array_function() -> None:
    rng = np.random.default_rng(8)
    y = _labels(rng, (40,), False)
    f = np.concatenate([_judge(rng, y, 0.7), rng.random(300)])
    est = corrected_mean(f, y, np.arange(40), reference=True)
    point, se, _ = ppi_from_moments(Moments(40, y.mean(), f[:40].mean(), y.var(), f[:40].var(),
                                            np.mean((y - y.mean()) * (f[:40] - f[:40].mean())),
                                            300, f[40:].mean(), f[40:].var()))
    assert est.mean == pytest.approx(float(point), abs=1e-12)
    assert est.se == pytest.approx(float(se), abs=1e-12)


def _paired(rng: np.random.Generator, n: int, N: int, quality: float, lenient: bool = False
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The paired difference new - old: labels in {-1, 0, 1}, judge differences likewise.

    The N - n unlabelled judge differences enter through their counts of -1, 0
    and 1 (multinomial), which give their mean and variance exactly.
    """
    rates = (0.65, 0.55)
    y_new, y_old = ((rng.random((S, n)) < r).astype(float) for r in rates)
    f_new, f_old = _judge(rng, y_new, quality, lenient), _judge(rng, y_old, quality, lenient)
    if lenient:
        a, b = (r + (1 - r) * min(1.0, (1 - quality) / 2 / (1 - TRUE_P)) for r in rates)
    else:
        a, b = (r * (0.5 + quality / 2) + (1 - r) * (0.5 - quality / 2) for r in rates)
    counts = rng.multinomial(N - n, [a * (1 - b), (1 - a) * b, 1 - a * (1 - b) - (1 - a) * b],
                             size=S) / (N - n)
    mfu = counts[:, 0] - counts[:, 1]
    vfu = counts[:, 0] + counts[:, 1] - mfu ** 2
    yl, fl = y_new - y_old, f_new - f_old
    point, hw = _corrected(yl, fl, N - n, mfu, vfu)
    return point, hw, _labels_hw(yl), rates[0] - rates[1]


@pytest.mark.parametrize("n", [20, 30, 50, 100, 200, 500])
@pytest.mark.parametrize("quality,lenient", [(0.0, False), (0.8, False), (0.9, False),
                                             (0.95, False), (0.98, False), (0.9, True),
                                             (0.95, True)])
def test_paired_difference_covers(n: int, quality: float, lenient: bool) -> None:
    for N in (20 * n, 100_000):
        point, hw, _, truth = _paired(np.random.default_rng(n + N), n, N, quality, lenient)
        cover = np.mean(np.abs(point - truth) <= hw)
        assert 0.93 <= cover <= _upper(n, quality), (N, cover)


@pytest.mark.parametrize("n", [50, 100, 200, 500])
def test_paired_difference_width(n: int) -> None:
    _, hw, hw_lab, _ = _paired(np.random.default_rng(11 + n), n, 20 * n, 0.0)
    assert np.mean(hw / hw_lab) <= 1.05
    _, hw, hw_lab, _ = _paired(np.random.default_rng(12 + n), n, 20 * n, 0.8)
    assert np.mean(hw / hw_lab) <= 0.75


# The active draw's coverage: tests/unit/test_estimate_active.py.


def test_active_probabilities_follow_the_optimal_rule() -> None:
    """pi ~ sqrt(uncertainty) between the floor and 1, summing to the budget."""
    from localeval.estimate.draw import FLOOR_SHARE, inclusion_probabilities

    rng = np.random.default_rng(2)
    u = list(rng.random(500) ** 3)
    prob = inclusion_probabilities(u, 40)
    assert prob.sum() == pytest.approx(40)
    floor = FLOOR_SHARE * 40 / 500
    assert prob.min() == pytest.approx(floor)
    free = (prob > floor + 1e-12) & (prob < 1)
    ratio = prob[free] / np.sqrt(np.array(u)[free])
    assert np.ptp(ratio) == pytest.approx(0, abs=1e-9)
    # too few unsure rows for the budget: they are certain, the sure rows share the rest
    prob = inclusion_probabilities([1.0] + [0.0] * 99, 50)
    assert prob[0] == 1 and prob.sum() == pytest.approx(50)


@pytest.mark.parametrize("n", [10, 12, 15, 18])
def test_few_labels_cover_or_say_so(n: int) -> None:
    """10 to 19 labels (below 10 the estimate refuses): the corrected and paired intervals
    cover 93% or more from 15 labels; at 10-14 graded labels with an uninformative judge
    they dipped to 92.4%, so the estimate says the interval is not reliable at that size
    (``analysis.RELIABLE_LABELS``: test_few_labels_are_said_to_be_unreliable)."""
    from localeval.estimate.analysis import RELIABLE_LABELS

    floor = 0.93 if n >= RELIABLE_LABELS else 0.92
    for N in (200, 5000):
        for quality in (0.0, 0.5, 0.8, 1.0):
            for graded in (False, True):
                point, hw, _ = _simulate(np.random.default_rng(n * 7 + N), n, N, quality,
                                         graded)
                cover = np.mean(np.abs(point - _true_mean(graded)) <= hw)
                assert cover >= floor, (N, quality, graded, cover)
        point, hw, _, truth = _paired(np.random.default_rng(n + N), n, N, 0.0)
        assert np.mean(np.abs(point - truth) <= hw) >= floor


def test_few_labels_are_said_to_be_unreliable(tmp_path) -> None:
    from localeval.estimate import estimate
    from localeval.resultsets import ResultSet

    rng = np.random.default_rng(0)
    rs = ResultSet({f"r{i}": {"m": float(rng.random())} for i in range(100)}, source="run",
                   format="localeval")
    for n, said in ((12, True), (20, False)):
        p = tmp_path / f"labels{n}.csv"
        p.write_text("id,label_m\n" + "".join(f"r{i},{i % 2}\n" for i in range(n)),
                     encoding="utf-8")
        r = estimate(rs, p, random_draw=True)
        assert any("not reliable at this size" in x for x in r.notes) is said, r.notes
