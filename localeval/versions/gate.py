"""The CI gate of a version diff: fail when a metric got worse beyond a margin.

``--fail-if-worse faithfulness=0.02`` fails (exit 1) when the 95% interval of
the difference lies entirely on the worse side of -0.02: the new version is
worse by more than the margin with 95% confidence. An interval that merely
includes a loss does not fail it (no difference shown is not a regression
shown). A metric the diff could not estimate (unscored everywhere on one
side, no paired sample) fails, since nothing shows it is not worse.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from localeval.errors import UsageError
from localeval.versions.diff import MetricDiff, VersionDiff

__all__ = ["parse_worse_gates", "worse_failures", "ALL"]

#: ``--fail-if-worse all=0.02``: the same margin for every compared metric.
ALL = "all"


def parse_worse_gates(specs: Sequence[str] | None) -> dict[str, float]:
    """``["faithfulness=0.02", "rougeL"]`` -> {metric: margin} (margin 0 when not given)."""
    out: dict[str, float] = {}
    for spec in specs or ():
        for piece in (p.strip() for p in spec.split(",")):
            if not piece:
                continue
            name, eq, raw = piece.rpartition("=") if "=" in piece else (piece, "", "0")
            try:
                margin = float(raw)
            except ValueError:
                raise UsageError(f"--fail-if-worse {piece!r}: the margin {raw!r} is not a "
                                 "number (use METRIC or METRIC=MARGIN, e.g. "
                                 "faithfulness=0.02)") from None
            if not name.strip() or margin < 0 or margin != margin:
                raise UsageError(f"--fail-if-worse {piece!r}: expected METRIC or "
                                 "METRIC=MARGIN with a margin >= 0")
            out[name.strip()] = margin
    return out


def _failure(m: MetricDiff, margin: float) -> str | None:
    e = m.judge
    if e.ci is None or e.diff is None:
        return f"{m.metric}: cannot show it is not worse: {e.reason}"
    lo, hi = e.ci
    worse_by = (-hi, -lo) if not m.lower_is_better else (lo, hi)  # loss interval, > 0 is worse
    if worse_by[0] > margin:
        return (f"{m.metric}: new is worse by {-e.diff if not m.lower_is_better else e.diff:.3f} "
                f"[{worse_by[0]:.3f}, {worse_by[1]:.3f}], beyond the allowed margin "
                f"{margin:g}")
    return None


def worse_failures(diff: VersionDiff, margins: Mapping[str, float]) -> list[str]:
    """One line per metric of ``margins`` that got worse beyond its margin (empty: passed)."""
    by_name = {m.metric: m for m in diff.metrics}
    todo = dict(margins)
    if ALL in todo:
        every = todo.pop(ALL)
        todo = {**{k: every for k in by_name}, **todo}
    unknown = [k for k in todo if k not in by_name]
    if unknown:
        raise UsageError(f"--fail-if-worse names {', '.join(map(repr, unknown))}, not compared "
                         f"in this diff (compared: {', '.join(by_name) or 'none'})")
    return [f for k, v in todo.items() if (f := _failure(by_name[k], v))]
