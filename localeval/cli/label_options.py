"""The label options of ``run``, ``estimate`` and ``diff``: one group, one spelling.

Each command that reads labels takes the same three options, spelled
``--labels-scale``, ``--labels-random-draw`` and ``--labels-reference-interval``
everywhere (``estimate`` and ``diff`` also keep their shorter spellings
``--scale``, ``--random-draw`` and ``--reference-interval``), parsed into the
same ``args`` names, so a script that works for one command works for the others.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

__all__ = ["label_scale", "add_label_options"]

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_SCALE = re.compile(rf"\s*({_NUM})\s*-\s*({_NUM})\s*")


def label_scale(text: str) -> tuple[float, float]:
    """``LO-HI`` (``1-5``, ``-2-2``): two finite numbers, LO < HI; argparse names the option."""
    m = _SCALE.fullmatch(text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected LO-HI such as 1-5, not {text!r}")
    lo, hi = float(m.group(1)), float(m.group(2))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise argparse.ArgumentTypeError(f"LO and HI must be finite numbers, not {text!r}")
    if hi <= lo:
        raise argparse.ArgumentTypeError(f"expected LO < HI, not {text!r}")
    return lo, hi


def add_label_options(p: Any, *, short: bool = True) -> Any:
    """Add the label options to parser ``p`` as one group (returned, for a command's own
    label options); ``short``: also accept ``--scale``, ``--random-draw`` and
    ``--reference-interval`` (``run`` has other options and keeps the long names only)."""
    g = p.add_argument_group("labels (corrected estimates, docs/calibrated-estimates.md)")

    def names(name: str) -> list[str]:
        return [f"--labels-{name}"] + ([f"--{name}"] if short else [])

    g.add_argument(*names("scale"), dest="labels_scale", type=label_scale, metavar="LO-HI",
                   help="graded labels, rescaled to 0-1 as (v - LO) / (HI - LO), e.g. 1-5")
    g.add_argument(*names("random-draw"), dest="labels_random_draw", action="store_true",
                   help="labels that name no draw ARE a uniform random draw of the run's rows "
                        "(a hand-picked subset gives a biased estimate; labels on every row "
                        "need no such word)")
    g.add_argument(*names("reference-interval"), dest="labels_reference_interval",
                   action="store_true",
                   help="plain PPI++ intervals as ppi-python computes them (normal, no "
                        "pseudo-rows): they under-cover when the judge rarely disagrees with "
                        "few labels (docs/calibrated-estimates.md)")
    return g
