"""Which rows to label: a uniform draw, or an active draw that favours rows the judge is unsure of.

An active draw (Zrnic and Candès, "Active statistical inference", arXiv
2403.03208) labels row i with probability pi_i rising with the judge's
uncertainty and weights the label back by 1/pi_i (``ppi.active_mean``), so
the estimate stays unbiased. The variance-optimal pi_i under a budget of n
expected labels is proportional to sqrt(E[(Y - f)^2 | row]) (their
Theorem 1); for a calibrated soft verdict p that is sqrt(p (1 - p)). Each
pi_i is floored at ``FLOOR_SHARE`` n/N, so that no row's weight 1/pi explodes
when the judge is confidently wrong, and capped at 1; the scale is solved so
that the probabilities sum to n.

A draw is named by a short string (``active:seed=7:n=50``) carried on every
row of the labelling sheet: the estimate redraws from the run with it and
refuses labels whose rows or probabilities differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from localeval.errors import DataError, UsageError

__all__ = ["Draw", "draw_rows", "row_uncertainty", "inclusion_probabilities", "parse_draw",
           "FLOOR_SHARE"]

#: The least inclusion probability of an active draw, as a share of the uniform n/N.
FLOOR_SHARE = 0.1
_DRAW = re.compile(r"^(uniform|active):seed=(-?\d+):n=(\d+)$")


@dataclass(frozen=True)
class Draw:
    """A draw of rows from a run: the rows chosen and every row's inclusion probability."""

    mode: str            # "uniform" | "active"
    seed: int
    n: int               # requested (the expected count for an active draw)
    ids: tuple[str, ...]  # all rows of the run, in order
    prob: np.ndarray     # inclusion probability of every row
    chosen: np.ndarray   # bool mask of the drawn rows
    basis: str = "uniform"  # what the probabilities rest on: soft verdicts, repeats, uniform

    @property
    def name(self) -> str:
        return f"{self.mode}:seed={self.seed}:n={self.n}"

    @property
    def drawn_ids(self) -> list[str]:
        return [i for i, c in zip(self.ids, self.chosen) if c]

    def to_dict(self) -> dict[str, Any]:
        return {"draw": self.name, "mode": self.mode, "seed": self.seed, "n_requested": self.n,
                "n_drawn": int(self.chosen.sum()), "rows": len(self.ids), "basis": self.basis,
                "floor_share": FLOOR_SHARE if self.mode == "active" else None,
                "inclusion_probability": {i: float(p) for i, p in zip(self.ids, self.prob)},
                "drawn": self.drawn_ids}


def parse_draw(text: str, *, file: str, row: int, column: str) -> tuple[str, int, int]:
    """(mode, seed, n) of a draw name; a DataError naming the cell when it is not one."""
    m = _DRAW.match(str(text).strip())
    if not m:
        raise DataError(f"{text!r} is not a draw written by 'localeval label-sheet' "
                        "(expected e.g. 'active:seed=7:n=50')", file=file, row=row,
                        column=column, unit="row")
    return m.group(1), int(m.group(2)), int(m.group(3))


def _probs(details: Any) -> list[float]:
    """Every soft verdict probability (``p_verdict_1``) in a metric's working."""
    if isinstance(details, dict):
        out = [float(v) for k, v in details.items() if k == "p_verdict_1"
               and isinstance(v, (int, float))]
        for k, v in details.items():
            if k != "p_verdict_1":
                out += _probs(v)
        return out
    if isinstance(details, list):
        return [p for v in details for p in _probs(v)]
    return []


def row_uncertainty(details: dict[str, Any] | None) -> tuple[float | None, str]:
    """How unsure the judge was on one row's metric, in [0, 1], and from what.

    Soft verdicts: the mean of 4 p (1 - p) over the verdicts (1 at p = 0.5, 0 when
    sure). Repeats: 4 times the variance of the repeated scores (a 0/1 score
    split evenly gives 1). Neither: None (the row is drawn uniformly).
    """
    if not details:
        return None, "uniform"
    ps = _probs(details)
    if ps:
        return float(np.mean([4 * p * (1 - p) for p in ps])), "soft verdicts"
    if isinstance(details.get("std"), (int, float)) and isinstance(details.get("repeats"), list):
        return min(1.0, 4 * float(details["std"]) ** 2), "repeats"
    return None, "uniform"


def inclusion_probabilities(uncertainty: Sequence[float | None], n: int) -> np.ndarray:
    """Inclusion probabilities summing to ``n``: min(1, max(floor, c sqrt(uncertainty))).

    Rows with no uncertainty (None) take the mean of the others (uniform when
    none has one). ``c`` is solved by bisection (the sum rises with c).
    """
    from scipy.optimize import brentq

    N = len(uncertainty)
    known = [u for u in uncertainty if u is not None]
    fill = float(np.mean(known)) if known else 1.0
    w = np.sqrt(np.maximum([fill if v is None else v for v in uncertainty], 0.0))
    floor = FLOOR_SHARE * n / N
    if w.sum() <= 0:
        return np.full(N, n / N)

    def excess(c: float) -> float:
        return float(np.minimum(1.0, np.maximum(floor, c * w)).sum() - n)

    top = N / w[w > 0].min()  # every unsure row at 1
    if excess(top) < 0:  # too few unsure rows to spend n on: the sure rows share the rest
        sure = w <= 0
        return np.where(sure, (n - (~sure).sum()) / sure.sum(), 1.0)
    c = brentq(excess, 0.0, top, xtol=1e-15, rtol=1e-15)
    return np.minimum(1.0, np.maximum(floor, c * w))


def draw_rows(ids: Sequence[str], n: int, seed: int, *, mode: str = "uniform",
              uncertainty: Sequence[float | None] | None = None, basis: str = "uniform") -> Draw:
    """Draw about ``n`` of ``ids``: exactly n uniformly, or by independent coin flips (active).

    The active draw is Poisson sampling (each row flips its own coin with its
    probability), as the estimator of Zrnic and Candès assumes, so the count
    varies around n.
    """
    N = len(ids)
    if not 1 <= n < N:
        raise UsageError(f"-n must be between 1 and {N - 1} (the run has {N} rows), not {n}")
    rng = np.random.default_rng(seed)
    if mode == "uniform":
        chosen = np.zeros(N, dtype=bool)
        chosen[rng.choice(N, n, replace=False)] = True
        return Draw(mode, seed, n, tuple(ids), np.full(N, n / N), chosen, "uniform")
    if mode != "active":
        raise UsageError(f"draw must be uniform or active, not {mode!r}")
    prob = inclusion_probabilities(list(uncertainty) if uncertainty else [None] * N, n)
    return Draw(mode, seed, n, tuple(ids), prob, rng.random(N) < prob, basis)
