"""Seeded simulation of the diff's gates with known truth, shared by the tests and
``scripts/verdict_power_table.py`` (which prints the table in docs/comparing-versions.md).

Each trial builds two result sets of ``n`` paired samples of one metric ``m``,
runs :func:`localeval.versions.diff_runs` and the gates on it (the command's
path), and records whether ``--fail-if-worse m`` failed, whether it could have,
and whether ``--require-not-worse m=MARGIN`` passed.

- 0/1 scores: base is 1 with probability 0.7; new keeps base's value unless
  it changes (probability 0.3 of each pair), and a change is a loss with
  probability 1/2 + shift (so the loss rate is 0.3 * 2 * shift).
- graded scores: base uniform on [0, 1], new = base - loss + normal(0, 0.2).
"""

from __future__ import annotations

import numpy as np

from localeval.resultsets import ResultSet
from localeval.versions import diff_runs, gate_results

__all__ = ["pair_sets", "gate_rates", "DISCORDANCE"]

#: 0/1 scores: the share of pairs whose score changes.
DISCORDANCE = 0.3


def pair_sets(rng: np.random.Generator, n: int, kind: str, loss: float
              ) -> tuple[ResultSet, ResultSet]:
    """Two result sets of one metric with a true mean loss of ``loss`` (new vs base)."""
    if kind == "binary":
        base = (rng.random(n) < 0.7).astype(float)
        change = rng.random(n) < DISCORDANCE
        # a changed pair is lost (1 -> 0) with probability 1/2 + loss / 2q, else gained
        # (0 -> 1): the mean of new - base is q (1 - 2 P(lost)) = -loss
        lost = rng.random(n) < 0.5 + loss / (2 * DISCORDANCE)
        new = np.where(change, np.where(lost, 0.0, 1.0), base)
        base = np.where(change, 1.0 - new, base)
    else:
        base = rng.uniform(0, 1, n)
        new = base - loss + rng.normal(0, 0.2, n)
    ids = [f"s{i}" for i in range(n)]
    return (ResultSet.from_scores({i: {"m": float(v)} for i, v in zip(ids, base)}),
            ResultSet.from_scores({i: {"m": float(v)} for i, v in zip(ids, new)}))


def gate_rates(n: int, kind: str, loss: float, trials: int, seed: int, *, margin: float = 0.0,
               resamples: int = 999) -> dict[str, float]:
    """Over ``trials`` seeded trials: the share where ``--fail-if-worse m`` failed, where it
    could not have failed, and where ``--require-not-worse m=margin`` passed."""
    rng = np.random.default_rng(seed)
    failed = fixed = passed = 0
    for t in range(trials):
        b, w = pair_sets(rng, n, kind, loss)
        d = diff_runs(b, w, n_resamples=resamples, seed=t)
        (worse,) = gate_results(d, {"m": 0.0})
        failed += worse.failed
        fixed += not worse.could_fail
        if margin > 0:
            (nw,) = gate_results(d, {"m": margin}, kind="not_worse",
                                 option="--require-not-worse")
            passed += not nw.failed
    return {"fail_if_worse": failed / trials, "could_not_fail": fixed / trials,
            "require_not_worse_passed": passed / trials}
