"""Validation form (b), human agreement: how closely a judge's scores follow human scores.

Per metric: the correlations, mean absolute difference and bias of
:func:`paired_stats`, and, when answers are grouped by question, the
pairwise accuracy the RAGAS paper reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.agreement.small_samples import caveat
from localeval.agreement.statistics import CI_PERCENTILE, Stat
from localeval.stats import Resamples, percentile_interval

__all__ = ["HumanAgreement", "pairwise_accuracy"]


@dataclass
class HumanAgreement:
    """Agreement of one metric with human scores (the RAGAS paper's validation)."""

    metric: str
    n: int
    unscored: int
    mean_judge: float | None
    mean_human: float | None
    stats: dict[str, Stat]
    pairwise: Stat | None = None
    n_pairs: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = {"n": self.n, "unscored": self.unscored, "mean_judge": self.mean_judge,
             "mean_human": self.mean_human,
             "stats": {k: v.to_dict() for k, v in self.stats.items()}}
        if self.pairwise is not None:
            d["pairwise_accuracy"] = self.pairwise.to_dict()
            d["pairwise_comparisons"] = self.n_pairs
        return d


def pairwise_accuracy(judge: list[float], human: list[float], groups: list[str], n_boot: int,
                      seed: int) -> tuple[Stat, int]:
    """Share of within-group pairs the judge orders as the humans do (judge ties count 1/2).

    The RAGAS paper's Table 1 ("agreement with human annotators in pairwise
    comparisons") is this accuracy, not a correlation. CI: percentile
    bootstrap over groups, since pairs within a group are not independent;
    with fewer than 20 groups it undercovers, and says so (``caveat``).
    ``Stat.n`` is the number of scored samples in those pairs.
    """
    by: dict[str, list[tuple[float, float]]] = {}
    for j, h, g in zip(judge, human, groups):
        by.setdefault(g, []).append((j, h))
    credit, count = [], []
    used = 0
    for items in by.values():
        c = t = 0.0
        for i in range(len(items)):
            for k in range(i + 1, len(items)):
                dh = items[i][1] - items[k][1]
                if dh == 0:
                    continue
                dj = items[i][0] - items[k][0]
                t += 1
                c += 0.5 if dj == 0 else float((dj > 0) == (dh > 0))
        if t:
            credit.append(c)
            count.append(t)
            used += len(items)
    total = int(sum(count))
    if not total:
        return Stat(None, reason="no pair within a group has different human scores"), 0
    cr, ct = np.asarray(credit), np.asarray(count)
    point = float(cr.sum() / ct.sum())
    if n_boot == 0 or len(cr) < 2:
        return Stat(point, reason=None if n_boot == 0 else "one group: no CI", n=used), total
    boot = Resamples(len(cr), n_boot, seed).apply(lambda i: cr[i].sum(1) / ct[i].sum(1))
    ci, dropped, why = percentile_interval(boot)
    return Stat(point, ci, why, CI_PERCENTILE + ", resampling groups", dropped, n=used,
                caveat=caveat("pairwise", len(cr)) if ci else None), total
