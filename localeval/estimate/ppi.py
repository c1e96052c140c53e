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

__all__ = ["Estimate", "Moments", "moments", "ppi_from_moments", "pseudo_from_moments",
           "labels_only", "corrected_mean", "prior_rows", "interval_method", "REFERENCE_METHOD",
           "labels_method",
           "is_binary", "active_mean", "paired_difference", "judge_only", "labels_worth",
           "z_value"]

ArrayLike = Any

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
    #: how the interval was computed, in words (the outputs name it beside the numbers)
    method: str | None = None

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
        out: dict[str, Any] = {"mean": self.mean, "low": self.low, "high": self.high,
                               "se": self.se, "n": self.n}
        if self.lam is not None:
            out["lambda"] = self.lam
        if self.df is not None:
            out["student_t_df"] = self.df
        if self.method is not None:
            out["interval"] = self.method
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
    return point, np.sqrt(_residual_var(m, lam_arr) / n + _judge_var(m, lam_arr)), lam_arr


def _residual_var(m: Moments, lam: np.ndarray) -> np.ndarray:
    """The labelled rows' variance of the residual Y - lam f (ddof 0, at least 0)."""
    return np.maximum(m.var_y + lam ** 2 * m.var_fl - 2 * lam * m.cov_yf, 0.0)


def _judge_var(m: Moments, lam: np.ndarray) -> np.ndarray:
    """The unlabelled judge mean's share of the estimate's variance: lam^2 var(f) / N_u."""
    nu = np.asarray(m.n_u, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lam > 0, lam ** 2 * m.var_fu / np.maximum(nu, 1), 0.0)


def prior_rows(level: float = 0.95) -> float:
    """Pseudo-rows added to the labelled residual variance: z^2 (3.84 at 95%).

    Agresti and Coull ("Approximate is better than 'exact' for interval estimation
    of binomial proportions", The American Statistician 1998) add z^2 pseudo-
    observations; Agresti and Min ("Simple improved confidence intervals for
    comparing matched proportions", Statistics in Medicine 2005) do the same for
    the difference of paired proportions, which is what the rectifier Y - f of a
    0/1 judge and 0/1 labels is.
    """
    return z_value(level) ** 2


def interval_method(level: float = 0.95) -> str:
    """The default corrected interval, named as the outputs name it."""
    return (f"PPI++ with {prior_rows(level):.2f} independent pseudo-rows, Student t "
            "(n - 1 df)")


def labels_method(level: float = 0.95) -> str:
    """The default labels-only interval, named as the outputs name it."""
    return (f"labels with {prior_rows(level):.2f} pseudo-rows, Student t (n - 1 df)")


#: The reference's interval (``reference=True``), named as the outputs name it.
REFERENCE_METHOD = "PPI++ (reference: ppi-python's normal interval)"


def pseudo_from_moments(m: Moments, *, binary: Any = False, level: float = 0.95,
                        lam: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, standard error, lam) of the default corrected mean; broadcasts.

    The point and lam are the reference's (:func:`ppi_from_moments`); only the
    residual variance changes. With a judge that rarely disagrees with the
    labels, the labelled set often holds no disagreement at all and the residual
    variance Y - lam f reads (nearly) 0: the reference covered 46% with 20
    labels, 82% with 50 and 88-91% with 100 labels and a 95-97.5%-agreeing judge.
    So the residual variance gets ``prior_rows`` (z^2) pseudo-rows in which
    label and judge are independent: each adds var(Y') + lam^2 var(f), where
    the pseudo-labels Y' are Agresti and Coull's half 0s and half 1s for 0/1
    labels (variance 1/4 about 1/2, so the gap between the labels' mean and 1/2
    enters as a between-groups term) and have the labels' own variance
    otherwise. With n real rows::

        var_r = (n var(Y - lam f) + k (var(Y') + lam^2 var f) + shift) / (n - 1 + k)

    and the interval uses Student's t with n - 1 degrees of freedom. As n grows
    the pseudo-rows' weight k / (n + k) vanishes, so the interval tends to the
    reference's; at every n it contains the reference's (same centre, a larger
    residual variance as lam > 0 needs a positive covariance, and t > z). For
    0/1 labels, a 0/1 judge and lam = 1 at a rate near 1/2 this is Agresti and
    Min's half a row in each cell of the 2x2 table. ``binary``: the labels are
    all 0 or 1 (per data set, broadcasting). ``lam=0`` is the labels-only
    interval shown beside it (:func:`labels_only`): so a useless judge, tuned to
    lam near 0, gives the labels-only interval, not a wider one.
    """
    point, _, lam = ppi_from_moments(m, lam=lam)
    n = np.asarray(m.n, dtype=float)
    k = prior_rows(level)
    binary = np.asarray(binary, dtype=bool)
    pseudo_y = np.where(binary, 0.25, m.var_y)
    shift = np.where(binary, n * k / (n + k) * (np.asarray(m.mean_y) - 0.5) ** 2, 0.0)
    var_r = (n * _residual_var(m, lam) + k * (pseudo_y + lam ** 2 * m.var_fl) + shift
             ) / (n - 1 + k)
    return point, np.sqrt(var_r / n + _judge_var(m, lam)), lam


def is_binary(labels: ArrayLike) -> bool:
    """Labels all 0 or 1 (they get Agresti and Coull's pseudo-observations)."""
    return bool(np.isin(np.asarray(labels, dtype=float), (0.0, 1.0)).all())


def _estimate(point: Any, se: Any, lam: Any, n: int, level: float,
              df: int | None = None, center: Any = None, method: str | None = None) -> Estimate:
    return Estimate(float(point), float(se), n, level, None if lam is None else float(lam), df,
                    None if center is None else float(center), method)


def judge_only(judge: ArrayLike, level: float = 0.95) -> Estimate:
    """The judge's own mean over every row: it estimates the judge, not the truth."""
    f = np.asarray(judge, dtype=float)
    return _estimate(f.mean(), f.std() / np.sqrt(len(f)), None, len(f), level,
                     method="normal (the judge's own average)")


def labels_only(labels: ArrayLike, level: float = 0.95, *, reference: bool = False) -> Estimate:
    """The classical mean of the labels.

    With ``reference=True`` the normal interval of ppi-python's
    ``classical_mean_ci``. By default the corrected interval with lam = 0
    (:func:`pseudo_from_moments`: the labels' variance with z^2 pseudo-rows,
    Agresti and Coull's half 0s and half 1s for 0/1 labels, Student's t with
    n - 1 degrees of freedom): the normal interval covers 92.8% with 20 0/1
    labels at a rate of 0.6, this one 96.3%; and the corrected interval with a
    useless judge is this one, so the two compare like for like at every n.
    """
    y = np.asarray(labels, dtype=float)
    n = len(y)
    if reference:
        return _estimate(y.mean(), y.std() / np.sqrt(n), None, n, level,
                         method="normal (reference: ppi-python's classical interval)")
    m = Moments(n, y.mean(), 0.0, y.var(), 0.0, 0.0, 0, 0.0, 0.0)
    point, se, _ = pseudo_from_moments(m, binary=is_binary(y), level=level, lam=0.0)
    return _estimate(point, se, None, n, level, df=n - 1, method=labels_method(level))


def corrected_mean(judge: ArrayLike, labels: ArrayLike, labelled: ArrayLike, *,
                   level: float = 0.95, lam: float | None = None,
                   reference: bool = False) -> Estimate:
    """PPI++ mean from the judge on all rows and labels on a uniform random draw.

    ``labelled``: positions in ``judge`` of the labelled rows, in the order of
    ``labels``. With ``reference=True`` (or a fixed ``lam``) it is ppi-python's
    ``ppi_mean_ci`` exactly; by default the same point with the interval of
    :func:`pseudo_from_moments` (the reference's widened by the pseudo-rows).
    """
    f = np.asarray(judge, dtype=float)
    y = np.asarray(labels, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    rest = np.ones(len(f), dtype=bool)
    rest[idx] = False
    m = moments(f[idx], y, f[rest])
    if reference or lam is not None:
        point, se, lam_ = ppi_from_moments(m, lam=lam)
        return _estimate(point, se, lam_, len(idx), level, method=REFERENCE_METHOD)
    point, se, lam_ = pseudo_from_moments(m, binary=is_binary(y), level=level)
    return _estimate(point, se, lam_, len(idx), level, df=len(idx) - 1,
                     method=interval_method(level))


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


#: The active draw's intervals, named as the outputs name them.
ACTIVE_METHOD = "active draw: inverse-probability weighted PPI++, Student t (n - 1 df)"
ACTIVE_LABELS_METHOD = "active draw: inverse-probability weighted labels, Student t (n - 1 df)"


def active_mean(judge: ArrayLike, labels: ArrayLike, labelled: ArrayLike, prob: ArrayLike, *,
                level: float = 0.95, lam: float | None = None) -> Estimate:
    """The corrected mean of an active draw; ``prob`` is each row's inclusion probability.

    ``lam=0`` gives the labels-only (inverse-probability weighted) mean of the same draw.
    The interval uses Student's t with n - 1 degrees of freedom (n labelled rows):
    the normal one covered 92% with 20 labels; t tends to it as n grows.
    """
    f = np.asarray(judge, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    full = np.zeros(len(f))
    full[idx] = np.asarray(labels, dtype=float)
    drawn = np.zeros(len(f), dtype=bool)
    drawn[idx] = True
    point, se, lam_ = active_terms(f, full, drawn, np.asarray(prob, dtype=float), lam)
    return _estimate(point, se, lam_, len(idx), level, df=len(idx) - 1,
                     method=ACTIVE_METHOD if lam is None else ACTIVE_LABELS_METHOD)


def paired_difference(judge_new: ArrayLike, judge_old: ArrayLike, labels_new: ArrayLike,
                      labels_old: ArrayLike, labelled: ArrayLike, *, prob: ArrayLike | None = None,
                      level: float = 0.95, reference: bool = False) -> dict[str, Estimate]:
    """Corrected difference new - old of two versions scored on the same rows.

    Both versions' judge scores cover all rows (paired by the alignment); both have
    labels on the same drawn rows. The difference of paired rows is one more mean,
    so the same estimators apply: ``judge_only`` (biased by the judge's habits),
    ``labels_only`` and ``corrected``. ``prob``: inclusion probabilities of an
    active draw (all rows), None for a uniform draw. ``reference``: the plain
    PPI++ interval of a uniform draw (ppi-python's), without the pseudo-rows.
    """
    f = np.asarray(judge_new, dtype=float) - np.asarray(judge_old, dtype=float)
    y = np.asarray(labels_new, dtype=float) - np.asarray(labels_old, dtype=float)
    if prob is None:
        return {"judge_only": judge_only(f, level),
                "labels_only": labels_only(y, level, reference=reference),
                "corrected": corrected_mean(f, y, labelled, level=level, reference=reference)}
    return {"judge_only": judge_only(f, level),
            "labels_only": active_mean(f, y, labelled, prob, level=level, lam=0.0),
            "corrected": active_mean(f, y, labelled, prob, level=level)}


def labels_worth(labels: Estimate, corrected: Estimate) -> float:
    """How many extra labels the judge's scores were worth: n * (width ratio^2 - 1), at least 0.

    The corrected interval is as narrow as labels alone would be with
    n * (hw_labels / hw_corrected)^2 labels (the effective sample size); half-widths
    rather than standard errors, since the two intervals may use different
    quantiles (Student's t, Agresti-Coull's normal).
    """
    if corrected.half_width <= 0:
        return float("inf") if labels.half_width > 0 else 0.0
    return max(0.0, labels.n * (labels.half_width ** 2 / corrected.half_width ** 2) - labels.n)
