"""ragas's tool-call metrics of conversations: ``ToolCallAccuracy`` and ``ToolCallF1``.

They score ``MultiTurnSample`` objects (``localeval.ragas.messages``) with localeval's
``tool_call_accuracy`` and ``tool_call_f1`` (``localeval.metrics.tools``), which need no
judge. Every ragas way of calling them works:

    metric = ToolCallAccuracy(strict_order=False)
    await metric.multi_turn_ascore(sample)            # ragas 0.2-0.3: a float
    metric.score(user_input=[...], reference_tool_calls=[...]).value   # 0.4 collections
    evaluate(EvaluationDataset(samples=[sample]), metrics=[metric])

``arg_comparison_metric=`` takes ragas's ``ExactMatch()`` (the default) or
``NonLLMStringSimilarity(distance_measure=...)`` from ``localeval.ragas``; a judged
comparison metric is refused (the point of these metrics is that no model runs).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Mapping

from localeval.ragas.base import MetricResult, RagasMetric
from localeval.ragas.messages import MULTI_TURN_FIELDS

__all__ = ["ToolCallAccuracy", "ToolCallF1", "MultiTurnMetric"]


class MultiTurnMetric(RagasMetric):
    """A ragas multi-turn metric: ``score`` takes a conversation's fields."""

    score_fields: ClassVar[tuple[str, ...]] = MULTI_TURN_FIELDS + ("messages",)

    def multi_turn_score(self, sample: Mapping[str, Any]) -> float:
        """ragas 0.2-0.3's ``multi_turn_score(sample)``: the value as a float (NaN unscored)."""
        return float(self.score(**dict(sample)))

    async def multi_turn_ascore(self, sample: Mapping[str, Any], callbacks: Any = None,
                                timeout: float | None = None) -> float:
        return await asyncio.to_thread(self.multi_turn_score, sample)

    def score(self, **fields: Any) -> MetricResult:
        return super().score(**{k: v for k, v in fields.items() if v is not None})


class ToolCallAccuracy(MultiTurnMetric):
    """ragas's ``ToolCallAccuracy(strict_order=True, arg_comparison_metric=ExactMatch())``."""

    metric_name: ClassVar[str] = "tool_call_accuracy"
    ragas_name: ClassVar[str] = "tool_call_accuracy"

    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "arg_comparison_metric":
            return {"arg_comparison": _arg_comparison(value)}
        return super().translate(key, value)


class ToolCallF1(MultiTurnMetric):
    """ragas's ``ToolCallF1()``."""

    metric_name: ClassVar[str] = "tool_call_f1"
    ragas_name: ClassVar[str] = "tool_call_f1"


def _arg_comparison(metric: Any) -> str:
    """localeval's ``arg_comparison`` for ragas's ``arg_comparison_metric`` object."""
    if metric is None:
        return "exact"
    inner: Any = getattr(metric, "metric", None)
    name = getattr(inner, "name", None) or type(metric).__name__
    if name in ("exact_match", "ExactMatch"):
        return "exact"
    if name == "non_llm_string_similarity":
        return str(inner.distance)
    raise TypeError("ToolCallAccuracy(arg_comparison_metric=...): use ExactMatch() or "
                    "NonLLMStringSimilarity(distance_measure=...) from localeval.ragas; "
                    f"{type(metric).__name__} is not supported (tool-call metrics run no judge)")
