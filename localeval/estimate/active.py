"""The corrected mean of an active draw: a weighted (Hajek) PPI++ mean with pseudo-rows.

An active draw labels row i with its own probability pi_i (``draw``) by an
independent coin flip, so the number of labels varies around the budget.
Zrnic and Candes (arXiv 2403.03208) weight each label back by 1/pi_i::

    theta_HT = mean_i [ lam f_i + (Y_i - lam f_i) xi_i / pi_i ]

(xi_i: row i was drawn). That Horvitz-Thompson form divides by N where the
weights' realised total differs from N: with every pi_i equal (hard verdicts)
and 0/1 labels whose mean is 0.96 it gave 1.10, outside [0, 1]. Here the
residual's mean is the ratio (Hajek) estimator, its weighted mean over the
drawn rows::

    theta = lam mean_i f_i + sum_i w_i (Y_i - lam f_i) / sum_i w_i,  w_i = xi_i / pi_i

which is the uniform draw's PPI++ mean when every pi_i is equal, and a mean of
labels (lam = 0) always lies between the labels' least and greatest value.

Its standard error is the linearised (influence) one, with two guards for the
small, unevenly weighted label sets an active draw gives, measured by
simulation (tests/unit/test_estimate_active.py, docs/calibrated-estimates.md):

- ``k = prior_rows`` pseudo-rows in the labelled part of the variance, as
  for the uniform draw (``ppi.pseudo_from_moments``), each carrying the drawn
  rows' mean squared weight: without them a judge that is confidently wrong on
  rows the draw rarely visits leaves those rows out of most label sets, and
  the residual variance reads too small;
- Student's t with Kish's effective number of labels minus one degrees of
  freedom, (sum w)^2 / sum w^2, which is the label count for equal weights.

No library weights an active draw back, hence written here. Everything is
vectorised over leading axes (data sets), so the simulation tests run the
function the command runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localeval.estimate.ppi import Estimate, bounded, is_binary, prior_rows

__all__ = ["active_terms", "active_mean", "weighted_variance", "ACTIVE_METHOD",
           "ACTIVE_LABELS_METHOD"]

#: The active draw's intervals, named as the outputs name them.
ACTIVE_METHOD = ("active draw: weighted (Hajek) PPI++ with pseudo-rows, Student t "
                 "(Kish effective labels - 1 df)")
ACTIVE_LABELS_METHOD = ("active draw: weighted (Hajek) mean of labels with pseudo-rows, "
                        "Student t (Kish effective labels - 1 df)")


def weighted_variance(*, n: Any, N: Any, sum_a2: Any, mean_w2: Any, pseudo_var: Any,
                      shift: Any, judge_var: Any, cross: Any, level: float = 0.95) -> Any:
    """The variance of the weighted corrected mean, from its sums; broadcasts.

    ``n`` labelled rows of ``N``; ``sum_a2``: the labelled rows' sum of squared
    weighted residuals (weights scaled to total N); ``mean_w2``: their mean
    squared weight; ``pseudo_var``: a pseudo-row's residual variance (1/4 for
    0/1 labels, else the labels' variance, plus lam^2 var f); ``shift``:
    Agresti and Coull's between-groups term for 0/1 labels; ``judge_var``:
    var(lam f) over all rows; ``cross``: twice the sum over rows of the centred
    lam f times the weighted residual. The estimate passes the realised sums, the
    planner (``plan``) their expectations at a planned budget.
    """
    k = prior_rows(level)
    labelled = n * (sum_a2 + k * mean_w2 * (pseudo_var + shift)) / (n - 1 + k)
    return np.maximum(N * judge_var + labelled + cross, 0.0) / np.square(N)


def active_terms(judge: Any, labels_full: Any, drawn: Any, prob: Any, lam: Any = None, *,
                 binary: Any = None, level: float = 0.95
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(point, se, lam, degrees of freedom) of the weighted corrected mean; the rows are
    the last axis. ``labels_full`` may hold anything where ``drawn`` is false;
    ``binary``: the labels are 0/1 (per data set; found from the drawn labels when
    None). ``lam`` None tunes it to minimise the linearised variance, in [0, 1]."""
    f = np.asarray(judge, dtype=float)
    drawn = np.asarray(drawn, dtype=bool)
    y = np.where(drawn, np.asarray(labels_full, dtype=float), 0.0)
    N = f.shape[-1]
    w = np.where(drawn, 1.0 / np.asarray(prob, dtype=float), 0.0)
    W = w.sum(-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(W > 0, N / W, 0.0)
        ry = np.where(W > 0, (w * y).sum(-1, keepdims=True) / W, 0.0)
        rf = np.where(W > 0, (w * f).sum(-1, keepdims=True) / W, 0.0)
    a_y = c * w * (y - ry)          # the labels' weighted deviations
    a_f = c * w * (f - rf)          # the judge's, on the same rows
    if lam is None:
        # psi = a_y + lam (f - a_f): the lam minimising its variance, clipped to [0, 1]
        b = f - a_f
        cb = b - b.mean(-1, keepdims=True)
        ca = a_y - a_y.mean(-1, keepdims=True)
        vb = (cb ** 2).mean(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.clip(np.where(vb > 0, -(ca * cb).mean(-1) / np.where(vb > 0, vb, 1.0), 0.0),
                          0.0, 1.0)
    lam_arr = np.asarray(lam, dtype=float)
    lam_e = np.expand_dims(lam_arr, -1)
    point = lam_arr * f.mean(-1) + ry[..., 0] - lam_arr * rf[..., 0]
    a = a_y - lam_e * a_f
    n = drawn.sum(-1)
    nf = np.maximum(n, 1).astype(float)
    jf = lam_e * f
    if binary is None:
        binary = np.all(np.where(drawn, np.isin(y, (0.0, 1.0)), True), axis=-1)
    binary = np.asarray(binary, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        var_y = np.where(W[..., 0] > 0, (w * (y - ry) ** 2).sum(-1) / W[..., 0], 0.0)
    k = prior_rows(level)
    var = weighted_variance(
        n=nf, N=N, sum_a2=(a ** 2).sum(-1), mean_w2=((c * w) ** 2).sum(-1) / nf,
        pseudo_var=np.where(binary, 0.25, var_y) + lam_arr ** 2 * f.var(-1),
        shift=np.where(binary, nf / (nf + k) * (ry[..., 0] - 0.5) ** 2, 0.0),
        judge_var=jf.var(-1), cross=2 * ((jf - jf.mean(-1, keepdims=True)) * a).sum(-1),
        level=level)
    with np.errstate(divide="ignore", invalid="ignore"):
        kish = np.where((w ** 2).sum(-1) > 0, W[..., 0] ** 2 / (w ** 2).sum(-1), 0.0)
    return point, np.sqrt(var), lam_arr, np.maximum(kish - 1, 1.0)


def active_mean(judge: Any, labels: Any, labelled: Any, prob: Any, *, level: float = 0.95,
                lam: float | None = None, bounds: tuple[float, float] | None = None
                ) -> Estimate:
    """The corrected mean of an active draw; ``prob`` is each row's inclusion probability.

    ``labelled``: positions in ``judge`` of the labelled rows, in the order of
    ``labels``. ``lam=0`` gives the labels-only (weighted) mean of the same draw.
    ``bounds``: the range the true mean lies in (``(0, 1)`` for labels in [0, 1]):
    the interval is cut to it (``Estimate.bounds``).
    """
    f = np.asarray(judge, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    y = np.asarray(labels, dtype=float)
    full = np.zeros(len(f))
    full[idx] = y
    drawn = np.zeros(len(f), dtype=bool)
    drawn[idx] = True
    point, se, lam_, df = active_terms(f, full, drawn, np.asarray(prob, dtype=float), lam,
                                       binary=is_binary(y), level=level)
    # Kish's effective count is fractional; Student's t takes it as it is
    return bounded(Estimate(float(point), float(se), len(idx), level, float(lam_), float(df),
                            None, ACTIVE_METHOD if lam is None else ACTIVE_LABELS_METHOD),
                   bounds)
