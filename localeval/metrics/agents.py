"""Judged metrics of conversations and agents, with ragas 0.4's steps and arithmetic.

``agent_goal_accuracy`` (ragas's ``AgentGoalAccuracyWithReference``): the judge
infers the workflow's end state from the conversation (step
``agent_goal_outcome``), then compares it with the sample's ``reference``, the
desired outcome (step ``agent_goal_compare``): 1 if they match, 0 if not.
``agent_goal_accuracy_without_reference`` (ragas's
``AgentGoalAccuracyWithoutReference``): the same two steps, the inferred user
goal taking the reference's place. With ``--verdicts soft`` the score is the
judge's P(verdict = 1) of the comparison, the expectation of the hard score.

``topic_adherence`` (ragas's ``TopicAdherenceScore``) lives in ``topics.py`` and
deepeval's ``conversation_completeness`` in ``conversational.py``; both read the
conversation and decide degenerate ones as here.

The conversation reaches a step as an input, ``conversation`` (``transcript``:
one row per message, each tool call written ``name {json arguments}``), which
the templates render through ``_part_conversation.j2``; the sample block above it
is the one every step of the sample shares. A conversation's prompt language
comes from its user turns (``prompts.sample_language``).

Degenerate conversations are decided without the judge (``decide_conversation``):
a conversation in which the assistant neither wrote nor called anything reached no
end state, so the goal was not reached: 0.0, as an empty answer gets 0 (ragas
would ask its judge, which can only say 0 or invent an outcome). A conversation
whose user turns are all empty states no goal: unscored without a reference,
since the question the metric asks is undefined. An empty reference is unscored
(ragas raises on it).

A conversation longer than the judge's context is never cut: its step fails with
the judge's "prompt is N tokens, longer than the judge context" and the sample is
unscored with that reason (docs/conversations-and-agents.md, "Long conversations").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from localeval.metrics.base import Metric
from localeval.metrics.degenerate import DECIDED, is_blank
from localeval.metrics.model_access import Judging
from localeval.metrics.schemas import CriterionVerdict, reason_room, with_reason
from localeval.metrics.specs import register
from localeval.metrics.steps import judged_verdict
from localeval.types import MultiTurnSample, Sample, Score

__all__ = ["AgentGoalAccuracy", "AgentGoalAccuracyWithoutReference", "GoalOutcome",
           "transcript", "decide_conversation", "NOT_A_CONVERSATION", "NO_ASSISTANT_TURN",
           "NO_USER_TURN", "OUTCOME_CHARS"]

#: Length of the inferred goal and end state: one sentence each, as ragas's example.
OUTCOME_CHARS = 240
NOT_A_CONVERSATION = "not a conversation: this metric reads a conversation's messages"
NO_ASSISTANT_TURN = "the assistant wrote nothing and called no tool"
NO_USER_TURN = "the user turns are empty"


class GoalOutcome(BaseModel):
    """ragas's ``WorkflowOutput``: what the user wanted, and how the workflow ended."""

    model_config = ConfigDict(extra="forbid")
    user_goal: str = Field(max_length=OUTCOME_CHARS)
    end_state: str = Field(max_length=OUTCOME_CHARS)


def transcript(sample: MultiTurnSample) -> list[dict[str, Any]]:
    """The conversation as a step input: role, text and each tool call as one line of
    text (``name {"arg": ...}``, JSON with its characters unescaped), in order."""
    rows = []
    for m in sample.messages:
        calls = [f"{c.name} {json.dumps(c.args, ensure_ascii=False, sort_keys=False)}"
                 for c in m.tool_calls or ()]
        rows.append({"role": m.role, "content": m.content, "calls": calls})
    return rows


def decide_conversation(sample: Sample, *, needs_user: bool) -> Score | None:
    """The score of a conversation decided without the judge, or None when the judge runs.

    Not a conversation: unscored. The user turns all empty (``needs_user``: the
    metric infers the goal from them): unscored. No assistant text and no tool
    call: 0.0 (no end state was reached).
    """
    if not isinstance(sample, MultiTurnSample):
        return Score.unscored(NOT_A_CONVERSATION)
    if needs_user and all(is_blank(m.content) for m in sample.messages if m.role == "user"):
        return Score.unscored(NO_USER_TURN, **{DECIDED: NO_USER_TURN})
    acted = any(not is_blank(m.content) or m.tool_calls
                for m in sample.messages if m.role == "assistant")
    if not acted:
        return Score(0.0, details={DECIDED: NO_ASSISTANT_TURN})
    return None


@dataclass(frozen=True)
class _GoalAccuracy(Metric):
    """The two steps: infer the outcome, then compare it with the desired one."""

    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    #: True: the desired outcome is the sample's reference; False: the inferred user goal.
    with_reference: ClassVar[bool] = True

    def score(self, sample: Sample, ctx: Judging) -> Score:
        decided = decide_conversation(sample, needs_user=not self.with_reference)
        if decided is not None:
            return decided
        if self.with_reference and is_blank(sample.reference):
            return Score.unscored("the reference is empty", **{DECIDED: "the reference is empty"})
        assert isinstance(sample, MultiTurnSample)  # decide_conversation refused the others
        out = ctx.ask("agent_goal_outcome", GoalOutcome, sample,
                      conversation=transcript(sample)).output
        desired = (sample.reference or "") if self.with_reference else out.user_goal
        schema = with_reason(CriterionVerdict, reason_room(ctx.reasons))
        reply = ctx.ask("agent_goal_compare", schema, sample, prob_field="verdict",
                        desired=desired, arrived=out.end_state)
        details, value = judged_verdict(reply, user_goal=out.user_goal,
                                        end_state=out.end_state, desired_outcome=desired)
        return Score(value, details=details)


@register
@dataclass(frozen=True)
class AgentGoalAccuracy(_GoalAccuracy):
    """Did the agent reach the reference outcome? (ragas AgentGoalAccuracyWithReference)"""

    name: ClassVar[str] = "agent_goal_accuracy"
    aliases: ClassVar[tuple[str, ...]] = ("agent_goal_accuracy_with_reference",)
    requires: ClassVar[tuple[str, ...]] = ("messages", "reference")
    description: ClassVar[str] = ("1 if the conversation's end state matches the reference "
                                  "outcome (ragas AgentGoalAccuracyWithReference)")


@register
@dataclass(frozen=True)
class AgentGoalAccuracyWithoutReference(_GoalAccuracy):
    """Did the agent reach the goal the user stated? (ragas AgentGoalAccuracyWithoutReference)"""

    name: ClassVar[str] = "agent_goal_accuracy_without_reference"
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    with_reference: ClassVar[bool] = False
    description: ClassVar[str] = ("1 if the conversation's end state reaches the user's inferred "
                                  "goal (ragas AgentGoalAccuracyWithoutReference)")
