"""deepeval-style ``knowledge_retention``: does the assistant keep what the user told it?

deepeval's ``KnowledgeRetentionMetric`` in two steps. For each user message with
text, the judge lists the facts it states (``knowledge_facts``: names, numbers,
dates, choices; the conversation up to that message is shown for context). Then
for each assistant message with text that follows stated facts, the judge says
whether the message keeps them (``knowledge_retention``, one verdict: 1 when it
neither asks for a stated fact again, nor forgets or contradicts one; deepeval
calls the failure "attrition"). The score is the share of those messages that keep
the facts; with ``--verdicts soft`` the mean of P(1). The calls of each step are
independent and sent together when the judge serves several.

Degenerate cases (``agents.decide_conversation``): empty user turns are unscored;
an assistant that wrote nothing and called no tool scores 0.0. A conversation in
which the user stated no fact before any assistant message has nothing to retain:
unscored with that reason (deepeval would count no attrition, a perfect score for
an empty test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from localeval.metrics.agents import decide_conversation, transcript
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import DECIDED
from localeval.metrics.model_access import Judging
from localeval.metrics.schemas import CriterionVerdict, reason_room, with_reason
from localeval.metrics.specs import register
from localeval.metrics.steps import judged_verdict
from localeval.types import MultiTurnSample, Sample, Score

__all__ = ["KnowledgeRetention", "Facts", "FACT_CHARS", "MAX_FACTS", "NOTHING_TO_RETAIN"]

FACT_CHARS = 160
#: At most this many facts a user message.
MAX_FACTS = 8
NOTHING_TO_RETAIN = "the user stated no fact before an assistant message: nothing to retain"


class Facts(BaseModel):
    """deepeval's ``Knowledge``: the facts one user message states."""

    model_config = ConfigDict(extra="forbid")
    facts: list[Annotated[str, Field(max_length=FACT_CHARS)]] = Field(max_length=MAX_FACTS)


@register
@dataclass(frozen=True)
class KnowledgeRetention(Metric):
    """Share of the assistant's messages that keep the facts the user stated (deepeval)."""

    name: ClassVar[str] = "knowledge_retention"
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = ("share of assistant messages that keep the facts the user "
                                  "stated before them (deepeval KnowledgeRetention)")

    def score(self, sample: Sample, ctx: Judging) -> Score:
        decided = decide_conversation(sample, needs_user=True)
        if decided is not None:
            return decided
        assert isinstance(sample, MultiTurnSample)  # decide_conversation refused the others
        rows = transcript(sample)
        said = [(i, m.role) for i, m in enumerate(sample.messages)
                if m.role in ("user", "assistant") and m.content.strip()]
        users = [i for i, role in said if role == "user"]
        found = ctx.map(lambda i: ctx.ask("knowledge_facts", Facts, sample,
                                          conversation=rows[:i + 1]).output.facts, users)
        facts_of = {i: [f.strip() for f in fs if f.strip()] for i, fs in zip(users, found)}
        turns: list[tuple[int, list[str]]] = []
        known: list[str] = []
        for i, role in said:
            if role == "user":
                known = known + [f for f in facts_of[i] if f not in known]
            elif known:
                turns.append((i, known))
        if not turns:
            return Score.unscored(NOTHING_TO_RETAIN, **{DECIDED: NOTHING_TO_RETAIN},
                                  facts=[f for fs in facts_of.values() for f in fs])
        schema = with_reason(CriterionVerdict, reason_room(ctx.reasons))
        replies = ctx.map(lambda t: ctx.ask("knowledge_retention", schema, sample,
                                            prob_field="verdict", conversation=rows[:t[0] + 1],
                                            statements=t[1]), turns)
        judged = [judged_verdict(r, turn=i + 1, facts=len(facts))
                  for (i, facts), r in zip(turns, replies)]
        values = [v for _, v in judged]
        return Score(sum(values) / len(values), details={
            "facts": [f for fs in facts_of.values() for f in fs],
            "turns": [row for row, _ in judged]})
