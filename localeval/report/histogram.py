"""Score histograms as inline SVG geometry: bins, bars, ticks, the mean and its CI.

Hand-written rather than matplotlib: matplotlib would be a ~40 MB dependency
(plus a font-cache build on first import) for a dozen rectangles per metric,
and its SVG output embeds glyph paths and styles that make each plot tens of
kilobytes; ours is a few hundred bytes, crisp at any zoom, and styled by the
page's own CSS. This module computes numbers only; the template draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from localeval.report.numbers import plain_number
from localeval.report.pages import Scale, domain, finite

__all__ = ["Histogram", "histogram", "score_histogram", "tone", "is_bounded", "BINS"]

#: Histogram bins for metrics bounded in [0, 1].
BINS = 10


def is_bounded(values: Sequence[float]) -> bool:
    """True when every value lies in [0, 1] (fixed bins and score colours apply)."""
    return bool(values) and all(v is not None and 0.0 <= v <= 1.0 for v in values)


def tone(value: float | None, *, bounded: bool, lower_is_better: bool = False) -> str:
    """CSS class for a score: red below 0.5, amber below 0.8, green above (in [0, 1])."""
    if value is None:
        return "none"
    if not bounded:
        return "plain"
    v = 1.0 - value if lower_is_better else value
    return "good" if v >= 0.8 else "mid" if v >= 0.5 else "bad"


@dataclass
class Histogram:
    """Geometry of one inline-SVG histogram (all numbers; the template draws it)."""

    width: int = 320
    height: int = 150
    left: int = 34
    right: int = 10
    top: int = 28
    bottom: int = 26
    bars: list[dict[str, Any]] = field(default_factory=list)
    xticks: list[dict[str, Any]] = field(default_factory=list)
    ymax: int = 0
    mean_x: float | None = None
    mean_anchor: str = "middle"
    ci: tuple[float, float] | None = None
    n: int = 0

    @property
    def plot_w(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> int:
        return self.height - self.top - self.bottom

    @property
    def base_y(self) -> int:
        return self.top + self.plot_h


def histogram(values: Sequence[float], *, mean: float | None = None,
              ci: Sequence[float] | None = None, lower_is_better: bool = False) -> Histogram:
    """Bin ``values`` (fixed [0, 1] bins for bounded metrics) and lay the bars out."""
    h = Histogram(n=len(values))
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]  # nothing to place an infinite or NaN value at; n still counts it
    # beyond +-1e300 spans and bin midpoints overflow; such values go to the edge bins
    x = np.clip(x, -1e300, 1e300)
    bounded = is_bounded(values) or not values
    if bounded:
        lo, hi = 0.0, 1.0
    else:
        # its values' range, widened when too narrow for BINS distinct bins (one value, or
        # values a few ulps apart, where numpy raises "Too many bins for data range")
        lo, hi = domain(x.tolist())
    counts, edges = np.histogram(x, bins=BINS, range=(lo, hi))
    h.ymax = int(counts.max()) if counts.size else 0
    # the one scale of every page's SVG: a NaN or infinite mean or interval end is not
    # drawn, never written into a coordinate
    sx = Scale(lo, hi, h.left, h.left + h.plot_w)

    def x_of(v: float) -> float:
        p = sx(v)
        assert p is not None  # only finite values reach here
        return round(p, 2)

    bw = h.plot_w / BINS
    for i, c in enumerate(counts):
        c = int(c)
        bh = 0.0 if h.ymax == 0 else round(c / h.ymax * h.plot_h, 2)
        mid = (edges[i] + edges[i + 1]) / 2
        h.bars.append({
            "x": round(h.left + i * bw + 1, 2), "w": round(bw - 2, 2),
            "y": round(h.base_y - bh, 2), "h": bh, "count": c,
            "label": f"{plain_number(float(edges[i]))}–{plain_number(float(edges[i + 1]))}: "
                     f"{c} sample{'s' if c != 1 else ''}",
            "tone": tone(float(mid), bounded=bounded, lower_is_better=lower_is_better),
            "tx": round(h.left + i * bw + bw / 2, 2),
        })
    ticks = [lo, (lo + hi) / 2, hi]
    h.xticks = [{"x": x_of(t), "text": f"{t:.3g}"} for t in ticks]
    if sx.contains(mean):
        h.mean_x = x_of(mean)  # type: ignore[arg-type]  # contains: a finite number
        # keep the "mean 0.123" label inside the plot near either edge
        f = sx.fraction(mean) or 0.0
        h.mean_anchor = "start" if f < 0.2 else "end" if f > 0.8 else "middle"
    low, high = (finite(ci[0]), finite(ci[1])) if ci and len(ci) == 2 else (None, None)
    if low is not None and high is not None:
        a, b = max(lo, low), min(hi, high)
        if a <= b:
            h.ci = (x_of(a), max(x_of(b) - x_of(a), 1.0))
    return h


#: ``histogram`` under the name the package face exports (a face name may not be the
#: name of one of its submodules, and this module is ``report.histogram``).
score_histogram = histogram
