"""The one interval value of localeval's analyses, and its one JSON shape.

``compare``/``validate`` (agreement statistics), ``estimate`` (judge-only,
labels-only and corrected means) and ``diff`` (paired differences) each
compute intervals their own way, but every one of them is written and read as
an :class:`Interval`::

    {"value": 0.81, "low": 0.74, "high": 0.87, "level": 0.95, "n": 50,
     "method": "percentile paired bootstrap ...",
     "se": 0.03, "df": 49, "p": 0.002, "reason": "..."}   # the last four when known

``value`` is the point (a mean, a difference, a correlation); ``low`` and
``high`` are None when there is no interval, and ``reason`` then says why.
:func:`read_interval` also reads the shapes written before this one (a
``ci95`` pair beside ``value``, ``mean`` or ``diff``; ``mean``/``low``/``high``
with ``interval`` naming the method), so summaries and pages of earlier
versions still load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Interval", "read_interval", "INTERVAL_KEYS"]

#: The keys of the shape, in the order they are written (optional ones last).
INTERVAL_KEYS = ("value", "low", "high", "level", "n", "method", "se", "df", "p", "reason")


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Interval:
    """A point with its interval (or the reason it has none), and how it was computed."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    method: str = ""
    level: float = 0.95
    #: the standard error, Student-t degrees of freedom and p-value, where the method has them
    se: float | None = None
    df: float | None = None
    p: float | None = None
    #: why there is no interval (or no value), in words
    reason: str | None = None

    @property
    def ci(self) -> tuple[float, float] | None:
        """(low, high), or None when there is no interval."""
        if self.low is None or self.high is None:
            return None
        return (self.low, self.high)

    def contains(self, x: float) -> bool:
        """``x`` lies in the interval (False when there is none)."""
        return self.ci is not None and self.ci[0] <= x <= self.ci[1]

    def to_dict(self) -> dict[str, Any]:
        """The one JSON shape: the first six keys always, the last four when known."""
        out: dict[str, Any] = {"value": self.value, "low": self.low, "high": self.high,
                               "level": self.level, "n": self.n, "method": self.method}
        for k in ("se", "df", "p", "reason"):
            v = getattr(self, k)
            if v is not None and v != "":
                out[k] = v
        return out


def read_interval(d: Mapping[str, Any], *, level: float = 0.95) -> Interval:
    """An :class:`Interval` from its JSON, in this version's shape or an earlier one.

    Earlier shapes: agreement statistics ``{"value", "ci95": [lo, hi], "ci_method"}``,
    version differences ``{"diff", "ci95", "method", "p"}``, estimates ``{"mean",
    "low", "high", "se", "student_t_df", "interval"}`` and run summaries ``{"mean",
    "ci95"}``. Unknown or non-finite numbers read as None.
    """
    value = next((d[k] for k in ("value", "mean", "diff") if k in d), None)
    low, high = d.get("low"), d.get("high")
    ci = d.get("ci95")
    if low is None and high is None and isinstance(ci, (list, tuple)) and len(ci) == 2:
        low, high = ci
    method = d.get("method") or d.get("interval") or d.get("ci_method") or ""
    df = d.get("df", d.get("student_t_df"))
    n = d.get("n")
    return Interval(_num(value), _num(low), _num(high),
                    int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else 0,
                    str(method), float(d.get("level") or level), _num(d.get("se")), _num(df),
                    _num(d.get("p")), d.get("reason") or None)
