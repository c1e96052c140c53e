"""Validation form (a), separation: do samples labelled positive score high and negatives low?

Per label group: the mean score and the OK / Partial / NG distribution
(score == 1, strictly between, == 0; the three-way reading of a 0/1/2 rating
used in the MIRACL-ja context-relevance study), plus the ROC AUC of the
score as a detector of positives, with a stratified bootstrap CI.

A group of fewer than ``SMALL_N`` scores gets a Student t interval of its mean
(Clopper-Pearson where its scores are all 0 or 1): the percentile bootstrap
undercovers there. The AUC keeps its bootstrap, with the measured coverage as
a caveat while either group is small (``small_samples``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.agreement.small_samples import SMALL_N, caveat, group_mean_interval, method_name
from localeval.agreement.statistics import CI_PERCENTILE, Stat
from localeval.stats import Resamples, percentile_interval

__all__ = ["verdict_label", "GroupStats", "Separation", "measure_separation"]


def verdict_label(score: float, eps: float = 1e-9) -> str:
    """OK (== 1), NG (== 0) or Partial (in between), with a float tolerance."""
    if score >= 1.0 - eps:
        return "OK"
    if score <= 0.0 + eps:
        return "NG"
    return "Partial"


@dataclass
class GroupStats:
    """Scores of one label group (positive or negative)."""

    n: int
    unscored: int
    mean: Stat
    counts: dict[str, int]

    @property
    def rates(self) -> dict[str, float | None]:
        return {k: (c / self.n if self.n else None) for k, c in self.counts.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "unscored": self.unscored, "mean": self.mean.to_dict(),
                "counts": dict(self.counts), "rates": self.rates}


@dataclass
class Separation:
    """How well one metric separates positive from negative samples."""

    metric: str
    positive: GroupStats
    negative: GroupStats
    auc: Stat

    def to_dict(self) -> dict[str, Any]:
        return {"positive": self.positive.to_dict(), "negative": self.negative.to_dict(),
                "roc_auc": self.auc.to_dict()}


def _group(values: list[float], unscored: int, n_boot: int, seed: int) -> GroupStats:
    counts = {"OK": 0, "Partial": 0, "NG": 0}
    for v in values:
        counts[verdict_label(v)] += 1
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        mean = Stat(None, reason="no scored samples in this group")
    elif n < 3 or n_boot == 0:
        mean = Stat(float(x.mean()), reason=None if n_boot == 0 else "too few for a CI", n=n)
    elif n < SMALL_N:
        lo, hi = group_mean_interval(x)
        binary = bool(np.all((x == 0) | (x == 1)))
        why = caveat("group_mean", n)
        if np.ptp(x) == 0 and not binary:
            why = (f"all {n} scores are {x[0]:g}; with so few scores this zero-width "
                   "interval is not a 95% interval")
        mean = Stat(float(x.mean()), (float(lo[0]), float(hi[0])), None,
                    method_name("proportion" if binary else "mean"), n=n,
                    caveat=None if binary else why)
    elif np.ptp(x) == 0:
        mean = Stat(float(x[0]), (float(x[0]), float(x[0])), None, "exact (constant)", n=n)
    else:
        ci, dropped, why = percentile_interval(
            Resamples(n, n_boot, seed).apply(lambda i: x[i].mean(axis=1)))
        mean = Stat(float(x.mean()), ci, why, CI_PERCENTILE, dropped, n=n)
    return GroupStats(len(x), unscored, mean, counts)


def _auc_stat(pos: np.ndarray, neg: np.ndarray, axis: int = -1) -> np.ndarray:
    # AUC = Mann-Whitney U / (n_pos * n_neg); scipy's U handles ties by mid-ranks,
    # exactly as roc_auc_score does, and is vectorised along the resample axis.
    from scipy.stats import mannwhitneyu

    return mannwhitneyu(pos, neg, axis=axis).statistic / (pos.shape[axis] * neg.shape[axis])


def measure_separation(metric: str, pos: list[float], neg: list[float], un_pos: int,
                       un_neg: int, n_boot: int, seed: int) -> Separation:
    """Group statistics of the scored positives and negatives, and the ROC AUC between them."""
    from sklearn.metrics import roc_auc_score

    gp = _group(pos, un_pos, n_boot, seed)
    gn = _group(neg, un_neg, n_boot, seed + 1)
    if not pos or not neg:
        auc = Stat(None, reason="needs scored samples in both groups "
                                f"(positive {len(pos)}, negative {len(neg)})")
    else:
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        point = float(roc_auc_score(y, np.r_[pos, neg]))
        p, q = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
        if n_boot == 0 or min(len(p), len(q)) < 2:
            auc = Stat(point, reason=None if n_boot == 0 else "too few for a CI")
        elif np.ptp(np.r_[p, q]) == 0:
            auc = Stat(point, (point, point), None, "exact (every score equal)",
                       caveat=caveat("auc", min(len(p), len(q))))
        else:
            # Stratified: positives and negatives resampled separately, so every
            # resample keeps both classes and the AUC stays defined.
            ip = Resamples(len(p), n_boot, seed).indices()
            iq = Resamples(len(q), n_boot, seed + 1).indices()
            ci, dropped, why = percentile_interval(_auc_stat(p[ip], q[iq]))
            auc = Stat(point, ci, why, CI_PERCENTILE + ", stratified by label", dropped,
                       caveat=caveat("auc", min(len(p), len(q))) if ci else None)
        auc.n = len(pos) + len(neg)
    return Separation(metric, gp, gn, auc)
