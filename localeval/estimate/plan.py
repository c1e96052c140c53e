"""How many labels reach a target interval half-width, with and without the judge.

From a pilot (the judge on all N rows, labels on a few), the variances that
drive each interval are estimated once and the smallest n that reaches the
target is searched for:

- labels only: z * sd(Y) / sqrt(n);
- uniform draw with the judge (PPI++): var(Y - lam f) / n + lam^2 var(f) / (N - n),
  lam re-tuned for each n;
- active draw: the Horvitz-Thompson variance of the residual,
  (1/N^2) sum_i e_i^2 (1/pi_i - 1) + lam^2 var(f) / N, with e_i^2 modelled as
  proportional to the judge's uncertainty on row i (fitted on the pilot);
  only when the run records uncertainty (soft verdicts or repeats).

The plan uses the intervals the estimate reports (``ppi.corrected_mean``,
``ppi.labels_only``): Student's t with n - 1 degrees of freedom and the
residual variance with the ``prior_rows`` pseudo-rows for the judge;
the same with lam = 0 for labels alone.

truescore's ``required_gold_labels`` plans from a binary judge's sensitivity
and specificity; this works from the pilot's moments, so graded scores plan too.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy import stats

from localeval.estimate.draw import inclusion_probabilities
from localeval.estimate.ppi import is_binary, prior_rows, z_value

__all__ = ["plan_labels", "plan_lines"]


def _first(ok: np.ndarray, ns: np.ndarray) -> int | None:
    hit = np.flatnonzero(ok)
    return int(ns[hit[0]]) if hit.size else None


def plan_labels(judge: Sequence[float], labels: Sequence[float], labelled: Sequence[int],
                half_width: float, *, uncertainty: Sequence[float | None] | None = None,
                level: float = 0.95) -> dict[str, Any]:
    """Labels needed for ``half_width`` (None where the N rows cannot reach it)."""
    f = np.asarray(judge, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    y = np.asarray(labels, dtype=float)
    N, z = len(f), z_value(level)
    var_y, var_f = float(y.var(ddof=1)), float(f.var(ddof=1))
    cov = float(np.cov(y, f[idx])[0, 1])
    var_fl = float(f[idx].var(ddof=1))
    ns = np.arange(2, N)
    q = stats.t.ppf(0.5 + level / 2, ns - 1)
    k = prior_rows(level)
    lam = np.clip(cov / (var_f * (1 + ns / (N - ns))), 0, 1) if var_f > 0 else 0.0 * ns
    var_r = var_y + lam ** 2 * var_fl - 2 * lam * cov
    binary = is_binary(y)
    # the pseudo-rows of ppi.pseudo_from_moments, at the pilot's moments
    pseudo_y = 0.25 if binary else var_y
    shift = ns * k / (ns + k) * (y.mean() - 0.5) ** 2 if binary else 0.0
    # n rows' residual sum of squares about a fitted mean and lambda: (n - 2) var_r expected
    var_r = ((ns - 2) * var_r + k * (pseudo_y + lam ** 2 * var_fl) + shift) / (ns - 1 + k)
    judge_hw = q * np.sqrt(var_r / ns + lam ** 2 * var_f / (N - ns))
    # labels alone: the same with lam = 0 (ppi.labels_only)
    labels_hw = q * np.sqrt(((ns - 1) * var_y + k * pseudo_y + shift) / (ns - 1 + k) / ns)
    out: dict[str, Any] = {
        "half_width": half_width, "rows": N, "pilot_labels": len(y),
        "labels_only": _first(labels_hw <= half_width, ns),
        "with_judge": _first(judge_hw <= half_width, ns), "active": None,
    }
    if uncertainty is not None and any(u is not None for u in uncertainty):
        known = [u for u in uncertainty if u is not None]
        u = np.array([np.mean(known) if v is None else v for v in uncertainty], dtype=float)
        lam1 = float(np.clip(cov / var_f, 0, 1)) if var_f > 0 else 0.0
        e2 = (y - lam1 * f[idx]) ** 2
        c = float(e2.sum() / max(u[idx].sum(), 1e-12))
        grid = ns[:: max(1, len(ns) // 400)]
        hw = np.array([z * np.sqrt((c * u * (1 / inclusion_probabilities(list(u), int(k)) - 1)
                                    ).sum() / N ** 2 + lam1 ** 2 * var_f / N) for k in grid])
        out["active"] = _first(hw <= half_width, grid)
    return out


def plan_lines(result: Any, half_width: float) -> list[str]:
    """One plain line per metric of an estimate's labels taken as a pilot."""
    out = []
    for m in result.metrics:
        a = m.arrays
        p = plan_labels(a["judge"], a["labels"], a["labelled"], half_width,
                        uncertainty=a["uncertainty"], level=result.level)
        def say(k: int | None) -> str:
            return "not reachable with these rows" if k is None else f"{k} labels"
        line = (f"{m.metric}: for +/-{half_width:g} ({result.level:.0%}), labels only: "
                f"{say(p['labels_only'])}; with the judge (uniform draw): {say(p['with_judge'])}")
        if any(u is not None for u in a["uncertainty"]):
            line += f"; with the judge and an active draw: {say(p['active'])}"
        else:
            line += "; active draw: the run records no uncertainty (use --verdicts soft or --repeats)"
        out.append(line + f" (pilot: {p['pilot_labels']} labels of {p['rows']} rows)")
    return out
