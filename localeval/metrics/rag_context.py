"""Metrics that judge the retrieved contexts: context_precision,
context_utilization, context_recall, context_entity_recall and the legacy
context_relevancy.

Per-context steps name a context by its number in the prompt's sample block
("context [3]") instead of repeating it, so every call of a sample shares one
KV prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from localeval.lang import resolve_lang, split_sentences
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Context
from localeval.metrics.schemas import ContextVerdict, Entities, RecallVerdicts, RelevantSentences
from localeval.metrics.specs import register
from localeval.metrics.steps import average_precision, verdict_values
from localeval.types import Sample, Score

__all__ = [
    "ContextPrecision",
    "ContextUtilization",
    "ContextRecall",
    "ContextEntityRecall",
    "ContextRelevancy",
]


@dataclass(frozen=True)
class _RankedUsefulness(Metric):
    """Average precision of per-context usefulness verdicts, in rank order."""

    step: ClassVar[str] = ""
    uses_judge: ClassVar[bool] = True

    def score(self, sample: Sample, ctx: Context) -> Score:
        contexts = sample.contexts or []
        verdicts: list[dict] = []
        values: list[float] = []
        for k in range(1, len(contexts) + 1):
            reply = ctx.ask(self.step, ContextVerdict, sample, prob_field="verdict", k=k)
            out = reply.output
            value = verdict_values([out.verdict], reply.probs)[0]  # type: ignore[attr-defined]
            d = {"context": k, "reason": out.reason, "verdict": out.verdict}  # type: ignore[attr-defined]
            if reply.probs is not None:
                d["p_verdict_1"] = round(value, 6)
            verdicts.append(d)
            values.append(value)
        details: dict = {"verdicts": verdicts}
        if not contexts:
            details["note"] = "no retrieved contexts"
        return Score(average_precision(values), details=details)


@register
@dataclass(frozen=True)
class ContextPrecision(_RankedUsefulness):
    """Are the contexts useful for the reference answer, and ranked first?"""

    name: ClassVar[str] = "context_precision"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts", "reference")
    step: ClassVar[str] = "context_precision"
    description: ClassVar[str] = "average precision of contexts useful for the reference"


@register
@dataclass(frozen=True)
class ContextUtilization(_RankedUsefulness):
    """context_precision judged against the answer instead of the reference."""

    name: ClassVar[str] = "context_utilization"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer", "contexts")
    step: ClassVar[str] = "context_utilization"
    description: ClassVar[str] = "average precision of contexts useful for the answer"


@register
@dataclass(frozen=True)
class ContextRecall(Metric):
    """Share of the reference's sentences attributable to the retrieved contexts."""

    name: ClassVar[str] = "context_recall"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts", "reference")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "reference sentences attributed to the contexts / sentences"

    def score(self, sample: Sample, ctx: Context) -> Score:
        reply = ctx.ask("context_recall", RecallVerdicts, sample, prob_field="verdict")
        items = reply.output.classifications  # type: ignore[attr-defined]
        if not items:
            return Score.unscored("no reference sentences classified", classifications=[])
        values = verdict_values([i.verdict for i in items], reply.probs)
        rows = [i.model_dump() for i in items]
        if reply.probs is not None:
            for r, v in zip(rows, values):
                r["p_verdict_1"] = round(v, 6)
        return Score(sum(values) / len(values), details={"classifications": rows})


def _entities(ctx: Context, sample: Sample, target: str) -> list[str]:
    reply = ctx.ask("entities", Entities, sample, target=target)
    return [e.strip() for e in reply.output.entities if e.strip()]  # type: ignore[attr-defined]


@register
@dataclass(frozen=True)
class ContextEntityRecall(Metric):
    """Share of the reference's entities that also occur among the contexts' entities."""

    name: ClassVar[str] = "context_entity_recall"
    requires: ClassVar[tuple[str, ...]] = ("reference", "contexts")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "|entities(ctx) & entities(ref)| / |entities(ref)|"

    def score(self, sample: Sample, ctx: Context) -> Score:
        ref = _entities(ctx, sample, "reference")
        if not ref:
            return Score(0.0, details={"reference_entities": [], "context_entities": [],
                                       "note": "the reference has no entities"})
        got = _entities(ctx, sample, "contexts")
        common = set(got) & set(ref)
        # Denominator counts duplicates in the reference list, as ragas does.
        return Score(len(common) / len(ref),
                     details={"reference_entities": ref, "context_entities": got,
                              "common": sorted(common)})


_INSUFFICIENT = "insufficient information"


@register
@dataclass(frozen=True)
class ContextRelevancy(Metric):
    """Legacy ragas metric: share of context sentences needed to answer the question."""

    name: ClassVar[str] = "context_relevancy"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "min(#needed sentences / #context sentences, 1)"

    def score(self, sample: Sample, ctx: Context) -> Score:
        joined = "\n".join(sample.contexts or [])
        lang = resolve_lang(ctx.lang, joined)
        total = len(split_sentences(joined, lang))
        if total == 0:
            return Score(0.0, details={"context_sentences": 0,
                                       "note": "the contexts have no sentences"})
        out = ctx.ask("context_relevancy", RelevantSentences, sample).output
        picked = [s.strip() for s in out.sentences if s.strip()]  # type: ignore[attr-defined]
        details: dict = {"extracted": picked, "context_sentences": total}
        if not picked or any(s.strip(" .。").casefold() == _INSUFFICIENT for s in picked):
            details["insufficient"] = True
            return Score(0.0, details=details)
        n = sum(len(split_sentences(s, lang)) for s in picked)
        details["extracted_sentences"] = n
        return Score(min(n / total, 1.0), details=details)
