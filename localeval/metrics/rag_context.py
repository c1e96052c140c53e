"""Metrics that judge the retrieved contexts: context_precision,
context_utilization, context_recall, context_entity_recall and the legacy
context_relevancy.

Per-context steps name a context by its number in the prompt's sample block
("context [3]") instead of repeating it, so every call of a sample shares one
KV prefix. Steps that pick from the inputs pick by number: context_recall
gives one verdict per numbered reference sentence and context_relevancy
selects numbered context sentences, so neither can count a sentence that is
not in the sample; entities that do not occur in their source are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from localeval.lang import resolve_lang, split_sentences
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import extracted_nothing
from localeval.metrics.model_access import Judging
from localeval.metrics.output_bounds import entity_bounds, occurs_in, reason_chars, source
from localeval.metrics.rankings import average_precision
from localeval.metrics.schemas import (
    MAX_STATEMENTS,
    ContextVerdict,
    entities_schema,
    reason_room,
    selection_schema,
    verdicts_schema,
    with_reason,
)
from localeval.metrics.specs import register
from localeval.metrics.steps import judged_verdict, judged_verdicts
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
    gives_reasons: ClassVar[bool] = True

    def score(self, sample: Sample, ctx: Judging) -> Score:
        contexts = sample.contexts or []
        verdicts: list[dict] = []
        values: list[float] = []
        schema = with_reason(ContextVerdict, reason_room(ctx.reasons))
        # The contexts' verdicts are independent: asked together when the judge batches.
        replies = ctx.map(lambda k: ctx.ask(self.step, schema, sample,
                                            prob_field="verdict", k=k),
                          range(1, len(contexts) + 1))
        for k, reply in enumerate(replies, start=1):
            d, value = judged_verdict(reply, context=k)
            verdicts.append(d)
            values.append(value)
        return Score(average_precision(values), details={"verdicts": verdicts})


@register
@dataclass(frozen=True)
class ContextPrecision(_RankedUsefulness):
    """Are the contexts useful for the reference answer, and ranked first?"""

    name: ClassVar[str] = "context_precision"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts", "reference")
    step: ClassVar[str] = "context_precision"
    description: ClassVar[str] = "average precision of contexts useful for the reference"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("contexts", 0.0))


@register
@dataclass(frozen=True)
class ContextUtilization(_RankedUsefulness):
    """context_precision judged against the answer instead of the reference."""

    name: ClassVar[str] = "context_utilization"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer", "contexts")
    step: ClassVar[str] = "context_utilization"
    description: ClassVar[str] = "average precision of contexts useful for the answer"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", 0.0),
                                                                 ("contexts", 0.0))


@register
@dataclass(frozen=True)
class ContextRecall(Metric):
    """Share of the reference's sentences attributable to the retrieved contexts."""

    name: ClassVar[str] = "context_recall"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts", "reference")
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = "reference sentences attributed to the contexts / sentences"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("contexts", 0.0))

    def score(self, sample: Sample, ctx: Judging) -> Score:
        ref = sample.reference or ""
        sentences = split_sentences(ref, resolve_lang(ctx.lang, ref))
        if not sentences:
            return Score.unscored("no reference sentences to classify", classifications=[])
        # Beyond the verdict ceiling the last sentences are joined into one.
        if len(sentences) > MAX_STATEMENTS:
            sentences = sentences[:MAX_STATEMENTS - 1] + [" ".join(sentences[MAX_STATEMENTS - 1:])]
        schema = verdicts_schema(len(sentences), reason_room(ctx.reasons, reason_chars(sentences)))
        reply = ctx.ask("context_recall", schema, sample, prob_field="verdict",
                        sentences=sentences)
        rows, values = judged_verdicts(reply, "statement", sentences)
        return Score(sum(values) / len(values), details={"classifications": rows})


def _entities(ctx: Judging, sample: Sample, target: str) -> tuple[list[str], list[str]]:
    """Entities of the reference or the joined contexts: (found in that text, not found).

    The schema bounds the list and each entity by the source (its words and
    sentences); an entity counts only if it occurs in the source after
    normalisation, so a judge cannot score entities it made up or copied.
    """
    text = sample.reference if target == "reference" else "\n".join(sample.contexts or [])
    items, chars = entity_bounds(source(text, resolve_lang(ctx.lang, text)))
    reply = ctx.ask("entities", entities_schema(items, chars), sample, target=target)
    got = [e.strip() for e in reply.output.entities if e.strip()]
    return ([e for e in got if occurs_in(e, text or "")],
            [e for e in got if not occurs_in(e, text or "")])


@register
@dataclass(frozen=True)
class ContextEntityRecall(Metric):
    """Share of the reference's entities that also occur among the contexts' entities."""

    name: ClassVar[str] = "context_entity_recall"
    requires: ClassVar[tuple[str, ...]] = ("reference", "contexts")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "|entities(ctx) & entities(ref)| / |entities(ref)|"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("contexts", 0.0))

    def score(self, sample: Sample, ctx: Judging) -> Score:
        ref, ref_dropped = _entities(ctx, sample, "reference")
        details: dict = {"reference_entities": ref, "dropped_reference_entities": ref_dropped,
                         "dropped": len(ref_dropped)}
        # The reference holds text (an empty one is decided before): no entity found
        # in it (none given, or only ones that do not occur) is a failed extraction, and
        # the recall of nothing is undefined. Contexts without entities are a real
        # case (an unrelated passage): they recall nothing, 0.0.
        if not ref:
            return extracted_nothing("reference", **details)
        got, got_dropped = _entities(ctx, sample, "contexts")
        details.update(context_entities=got, dropped_context_entities=got_dropped,
                       dropped=len(ref_dropped) + len(got_dropped))
        # Exact match after stripping, as ragas (normalised forms only decide
        # whether an entity is in its source).
        common = set(got) & set(ref)
        details["common"] = sorted(common)
        # Denominator counts duplicates in the reference list, as ragas does.
        return Score(len(common) / len(ref), details=details)


@register
@dataclass(frozen=True)
class ContextRelevancy(Metric):
    """Legacy ragas metric: share of context sentences needed to answer the question.

    Sentences are those of the joined contexts, as ragas counts them; the
    judge selects them by number, so the score is distinct selected / total
    and cannot exceed 1.
    """

    name: ClassVar[str] = "context_relevancy"
    requires: ClassVar[tuple[str, ...]] = ("question", "contexts")
    uses_judge: ClassVar[bool] = True
    description: ClassVar[str] = "#needed context sentences / #context sentences"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("contexts", 0.0),)

    def score(self, sample: Sample, ctx: Judging) -> Score:
        joined = "\n".join(sample.contexts or [])
        lang = resolve_lang(ctx.lang, joined)
        sentences = split_sentences(joined, lang)
        total = len(sentences)
        if total == 0:
            return Score(0.0, details={"context_sentences": 0,
                                       "note": "the contexts have no sentences"})
        # The judge sees the sentences numbered and may answer only with their
        # numbers; a number given twice counts once.
        reply = ctx.ask("context_relevancy", selection_schema(total), sample,
                        sentences=sentences)
        picked = list(reply.output.sentences)
        chosen = sorted(set(picked))
        details: dict = {"context_sentences": total, "selected": chosen,
                         "sentences": [sentences[i - 1] for i in chosen],
                         "repeated_selections": len(picked) - len(chosen)}
        if not chosen:
            details["insufficient"] = True
            return Score(0.0, details=details)
        return Score(len(chosen) / total, details=details)
