"""``topic_adherence`` (ragas 0.4's ``TopicAdherenceScore``): does an assistant answer the
questions on its reference topics and refuse the others?

ragas's three steps, each its own prompt: the judge extracts the topics of the
Human's turns (``topic_extraction``); for each topic, whether the AI answered it or
refused (``topic_refused``, one call a topic, sent together when the judge serves
several at once); and, for all topics in one call, whether each falls into one of
the sample's ``reference_topics`` (``topic_classification``, one verdict per
numbered topic: the grammar fixes the count, where ragas pads or cuts a list of
another length). Then, with ragas's ``eps = 1e-10``::

    tp = answered and on-topic, fp = answered and off-topic, fn = refused and on-topic
    precision = tp / (tp + fp + eps)    recall = tp / (tp + fn + eps)
    f1 = 2 * precision * recall / (precision + recall + eps)

``mode`` picks one (``f1``, ragas's default). With ``--verdicts soft`` the
answered and on-topic verdicts are the judge's probabilities and the counts
their expected values. The refusal step asks "answered?" (1) rather than ragas's
"refused?": the same fact, with 1 the verdict soft mode reads.

Degenerate cases (``agents.decide_conversation``): empty user turns are
unscored (no topic to extract); an assistant that wrote nothing answered no
topic, 0.0, which is what ragas's arithmetic gives; an empty
``reference_topics`` list is unscored (ragas raises); no topic extracted from a
non-empty conversation is unscored (ragas returns NaN) and counted in judge health.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from localeval.metrics.agents import decide_conversation, transcript
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import DECIDED, extracted_nothing, is_blank
from localeval.metrics.model_access import Judging
from localeval.metrics.output_bounds import reason_chars
from localeval.metrics.schemas import (
    MAX_STATEMENTS,
    CriterionVerdict,
    reason_room,
    verdicts_schema,
    with_reason,
)
from localeval.metrics.specs import register
from localeval.metrics.steps import reason_of, verdict_values
from localeval.types import MultiTurnSample, Sample, Score

__all__ = ["TopicAdherence", "Topics", "TOPIC_CHARS", "MAX_TOPICS", "EPS", "topic_score"]

TOPIC_CHARS = 120
#: At most this many topics a conversation (each costs a call).
MAX_TOPICS = 10
#: ragas's guard against division by zero, kept so that scores equal ragas's.
EPS = 1e-10
Mode = Literal["precision", "recall", "f1"]


class Topics(BaseModel):
    """ragas's ``TopicExtractionOutput``: the topics of the Human's turns."""

    model_config = ConfigDict(extra="forbid")
    topics: list[Annotated[str, Field(max_length=TOPIC_CHARS)]] = Field(max_length=MAX_TOPICS)


def topic_score(answered: list[float], on_topic: list[float], mode: str) -> float:
    """ragas's ``_compute_score`` on 0/1 (or expected) verdicts, ``EPS`` included."""
    tp = sum(a * c for a, c in zip(answered, on_topic))
    fp = sum(a * (1 - c) for a, c in zip(answered, on_topic))
    fn = sum((1 - a) * c for a, c in zip(answered, on_topic))
    precision = tp / (tp + fp + EPS)
    recall = tp / (tp + fn + EPS)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 2 * (precision * recall) / (precision + recall + EPS)


def _reason(verdict: str, item: Any) -> dict[str, str]:
    """``{"<verdict>_reason": ...}`` of a verdict item, or ``{}`` without a reason."""
    return {f"{verdict}_reason": r for r in reason_of(item).values()}


@register
@dataclass(frozen=True)
class TopicAdherence(Metric):
    """Answered topics that are reference topics, and reference topics answered."""

    name: ClassVar[str] = "topic_adherence"
    aliases: ClassVar[tuple[str, ...]] = ("topic_adherence_score",)
    requires: ClassVar[tuple[str, ...]] = ("messages", "reference_topics")
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = ("precision/recall/F1 of answered topics against the reference "
                                  "topics (ragas TopicAdherenceScore; mode)")

    mode: Mode = "f1"

    def __post_init__(self) -> None:
        if self.mode not in ("precision", "recall", "f1"):
            raise ValueError("mode must be one of precision, recall, f1")

    def score(self, sample: Sample, ctx: Judging) -> Score:
        decided = decide_conversation(sample, needs_user=True)
        if decided is not None:
            return decided
        assert isinstance(sample, MultiTurnSample)  # decide_conversation refused the others
        reference = [t for t in sample.reference_topics or [] if not is_blank(t)]
        if not reference:
            why = "the reference_topics are empty"
            return Score.unscored(why, **{DECIDED: why})
        conversation = transcript(sample)
        found = ctx.ask("topic_extraction", Topics, sample, conversation=conversation)
        topics = list(dict.fromkeys(t.strip() for t in found.output.topics if t.strip()))
        topics = topics[:min(MAX_TOPICS, MAX_STATEMENTS)]
        if not topics:
            return extracted_nothing("conversation", topics=[])
        answer_schema = with_reason(CriterionVerdict, reason_room(ctx.reasons))
        replies = ctx.map(lambda t: ctx.ask("topic_refused", answer_schema, sample,
                                            prob_field="verdict", conversation=conversation,
                                            topic=t), topics)
        answered = [verdict_values([r.output.verdict], r.probs)[0] for r in replies]
        schema = verdicts_schema(len(topics), reason_room(ctx.reasons, reason_chars(topics)))
        cls = ctx.ask("topic_classification", schema, sample, prob_field="verdict",
                      statements=topics, reference_topics=reference)
        items = cls.output.verdicts
        on_topic = verdict_values([i.verdict for i in items], cls.probs)
        rows: list[dict[str, Any]] = []
        for t, r, a, item, c in zip(topics, replies, answered, items, on_topic):
            # each verdict after its reason (none in --reasons none), as in the prompts
            row = {"topic": t, **_reason("answered", r.output), "answered": r.output.verdict,
                   **_reason("on_topic", item), "on_topic": item.verdict}
            if r.probs is not None or cls.probs is not None:
                row.update(p_answered=round(a, 6), p_on_topic=round(c, 6))
            rows.append(row)
        return Score(topic_score(answered, on_topic, self.mode),
                     details={"mode": self.mode, "reference_topics": reference, "topics": rows})
