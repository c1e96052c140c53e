"""Statistics computed on all bootstrap resamples at once.

A bootstrap CI needs each statistic on ~2000 resamples. Calling scipy or
sklearn 2000 times per metric is slow, so each statistic here takes a
(n_boot, n) matrix of resampled values (or of sample positions) and returns
one value per row, with numpy only. Each equals the library function it
replaces (tests/golden/test_agreement_compare.py checks them against scipy
and sklearn). A row where the statistic is undefined (a constant resample)
gives NaN.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pearson_rows", "spearman_rows", "kendall_rows", "kappa_rows"]

_KENDALL_DENSE = 3000  # up to this n, Kendall resamples use an n x n matrix (36 MB)


def _const_rows(X: np.ndarray) -> np.ndarray:
    return np.ptp(X, axis=-1) == 0


def pearson_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of X and Y (scipy.stats.pearsonr per row)."""
    xc = X - X.mean(axis=-1, keepdims=True)
    yc = Y - Y.mean(axis=-1, keepdims=True)
    den = np.sqrt((xc * xc).sum(-1) * (yc * yc).sum(-1))
    bad = _const_rows(X) | _const_rows(Y)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(-1) / np.where(bad, 1.0, den)
    r = np.clip(r, -1.0, 1.0)
    r[bad] = np.nan
    return r


def spearman_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Spearman rho of each row pair: Pearson r of the mid-ranks (scipy.stats.spearmanr)."""
    from scipy.stats import rankdata

    return pearson_rows(rankdata(X, axis=-1), rankdata(Y, axis=-1))


def kendall_rows(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Kendall tau-b of (x[idx[r]], y[idx[r]]) for every resample row r.

    A resample is a count vector w over the n original samples, and tau-b's
    parts are quadratic forms in w: (concordant - discordant) pairs =
    w'Sw / 2 with S_ij = sign(x_i - x_j) sign(y_i - y_j), and pairs tied in x
    = sum over distinct x values of c(c-1)/2 (c: draws of that value). So all
    resamples cost one matrix product (BLAS) instead of 2000 scipy calls. Above _KENDALL_DENSE
    samples the n x n matrix gets large and scipy is called per resample.
    """
    n = len(x)
    rows = idx.shape[0]
    if n > _KENDALL_DENSE:
        from scipy.stats import kendalltau

        out = np.full(rows, np.nan)
        for r in range(rows):
            xs, ys = x[idx[r]], y[idx[r]]
            if np.ptp(xs) > 0 and np.ptp(ys) > 0:
                out[r] = kendalltau(xs, ys).statistic
        return out
    off = np.arange(rows)[:, None]

    def counts(codes: np.ndarray, k: int) -> np.ndarray:
        return np.bincount((off * k + codes).ravel(), minlength=rows * k).reshape(rows, k)

    # float32 is exact here: every product and sum is an integer below n^2 < 2^24
    W = counts(idx, n).astype(np.float32)
    S = (np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])).astype(np.float32)
    num = np.einsum("ri,ri->r", W @ S, W, dtype=np.float64) / 2

    def tied_pairs(v: np.ndarray) -> np.ndarray:
        # pairs of draws with equal values: sum over distinct values of c(c-1)/2
        _, inv = np.unique(v, return_inverse=True)
        c = counts(inv[idx], int(inv.max()) + 1).astype(np.float64)
        return (c * (c - 1)).sum(1) / 2

    total = n * (n - 1) / 2  # every resample has n draws
    den = np.sqrt(np.maximum(total - tied_pairs(x), 0) * np.maximum(total - tied_pairs(y), 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def kappa_rows(A: np.ndarray, B: np.ndarray, k: int, weights: str | None) -> np.ndarray:
    """Cohen's kappa per row of integer codes 0..k-1, as sklearn computes it.

    kappa = 1 - sum(w * O) / sum(w * E), O the observed confusion matrix, E
    the product of its margins; undefined (NaN) when sum(w * E) == 0.
    """
    rows, n = A.shape
    flat = (np.arange(rows)[:, None] * k * k + A * k + B).ravel()
    O = np.bincount(flat, minlength=rows * k * k).reshape(rows, k, k).astype(float)
    E = O.sum(2)[:, :, None] * O.sum(1)[:, None, :] / n
    i, j = np.indices((k, k))
    w = (i - j) ** 2 if weights == "quadratic" else (i != j).astype(float)
    num = (w * O).sum((1, 2))
    den = (w * E).sum((1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1.0 - num / np.where(den > 0, den, 1.0), np.nan)
