"""A metric's trend as inline SVG, drawn here, not by a charting script.

The page must open offline under a Content-Security-Policy that allows only
its own stylesheet and script, so the chart is markup: one point per run (the
mean), a vertical bar for its 95% interval, a line through the means, and a
dashed vertical line numbered where the scoring set-up changed. The point of a
run whose judge failed its judge check is drawn hollow and red, and its
tooltip says "judge unfit" (``HistoryRun.caveat``: judged metrics only).
Colours and strokes come from classes in ``history.css`` (a ``style``
attribute would be blocked by the policy). Every text (run names come from
users) is escaped here with ``html.escape``; the page inserts the result
unescaped. Strings are joined by hand because a thousand runs times a few
metrics are drawn per page, and a template per point was the slow part.
"""

from __future__ import annotations

from html import escape
from typing import Sequence

from localeval.errors import printable
from localeval.history.groups import Mark
from localeval.history.runs import HistoryRun
from localeval.report import Scale, domain, finite

__all__ = ["trend_svg"]

_W, _H = 760, 210
_LEFT, _RIGHT, _TOP, _BOTTOM = 46, 14, 16, 30


def _num(v: float) -> str:
    return f"{v:.1f}"


def trend_svg(metric: str, runs: Sequence[HistoryRun], marks: Sequence[Mark]) -> str:
    """The chart of ``metric`` over ``runs`` (oldest first), with ``marks``; escaped SVG."""
    pts = [r.metrics.get(metric) for r in runs]
    vals = [f for p in pts if p is not None
            for f in (finite(v) for v in (p.mean, p.low, p.high)) if f is not None]
    lo, hi = _range(vals)
    n = max(len(runs), 1)
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    base = _H - _BOTTOM
    # the one scale of every page's SVG: a NaN or infinite mean is a gap in the line and
    # an interval with such an end is not drawn, never a "nan" coordinate
    sy = Scale(lo, hi, base, base - plot_h)

    def x(i: int) -> float:
        return _LEFT + (i + 0.5) * plot_w / n

    def y(v: float | None) -> float:
        return sy(v) or 0.0  # callers pass finite values only

    name = escape(printable(metric))
    out = [f'<svg class="trend" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" '
           f'role="img" aria-label="{name}: the mean of each run with its 95% interval, '
           f'oldest first"><title>{name}, oldest run first</title>']
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        out.append(f'<line class="grid" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_num(y(v))}" '
                   f'y2="{_num(y(v))}"/><text class="tick" x="{_LEFT - 6}" y="{_num(y(v) + 3)}" '
                   f'text-anchor="end">{v:.3g}</text>')
    for m in marks:
        mx = _num((x(m.index - 1) + x(m.index)) / 2)
        what = "may have changed" if m.unknown else "changed"
        tip = escape(f"{m.number}: the scoring set-up {what} here: " + "; ".join(m.notes))
        cls = "chg unknown" if m.unknown else "chg"
        out.append(f'<g class="{cls}"><title>{tip}</title><line x1="{mx}" x2="{mx}" '
                   f'y1="{_TOP - 4}" y2="{base}"/><text x="{mx}" y="{_TOP - 6}" '
                   f'text-anchor="middle">{m.number}</text></g>')
    line: list[str] = []
    lines = []
    dots = []
    big = n <= 120
    for i, (r, p) in enumerate(zip(runs, pts)):
        if p is None or finite(p.mean) is None:
            if line:
                lines.append(line)
            line = []
            continue
        cx, cy = _num(x(i)), _num(y(p.mean))
        line.append(f"{cx},{cy}")
        whole = finite(p.low) is not None and finite(p.high) is not None
        if whole:
            dots.append(f'<line class="ci" x1="{cx}" x2="{cx}" y1="{_num(y(p.low))}" '
                        f'y2="{_num(y(p.high))}"/>')
        ci = f" [{p.low:.3f}, {p.high:.3f}]" if whole else ""
        caveat = r.caveat(metric)
        said = f" · {caveat}: not evidence" if caveat else ""
        tip = escape(printable(f"{r.label} · {(r.started or '')[:10]} · {p.mean:.3f}{ci}{said}"))
        cls, size = ("pt unfit", 3.5 if big else 2.2) if caveat else ("pt", 3 if big else 1.6)
        dots.append(f'<circle class="{cls}" cx="{cx}" cy="{cy}" r="{size}">'
                    f'<title>{tip}</title></circle>')
    if line:
        lines.append(line)
    out += [f'<polyline class="line" points="{" ".join(seg)}"/>' for seg in lines if len(seg) > 1]
    out += dots
    out.append(f'<line class="axis" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{base}" y2="{base}"/>')
    if runs:
        first, last = (runs[0].started or "")[:10], (runs[-1].started or "")[:10]
        out.append(f'<text class="tick" x="{_LEFT}" y="{base + 16}">{escape(first)}</text>')
        if len(runs) > 1:
            out.append(f'<text class="tick" x="{_W - _RIGHT}" y="{base + 16}" '
                       f'text-anchor="end">{escape(last)}</text>')
        out.append(f'<text class="tick" x="{_LEFT + plot_w / 2:.0f}" y="{base + 16}" '
                   f'text-anchor="middle">{len(runs)} run{"s" if len(runs) != 1 else ""}'
                   '</text>')
    out.append("</svg>")
    return "".join(out)


def _range(vals: list[float]) -> tuple[float, float]:
    """The y axis: 0 to 1 for scores that fit it, else the values' range with a margin
    (``vals``: finite numbers)."""
    if not vals:
        return 0.0, 1.0
    lo, hi = min(vals), max(vals)
    if lo >= 0 and hi <= 1:
        return 0.0, 1.0
    return domain(vals, pad=0.05)  # one value widened; no overflow near the largest floats
