"""The per-sample gate: every sample against a threshold, listing those under it with their working.

A mean can hide the one answer that invents a fact; this gate (``localeval run
--fail-under-each``, ``localeval.testing.assert_each``) checks each sample, as
deepeval's ``assert_test`` checks each case. A failure names each sample by id
and (shortened) question, with its score and the judge's working, so a CI log
says which answer to look at and why. Unscored samples fail it beyond the
allowance (``gates.Allowance``), listed with their reasons.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from localeval.errors import printable
from localeval.report.conversation_view import sample_question
from localeval.report.gates import gate_entry, threshold_missed, unscored_policy, unscored_text
from localeval.report.numbers import excerpt

__all__ = ["check_each", "sample_label", "MAX_LISTED", "WORKING_CHARS", "QUESTION_CHARS"]

#: Samples listed under one failed gate; the rest are counted.
MAX_LISTED = 20
#: Characters of a sample's working shown.
WORKING_CHARS = 300
#: Characters of a sample's question shown beside its id.
QUESTION_CHARS = 60


def sample_label(sample: Any) -> str:
    """``q3 "Where is the cafeteria…"``: the id, and the question (a conversation's first
    user turn) shortened to one line."""
    q = excerpt(sample_question(sample), QUESTION_CHARS)
    # the id is data: printable, so a newline in it cannot start a line of its own and an
    # escape sequence cannot reach the CI log raw (the question is JSON-quoted, and shown)
    sid = printable(sample.id)
    return f"{sid} {printable(json.dumps(q, ensure_ascii=False))}" if q else sid


def _working(score: Any) -> str:
    """The judge's working (a score's details) on one line, cut to WORKING_CHARS."""
    if not score.details:
        return ""
    return "; working: " + excerpt(json.dumps(score.details, ensure_ascii=False, default=str),
                                   WORKING_CHARS)


def check_each(samples: Sequence[Any], scores: Sequence[Mapping[str, Any]],
               summary: Mapping[str, Any], gates: Mapping[str, float],
               allow_unscored: Any = None, *, max_listed: int = MAX_LISTED) -> list[str]:
    """One block per failed per-sample gate: a header line, then one indented line per sample.

    ``samples`` and ``scores`` are parallel (an ``EvaluationResult``'s); ``gates``
    maps metric keys to thresholds (a ceiling where the summary says lower is
    better). A gate fails when a scored sample misses it, or when more samples
    are unscored than ``allow_unscored`` allows (then every unscored one is listed).
    """
    policy = unscored_policy(allow_unscored)
    blocks = []
    for key, threshold in gates.items():
        entry = gate_entry(summary, key, threshold)
        lower = bool(entry.get("lower_is_better"))
        rel = ">" if lower else "<"
        under, gaps = [], []
        for s, sc in zip(samples, scores):
            score = sc.get(key)
            if score is None:
                continue
            if score.value is None:
                gaps.append(f"{sample_label(s)}: {key} unscored ({score.reason})")
            elif threshold_missed(score.value, threshold, lower):
                under.append(f"{sample_label(s)}: {key} {score.value:.3f} {rel} {threshold}"
                             + _working(score))
        allowance = policy.of(key)
        total = int(entry.get("n") or 0) + int(entry.get("unscored") or 0)
        gaps_fail = bool(gaps) and not allowance.allows(len(gaps), total)
        if not under and not gaps_fail:
            continue
        lines = under + (gaps if gaps_fail else [])
        bound = "at most" if lower else "at least"
        head = f"{key} {bound} {threshold} on every sample: {len(under)} of {total} samples " \
               f"{'above' if lower else 'under'} it"
        if gaps:
            head += f"; {unscored_text(entry)}, allowed: {allowance}"
            if not gaps_fail:
                head += " (not listed)"
        shown = lines[:max_listed]
        more = [f"… {len(lines) - len(shown)} more"] if len(lines) > len(shown) else []
        blocks.append("\n  ".join([head, *shown, *more]))
    return blocks
