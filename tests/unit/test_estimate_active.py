"""The corrected mean of an active draw, by simulation with known truth.

Worlds of N = 1,000 rows where the truth is known (labels Bernoulli(p), p ~
Beta(0.4, 0.4), true mean 0.5): a calibrated soft judge (it reports p), an
overconfident one (it reports sigmoid(3 logit p): sure where it should not
be), and an overconfident one that is also plainly wrong on a tenth of the
rows. Each setting is 2,000 seeded data sets through ``active_terms``, the
function ``localeval estimate`` runs, with the inclusion probabilities
``label-sheet --active`` draws with.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from localeval.errors import DataError, UsageError
from localeval.estimate import active_mean, corrected_mean, labels_only
from localeval.estimate.active import active_terms
from localeval.estimate.draw import (FLOOR_SHARE, LEGACY_FLOOR_SHARE, draw_rows,
                                     inclusion_probabilities, parse_draw)

S, N, TRUTH = 2000, 1000, 0.5


def _world(rng: np.random.Generator, judge: str) -> tuple[np.ndarray, np.ndarray]:
    p = np.clip(rng.beta(0.4, 0.4, (S, N)), 1e-6, 1 - 1e-6)
    y = (rng.random((S, N)) < p).astype(float)
    if judge == "calibrated":
        return p, y
    sure = 1 / (1 + np.exp(-3 * np.log(p / (1 - p))))
    if judge == "overconfident":
        return sure, y
    return np.where(rng.random((S, N)) < 0.1, 1 - sure, sure), y  # and wrong on a tenth


def _simulate(judge: str, n: int, seed: int, floor: float = FLOOR_SHARE
              ) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    f, y = _world(rng, judge)
    prob = np.stack([inclusion_probabilities(list(4 * r * (1 - r)), n, floor_share=floor)
                     for r in f])
    drawn = rng.random((S, N)) < prob
    out = {}
    for kind, lam in (("corrected", None), ("labels", 0.0)):
        point, se, _, df = active_terms(f, y, drawn, prob, lam)
        hw = stats.t.ppf(0.975, df) * se
        out[kind] = (point, np.clip(point - hw, 0, 1), np.clip(point + hw, 0, 1))
    # the estimate refuses fewer than 10 labels: those data sets print no interval
    return out, drawn.sum(1) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["calibrated", "overconfident", "wrong"])
@pytest.mark.parametrize("n", [10, 15, 20, 40, 100])
def test_active_intervals_cover_for_calibrated_and_overconfident_judges(judge: str,
                                                                        n: int) -> None:
    out, ok = _simulate(judge, n, seed=n + len(judge))
    for kind, (point, low, high) in out.items():
        cover = np.mean(((low <= TRUTH) & (TRUTH <= high))[ok])
        assert cover >= 0.93, (kind, cover)
    # the weighted mean of 0/1 labels lies in [0, 1] by construction (the corrected one is
    # cut to it by ``Estimate.bounds``: test_a_uniform_draw_of_adversarial_data_stays_in_0_1)
    point = out["labels"][0][ok]
    assert ((0 <= point) & (point <= 1)).all()


@pytest.mark.slow
def test_the_old_floor_fails_an_overconfident_judge() -> None:
    """Why the floor moved from a tenth to half the uniform rate, measured: with a tenth,
    an overconfident judge's labels-only interval covers 88% with 40 labels, and the
    corrected one is half again as wide as with half the rate (0.41 against 0.26)."""
    old, ok_old = _simulate("overconfident", 40, seed=44, floor=LEGACY_FLOOR_SHARE)
    new, ok_new = _simulate("overconfident", 40, seed=44)
    _, low, high = old["labels"]
    assert np.mean(((low <= TRUTH) & (TRUTH <= high))[ok_old]) < 0.93
    width = {k: np.mean((o["corrected"][2] - o["corrected"][1])[ok])
             for k, o, ok in (("old", old, ok_old), ("new", new, ok_new))}
    assert width["old"] > 1.3 * width["new"]


def test_equal_probabilities_give_the_mean_of_the_labels() -> None:
    """A hard-verdict run: every row has probability n/N, and a Poisson draw gives more
    or fewer than n labels. The labels-only mean is their mean (it gave n'/n times it,
    1.10 from 0/1 labels whose mean was 0.96), the corrected one the uniform PPI++ point."""
    rng = np.random.default_rng(0)
    f = (rng.random(300) < 0.9).astype(float)
    prob = np.full(300, 30 / 300)
    idx = np.arange(0, 300, 9)[:34]           # 34 drawn where 30 were expected
    y = np.ones(34)
    y[:1] = 0                                 # mean 0.97
    lab = active_mean(f, y, idx, prob, lam=0.0, bounds=(0.0, 1.0))
    assert lab.mean == pytest.approx(y.mean(), abs=1e-12)
    assert 0 <= lab.low <= lab.mean <= lab.high <= 1
    corr = active_mean(f, y, idx, prob, bounds=(0.0, 1.0))
    uniform = corrected_mean(f, y, idx, lam=corr.lam, reference=True)
    assert corr.mean == pytest.approx(min(1.0, uniform.mean), abs=1e-12)
    assert 0 <= corr.low <= corr.mean <= corr.high <= 1


def test_a_uniform_draw_of_adversarial_data_stays_in_0_1() -> None:
    """Every label 1, the judge lower on the labelled rows than elsewhere: PPI++ adds the
    judge's gap to the labels' mean and lands above 1; the output is cut to [0, 1] and
    says so."""
    y = np.ones(20)
    y[:2] = 0.0
    # on the labelled rows the judge follows the labels but low; elsewhere it says 0.9
    f = np.concatenate([np.where(y == 1, 0.3, 0.0), np.full(200, 0.9)])
    est = corrected_mean(f, y, np.arange(20), bounds=(0.0, 1.0))
    raw = corrected_mean(f, y, np.arange(20))
    assert raw.mean > 1                       # the fault, without bounds
    assert est.mean == 1.0 and est.low <= 1 and est.high == 1.0
    d = est.to_dict()
    assert d["cut_to"] == [0.0, 1.0] and d["value_before_cut"] == pytest.approx(raw.mean)
    # the labels' own interval, 0.90 +/- 0.18, is cut at 1 too; its point is inside
    lab = labels_only(y, bounds=(0.0, 1.0)).to_dict()
    assert lab["high"] == 1.0 and lab["value"] == 0.9 and "value_before_cut" not in lab
    assert "cut_to" not in labels_only(np.tile([0.0, 1.0], 10), bounds=(0.0, 1.0)).to_dict()


def test_draw_names_keep_their_floor() -> None:
    ids = [f"r{i}" for i in range(50)]
    u = list(np.linspace(0, 1, 50))
    d = draw_rows(ids, 10, 7, mode="active", uncertainty=u, basis="soft verdicts")
    assert d.name == f"active:seed=7:n=10:floor={FLOOR_SHARE:g}"
    name = parse_draw(d.name, file="s.csv", row=2, column="draw")
    assert (name.mode, name.seed, name.n, name.floor) == ("active", 7, 10, FLOOR_SHARE)
    # a sheet of an earlier version names no floor: it was drawn with a tenth
    old = parse_draw("active:seed=7:n=10", file="s.csv", row=2, column="draw")
    assert old.floor == LEGACY_FLOOR_SHARE
    again = draw_rows(ids, 10, 7, mode="active", uncertainty=u, floor_share=old.floor)
    assert again.name == "active:seed=7:n=10"
    assert again.prob.min() == pytest.approx(LEGACY_FLOOR_SHARE * 10 / 50)


def test_negative_seeds_are_refused() -> None:
    with pytest.raises(UsageError, match="--seed"):
        draw_rows(["a", "b", "c"], 1, -1)
    with pytest.raises(DataError, match="seed"):
        parse_draw("uniform:seed=-3:n=5", file="s.csv", row=2, column="draw")
