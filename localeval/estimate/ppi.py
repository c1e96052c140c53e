"""Prediction-powered means: judge-only, labels-only and corrected (PPI++), uniform or active draw.

The corrected mean of a metric combines the judge's scores ``f`` on all rows
with labels ``Y`` on a random ``n`` of them (PPI++, Angelopoulos, Duchi and
Zrnic, arXiv 2311.01453)::

    theta = lam * mean(f over unlabelled rows) + mean(Y - lam * f over labelled rows)

with the power-tuning ``lam`` chosen from the data and clipped to [0, 1], so
an uninformative judge gets ``lam`` near 0 and costs (almost) nothing. Its
95% interval is valid whatever the judge's quality.

Why written here rather than taken from a library: ``truescore.ppi_estimate``
divides both variance terms by n-1 where the authors' reference
(``ppi-python``) divides by n, so its intervals differ from the reference's
by ~1/n (0.4410 vs 0.4425 on 40 labels), and neither library weights an
active draw. The core below works from sufficient statistics (means,
variances, covariance), vectorised over data sets, so one implementation
serves the command and the simulation tests (a million judge scores without a
million-element array); ``tests/unit/test_estimate_golden.py`` holds it to
the reference's numbers to 1e-6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["Estimate", "Moments", "moments", "ppi_from_moments", "crossfit_from_moments",
           "labels_only", "corrected_mean", "SMALL_SAMPLE", "prior_rows",
           "active_mean", "small_sample_df", "paired_difference", "judge_only", "labels_worth", "z_value"]

ArrayLike = Any

#: Below this many labels the corrected mean cross-fits lambda (``crossfit_from_moments``).
SMALL_SAMPLE = 50


def z_value(level: float = 0.95) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 95%)."""
    return float(stats.norm.ppf(0.5 + level / 2))


@dataclass(frozen=True)
class Estimate:
    """A mean with its interval: what the tables print and estimate.json holds."""

    mean: float
    se: float
    n: int
    level: float = 0.95
    lam: float | None = None
    #: degrees of freedom of a Student-t interval (None: the normal interval)
    df: int | None = None
    #: the interval's centre where it is not the mean (Agresti-Coull's shifted proportion)
    center: float | None = None

    @property
    def half_width(self) -> float:
        q = z_value(self.level) if self.df is None else float(stats.t.ppf(0.5 + self.level / 2,
                                                                            self.df))
        return q * self.se

    @property
    def low(self) -> float:
        return (self.mean if self.center is None else self.center) - self.half_width

    @property
    def high(self) -> float:
        return (self.mean if self.center is None else self.center) + self.half_width

    def to_dict(self) -> dict[str, Any]:
        out = {"mean": self.mean, "low": self.low, "high": self.high, "se": self.se, "n": self.n}
        if self.lam is not None:
            out["lambda"] = self.lam
        if self.df is not None:
            out["student_t_df"] = self.df
        return out


@dataclass(frozen=True)
class Moments:
    """Sufficient statistics of one (or, as arrays, many) labelled + unlabelled data sets.

    Variances and the covariance divide by the count (ddof 0), as the reference does.
    """

    n: Any          # labelled rows
    mean_y: Any
    mean_fl: Any    # judge on the labelled rows
    var_y: Any
    var_fl: Any
    cov_yf: Any
    n_u: Any        # unlabelled rows
    mean_fu: Any
    var_fu: Any


def moments(judge_labelled: ArrayLike, labels: ArrayLike, judge_unlabelled: ArrayLike) -> Moments:
    """The :class:`Moments` of one data set, from its arrays (centred, so no cancellation)."""
    y = np.asarray(labels, dtype=float)
    fl = np.asarray(judge_labelled, dtype=float)
    fu = np.asarray(judge_unlabelled, dtype=float)
    cov = float(np.mean((y - y.mean()) * (fl - fl.mean())))
    return Moments(len(y), float(y.mean()), float(fl.mean()), float(y.var()), float(fl.var()),
                   cov, len(fu), float(fu.mean()) if len(fu) else 0.0,
                   float(fu.var()) if len(fu) else 0.0)


def ppi_from_moments(m: Moments, *, lam: Any = None, level: float = 0.95
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, standard error, lam) of the PPI++ mean; arrays broadcast over data sets.

    ``lam=None`` tunes it as ppi-python's ``ppi_mean_ci`` does: twice the
    labelled covariance over twice (1 + n/N_u) times the variance of all judge
    scores (n - 1 in that one denominator), clipped to [0, 1]; 0 for a
    constant judge. ``lam=0`` is the labels-only (classical) mean.
    """
    n, nu = np.asarray(m.n, dtype=float), np.asarray(m.n_u, dtype=float)
    if lam is None:
        total = n + nu
        pooled = (n * m.var_fl + nu * m.var_fu
                  + n * nu / total * (np.asarray(m.mean_fl) - m.mean_fu) ** 2) / (total - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.where(pooled > 0, m.cov_yf / (pooled * (1 + n / np.maximum(nu, 1))), 0.0)
        lam_arr = np.clip(raw, 0.0, 1.0)
    else:
        lam_arr = np.asarray(lam, dtype=float)
    point = lam_arr * m.mean_fu + m.mean_y - lam_arr * m.mean_fl
    var_rect = m.var_y + lam_arr ** 2 * m.var_fl - 2 * lam_arr * m.cov_yf
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.maximum(var_rect, 0.0) / n + np.where(
            lam_arr > 0, lam_arr ** 2 * m.var_fu / np.maximum(nu, 1), 0.0)
    return point, np.sqrt(var), lam_arr


def prior_rows(level: float = 0.95) -> float:
    """Pseudo-rows added to a small labelled set's residual variance: z^2 (3.84 at 95%).

    Agresti and Coull ("Approximate is better than 'exact' for interval estimation
    of binomial proportions", The American Statistician 1998) add z^2 pseudo-
    observations; Agresti and Min ("Simple improved confidence intervals for
    comparing matched proportions", Statistics in Medicine 2005) do the same for
    the difference of paired proportions, which is what the rectifier Y - f of a
    0/1 judge and 0/1 labels is.
    """
    return z_value(level) ** 2


def crossfit_from_moments(a: Moments, b: Moments, level: float = 0.95
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, standard error, mean lam) of the small-sample corrected mean; broadcasts.

    The labelled rows are split into two folds ``a`` and ``b`` (their moments;
    the unlabelled fields are read from ``a``). Each fold's lambda is tuned on
    the *other* fold (cov / var of the judge there, over 1 + n/N_u, clipped to
    [0, 1]), so it is independent of the labels it weights: the point is then
    exactly unbiased, and the spread of the residuals Y - lam f is not shrunk
    by a lambda fitted to them, which is what makes the reference's interval
    cover only ~90% with 20-30 labels and a near-perfect judge. The residual
    variance divides by n - 1 and the interval uses Student's t with n - 1
    degrees of freedom (the caller's :class:`Estimate` ``df``). Cross-fitting
    follows Zrnic and Candès, "Cross-prediction-powered inference" (PNAS 2024).

    With few labels and a judge that rarely disagrees with them, the labelled
    set often holds no disagreement at all and the residual variance reads 0
    (coverage fell to 46% with 20 labels, a 97.5%-agreeing judge and 100,000
    rows). So the residual variance gets ``prior_rows`` pseudo-rows in which
    label and judge are independent with the labelled rows' own variances:
    (SS + k (var Y + lam^2 var f)) / (n - 1 + k), i.e. the labelled covariance
    shrunk toward independence by n / (n + k) (for 0/1 labels, a 0/1 judge and
    lam = 1 at a rate near 1/2, Agresti and Min's half a row in each cell of the
    2x2 table). The point is not moved: it stays exactly unbiased.
    """
    na, nb = np.asarray(a.n, dtype=float), np.asarray(b.n, dtype=float)
    n, nu = na + nb, np.asarray(a.n_u, dtype=float)

    def tuned(m: Moments) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.where(np.asarray(m.var_fl) > 0, np.asarray(m.cov_yf)
                           / (np.asarray(m.var_fl) * (1 + n / np.maximum(nu, 1))), 0.0)
        return np.clip(raw, 0.0, 1.0)

    lam_a, lam_b = tuned(b), tuned(a)
    mean_ra = np.asarray(a.mean_y) - lam_a * a.mean_fl
    mean_rb = np.asarray(b.mean_y) - lam_b * b.mean_fl
    var_ra = np.maximum(a.var_y + lam_a ** 2 * a.var_fl - 2 * lam_a * a.cov_yf, 0.0)
    var_rb = np.maximum(b.var_y + lam_b ** 2 * b.var_fl - 2 * lam_b * b.cov_yf, 0.0)
    mean_r = (na * mean_ra + nb * mean_rb) / n
    lam = (na * lam_a + nb * lam_b) / n
    var_y = _pooled(na, nb, a.mean_y, b.mean_y, a.var_y, b.var_y)
    var_f = _pooled(na, nb, a.mean_fl, b.mean_fl, a.var_fl, b.var_fl)
    k = prior_rows(level)
    var_r = (na * var_ra + nb * var_rb + na * nb / n * (mean_ra - mean_rb) ** 2
             + k * (var_y + lam ** 2 * var_f)) / (n - 1 + k)
    point = lam * a.mean_fu + mean_r
    var = var_r / n + np.where(lam > 0, lam ** 2 * a.var_fu / np.maximum(nu, 1), 0.0)
    return point, np.sqrt(var), lam


def _pooled(na: Any, nb: Any, mean_a: Any, mean_b: Any, var_a: Any, var_b: Any) -> Any:
    """The variance (ddof 0) of two folds taken together."""
    n = na + nb
    return (na * np.asarray(var_a) + nb * np.asarray(var_b)
            + na * nb / n * (np.asarray(mean_a) - np.asarray(mean_b)) ** 2) / n


def _estimate(point: Any, se: Any, lam: Any, n: int, level: float,
              df: int | None = None, center: Any = None) -> Estimate:
    return Estimate(float(point), float(se), n, level, None if lam is None else float(lam), df,
                    None if center is None else float(center))


def judge_only(judge: ArrayLike, level: float = 0.95) -> Estimate:
    """The judge's own mean over every row: it estimates the judge, not the truth."""
    f = np.asarray(judge, dtype=float)
    return _estimate(f.mean(), f.std() / np.sqrt(len(f)), None, len(f), level)


def labels_only(labels: ArrayLike, level: float = 0.95, *, reference: bool = False) -> Estimate:
    """The classical mean of the labels.

    From ``SMALL_SAMPLE`` labels on (or with ``reference=True``) the normal
    interval of ppi-python's ``classical_mean_ci``. Below, that interval covers
    about 93% (0/1 labels at a rate of 0.6, 20 labels: 92.8%), so 0/1 labels get
    Agresti and Coull's interval (z^2 pseudo-observations, half of them 1s: the
    centre moves to (x + z^2/2) / (n + z^2); see :func:`prior_rows`) and graded
    labels Student's t with n - 1 degrees of freedom; the mean shown is the
    labels' own mean either way.
    """
    y = np.asarray(labels, dtype=float)
    n = len(y)
    if reference or n >= SMALL_SAMPLE:
        return _estimate(y.mean(), y.std() / np.sqrt(n), None, n, level)
    if np.isin(y, (0.0, 1.0)).all():
        k = prior_rows(level)
        centre = (y.sum() + k / 2) / (n + k)
        return _estimate(y.mean(), np.sqrt(centre * (1 - centre) / (n + k)), None, n, level,
                         center=centre)
    return _estimate(y.mean(), y.std(ddof=1) / np.sqrt(n), None, n, level, df=n - 1)


def corrected_mean(judge: ArrayLike, labels: ArrayLike, labelled: ArrayLike, *,
                   level: float = 0.95, lam: float | None = None,
                   reference: bool = False) -> Estimate:
    """PPI++ mean from the judge on all rows and labels on a uniform random draw.

    ``labelled``: positions in ``judge`` of the labelled rows, in the order of ``labels``.
    From ``SMALL_SAMPLE`` labels on (or with ``reference=True``, or a fixed
    ``lam``) it is ppi-python's ``ppi_mean_ci`` exactly; below, lambda is
    cross-fitted over two folds (alternate labelled rows) with a Student-t
    interval (:func:`crossfit_from_moments`).
    """
    f = np.asarray(judge, dtype=float)
    y = np.asarray(labels, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    rest = np.ones(len(f), dtype=bool)
    rest[idx] = False
    if reference or lam is not None or len(idx) >= SMALL_SAMPLE:
        point, se, lam_ = ppi_from_moments(moments(f[idx], y, f[rest]), lam=lam)
        return _estimate(point, se, lam_, len(idx), level)
    a = moments(f[idx[0::2]], y[0::2], f[rest])
    b = moments(f[idx[1::2]], y[1::2], f[rest])
    point, se, lam_ = crossfit_from_moments(a, b, level)
    return _estimate(point, se, lam_, len(idx), level, df=len(idx) - 1)


def small_sample_df(n: Any) -> Any:
    """Student-t degrees of freedom below ``SMALL_SAMPLE`` labels (None: the normal interval)."""
    return n - 1 if n < SMALL_SAMPLE else None


def active_terms(judge: np.ndarray, labels_full: np.ndarray, drawn: np.ndarray, prob: np.ndarray,
                 lam: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, se, lam) of the active-draw mean, vectorised over the last axis (the rows).

    Active statistical inference (Zrnic and Candès, arXiv 2403.03208, eq. for the
    mean with power tuning): each row i is labelled with probability ``prob[i]``
    (``drawn`` says which were), and

        theta = mean_i [ lam * f_i + (Y_i - lam * f_i) * drawn_i / prob_i ]

    is unbiased for any ``lam``; its standard error is the rows' standard deviation
    of that term over sqrt(N). ``lam`` minimises that variance (the term is
    A + lam * B with A = Y drawn/prob, B = f (1 - drawn/prob)), clipped to [0, 1].
    ``labels_full`` may hold anything where ``drawn`` is false. No library weights
    an active draw back, hence written here.
    """
    w = np.where(drawn, 1.0 / prob, 0.0)
    a = np.where(drawn, labels_full, 0.0) * w
    b = judge * (1.0 - w)
    if lam is None:
        ca, cb = a - a.mean(-1, keepdims=True), b - b.mean(-1, keepdims=True)
        vb = (cb ** 2).mean(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.clip(np.where(vb > 0, -(ca * cb).mean(-1) / vb, 0.0), 0.0, 1.0)
    lam = np.asarray(lam, dtype=float)
    term = a + np.expand_dims(lam, -1) * b
    return term.mean(-1), term.std(-1) / np.sqrt(term.shape[-1]), lam


def active_mean(judge: ArrayLike, labels: ArrayLike, labelled: ArrayLike, prob: ArrayLike, *,
                level: float = 0.95, lam: float | None = None) -> Estimate:
    """The corrected mean of an active draw; ``prob`` is each row's inclusion probability.

    ``lam=0`` gives the labels-only (inverse-probability weighted) mean of the same draw.
    Below ``SMALL_SAMPLE`` labels the interval uses Student's t with n - 1 degrees
    of freedom (n labelled rows): the normal one covered 92% with 20 labels.
    """
    f = np.asarray(judge, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    full = np.zeros(len(f))
    full[idx] = np.asarray(labels, dtype=float)
    drawn = np.zeros(len(f), dtype=bool)
    drawn[idx] = True
    point, se, lam_ = active_terms(f, full, drawn, np.asarray(prob, dtype=float), lam)
    return _estimate(point, se, lam_, len(idx), level, df=small_sample_df(len(idx)))


def paired_difference(judge_new: ArrayLike, judge_old: ArrayLike, labels_new: ArrayLike,
                      labels_old: ArrayLike, labelled: ArrayLike, *, prob: ArrayLike | None = None,
                      level: float = 0.95) -> dict[str, Estimate]:
    """Corrected difference new - old of two versions scored on the same rows.

    Both versions' judge scores cover all rows (paired by the alignment); both have
    labels on the same drawn rows. The difference of paired rows is one more mean,
    so the same estimators apply: ``judge_only`` (biased by the judge's habits),
    ``labels_only`` and ``corrected``. ``prob``: inclusion probabilities of an
    active draw (all rows), None for a uniform draw.
    """
    f = np.asarray(judge_new, dtype=float) - np.asarray(judge_old, dtype=float)
    y = np.asarray(labels_new, dtype=float) - np.asarray(labels_old, dtype=float)
    if prob is None:
        return {"judge_only": judge_only(f, level), "labels_only": labels_only(y, level),
                "corrected": corrected_mean(f, y, labelled, level=level)}
    return {"judge_only": judge_only(f, level),
            "labels_only": active_mean(f, y, labelled, prob, level=level, lam=0.0),
            "corrected": active_mean(f, y, labelled, prob, level=level)}


def labels_worth(labels: Estimate, corrected: Estimate) -> float:
    """How many extra labels the judge's scores were worth: n * (width ratio^2 - 1), at least 0.

    The corrected interval is as narrow as labels alone would be with
    n * (hw_labels / hw_corrected)^2 labels (the effective sample size); half-widths
    rather than standard errors, since below ``SMALL_SAMPLE`` the two intervals
    use different quantiles (Student's t, Agresti-Coull's normal).
    """
    if corrected.half_width <= 0:
        return float("inf") if labels.half_width > 0 else 0.0
    return max(0.0, labels.n * (labels.half_width ** 2 / corrected.half_width ** 2) - labels.n)
