"""deepeval-style judged metrics of conversations: ``conversation_completeness`` and
``turn_relevancy``.

deepeval's ``ConversationCompletenessMetric``: the judge lists the user's
intentions in the conversation (``conversation_intentions``), then, in one call,
whether the assistant satisfied each, one verdict per numbered intention
(``conversation_completeness``; deepeval asks "yes"/"no" and counts what is not
"no"). The score is the share of intentions satisfied; with ``--verdicts soft``
the mean of the judge's P(satisfied). The conversation comes as for the agent
metrics (``agents.transcript``), before the task, so both steps share it.

deepeval's ``TurnRelevancyMetric``: for each assistant message with text, the judge
sees a sliding window of the conversation, the last ``window`` messages up to and
including that one (deepeval's ``window_size``, 10), and says whether the message
is relevant to what came before it (``turn_relevancy``, one call a turn, sent
together when the judge serves several); the score is the share of relevant turns.
The window bounds each prompt, so a long conversation is judged turn by turn
within the judge's context, and each turn sees only what deepeval shows it.

Degenerate cases (``agents.decide_conversation``): empty user turns are unscored
(no intention to read); an assistant that wrote nothing and called no tool
satisfied none, 0.0. No intention found in non-empty user turns is a failed
extraction, unscored and counted in judge health; deepeval scores it 1, which
would reward a judge that reads nothing. For ``turn_relevancy``, an assistant that
only called tools wrote no turn to judge: unscored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from localeval.metrics.agents import decide_conversation, transcript
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import DECIDED, extracted_nothing
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
from localeval.metrics.steps import judged_verdict, judged_verdicts
from localeval.types import MultiTurnSample, Sample, Score

__all__ = ["ConversationCompleteness", "TurnRelevancy", "Intentions", "INTENTION_CHARS",
           "MAX_INTENTIONS", "NO_ASSISTANT_TEXT"]

INTENTION_CHARS = 160
#: At most this many intentions a conversation (one verdict each).
MAX_INTENTIONS = 10
NO_ASSISTANT_TEXT = "the assistant wrote no text to judge (tool calls only)"


class Intentions(BaseModel):
    """deepeval's ``UserIntentions``: what the user wanted, one short sentence each."""

    model_config = ConfigDict(extra="forbid")
    intentions: list[Annotated[str, Field(max_length=INTENTION_CHARS)]] = Field(
        max_length=MAX_INTENTIONS)


@register
@dataclass(frozen=True)
class ConversationCompleteness(Metric):
    """Share of the user's intentions the assistant satisfied (deepeval's metric)."""

    name: ClassVar[str] = "conversation_completeness"
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = ("share of the user's intentions the assistant satisfied "
                                  "(deepeval ConversationCompletenessMetric)")

    def score(self, sample: Sample, ctx: Judging) -> Score:
        decided = decide_conversation(sample, needs_user=True)
        if decided is not None:
            return decided
        assert isinstance(sample, MultiTurnSample)  # decide_conversation refused the others
        conversation = transcript(sample)
        found = ctx.ask("conversation_intentions", Intentions, sample,
                        conversation=conversation).output.intentions
        intentions = list(dict.fromkeys(i.strip() for i in found if i.strip()))
        intentions = intentions[:min(MAX_INTENTIONS, MAX_STATEMENTS)]
        if not intentions:
            return extracted_nothing("conversation", intentions=[])
        schema = verdicts_schema(len(intentions),
                                 reason_room(ctx.reasons, reason_chars(intentions)))
        reply = ctx.ask("conversation_completeness", schema, sample, prob_field="verdict",
                        conversation=conversation, statements=intentions)
        rows, values = judged_verdicts(reply, "intention", intentions)
        return Score(sum(values) / len(values), details={"intentions": rows})


@register
@dataclass(frozen=True)
class TurnRelevancy(Metric):
    """Share of the assistant's turns relevant to the conversation before them (deepeval)."""

    name: ClassVar[str] = "turn_relevancy"
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = ("share of assistant turns relevant to the conversation "
                                  "before them, in a sliding window (deepeval TurnRelevancy)")

    window: int = 10

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError("window must be at least 1")

    def score(self, sample: Sample, ctx: Judging) -> Score:
        decided = decide_conversation(sample, needs_user=True)
        if decided is not None:
            return decided
        assert isinstance(sample, MultiTurnSample)  # decide_conversation refused the others
        rows = transcript(sample)
        turns = [i for i, m in enumerate(sample.messages)
                 if m.role == "assistant" and m.content.strip()]
        if not turns:
            return Score.unscored(NO_ASSISTANT_TEXT, **{DECIDED: NO_ASSISTANT_TEXT})
        schema = with_reason(CriterionVerdict, reason_room(ctx.reasons))
        replies = ctx.map(lambda i: ctx.ask(
            "turn_relevancy", schema, sample, prob_field="verdict",
            conversation=rows[max(0, i + 1 - self.window):i + 1]), turns)
        judged = [judged_verdict(r, turn=i + 1) for i, r in zip(turns, replies)]
        values = [v for _, v in judged]
        return Score(sum(values) / len(values), details={"window": self.window,
                                                         "turns": [row for row, _ in judged]})
