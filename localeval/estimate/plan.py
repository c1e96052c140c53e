"""How many labels reach a target interval half-width, with and without the judge.

From a pilot (the judge on all N rows, labels on a few), the moments that
drive each interval are estimated once, projected to every candidate n, and
passed to the estimator's own variance functions; the smallest n whose
half-width reaches the target is the plan:

- labels only and uniform draw with the judge: ``ppi.pseudo_from_moments``
  (the residual variance with the ``prior_rows`` pseudo-rows, lam re-tuned for
  each n, lam = 0 for labels alone) and Student's t with n - 1 degrees of freedom,
  as ``ppi.corrected_mean`` and ``ppi.labels_only`` report them; n rows'
  residual sum of squares about a fitted mean and lambda is (n - 2) times the
  residual variance (n - 1 for labels alone), so the pilot's moments are scaled so;
- active draw: ``active.weighted_variance`` at the sums expected of a Poisson
  draw with the inclusion probabilities ``label-sheet --active`` would use for
  n labels (sum of e_i^2 / pi_i, mean squared weight sum of 1 / pi_i over n,
  Kish's effective count N^2 / sum of 1 / pi_i), with e_i^2, the residual's
  square on row i, modelled as proportional to the judge's uncertainty there
  (fitted on the pilot); only when the run records uncertainty (soft verdicts
  or repeats).

truescore's ``required_gold_labels`` plans from a binary judge's sensitivity
and specificity; this works from the pilot's moments, so graded scores plan too.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from localeval.estimate.active import weighted_variance
from localeval.estimate.draw import inclusion_probabilities
from localeval.estimate.ppi import Moments, is_binary, prior_rows, pseudo_from_moments
from localeval.stats import t_quantile

__all__ = ["plan_labels", "plan_lines"]

#: Candidate budgets the active branch evaluates at most (each solves its probabilities).
_ACTIVE_GRID = 400


def _first(ok: np.ndarray, ns: np.ndarray) -> int | None:
    hit = np.flatnonzero(ok)
    return int(ns[hit[0]]) if hit.size else None


def _uniform_half_widths(f: np.ndarray, y: np.ndarray, fl: np.ndarray, ns: np.ndarray,
                         level: float) -> tuple[np.ndarray, np.ndarray]:
    """(with the judge, labels only) half-widths at each n of ``ns``, from the pilot."""
    N = len(f)
    var_y, var_f, var_fl = float(y.var(ddof=1)), float(f.var(ddof=1)), float(fl.var(ddof=1))
    cov = float(np.cov(y, fl)[0, 1])
    binary = is_binary(y)
    q = t_quantile(0.5 + level / 2, ns - 1)

    def half_width(shrink: np.ndarray, lam: Any) -> np.ndarray:
        m = Moments(ns, float(y.mean()), float(fl.mean()), var_y * shrink, var_fl * shrink,
                    cov * shrink, N - ns, float(f.mean()), var_f)
        _, se, _ = pseudo_from_moments(m, binary=binary, level=level, lam=lam)
        return q * se

    return half_width((ns - 2) / ns, None), half_width((ns - 1) / ns, 0.0)


def _active_half_widths(f: np.ndarray, y: np.ndarray, idx: np.ndarray, u: np.ndarray,
                        grid: np.ndarray, level: float) -> np.ndarray:
    """The active draw's corrected half-width expected at each budget of ``grid``."""
    N = len(f)
    var_f = float(f.var())
    cov = float(np.cov(y, f[idx], ddof=0)[0, 1])
    lam = float(np.clip(cov / var_f, 0, 1)) if var_f > 0 else 0.0
    r = y - lam * f[idx]
    e2_pilot = (r - r.mean()) ** 2
    e2 = u * float(e2_pilot.sum() / max(u[idx].sum(), 1e-12))
    binary = is_binary(y)
    k = prior_rows(level)
    out = np.empty(len(grid))
    for j, n in enumerate(grid):
        inv = 1.0 / inclusion_probabilities(list(u), int(n))
        var = weighted_variance(
            n=float(n), N=N, sum_a2=float((e2 * inv).sum()), mean_w2=float(inv.sum() / n),
            pseudo_var=(0.25 if binary else float(y.var())) + lam ** 2 * var_f,
            shift=float(n / (n + k) * (y.mean() - 0.5) ** 2) if binary else 0.0,
            judge_var=lam ** 2 * var_f, cross=2 * N * (lam * cov - lam ** 2 * var_f),
            level=level)
        kish = N ** 2 / float(inv.sum())
        out[j] = t_quantile(0.5 + level / 2, max(kish - 1, 1.0)) * np.sqrt(var)
    return out


def plan_labels(judge: Sequence[float], labels: Sequence[float], labelled: Sequence[int],
                half_width: float, *, uncertainty: Sequence[float | None] | None = None,
                level: float = 0.95) -> dict[str, Any]:
    """Labels needed for ``half_width`` (None where the N rows cannot reach it)."""
    f = np.asarray(judge, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    y = np.asarray(labels, dtype=float)
    N = len(f)
    ns = np.arange(3, N)
    judge_hw, labels_hw = _uniform_half_widths(f, y, f[idx], ns, level)
    out: dict[str, Any] = {
        "half_width": half_width, "rows": N, "pilot_labels": len(y),
        "labels_only": _first(labels_hw <= half_width, ns),
        "with_judge": _first(judge_hw <= half_width, ns), "active": None,
    }
    if uncertainty is not None and any(u is not None for u in uncertainty):
        known = [u for u in uncertainty if u is not None]
        u = np.array([np.mean(known) if v is None else v for v in uncertainty], dtype=float)
        grid = ns[:: max(1, len(ns) // _ACTIVE_GRID)]
        out["active"] = _first(_active_half_widths(f, y, idx, u, grid, level) <= half_width,
                               grid)
    return out


def _active_words(metric: str) -> str:
    """Why an active draw is not planned: what the run would need to record."""
    return (f"active draw: not planned: the run records no per-row uncertainty for {metric} "
            "(rerun with --verdicts soft, for statement verdicts, aspect critics and "
            "ratings alike, or with --repeats)")


def plan_lines(result: Any, half_width: float) -> list[str]:
    """One plain line per metric of an estimate's labels taken as a pilot.

    A count "not reachable" names the draw it is not reachable with and why (these N
    rows, however many of them are labelled); an active draw that reaches what a uniform
    draw of the same rows cannot, or with fewer labels, says why it can."""
    out = []
    for m in result.metrics:
        a = m.arrays
        p = plan_labels(a["judge"], a["labels"], a["labelled"], half_width,
                        uncertainty=a["uncertainty"], level=result.level)
        N = p["rows"]

        def say(k: int | None, how: str, N: int = N) -> str:
            return f"not reachable {how} of these {N} rows" if k is None else f"{k} labels"

        line = (f"{m.metric}: for +/-{half_width:g} ({result.level:.0%}), labels only: "
                f"{say(p['labels_only'], 'with labels alone on any number')}; with the "
                f"judge and a uniform draw: {say(p['with_judge'], 'with a uniform draw')}")
        if any(u is not None for u in a["uncertainty"]):
            line += (f"; with the judge and an active draw: "
                     f"{say(p['active'], 'with an active draw')}")
            uni, act = p["with_judge"], p["active"]
            if act is not None and (uni is None or act < uni):
                line += (f" (an active draw reaches it with {act} because it spends the "
                         "labels on the rows where the judge says it is unsure and leans on "
                         "the judge where it says it is sure; that holds only as far as the "
                         "judge's stated uncertainty is honest: check its calibration before "
                         "relying on it)")
        else:
            line += "; " + _active_words(m.metric)
        if None in (p["labels_only"], p["with_judge"], p["active"]):
            line += (f" ('not reachable': even labelling nearly all {N} rows that way leaves "
                     f"the interval wider than +/-{half_width:g})")
        out.append(line + f" (pilot: {p['pilot_labels']} labels of {N} rows)")
    return out
