"""NVIDIA's dual-judge metrics as in ragas: nv_context_relevance,
nv_answer_accuracy and nv_response_groundedness.

Empty inputs are decided before (``degenerate``, as ragas's shortcuts: 0.0).
Each asks two differently worded judges for a rating and averages the
normalised ratings. Unlike ragas, the rating arrives as constrained JSON (no
digit scanning of free text), and the fallback is symmetric: if either judge
call fails, the other one's rating is the score; only when both fail is the
sample unscored (the first error propagates to the runner).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel

from localeval.errors import JudgeCallError
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.schemas import Rating012, Rating024
from localeval.metrics.specs import register
from localeval.types import Sample, Score

__all__ = ["NVContextRelevance", "NVAnswerAccuracy", "NVResponseGroundedness", "dual_judge"]


def dual_judge(ctx: Judging, sample: Sample, step: str, schema: type[BaseModel],
               scale: float) -> Score:
    """Ratings from ``{step}_1`` and ``{step}_2``, each divided by ``scale``, averaged.

    Symmetric fallback: one failed judge call leaves the other's rating.
    """
    def rate(i: int) -> int | JudgeCallError:
        try:
            return ctx.ask(f"{step}_{i}", schema, sample).output.rating
        except JudgeCallError as e:
            return e

    got_or_failed = ctx.map(rate, (1, 2))  # the two judges are independent
    ratings = [r if isinstance(r, int) else None for r in got_or_failed]
    errors = [r for r in got_or_failed if isinstance(r, JudgeCallError)]
    got = [r / scale for r in ratings if r is not None]
    if not got:
        raise errors[0]
    details: dict = {"rating_1": ratings[0], "rating_2": ratings[1], "scale": scale}
    if errors:
        failed = 1 if ratings[0] is None else 2
        details["fallback"] = f"judge {failed} failed ({errors[0]}); used judge {3 - failed} alone"
    return Score(sum(got) / len(got), details=details)


def _joined(sample: Sample) -> str:
    return "\n".join(sample.contexts or []).strip()


@register
@dataclass(frozen=True)
class NVContextRelevance(Metric):
    """Do the retrieved contexts hold what the question needs? Two judges rate 0/1/2."""

    name: ClassVar[str] = "nv_context_relevance"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "mean of two 0-2 relevance ratings / 2"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("question", 0.0),
                                                                 ("contexts", 0.0))

    def score(self, sample: Sample, ctx: Judging) -> Score:
        question, joined = (sample.question or "").strip(), _joined(sample)
        if joined in question:  # includes equality
            return Score(0.0, details={"shortcut": "contexts only repeat the question"})
        return dual_judge(ctx, sample, "nv_context_relevance", Rating012, 2.0)


@register
@dataclass(frozen=True)
class NVAnswerAccuracy(Metric):
    """Does the answer match the reference? Two judges rate 0/2/4, the second with roles swapped."""

    name: ClassVar[str] = "nv_answer_accuracy"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer", "reference")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "mean of two 0/2/4 accuracy ratings / 4"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("answer", 0.0))

    def score(self, sample: Sample, ctx: Judging) -> Score:
        return dual_judge(ctx, sample, "nv_answer_accuracy", Rating024, 4.0)


@register
@dataclass(frozen=True)
class NVResponseGroundedness(Metric):
    """Is the answer supported by the retrieved contexts? Two judges rate 0/1/2."""

    name: ClassVar[str] = "nv_response_groundedness"
    requires: ClassVar[tuple[str, ...]] = ("answer", "contexts")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "mean of two 0-2 groundedness ratings / 2"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", 0.0),
                                                                 ("contexts", 0.0))

    def score(self, sample: Sample, ctx: Judging) -> Score:
        answer, joined = (sample.answer or "").strip(), _joined(sample)
        if answer in joined:  # includes equality, as ragas
            return Score(1.0, details={"shortcut": "the answer is quoted from the contexts"})
        return dual_judge(ctx, sample, "nv_response_groundedness", Rating012, 2.0)
