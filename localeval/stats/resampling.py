"""The one bootstrap resampler: seeded paired indices, drawn in bounded blocks.

The draws are exactly those of ``scipy.stats.bootstrap(..., vectorized=True,
rng=default_rng(seed))``: one (n_resamples, n) array of ``integers(0, n)``,
here drawn in blocks (a Generator's stream does not depend on how the draws
are split). Hand-written because scipy draws all indices at once (1.6 GB at
100k rows) and resamples one statistic at a time, and because a statistic
undefined on some resamples (a correlation of a constant resample) must be
dropped rather than turn the whole interval into NaN.
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from localeval.config import MAX_RESAMPLES, check_seed
from localeval.errors import UsageError

__all__ = ["BLOCK", "Resamples", "bootstrap_means", "check_draws"]

#: Resample indices are drawn in blocks of about this many (8 MB as int64), so memory
#: stays flat however many rows a run has (100k rows x 2000 resamples is 200M indices).
BLOCK = 1 << 20


class Resamples:
    """Paired bootstrap indices (rows of sample positions) of n samples, seeded.

    Every statistic replays the same seeded blocks, so all of them see the
    same resamples, and memory stays bounded however large n is.
    """

    def __init__(self, n: int, n_boot: int, seed: int) -> None:
        check_draws(n_boot, seed)
        self.n, self.n_boot, self.seed = n, n_boot, seed
        self.rows = max(1, min(n_boot, BLOCK // max(n, 1)))

    def blocks(self) -> Iterator[np.ndarray]:
        """The (rows, n) index blocks, in order; together n_boot rows."""
        rng = np.random.default_rng(self.seed)
        for done in range(0, self.n_boot, self.rows):
            yield rng.integers(0, self.n, size=(min(self.rows, self.n_boot - done), self.n))

    def indices(self) -> np.ndarray:
        """All (n_boot, n) indices at once, for statistics that need whole resamples."""
        return np.concatenate(list(self.blocks()))

    def apply(self, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``fn`` of every index block, concatenated: one value per resample."""
        return np.concatenate([np.asarray(fn(idx), dtype=float) for idx in self.blocks()])


def check_draws(n_resamples: int, seed: int) -> None:
    """A UsageError, before anything is drawn or held, for a seed numpy refuses (negative)
    or more resamples than ``config.MAX_RESAMPLES`` (whose means would not fit in memory)."""
    check_seed(seed)
    if n_resamples > MAX_RESAMPLES:
        raise UsageError(f"{n_resamples:,} bootstrap resamples is more than the "
                         f"{MAX_RESAMPLES:,} localeval draws at most (9,999 is the default)")


def bootstrap_means(columns: np.ndarray, *, n_resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """The mean of each of ``n_resamples`` bootstrap resamples of each row of ``columns``.

    ``columns`` is (m, n); the result is (m, n_resamples). Every row gets the
    same indices, as it would with its own generator of that seed, so columns
    scored on the same samples share one draw.
    """
    check_draws(n_resamples, seed)
    x = np.asarray(columns, dtype=float)
    m, n = x.shape
    out = np.empty((m, n_resamples))
    k = 0
    for idx in Resamples(n, n_resamples, seed).blocks():
        b = idx.shape[0]
        for r in range(m):
            # one row at a time: x[:, idx] is a slow strided gather, and its mean
            # would sum in another order than scipy's (last bits differ)
            out[r, k:k + b] = x[r][idx].mean(axis=-1)
        k += b
    return out
