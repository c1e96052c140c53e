"""A scatter plot of one metric, judge A against judge B, as inline SVG.

The comparison page embeds one per metric; ``localeval compare -o`` also
writes them as ``scatter/<metric>.svg``.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Sequence
from xml.sax.saxutils import escape

import numpy as np

from localeval.report import Scale, domain

__all__ = ["scatter_svg", "name_slug"]


def name_slug(label: str) -> str:
    """A file-name- and anchor-safe ASCII form of a metric label, unique per label.

    A label of plain ASCII letters, digits and ``@._-`` is its own slug
    (``faithfulness``, ``ndcg@10``); any other (``丁寧さ``, ``bleu ~ rougeL``) gets
    its safe characters plus 8 hex digits of its sha256, so two labels that
    slug alike (two Japanese names, which would both be empty) never share a file.
    """
    safe = re.sub(r"[^0-9A-Za-z@._-]+", "_", label).strip("_.")
    if safe == label:
        return safe
    digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:8]
    return f"{safe or 'metric'}-{digest}"


# A tooltip is plain text (no CSS): the id sits between FIRST STRONG ISOLATE and POP
# DIRECTIONAL ISOLATE, so a U+202E in it cannot reverse the scores after it.
_ISOLATE, _POP = "\u2068", "\u2069"


def scatter_svg(a_vals: Sequence[float], b_vals: Sequence[float], title: str, *,
                a_label: str = "A", b_label: str = "B", size: int = 260,
                ids: Sequence[str] | None = None) -> str:
    """A small self-contained SVG scatter plot of B (y) against A (x), with the y = x line.

    Written by hand rather than with matplotlib: it is ~70 lines, adds no
    dependency, and gives a few kB of inline markup for the HTML report.
    Judge scores are often discrete (0 / 0.5 / 1), so many samples share a
    point: every sample is drawn, and samples sharing a point are spread
    around it (a seeded jitter, the same on every render, within a radius that
    grows with their count), so a pile of 30 reads as a pile, not as one dot.
    Each dot's tooltip names its sample and how many share the point.
    """
    a_all = np.asarray(a_vals, dtype=float)
    b_all = np.asarray(b_vals, dtype=float)
    names_all = ([str(i) for i in ids] if ids is not None
                 else [str(i + 1) for i in range(len(a_all))])
    # a pair with a NaN or infinite score has no place on the plot: it is left out and
    # counted in the title, never drawn at a "nan" coordinate
    keep = np.isfinite(a_all) & np.isfinite(b_all)
    a, b = a_all[keep], b_all[keep]
    names = [n for n, k in zip(names_all, keep.tolist()) if k]
    left_out = len(a_all) - len(a)
    pad, top = 36, 24
    w = h = size
    pw, ph = w - pad - 10, h - pad - top
    lo, hi = domain(a.tolist() + b.tolist(), include=(0.0, 1.0))
    scale_x, scale_y = Scale(lo, hi, pad, pad + pw), Scale(lo, hi, top + ph, top)

    def sx(v: float) -> float:
        return scale_x(v) or 0.0  # every value here is finite

    def sy(v: float) -> float:
        return scale_y(v) or 0.0

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}" '
             'font-family="sans-serif" font-size="10" class="scatter">',
             f'<text x="{w / 2:.1f}" y="14" text-anchor="middle" font-size="12">'
             f'{escape(title)} (n={len(a_all)}'
             + (f', {left_out} not finite, not drawn' if left_out else '') + ')</text>',
             f'<rect x="{pad}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for t in np.linspace(scale_x.lo, scale_x.hi, 5):
        parts.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + ph}" '
                     'stroke="#eee"/>')
        parts.append(f'<line x1="{pad}" y1="{sy(t):.1f}" x2="{pad + pw}" y2="{sy(t):.1f}" '
                     'stroke="#eee"/>')
        parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 12}" text-anchor="middle">'
                     f'{t:g}</text>')
        parts.append(f'<text x="{pad - 4}" y="{sy(t) + 3:.1f}" text-anchor="end">{t:g}</text>')
    parts.append(f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" '
                 'stroke="#bbb" stroke-dasharray="4 3"/>')
    groups: dict[tuple[float, float], list[int]] = {}
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        groups.setdefault((round(x, 9), round(y, 9)), []).append(i)
    rng = np.random.default_rng(0)  # seeded: the same page on every render
    for (x, y), members in sorted(groups.items()):
        c = len(members)
        # spread within a disc whose area grows with the count (capped inside a grid cell)
        radius = 0.0 if c == 1 else min(3.0 * math.sqrt(c), 18.0)
        ang = rng.uniform(0, 2 * math.pi, c)
        rad = radius * np.sqrt(rng.uniform(0, 1, c))
        shared = f" ({c} samples at this point)" if c > 1 else ""
        for k, i in enumerate(members):
            cx, cy = sx(x) + rad[k] * math.cos(ang[k]), sy(y) + rad[k] * math.sin(ang[k])
            parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.6" fill="#1f77b4" '
                         f'fill-opacity="0.55"><title>{_ISOLATE}{escape(names[i])}{_POP}: '
                         f'A={x:g}, B={y:g}{shared}</title></circle>')
    parts.append(f'<text x="{pad + pw / 2:.1f}" y="{h - 4}" text-anchor="middle">'
                 f'{escape(a_label)} (A)</text>')
    parts.append(f'<text transform="translate(10 {top + ph / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{escape(b_label)} (B)</text>')
    parts.append("</svg>")
    return "\n".join(parts)
