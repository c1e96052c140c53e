"""Plain warnings on an estimate: below the documented minimums, or a judge that does not
track the labels (``analysis.estimate`` adds them to its notes, which every output shows:
the terminal table, estimate.md, estimate.json and the ``corrected`` section of a run).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from localeval.estimate.ppi import is_binary

__all__ = ["few_label_notes", "judge_correlation", "RELIABLE_LABELS", "TRUSTED_LABELS",
           "CLASS_LABELS"]

#: Fewer labelled rows than this and the output says the interval may cover less than 95%:
#: with 10-14 graded labels and a useless judge it covered 92.4-93.5% in simulation
#: (tests/unit/test_estimate_simulation.py), at 15 and more 93.4% or more.
RELIABLE_LABELS = 15
#: Fewer labelled rows than this and the output says not to trust the intervals yet, as
#: docs/calibrated-estimates.md ("When not to trust it") says.
TRUSTED_LABELS = 30
#: Fewer 0/1 labels than this in either class and the output says not to trust them yet.
CLASS_LABELS = 5


def few_label_notes(metrics: Sequence[Any], *, census: bool = False) -> list[str]:
    """Plain warnings below the documented minimums (docs/calibrated-estimates.md, "When
    not to trust it"): fewer than ``RELIABLE_LABELS`` labels (measured), fewer than
    ``TRUSTED_LABELS``, a 0/1 class with fewer than ``CLASS_LABELS`` labels; and a judge
    that does not track the labels. A census is its own mean: no size warning but the
    measured one."""
    out = []
    few = [m for m in metrics if m.n_labelled < RELIABLE_LABELS]
    if few:
        out.append(
            f"{', '.join(f'{m.metric} ({m.n_labelled} labels)' for m in few)}: fewer than "
            f"{RELIABLE_LABELS} labels, so the intervals are not reliable at this size: they "
            "covered down to 92% in simulation (graded labels, an uninformative judge); "
            "label more rows before trusting them")
    some = [m for m in metrics if RELIABLE_LABELS <= m.n_labelled < TRUSTED_LABELS]
    if some and not census:
        out.append(
            f"{', '.join(f'{m.metric} ({m.n_labelled} labels)' for m in some)}: fewer than "
            f"{TRUSTED_LABELS} labels: do not trust these intervals yet "
            "(docs/calibrated-estimates.md); label more rows")
    for m in metrics:
        y = m.arrays.get("labels")
        if census or y is None or not is_binary(y):
            continue
        ones = int(np.sum(y == 1))
        rare, count = (1, ones) if ones < len(y) - ones else (0, len(y) - ones)
        if count < CLASS_LABELS:
            out.append(f"{m.metric}: only {count} of the {len(y)} labels are {rare} (fewer "
                       f"than {CLASS_LABELS} in a class): the interval rests on those few "
                       "rows; do not trust it yet (docs/calibrated-estimates.md); label "
                       "more rows")
    for m in metrics:
        if not m.tracks and m.n_labelled < m.n_rows:
            r = ("undefined: the judge gave every labelled row the same score"
                 if m.correlation is None else f"{m.correlation:+.2f}")
            out.append(f"{m.metric}: the judge does not track the labels (correlation {r} "
                       f"on the {m.n_labelled} labelled rows): its scores are worth no "
                       "labels here; the labels-only mean is the number to use")
    return out


def judge_correlation(judge: np.ndarray, labels: np.ndarray) -> float | None:
    """Pearson's correlation of the judge's scores with the labels on the labelled rows
    (None where either is constant)."""
    if len(labels) < 2 or np.ptp(judge) == 0 or np.ptp(labels) == 0:
        return None
    return float(np.corrcoef(judge, labels)[0, 1])
