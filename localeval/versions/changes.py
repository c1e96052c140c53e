"""One paired sample on one metric (:class:`SampleChange`), and the pairs left unscored.

A pair is scored when both versions scored the sample; a pair unscored on
either side takes no part in the difference, so each metric counts them and
says why (``unscored_text``), the way the run's gates count unscored samples.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = ["SampleChange", "unscored_reasons", "unscored_text", "sample_name", "unscored_why",
           "MAX_REASONS"]

#: Reasons named in a metric's unscored line; the rest are counted (as the run's gates do).
MAX_REASONS = 3


@dataclass
class SampleChange:
    """One paired sample on one metric: both scores, the change, and what kind it is."""

    base_id: str
    new_id: str
    base: float | None
    new: float | None
    #: "scored" (both), "became_unscored", "became_scored" or "unscored" (neither)
    status: str
    #: new - base (None unless both are scored); ``gain`` is it signed so that > 0 is better
    delta: float | None = None
    gain: float | None = None
    base_reason: str | None = None
    new_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("base_id", "new_id", "base", "new", "status",
                                              "delta", "base_reason", "new_reason")}


def sample_name(c: SampleChange) -> str:
    """How the pages name a pair: its id, or "base id / new id" when the ids differ
    (paired by question)."""
    return c.new_id if c.base_id == c.new_id else f"{c.base_id} / {c.new_id}"


def unscored_why(s: SampleChange) -> str:
    """Which side left a pair unscored, and why: ``"new: reply did not parse"``."""
    return "; ".join(f"{side}: {why or 'no value'}" for side, v, why in (
        ("base", s.base, s.base_reason), ("new", s.new, s.new_reason)) if v is None)


def unscored_reasons(samples: Sequence[SampleChange]) -> dict[str, int]:
    """"side: reason" -> count over the pairs unscored on either side, commonest first."""
    c: Counter[str] = Counter()
    for s in samples:
        if s.status != "scored":
            c.update(f"{side}: {why or 'no value'}" for side, v, why in (
                ("base", s.base, s.base_reason), ("new", s.new, s.new_reason)) if v is None)
    return dict(c.most_common())


def unscored_text(samples: Sequence[SampleChange]) -> str:
    """``"7 of 12 paired samples unscored in base or new (new: reply did not parse: 7)"``."""
    unscored = sum(1 for s in samples if s.status != "scored")
    reasons = list(unscored_reasons(samples).items())
    shown = ", ".join(f"{r}: {k}" for r, k in reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown += f", {len(reasons) - MAX_REASONS} other reasons"
    return (f"{unscored} of {len(samples)} paired samples unscored in base or new"
            + (f" ({shown})" if shown else ""))
