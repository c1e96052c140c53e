"""Seeded simulations with known truth for the intervals ``compare`` and ``validate`` print.

Every function draws ``reps`` data sets of ``n`` paired samples at once (numpy,
vectorised) and returns the share of them whose 95% interval holds the truth.
The closed-form intervals are the ones the analyses print (their vectorised
functions in ``localeval.agreement.small_samples``); the bootstrap ones replay
localeval's percentile bootstrap (the same resampling, the same row statistics,
one index draw shared by the data sets, which are independent of it).

``python tests/unit/agreement_sim.py`` prints the coverage table in
docs/judging-the-judges.md.
"""

from __future__ import annotations

import math
import sys
from typing import Callable

import numpy as np
from scipy import stats

from localeval.agreement import small_samples as ss
from localeval.stats import kappa_rows, kendall_rows, pearson_rows, spearman_rows

RHO = 0.5  # correlation of the bivariate normal judges
P_PASS, KAPPA = 0.6, 0.5  # verdicts: pass rate of both sides, true kappa
P_AGREE = 0.9  # verdict agreement (the share of samples both sides call alike)
AUC_D = 1.0  # positives ~ N(d, 1), negatives ~ N(0, 1): AUC = Phi(d / sqrt 2)
GRADES = (0.0, 0.5, 1.0)
GRADE_P = (0.2, 0.2, 0.6)  # a 0/0.5/1 judge's scores in one label group (mean 0.7)


def _cover(lo: np.ndarray, hi: np.ndarray, truth: float) -> float:
    """Share of the printed intervals (finite bounds) that hold the truth; NaN if none is."""
    ok = np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return math.nan
    return float(np.mean((lo[ok] <= truth) & (truth <= hi[ok])))


def _normal_pairs(rng: np.random.Generator, reps: int, n: int, rho: float = RHO
                  ) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((reps, n))
    y = rho * x + math.sqrt(1 - rho * rho) * rng.standard_normal((reps, n))
    return x, y


def _percentile(boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(reps, B) bootstrap values -> percentile 95% interval per data set (NaNs dropped)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = np.nanquantile(boot, [0.025, 0.975], axis=1)
    # as localeval.stats.percentile_interval: no interval when half the resamples are undefined
    few = np.isfinite(boot).sum(axis=1) < max(2, boot.shape[1] // 2)
    return np.where(few, np.nan, lo), np.where(few, np.nan, hi)


def _boot(rng: np.random.Generator, n: int, B: int, fn: Callable[..., np.ndarray],
          *cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap of ``fn`` (rows of resampled columns -> one value per row)."""
    reps = cols[0].shape[0]
    idx = rng.integers(0, n, size=(B, n))
    step = max(1, (1 << 22) // (B * n))  # data sets per chunk: memory stays bounded
    vals = np.empty((reps, B))
    for s in range(0, reps, step):
        res = [c[s:s + step][:, idx].reshape(-1, n) for c in cols]
        with np.errstate(all="ignore"):
            vals[s:s + step] = np.asarray(fn(*res), dtype=float).reshape(-1, B)
    return _percentile(vals)


# -- correlations ----------------------------------------------------------------------
def correlation(kind: str, n: int, *, reps: int = 2000, seed: int = 0, boot: int = 0
                ) -> float:
    """Coverage of the Pearson / Spearman / Kendall interval under a bivariate normal.

    ``boot``: that many percentile bootstrap resamples instead of the closed form.
    """
    rng = np.random.default_rng(seed)
    x, y = _normal_pairs(rng, reps, n)
    truth = {"pearson": RHO, "spearman": 6 / math.pi * math.asin(RHO / 2),
             "kendall": 2 / math.pi * math.asin(RHO)}[kind]
    if kind == "kendall":
        r = np.array([stats.kendalltau(a, b).statistic for a, b in zip(x, y)])
    else:
        r = (pearson_rows if kind == "pearson" else spearman_rows)(x, y)
    if boot:
        if kind == "kendall":
            idx = rng.integers(0, n, size=(boot, n))
            with np.errstate(all="ignore"):
                lo, hi = _percentile(np.stack([kendall_rows(a, b, idx) for a, b in zip(x, y)]))
        else:
            lo, hi = _boot(rng, n, boot, pearson_rows if kind == "pearson" else spearman_rows,
                           x, y)
    else:
        lo, hi = ss.correlation_interval(kind, r, n)
    return _cover(lo, hi, truth)


# -- differences -----------------------------------------------------------------------
def difference(kind: str, n: int, *, reps: int = 4000, seed: int = 0, boot: int = 0) -> float:
    """Coverage of the bias (mean of B - A) or mean-absolute-difference interval.

    A, B bivariate normal (correlation RHO, B shifted by 0.2): B - A ~ N(0.2, s^2).
    """
    rng = np.random.default_rng(seed)
    x, y = _normal_pairs(rng, reps, n)
    d = y + 0.2 - x
    s = math.sqrt(2 - 2 * RHO)
    mu = 0.2
    if kind == "bias":
        v, truth = d, mu
    else:
        v = np.abs(d)
        truth = s * math.sqrt(2 / math.pi) * math.exp(-mu * mu / (2 * s * s)) + mu * (
            1 - 2 * stats.norm.cdf(-mu / s))
    if boot:
        lo, hi = _boot(rng, n, boot, lambda a: a.mean(axis=1), v)
    else:
        lo, hi = ss.mean_interval(v.mean(axis=1), v.std(axis=1, ddof=1), n)
        if kind == "mad":
            lo = np.maximum(lo, 0.0)
    return _cover(lo, hi, truth)


# -- verdicts ----------------------------------------------------------------------------
def agreement(n: int, *, p: float = P_AGREE, reps: int = 4000, seed: int = 0, boot: int = 0
              ) -> float:
    """Coverage of the verdict-agreement interval; exact (binomial sum) for the closed form."""
    if not boot:
        k = np.arange(n + 1)
        lo, hi = ss.proportion_interval(k, n)
        return float(np.sum(stats.binom.pmf(k, n, p) * ((lo <= p) & (p <= hi))))
    rng = np.random.default_rng(seed)
    agree = (rng.random((reps, n)) < p).astype(float)
    lo, hi = _boot(rng, n, boot, lambda a: a.mean(axis=1), agree)
    return _cover(lo, hi, p)


def _joint(k: int, lam: float, marg: np.ndarray) -> np.ndarray:
    """Joint table of two raters: agree by design with probability lam, else independent."""
    return lam * np.diag(marg) + (1 - lam) * np.outer(marg, marg)


def _kappa_truth(P: np.ndarray, weights: str | None) -> float:
    k = P.shape[0]
    i, j = np.indices((k, k))
    w = (i - j) ** 2 if weights else (i != j).astype(float)
    return float(1 - (w * P).sum() / (w * np.outer(P.sum(1), P.sum(0))).sum())


def kappa(n: int, *, weighted: bool = False, reps: int = 1000, B: int = 400, seed: int = 0
          ) -> float:
    """Coverage of the bootstrap interval of Cohen's kappa (pass/fail) or the quadratic
    weighted kappa (0/0.5/1 ratings), both raters drawn from a joint table of known kappa."""
    rng = np.random.default_rng(seed)
    marg = np.array([0.3, 0.2, 0.5]) if weighted else np.array([1 - P_PASS, P_PASS])
    P = _joint(len(marg), KAPPA, marg)  # lam = kappa for unweighted kappa
    k = len(marg)
    cells = rng.choice(k * k, size=(reps, n), p=P.ravel())
    a, b = cells // k, cells % k
    truth = _kappa_truth(P, "quadratic" if weighted else None)
    lo, hi = _boot(rng, n, B, lambda u, v: kappa_rows(u, v, k, "quadratic" if weighted
                                                       else None), a, b)
    return _cover(lo, hi, truth)


# -- validate: group means, AUC, pairwise accuracy ---------------------------------------
def group_mean(n: int, *, graded: bool = True, reps: int = 4000, seed: int = 0,
               boot: int = 0) -> float:
    """Coverage of a label group's mean score: 0/0.5/1 ratings (GRADE_P) or 0/1 scores."""
    rng = np.random.default_rng(seed)
    if graded:
        v = rng.choice(GRADES, size=(reps, n), p=GRADE_P)
        truth = float(np.dot(GRADES, GRADE_P))
    else:
        v = (rng.random((reps, n)) < 0.7).astype(float)
        truth = 0.7
    if boot:
        lo, hi = _boot(rng, n, boot, lambda a: a.mean(axis=1), v)
    else:
        lo, hi = ss.group_mean_interval(v)
    return _cover(lo, hi, truth)


def auc(n: int, *, reps: int = 1000, B: int = 400, seed: int = 0) -> float:
    """Coverage of the stratified bootstrap AUC interval, n positives and n negatives."""
    rng = np.random.default_rng(seed)
    pos = rng.standard_normal((reps, n)) + AUC_D
    neg = rng.standard_normal((reps, n))
    truth = float(stats.norm.cdf(AUC_D / math.sqrt(2)))
    ip, iq = rng.integers(0, n, size=(B, n)), rng.integers(0, n, size=(B, n))
    step = max(1, (1 << 21) // (B * n))
    vals = np.empty((reps, B))
    for s in range(0, reps, step):  # (data sets, B, n) per chunk: memory stays bounded
        p, q = pos[s:s + step][:, ip], neg[s:s + step][:, iq]
        vals[s:s + step] = stats.mannwhitneyu(p, q, axis=-1).statistic / (n * n)
    lo, hi = _percentile(vals)
    return _cover(lo, hi, truth)


def pairwise(groups: int, *, size: int = 3, reps: int = 1000, B: int = 400, seed: int = 0
             ) -> float:
    """Coverage of the pairwise accuracy interval (bootstrap over groups of ``size``)."""
    rng = np.random.default_rng(seed)
    h, j = _normal_pairs(rng, reps * groups, size)
    credit = np.zeros(reps * groups)
    count = 0
    for a in range(size):
        for b in range(a + 1, size):
            credit += (np.sign(h[:, a] - h[:, b]) == np.sign(j[:, a] - j[:, b]))
            count += 1
    cr = credit.reshape(reps, groups)
    truth = 0.5 + math.asin(RHO) / math.pi
    idx = rng.integers(0, groups, size=(B, groups))
    vals = cr[:, idx].sum(-1) / (count * groups)
    lo, hi = _percentile(vals)
    return _cover(lo, hi, truth)


SIZES = (3, 4, 5, 7, 10, 15, 20, 30, 50, 200)


def table(sizes: tuple[int, ...] = SIZES) -> list[tuple[str, dict[int, float]]]:
    """Every printed interval's measured coverage, per n, as the analyses now compute it."""
    rows: list[tuple[str, Callable[[int], float]]] = [
        ("Pearson's r", lambda n: correlation("pearson", n, boot=_b(n))),
        ("Spearman's rho", lambda n: correlation("spearman", n, boot=_b(n))),
        ("Kendall's tau", lambda n: correlation("kendall", n, reps=_r(n), boot=_b(n))),
        ("mean absolute difference", lambda n: difference("mad", n, boot=_b(n))),
        ("bias", lambda n: difference("bias", n, boot=_b(n))),
        ("verdict agreement", lambda n: agreement(n, boot=_b(n))),
        ("Cohen's kappa", lambda n: kappa(n, reps=_r(n))),
        ("weighted kappa", lambda n: kappa(n, weighted=True, reps=_r(n))),
        ("group mean (0/0.5/1)", lambda n: group_mean(n, boot=_b(n))),
        ("group mean (0/1)", lambda n: group_mean(n, graded=False, boot=_b(n))),
        ("ROC AUC (n per group)", lambda n: auc(n, reps=_r(n))),
        ("pairwise accuracy (n groups of 3)", lambda n: pairwise(n, reps=_r(n))),
    ]
    return [(name, {n: fn(n) for n in sizes}) for name, fn in rows]


def _b(n: int) -> int:
    """Bootstrap resamples where the analyses bootstrap (n >= SMALL_N), else 0."""
    return 400 if n >= ss.SMALL_N else 0


def _r(n: int) -> int:
    return 400 if n >= 100 else 1000


if __name__ == "__main__":
    sizes = tuple(int(a) for a in sys.argv[1:]) or SIZES
    print("| interval | " + " | ".join(f"n={n}" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name, cov in table(sizes):
        print(f"| {name} | " + " | ".join("—" if math.isnan(cov[n]) else f"{100 * cov[n]:.0f}%"
                                          for n in sizes) + " |", flush=True)
