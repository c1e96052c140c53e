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

from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from localeval.results import IntervalEntry
from localeval.stats import Interval, normal_quantile, t_quantile

__all__ = ["Estimate", "Moments", "moments", "ppi_from_moments", "pseudo_from_moments",
           "labels_only", "corrected_mean", "prior_rows", "interval_method", "REFERENCE_METHOD",
           "labels_method", "bounded", "is_binary", "judge_only", "labels_worth", "z_value"]

ArrayLike = Any

def z_value(level: float = 0.95) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 95%)."""
    return normal_quantile(0.5 + level / 2)


@dataclass(frozen=True)
class Estimate:
    """A mean with its interval: what the tables print and estimate.json holds."""

    mean: float
    se: float
    n: int
    level: float = 0.95
    lam: float | None = None
    #: degrees of freedom of a Student-t interval (None: the normal interval); an active
    #: draw's is Kish's effective number of labels minus one, not a whole number
    df: float | None = None
    #: the interval's centre where it is not the mean (Agresti-Coull's shifted proportion)
    center: float | None = None
    #: how the interval was computed, in words (the outputs name it beside the numbers)
    method: str | None = None
    #: the range the true value lies in (a mean of labels in [0, 1]: (0, 1)); the
    #: interval is cut to it, and so is a point outside it (:func:`bounded`)
    bounds: tuple[float, float] | None = None
    #: the point as computed, where it lay outside ``bounds`` (None: inside, or no bounds)
    raw_mean: float | None = None

    @property
    def half_width(self) -> float:
        """The half-width before any cut to ``bounds`` (what widths and label worth compare)."""
        q = z_value(self.level) if self.df is None else t_quantile(0.5 + self.level / 2,
                                                                     self.df)
        return q * self.se

    def _centre(self) -> float:
        if self.center is not None:
            return self.center
        return self.mean if self.raw_mean is None else self.raw_mean

    def _cut(self, v: float) -> float:
        return v if self.bounds is None else min(max(v, self.bounds[0]), self.bounds[1])

    @property
    def low(self) -> float:
        return self._cut(self._centre() - self.half_width)

    @property
    def high(self) -> float:
        return self._cut(self._centre() + self.half_width)

    @property
    def was_cut(self) -> bool:
        """The point or an end of the interval lay outside ``bounds`` and was cut to them."""
        c, h = self._centre(), self.half_width
        return self.bounds is not None and (self.raw_mean is not None or c - h < self.bounds[0]
                                            or c + h > self.bounds[1])

    def interval(self) -> Interval:
        """This estimate as the one interval value of the analyses (``stats.Interval``)."""
        return Interval(self.mean, self.low, self.high, self.n, self.method or "", self.level,
                        se=self.se, df=self.df)

    def to_dict(self) -> IntervalEntry:
        """The one interval shape (``stats.Interval``), with PPI++'s lambda and any cut."""
        out = cast(IntervalEntry, self.interval().to_dict())
        if self.lam is not None:
            out["lambda"] = self.lam
        if self.was_cut:
            assert self.bounds is not None
            out["cut_to"] = list(self.bounds)
            if self.raw_mean is not None:
                out["value_before_cut"] = self.raw_mean
        return out


def bounded(est: Estimate, bounds: tuple[float, float] | None) -> Estimate:
    """``est`` cut to ``bounds``, the range its true value lies in (None: as it is).

    A corrected mean of labels in [0, 1] can fall outside [0, 1] (PPI++ adds the
    judge's mean to a labelled residual), and so can its interval. The truth cannot,
    so cutting the interval to [0, 1] loses no coverage, and a point outside is
    moved to the nearer bound (closer to the truth, whatever it is); the outputs
    say so (``cut_to``, ``value_before_cut``).
    """
    if bounds is None:
        return est
    lo, hi = bounds
    if lo <= est.mean <= hi:
        return replace(est, bounds=bounds)
    return replace(est, mean=min(max(est.mean, lo), hi), raw_mean=est.mean, bounds=bounds)


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


def labels_only(labels: ArrayLike, level: float = 0.95, *, reference: bool = False,
                bounds: tuple[float, float] | None = None) -> Estimate:
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
        return bounded(_estimate(y.mean(), y.std() / np.sqrt(n), None, n, level,
                                 method="normal (reference: ppi-python's classical interval)"),
                       bounds)
    m = Moments(n, y.mean(), 0.0, y.var(), 0.0, 0.0, 0, 0.0, 0.0)
    point, se, _ = pseudo_from_moments(m, binary=is_binary(y), level=level, lam=0.0)
    return bounded(_estimate(point, se, None, n, level, df=n - 1, method=labels_method(level)),
                   bounds)


def corrected_mean(judge: ArrayLike, labels: ArrayLike, labelled: ArrayLike, *,
                   level: float = 0.95, lam: float | None = None,
                   reference: bool = False, bounds: tuple[float, float] | None = None
                   ) -> Estimate:
    """PPI++ mean from the judge on all rows and labels on a uniform random draw.

    ``labelled``: positions in ``judge`` of the labelled rows, in the order of
    ``labels``. With ``reference=True`` (or a fixed ``lam``) it is ppi-python's
    ``ppi_mean_ci`` exactly; by default the same point with the interval of
    :func:`pseudo_from_moments` (the reference's widened by the pseudo-rows).
    ``bounds``: the range the true mean lies in, the interval cut to it (:func:`bounded`).
    """
    f = np.asarray(judge, dtype=float)
    y = np.asarray(labels, dtype=float)
    idx = np.asarray(labelled, dtype=int)
    rest = np.ones(len(f), dtype=bool)
    rest[idx] = False
    m = moments(f[idx], y, f[rest])
    if reference or lam is not None:
        point, se, lam_ = ppi_from_moments(m, lam=lam)
        return bounded(_estimate(point, se, lam_, len(idx), level, method=REFERENCE_METHOD),
                       bounds)
    point, se, lam_ = pseudo_from_moments(m, binary=is_binary(y), level=level)
    return bounded(_estimate(point, se, lam_, len(idx), level, df=len(idx) - 1,
                             method=interval_method(level)), bounds)


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
