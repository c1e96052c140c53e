"""Agreement statistics of paired scores, each with a bootstrap 95% CI: :func:`paired_stats`.

Per pair of score columns (judge A and judge B, or a judge and humans):
Pearson, Spearman and Kendall correlation (scipy.stats), mean absolute
difference, bias (mean of B - A), Cohen's kappa on pass/fail verdicts at a
threshold and quadratic-weighted kappa on rating scales (sklearn.metrics),
and the confusion matrix. Used by compare and validate alike.

From :data:`~localeval.agreement.small_samples.SMALL_N` pairs up, one bootstrap
method (:mod:`localeval.stats`): a seeded percentile bootstrap over paired
indices, the same for every statistic. A statistic that can be undefined on a
resample (a correlation or a kappa when a resample happens to be constant,
common with 0/0.5/1 judge scores) has those resamples dropped and counted
instead of turning the interval into NaN. With fewer pairs the bootstrap
undercovers, and :mod:`small_samples` gives the closed-form intervals used
instead (Fisher z, Student t, Clopper-Pearson) and, for the kappas (which
have none), the caveat with the coverage measured at that size.

Point estimates always come from scipy/sklearn; the resample loops use
vectorised equivalents (``localeval.stats``, tested equal to the library functions).
"""

from __future__ import annotations

import functools
import math
import warnings
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from localeval.agreement.small_samples import (
    SMALL_N,
    caveat,
    correlation_interval,
    mean_interval,
    method_name,
    proportion_interval,
)
from localeval.stats import (
    Interval,
    Resamples,
    kappa_rows,
    kendall_rows,
    pearson_rows,
    percentile_interval,
    spearman_rows,
)

__all__ = [
    "Stat",
    "paired_stats",
    "rating_levels",
    "metric_seed",
    "STAT_LABELS",
    "CI_PERCENTILE",
    "UNRELIABLE",
    "caveat_note",
    "ci_methods_note",
]

CI_PERCENTILE = "percentile bootstrap (numpy, seeded; undefined resamples dropped)"
#: Marks a printed interval that is not a reliable 95% one at its size (the notes say why).
UNRELIABLE = " †"

#: Statistics in display order, with the plain names pages and tables show.
STAT_LABELS: dict[str, str] = {
    "pearson": "Pearson's r",
    "spearman": "Spearman's rho",
    "kendall": "Kendall's tau",
    "mad": "mean absolute difference",
    "bias": "bias (mean of B − A)",  # validate: "judge − labels" (validation.STAT_NAMES)
    "agreement": "verdict agreement",
    "kappa": "Cohen's kappa",
    "weighted_kappa": "weighted kappa (quadratic)",
}
_MIN_N = 3  # fewer paired samples: no correlation, no CI
_GRIDS = (1, 2, 3, 4, 5, 6, 8, 10)


@dataclass
class Stat:
    """One statistic: value, 95% CI, and why either is missing."""

    value: float | None
    ci95: tuple[float, float] | None = None
    reason: str | None = None
    method: str | None = None
    dropped: int = 0  # resamples where the statistic was undefined
    n: int = 0  # the paired samples it was computed on
    #: why the interval, though printed, is not a reliable 95% one at this size
    caveat: str | None = None

    def interval(self) -> Interval:
        """This statistic as the one interval value of the analyses (``stats.Interval``)."""
        lo, hi = self.ci95 if self.ci95 else (None, None)
        return Interval(self.value, lo, hi, self.n, self.method or "", reason=self.reason)

    def to_dict(self) -> dict[str, Any]:
        """The one interval shape (``stats.Interval``), with the undefined resamples dropped."""
        d = self.interval().to_dict()
        if self.dropped:
            d["resamples_dropped"] = self.dropped
        if self.caveat:
            d["reliable"] = False
            d["caveat"] = self.caveat
        return d

    def text(self, digits: int = 3, sep: str = " ") -> str:
        if self.value is None:
            return "—"
        s = f"{self.value:.{digits}f}"
        if self.ci95:
            s += f"{sep}[{self.ci95[0]:.{digits}f}, {self.ci95[1]:.{digits}f}]"
            if self.caveat:
                s += UNRELIABLE
        return s


def rating_levels(*columns: Sequence[float] | np.ndarray) -> int | None:
    """The coarsest grid {0, 1/m, ..., 1} holding every value, for m in 1..10; else None.

    0/1/2 ratings scaled to 0/0.5/1 give m=2; RAGAS's nv_* metrics (the mean
    of two such ratings) give m=4; a 0-10 score gives m=10.
    """
    vals = (np.concatenate([np.asarray(c, dtype=float) for c in columns]) if columns
            else np.zeros(0))
    if len(vals) == 0 or vals.min() < 0 or vals.max() > 1:
        return None
    for m in _GRIDS:
        scaled = vals * m
        if np.all(np.abs(scaled - np.round(scaled)) < 1e-6):
            return m
    return None


def _constant_reason(x: np.ndarray, y: np.ndarray, sides: tuple[str, str] = ("A", "B")
                     ) -> str | None:
    """Why a correlation is undefined, or None when neither side is constant."""
    cx, cy = len(x) > 0 and np.ptp(x) == 0, len(y) > 0 and np.ptp(y) == 0
    a, b = sides
    if cx and cy:
        return f"{a} and {b} are both constant ({a} always {x[0]:g}, {b} always {y[0]:g})"
    if cx or cy:
        side, v = (a, x) if cx else (b, y)
        return f"{side} is constant (every value {v[0]:g})"
    return None


def metric_seed(seed: int, metric: str) -> int:
    """The bootstrap seed of one metric: stable whatever other metrics are compared."""
    return (seed * 1_000_003 + zlib.crc32(metric.encode("utf-8"))) % 2**32


def _mad_stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(np.abs(y - x), axis=axis)


def _bias_stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def _on_rows(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], x: np.ndarray, y: np.ndarray,
             i: np.ndarray) -> np.ndarray:
    """``fn`` over resampled rows ``i`` (a statistic bound to its data for the resampler)."""
    return fn(x[i], y[i])


def _fisher_stat(name: str, r: float, n: int) -> Stat:
    """A correlation of fewer than SMALL_N pairs with its Fisher-z interval (or why none)."""
    lo, hi = correlation_interval(name, r, n)
    if not np.isfinite(lo):
        need = 5 if name == "kendall" else 4
        return Stat(r, reason=f"n={n}: too few pairs for a 95% CI (Fisher's z needs {need})")
    why = caveat(name, n)
    if abs(r) >= 1 - 1e-12:
        why = (f"r = {r:g} exactly in {n} pairs: Fisher's z interval collapses to a point "
               "and is not a 95% interval")
    return Stat(r, (float(lo), float(hi)), None, method_name(name), caveat=why)


def ci_methods_note() -> str:
    """The notes' line on how intervals of few samples are computed, and what † means."""
    return (f"with fewer than {SMALL_N} samples the bootstrap undercovers, so correlations get "
            "Fisher's z interval, differences and means a Student t interval, agreement rates "
            "a Clopper-Pearson interval; kappa, AUC and pairwise accuracy have no such "
            f"interval: a{UNRELIABLE} marks any interval not reliable at its size "
            "(measured coverage in its note)")


def caveat_note(label: str, stat: Stat) -> str | None:
    """``faithfulness: Cohen's kappa †: 95% CI not reliable ...`` for the notes, or None."""
    return f"{label}{UNRELIABLE}: {stat.caveat}" if stat.caveat and stat.ci95 else None


def paired_stats(x_in: Sequence[float], y_in: Sequence[float], *, threshold: float | None = 0.5,
                 n_boot: int = 2000, seed: int = 0,
                 which: Sequence[str] = tuple(STAT_LABELS), sides: tuple[str, str] = ("A", "B")
                 ) -> tuple[dict[str, Stat], dict[str, Any]]:
    """Agreement statistics of paired scores ``x`` (A) and ``y`` (B), with bootstrap CIs.

    ``sides`` names x and y in the reasons (``validate`` says judge and labels).

    Returns (stats, extra): ``stats`` maps a name in :data:`STAT_LABELS` to a
    :class:`Stat`; ``extra`` holds the confusion matrix at the threshold and
    the rating grid used for weighted kappa. ``n_boot=0`` skips the CIs.
    """
    from scipy.stats import kendalltau, pearsonr, spearmanr
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    x = np.asarray(x_in, dtype=float)
    y = np.asarray(y_in, dtype=float)
    n = len(x)
    out: dict[str, Stat] = {}
    extra: dict[str, Any] = {"confusion": None, "levels": None}
    if n == 0:
        return {k: Stat(None, reason="no paired samples") for k in which}, extra
    boot = Resamples(n, n_boot, seed) if n_boot and n >= _MIN_N else None
    small = boot is not None and n < SMALL_N  # closed forms instead of the bootstrap

    def resampled(point: float, fn: Callable[[np.ndarray], np.ndarray],
                  name: str | None = None) -> Stat:
        if boot is None:
            return Stat(point, reason=None if n_boot == 0 else f"n={n}: too few for a CI")
        ci, dropped, why = percentile_interval(boot.apply(fn))
        return Stat(point, ci, why, CI_PERCENTILE, dropped,
                    caveat=caveat(name, n) if name and ci else None)

    # correlations
    const = _constant_reason(x, y, sides)
    for name, fn_point, fn_rows in (
            ("pearson", lambda: pearsonr(x, y).statistic, lambda i: pearson_rows(x[i], y[i])),
            ("spearman", lambda: spearmanr(x, y).statistic,
             lambda i: spearman_rows(x[i], y[i])),
            ("kendall", lambda: kendalltau(x, y).statistic,
             lambda i: kendall_rows(x, y, i))):
        if name not in which:
            continue
        if n < _MIN_N:
            out[name] = Stat(None, reason=f"needs at least {_MIN_N} paired samples (n={n})")
        elif const:
            out[name] = Stat(None, reason=f"{const}: correlation undefined")
        elif small:
            out[name] = _fisher_stat(name, float(fn_point()), n)
        else:
            out[name] = resampled(float(fn_point()), fn_rows)

    # differences: always defined
    for name, fn in (("mad", _mad_stat), ("bias", _bias_stat)):
        if name not in which:
            continue
        point = float(fn(x, y))
        d = np.abs(y - x) if name == "mad" else y - x
        if boot is None:
            out[name] = Stat(point, reason=None if n_boot == 0 else f"n={n}: too few for a CI")
        elif np.ptp(d) == 0:
            out[name] = Stat(point, (point, point), None, "exact (every pair differs equally)",
                             caveat=None if not small else
                             f"all {n} pairs differ by the same amount; with so few pairs "
                             "this zero-width interval is not a 95% interval")
        elif small:
            t_lo, t_hi = mean_interval(point, float(np.std(d, ddof=1)), n)
            low = max(float(t_lo), 0.0) if name == "mad" else float(t_lo)  # |B - A| >= 0
            out[name] = Stat(point, (low, float(t_hi)), None, method_name("mean"),
                             caveat=caveat(name, n))
        else:
            out[name] = resampled(point, functools.partial(_on_rows, fn, x, y))

    # verdicts at the threshold
    if threshold is not None:
        pa = (x >= threshold).astype(int)
        pb = (y >= threshold).astype(int)
        extra["confusion"] = confusion_matrix(pa, pb, labels=[0, 1]).tolist()
        if "agreement" in which and small:
            k = int(np.sum(pa == pb))
            lo, hi = proportion_interval(k, n)
            out["agreement"] = Stat(k / n, (float(lo), float(hi)), None,
                                    method_name("proportion"))
        elif "agreement" in which:
            out["agreement"] = resampled(float(np.mean(pa == pb)),
                                         lambda i: np.mean(pa[i] == pb[i], axis=1))
        if "kappa" in which:
            if np.ptp(pa) == 0 and np.ptp(pb) == 0 and pa[0] == pb[0]:
                out["kappa"] = Stat(None, reason="both sides give the same verdict on every "
                                                 "sample: kappa undefined (agreement 100%)")
            else:
                point = float(cohen_kappa_score(pa, pb, labels=[0, 1]))
                out["kappa"] = resampled(point, lambda i: kappa_rows(pa[i], pb[i], 2, None),
                                         "kappa")
    if "weighted_kappa" in which:
        m = rating_levels(x, y)
        extra["levels"] = None if m is None else m + 1
        if m is None:
            out["weighted_kappa"] = Stat(None, reason="values are not on a common rating grid "
                                                      "{0, 1/m, ..., 1} (m <= 10)")
        else:
            ca = np.rint(x * m).astype(int)
            cb = np.rint(y * m).astype(int)
            labels = list(range(m + 1))
            if np.ptp(ca) == 0 and np.ptp(cb) == 0 and ca[0] == cb[0]:
                out["weighted_kappa"] = Stat(None, reason="both sides give the same rating on "
                                                          "every sample: weighted kappa undefined")
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    point = float(cohen_kappa_score(ca, cb, labels=labels, weights="quadratic"))
                if math.isnan(point):
                    out["weighted_kappa"] = Stat(None, reason="weighted kappa undefined")
                else:
                    out["weighted_kappa"] = resampled(
                        point, lambda i: kappa_rows(ca[i], cb[i], m + 1, "quadratic"),
                        "weighted_kappa")
    for st in out.values():
        st.n = n
    return {k: out[k] for k in which if k in out}, extra

