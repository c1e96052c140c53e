"""Which rows to label: a uniform draw, or an active draw that favours rows the judge is unsure of.

An active draw (Zrnic and Candès, "Active statistical inference", arXiv
2403.03208) labels row i with probability pi_i rising with the judge's
uncertainty and weights the label back by 1/pi_i (``active.active_mean``), so
the estimate stays unbiased. The variance-optimal pi_i under a budget of n
expected labels is proportional to sqrt(E[(Y - f)^2 | row]) (their
Theorem 1); for a calibrated soft verdict p that is sqrt(p (1 - p)). Each
pi_i is floored at ``FLOOR_SHARE`` n/N and capped at 1; the scale is solved so
that the probabilities sum to n.

The floor is half the uniform rate: a judge that is sure and wrong on some
rows (an overconfident one, as small judges often are) leaves them at the
floor, and a label there carries weight 1/pi. With the earlier floor of a
tenth the corrected 95% interval covered 78-90% with 10-100 labels and such a
judge; with half, 94% or more (tests/unit/test_estimate_active.py). The price
is part of the gain with a calibrated judge (docs/calibrated-estimates.md).

A draw is named by a short string (``active:seed=7:n=50:floor=0.5``) carried
on every row of the labelling sheet: the estimate redraws from the run with it
and refuses labels whose rows or probabilities differ. A name without
``floor`` is a sheet of an earlier version, drawn with a floor of 0.1
(``LEGACY_FLOOR_SHARE``), and redraws as it was drawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

import numpy as np

from localeval.errors import DataError, UsageError

__all__ = ["Draw", "DrawName", "draw_rows", "row_uncertainty", "inclusion_probabilities",
           "parse_draw", "FLOOR_SHARE", "LEGACY_FLOOR_SHARE", "SOFT_VERDICTS", "REPEATS",
           "UNIFORM"]

#: What a row's uncertainty rests on (``row_uncertainty``'s basis, a draw's ``basis``).
SOFT_VERDICTS, REPEATS, UNIFORM = "soft verdicts", "repeats", "uniform"

#: The least inclusion probability of an active draw, as a share of the uniform n/N.
FLOOR_SHARE = 0.5
#: The floor of active draws whose name records none (sheets of earlier versions).
LEGACY_FLOOR_SHARE = 0.1
_DRAW = re.compile(r"^(uniform|active):seed=(-?\d+):n=(\d+)(?::floor=([0-9]*\.?[0-9]+))?$")


class DrawName(NamedTuple):
    """What a draw's name says: enough to draw it again from the same run."""

    mode: str
    seed: int
    n: int
    floor: float = FLOOR_SHARE


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
    floor: float = FLOOR_SHARE  # an active draw's least probability, as a share of n/N

    @property
    def name(self) -> str:
        base = f"{self.mode}:seed={self.seed}:n={self.n}"
        if self.mode == "active" and self.floor != LEGACY_FLOOR_SHARE:
            return f"{base}:floor={self.floor:g}"
        return base

    def position(self) -> dict[str, int]:
        """Row id -> its position in ``ids`` (one mapping, not a search per id)."""
        return {sid: i for i, sid in enumerate(self.ids)}

    @property
    def drawn_ids(self) -> list[str]:
        return [i for i, c in zip(self.ids, self.chosen) if c]

    def to_dict(self) -> dict[str, Any]:
        return {"draw": self.name, "mode": self.mode, "seed": self.seed, "n_requested": self.n,
                "n_drawn": int(self.chosen.sum()), "rows": len(self.ids), "basis": self.basis,
                "floor_share": self.floor if self.mode == "active" else None,
                "inclusion_probability": {i: float(p) for i, p in zip(self.ids, self.prob)},
                "drawn": self.drawn_ids}


def parse_draw(text: str, *, file: str, row: int, column: str) -> DrawName:
    """What a draw name says; a DataError naming the cell when it is not one."""
    m = _DRAW.match(str(text).strip())
    if not m:
        raise DataError(f"{text!r} is not a draw written by 'localeval label-sheet' "
                        "(expected e.g. 'active:seed=7:n=50:floor=0.5')", file=file, row=row,
                        column=column, unit="row")
    seed, floor = int(m.group(2)), m.group(4)
    if seed < 0:
        raise DataError(f"{text!r}: a draw's seed is 0 or more, not {seed}", file=file,
                        row=row, column=column, unit="row")
    share = LEGACY_FLOOR_SHARE if floor is None else float(floor)
    if m.group(1) == "active" and not 0 < share <= 1:
        raise DataError(f"{text!r}: an active draw's floor is in (0, 1], not {share:g}",
                        file=file, row=row, column=column, unit="row")
    return DrawName(m.group(1), seed, int(m.group(3)), share)


#: Where a soft verdict's P(yes) is kept: statement verdicts (``p_verdict_1``), an aspect
#: critic's verdict (``p_yes``).
_P_KEYS = ("p_verdict_1", "p_yes")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float))


def _probs(details: Any, keys: tuple[str, ...] = _P_KEYS) -> list[float]:
    """Every soft verdict probability (``keys``) in a metric's working."""
    if isinstance(details, dict):
        out = [float(v) for k, v in details.items() if k in keys and _number(v)]
        for k, v in details.items():
            if k not in keys:
                out += _probs(v, keys)
        return out
    if isinstance(details, list):
        return [p for v in details for p in _probs(v, keys)]
    return []


def _rating_spread(details: dict[str, Any]) -> float | None:
    """4 times the variance of a soft rating's distribution over its levels, rescaled to
    0-1 (``metrics.rubrics.rate`` writes ``distribution``: level -> probability); None
    where the working holds none."""
    dist = details.get("distribution")
    if not isinstance(dist, dict) or len(dist) < 2:
        return None
    try:
        levels = np.array([float(k) for k in dist], dtype=float)
    except (TypeError, ValueError):
        return None
    if not all(_number(v) and 0 <= v <= 1 for v in dist.values()):
        return None
    p = np.array([float(v) for v in dist.values()])
    span = float(levels.max() - levels.min())
    if span <= 0 or p.sum() <= 0:
        return None
    x, p = (levels - levels.min()) / span, p / p.sum()
    return min(1.0, 4 * float((p * (x - (p * x).sum()) ** 2).sum()))


def row_uncertainty(details: dict[str, Any] | None, *, legacy: bool = False
                    ) -> tuple[float | None, str]:
    """How unsure the judge was on one row's metric, in [0, 1], and from what.

    Soft verdicts: the mean of 4 p (1 - p) over the verdicts (1 at p = 0.5, 0 when
    sure; ``p_verdict_1`` of statement verdicts, ``p_yes`` of an aspect critic); a soft
    rating (its ``distribution`` over the levels): 4 times the distribution's variance
    on the 0-1 scale (1 when torn between the lowest and highest level). Repeats: 4
    times the variance of the repeated scores (a 0/1 score split evenly gives 1).
    Neither: None (the row is drawn uniformly). ``legacy``: only what versions before
    soft ratings and ``p_yes`` were read (``p_verdict_1``, repeats), to redraw an
    active sheet they drew.
    """
    if not details:
        return None, UNIFORM
    ps = _probs(details, ("p_verdict_1",) if legacy else _P_KEYS)
    if ps:
        return float(np.mean([4 * p * (1 - p) for p in ps])), SOFT_VERDICTS
    spread = None if legacy else _rating_spread(details)
    if spread is not None:
        return spread, SOFT_VERDICTS
    if isinstance(details.get("std"), (int, float)) and isinstance(details.get("repeats"), list):
        return min(1.0, 4 * float(details["std"]) ** 2), REPEATS
    return None, UNIFORM


def inclusion_probabilities(uncertainty: Sequence[float | None], n: int, *,
                            floor_share: float = FLOOR_SHARE) -> np.ndarray:
    """Inclusion probabilities summing to ``n``: min(1, max(floor, c sqrt(uncertainty))).

    Rows with no uncertainty (None) take the mean of the others (uniform when
    none has one). ``c`` is solved by bisection (the sum rises with c).
    ``floor_share``: the floor as a share of n/N.
    """
    from scipy.optimize import brentq

    N = len(uncertainty)
    known = [u for u in uncertainty if u is not None]
    fill = float(np.mean(known)) if known else 1.0
    w = np.sqrt(np.maximum([fill if v is None else v for v in uncertainty], 0.0))
    floor = floor_share * n / N
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
              uncertainty: Sequence[float | None] | None = None, basis: str = "uniform",
              floor_share: float = FLOOR_SHARE) -> Draw:
    """Draw about ``n`` of ``ids``: exactly n uniformly, or by independent coin flips (active).

    ``n`` equal to the number of rows draws every row (a census: every probability 1).

    The active draw is Poisson sampling (each row flips its own coin with its
    probability), as the estimator of Zrnic and Candès assumes, so the count
    varies around n. ``floor_share``: an active draw's floor (``FLOOR_SHARE``;
    ``LEGACY_FLOOR_SHARE`` to redraw a sheet of an earlier version).
    """
    N = len(ids)
    if not 1 <= n <= N:
        raise UsageError(f"-n must be between 1 and {N} (the run has {N} rows), not {n}")
    if seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {seed}")
    rng = np.random.default_rng(seed)
    if mode == "uniform":
        chosen = np.zeros(N, dtype=bool)
        chosen[rng.choice(N, n, replace=False)] = True
        return Draw(mode, seed, n, tuple(ids), np.full(N, n / N), chosen, "uniform")
    if mode != "active":
        raise UsageError(f"draw must be uniform or active, not {mode!r}")
    prob = inclusion_probabilities(list(uncertainty) if uncertainty else [None] * N, n,
                                   floor_share=floor_share)
    return Draw(mode, seed, n, tuple(ids), prob, rng.random(N) < prob, basis, floor_share)
