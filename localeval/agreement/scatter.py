"""A scatter plot of one metric, judge A against judge B, as inline SVG.

The comparison page embeds one per metric; ``localeval compare -o`` also
writes them as ``scatter/<metric>.svg``.
"""

from __future__ import annotations

import math
from typing import Sequence
from xml.sax.saxutils import escape

import numpy as np

__all__ = ["scatter_svg"]


def scatter_svg(a_vals: Sequence[float], b_vals: Sequence[float], title: str, *,
                a_label: str = "A", b_label: str = "B", size: int = 260) -> str:
    """A small self-contained SVG scatter plot of B (y) against A (x), with the y = x line.

    Written by hand rather than with matplotlib: it is ~60 lines, adds no
    dependency, and gives a few kB of inline markup for the HTML report.
    Judge scores are often discrete (0 / 0.5 / 1), so identical pairs are
    drawn once with an area that grows with their count (shown on hover).
    """
    a = np.asarray(a_vals, dtype=float)
    b = np.asarray(b_vals, dtype=float)
    pad, top = 36, 24
    w = h = size
    pw, ph = w - pad - 10, h - pad - top
    lo = float(min(a.min(initial=0.0), b.min(initial=0.0), 0.0))
    hi = float(max(a.max(initial=1.0), b.max(initial=1.0), 1.0))
    span = hi - lo or 1.0

    def sx(v: float) -> float:
        return pad + (v - lo) / span * pw

    def sy(v: float) -> float:
        return top + ph - (v - lo) / span * ph

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}" '
             'font-family="sans-serif" font-size="10">',
             f'<text x="{w / 2:.1f}" y="14" text-anchor="middle" font-size="12">'
             f'{escape(title)} (n={len(a)})</text>',
             f'<rect x="{pad}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for t in np.linspace(lo, hi, 5):
        parts.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + ph}" '
                     'stroke="#eee"/>')
        parts.append(f'<line x1="{pad}" y1="{sy(t):.1f}" x2="{pad + pw}" y2="{sy(t):.1f}" '
                     'stroke="#eee"/>')
        parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 12}" text-anchor="middle">'
                     f'{t:g}</text>')
        parts.append(f'<text x="{pad - 4}" y="{sy(t) + 3:.1f}" text-anchor="end">{t:g}</text>')
    parts.append(f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" '
                 'stroke="#bbb" stroke-dasharray="4 3"/>')
    counts: dict[tuple[float, float], int] = {}
    for x, y in zip(a.tolist(), b.tolist()):
        key = (round(x, 9), round(y, 9))
        counts[key] = counts.get(key, 0) + 1
    for (x, y), c in sorted(counts.items()):
        r = min(2.5 + 1.6 * math.sqrt(c - 1), 14.0)
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{r:.1f}" fill="#1f77b4" '
                     f'fill-opacity="0.5"><title>A={x:g}, B={y:g}: {c} sample'
                     f'{"s" if c > 1 else ""}</title></circle>')
    parts.append(f'<text x="{pad + pw / 2:.1f}" y="{h - 4}" text-anchor="middle">'
                 f'{escape(a_label)} (A)</text>')
    parts.append(f'<text transform="translate(10 {top + ph / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{escape(b_label)} (B)</text>')
    parts.append("</svg>")
    return "\n".join(parts)


