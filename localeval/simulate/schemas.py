"""The judge's output schemas of ``localeval simulate``, beside its prompts
(``prompts/simulate_user.j2``, ``simulate_goal_tool.j2``, ``simulate_goal_doc.j2``).

Every simulator step is grammar-constrained JSON, as every judge step is: the
simulated user's turn (``UserTurn``: the next message, or the signal that the goal
was reached or is out of reach) and a scenario written from a tool or a document
section (``ScenarioDraft``). The length bounds are in the grammar, so a small judge
that would write until its token limit stops at them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["UserTurn", "UserOpening", "ScenarioDraft", "MESSAGE_CHARS", "GOAL_CHARS",
           "ACTIONS", "USER_STEP", "TOOL_STEP", "DOC_STEP"]

#: The judge steps (prompt templates) of the simulator.
USER_STEP = "simulate_user"
TOOL_STEP = "simulate_goal_tool"
DOC_STEP = "simulate_goal_doc"
#: A user message is at most this long: a user writes a few sentences, not a page.
MESSAGE_CHARS = 400
#: A written goal and its outcome are at most this long each.
GOAL_CHARS = 300
#: What the simulated user may do on a turn.
ACTIONS = ("message", "goal_reached", "give_up")


class UserTurn(BaseModel):
    """The simulated user's turn: a message, or the end of the conversation."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["message", "goal_reached", "give_up"]
    message: str = Field(max_length=MESSAGE_CHARS)


class UserOpening(BaseModel):
    """The first turn: always a message (the grammar allows no other action), which
    states the goal."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["message"]
    message: str = Field(min_length=1, max_length=MESSAGE_CHARS)


class ScenarioDraft(BaseModel):
    """A scenario the judge wrote: the user's goal and the outcome that reaches it."""

    model_config = ConfigDict(extra="forbid")
    goal: str = Field(max_length=GOAL_CHARS)
    outcome: str = Field(max_length=GOAL_CHARS)
