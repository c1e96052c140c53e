"""Scoring one metric on one sample safely: the one place a failure becomes an unscored Score.

A run, the judge check and the RAGAS-style metric objects all score
through ``score_one``, so a sample that lacks a field, an empty input (decided
without the judge, ``degenerate``), a failed judge call
(truncated output, a copied example) or a missing model gives the same
unscored reason wherever it happens, and never an exception that ends a run.
"""

from __future__ import annotations

from localeval.errors import JudgeCallError, NoEmbedder, NoJudge
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import decide_empty
from localeval.metrics.model_access import Judging
from localeval.types import Sample, Score

__all__ = ["missing_reason", "score_one"]


def missing_reason(m: Metric, s: Sample) -> str:
    """The unscored reason for a metric the sample lacks fields for (or that never ran)."""
    missing = m.missing_fields(s)
    return "missing " + ", ".join(missing) if missing else "not computed"


def score_one(m: Metric, s: Sample, ctx: Judging) -> Score:
    """``m.score(s, ctx)``; unscored with the reason when a field is missing or the model
    fails; decided without any model call when an input it reads is empty."""
    if m.missing_fields(s):
        return Score.unscored(missing_reason(m, s))
    decided = decide_empty(m, s)
    if decided is not None:
        return decided
    try:
        return m.score(s, ctx)
    except (JudgeCallError, NoJudge, NoEmbedder) as e:
        return Score.unscored(str(e))
