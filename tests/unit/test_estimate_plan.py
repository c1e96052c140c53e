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
