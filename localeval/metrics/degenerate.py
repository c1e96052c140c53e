"""Degenerate inputs decided without the judge: the one place an empty input gets its score.

A judge shown an empty answer still answers: the demo judge invented
statements for it from the contexts and called them supported (faithfulness
1.0), and a criterion such as "polite" came back 1. A pipeline that returned
nothing must never get a good score, so an input with no text is decided
here, before any judge or embedder call, from what the metric means.

Each metric lists, in ``Metric.on_empty``, the inputs it reads and what an
empty one gives: a value (0.0 where the meaning gives 0) or ``None``
(unscored: the question the metric asks is undefined). Rules are checked in
order; the first input found empty decides. ``docs/metrics.md`` ("Empty
inputs") holds the same rules as a table, with the reasons, and a test reads
that table, so the two cannot drift.

The other degenerate case is the judge's: a non-empty text from which it
extracted no statement, claim or entity. That is a failed judge call, not
agreement and not a zero: ``extracted_nothing`` makes it unscored with the
detail key ``EXTRACTED_NOTHING`` that judge health counts.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Iterable, Sequence

from localeval.types import Sample, Score

__all__ = ["is_blank", "is_empty", "empty_reason", "decide_empty", "extracted_nothing",
           "empty_input_note", "DECIDED", "EXTRACTED_NOTHING", "EMPTY_FIELDS"]

#: Detail key of a score decided from an empty input (its value: the reason).
DECIDED = "decided_without_judge"
#: Detail key of a score unscored because the judge extracted nothing (its value: the source).
EXTRACTED_NOTHING = "extracted_nothing"
#: Sample fields an ``on_empty`` rule may name.
EMPTY_FIELDS = ("question", "answer", "reference", "contexts")


def is_blank(text: str | None) -> bool:
    """True when ``text`` has no visible character: only white space, control or format
    characters (a zero-width space or a BOM is no answer either)."""
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in text or "")


def is_empty(sample: Sample, field: str) -> bool:
    """True when ``field`` is present but holds no text (contexts: none with text)."""
    value = getattr(sample, field, None)
    if value is None:
        return False  # missing, not empty: ``missing_fields`` reports it
    if field == "contexts":
        return all(is_blank(c) for c in value)
    return is_blank(value)


def empty_reason(field: str) -> str:
    """The unscored reason (or the note) for an empty ``field``: "the answer is empty"."""
    return f"the {field} {'are' if field == 'contexts' else 'is'} empty"


def decide_empty(metric: Any, sample: Sample) -> Score | None:
    """The score an empty input gives ``metric`` on ``sample``, or None when the metric runs.

    Called before any judge or embedder call (``unscored.score_one``).
    """
    for field, value in getattr(metric, "on_empty", ()):
        if is_empty(sample, field):
            reason = empty_reason(field)
            if value is None:
                return Score.unscored(reason, **{DECIDED: reason})
            return Score(float(value), details={DECIDED: reason})
    return None


def extracted_nothing(source: str, **details: Any) -> Score:
    """Unscored: the judge extracted nothing from ``source`` (answer, reference, contexts),
    which is not empty (empty inputs never reach the judge)."""
    what = "non-empty contexts" if source == "contexts" else f"a non-empty {source}"
    return Score.unscored(f"judge extracted nothing from {what}",
                          **{**details, EXTRACTED_NOTHING: source})


def _where(hit: Sequence[Sample]) -> str:
    """"rows 3, 7" (the source's rows), or "ids a, b" for samples built in code; ten at most."""
    by_row = all(s.row is not None for s in hit)
    labels = [str(s.row) if by_row else repr(s.id) for s in hit[:10]]
    more = f" and {len(hit) - 10} more" if len(hit) > 10 else ""
    return ("rows " if by_row else "ids ") + ", ".join(labels) + more


def empty_input_note(samples: Iterable[Sample], metrics: Iterable[Any]) -> list[str]:
    """One warning per input that is empty in some rows and read by a chosen metric:
    "2 of 8 rows have an empty answer (rows 3, 7): faithfulness, polite score them
    without the judge (docs/metrics.md, 'Empty inputs')". One pass over ``samples``.
    """
    readers: dict[str, list[str]] = {f: [] for f in EMPTY_FIELDS}
    for m in metrics:
        for field, _ in getattr(m, "on_empty", ()):
            if m.key not in readers[field]:
                readers[field].append(m.key)
    hits: dict[str, list[Sample]] = {f: [] for f, keys in readers.items() if keys}
    total = 0
    for s in samples:
        total += 1
        for field, hit in hits.items():
            if is_empty(s, field):
                hit.append(s)
    notes = []
    for field, hit in hits.items():
        if hit:
            noun = "empty contexts" if field == "contexts" else f"an empty {field}"
            notes.append(f"{len(hit)} of {total} rows have {noun} ({_where(hit)}): "
                         f"{', '.join(readers[field])} score them without the judge "
                         "(docs/metrics.md, 'Empty inputs')")
    return notes
