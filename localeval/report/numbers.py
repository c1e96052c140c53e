"""How numbers and texts read in every report: fixed digits for means, short plain forms
elsewhere, long texts cut to one line."""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["fmt", "plain_number", "excerpt", "unscored_note"]


def fmt(v: float | None, digits: int = 4) -> str:
    """A score with ``digits`` decimals; ``-`` when there is none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{digits}f}"


def unscored_note(entry: Mapping[str, Any]) -> str:
    """"2 of 8 unscored" for a summary entry with unscored samples, else "".

    Shown next to the mean in every summary (terminal, summary.md, report.html):
    a mean over 6 of 8 samples must not read as a mean over all 8.
    """
    unscored = int(entry.get("unscored") or 0)
    if not unscored:
        return ""
    return f"{unscored} of {int(entry.get('n') or 0) + unscored} unscored"


def plain_number(v: float | int) -> str:
    """Integers as integers, other numbers with up to 4 decimals (a grade, a bin edge)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    # up to 4 decimals without trailing zeros: 0.75, 0.6363, 0.0012
    return f"{v:.4f}".rstrip("0").rstrip(".") if abs(v) >= 1e-3 else f"{v:.3g}"


def excerpt(text: Any, n: int = 140) -> str:
    """``text`` on one line (white space collapsed), cut to ``n`` characters with an ellipsis.

    Cut by characters, not at words (``textwrap.shorten``): CJK text has no spaces.
    """
    s = " ".join(str(text or "")[: n * 8].split())  # a 40 MB question is not split whole
    return s if len(s) <= n else s[: n - 1] + "…"
