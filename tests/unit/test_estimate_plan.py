"""--plan promises a half-width; at the planned n the estimate reports it on average.

The plan must use the interval the estimate reports (Student's t, the
pseudo-rows of the residual variance, the same with lambda = 0 for labels
alone), not the normal formulas.
"""

from __future__ import annotations

import numpy as np
import pytest

from localeval.estimate import corrected_mean, labels_only
from localeval.estimate.plan import plan_labels


def _world(rng: np.random.Generator, N: int, graded: bool) -> tuple[np.ndarray, np.ndarray]:
    """(judge on N rows, labels on N rows): a binary judge agreeing 90% with the truth."""
    if graded:
        y = rng.choice([0, .25, .5, .75, 1], size=N, p=[.1, .15, .2, .25, .3])
    else:
        y = (rng.random(N) < 0.6).astype(float)
    truth = (y >= 0.5).astype(float)
    return np.where(rng.random(N) < 0.9, truth, 1 - truth), y


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("target", [0.12, 0.16])
def test_planned_labels_reach_the_promised_half_width(graded: bool, target: float) -> None:
    rng = np.random.default_rng(4)
    N = 2000
    f, y = _world(rng, N, graded)
    pilot = rng.choice(N, 400, replace=False)  # a pilot large enough that its own noise is small
    plan = plan_labels(f, y[pilot], pilot, target)
    got = {}
    for key, estimate in (("with_judge", lambda idx: corrected_mean(f, y[idx], idx)),
                          ("labels_only", lambda idx: labels_only(y[idx]))):
        n = plan[key]
        assert n is not None and 10 <= n < 80, (key, n)
        hw = [estimate(rng.choice(N, n, replace=False)).half_width for _ in range(400)]
        got[key] = np.mean(hw)
        assert got[key] == pytest.approx(target, rel=0.10), (key, n, got[key])
    assert plan["with_judge"] < min(plan["labels_only"], 50)


@pytest.mark.parametrize("target", [0.06, 0.09])
def test_an_active_plan_reaches_the_promised_half_width(target: float) -> None:
    """The active branch, held to the same promise as the uniform one: a calibrated soft
    judge (P(yes) = p per row, labels Bernoulli(p)), a uniform pilot of 400 labels, then
    active draws of the planned budget from the same rows: their corrected half-width
    averages the target within 10%."""
    from localeval.estimate import active_mean
    from localeval.estimate.draw import inclusion_probabilities

    rng = np.random.default_rng(8)
    N = 2000
    p = rng.beta(0.4, 0.4, N)
    y = (rng.random(N) < p).astype(float)
    u = 4 * p * (1 - p)
    pilot = rng.choice(N, 400, replace=False)
    plan = plan_labels(p, y[pilot], pilot, target, uncertainty=list(u))
    n = plan["active"]
    assert n is not None and 20 <= n < 400, n
    prob = inclusion_probabilities(list(u), n)
    hw = []
    for _ in range(300):
        idx = np.flatnonzero(rng.random(N) < prob)
        hw.append(active_mean(p, y[idx], idx, prob).half_width)
    assert np.mean(hw) == pytest.approx(target, rel=0.10), (n, np.mean(hw))
    # and with the same budget the uniform draw is no narrower than planned for it
    assert plan["with_judge"] is not None
