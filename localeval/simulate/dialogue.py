"""One conversation: the judge plays the user, the team's agent answers, stubs answer
its calls, until the user's signal or ``max_turns``.

A user turn is one judge step (``simulate_user``, ``schemas.UserTurn``) through the
judge door (``metrics.Judging.ask``: rendered in the scenario's language, held by the
grammar, cached, checked against the prompt's example). The first turn is the
scenario's ``first_message`` when it gives one, else the judge's opening
(``schemas.UserOpening``: always a message). After each user message the agent is
called (``agent.Agent``); while its last message leaves tool calls unanswered, the
scenario's stub table answers them (a call it has no entry for gets an error result,
said in the conversation's notes) and the agent is called again, at most
``MAX_AGENT_STEPS`` times a turn: an agent that calls tools forever is stopped there
(``agent_loop``), its conversation kept as it went.

The conversation ends when the user says ``goal_reached`` or ``give_up``, after
``max_turns`` user messages, on an agent loop, or when the judge fails a user turn
(``simulator_failed``: the conversation is kept as far as it went; one that failed
before any user message holds nothing to score and is not written).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from localeval.errors import JudgeCallError
from localeval.metrics import transcript
from localeval.simulate.agent import Agent
from localeval.simulate.scenarios import Scenario, stub_result
from localeval.simulate.schemas import USER_STEP, UserOpening, UserTurn
from localeval.types import Message, MultiTurnSample

__all__ = ["Conversation", "converse", "STOPS", "MAX_AGENT_STEPS", "NO_STUB"]

#: Agent calls within one user turn (its own calls, then one per round of stubbed results).
MAX_AGENT_STEPS = 8
#: Why a conversation ended.
STOPS = ("goal_reached", "give_up", "max_turns", "agent_loop", "simulator_failed")
#: The result of a call the stub table has no entry for.
NO_STUB = "error: no result for this call (the scenario's stub table has no entry for it)"


@dataclass
class Conversation:
    """A finished conversation: its messages, why it ended, and what was said about it."""

    scenario: Scenario
    messages: list[Message]
    stop: str
    user_turns: int
    notes: list[str] = field(default_factory=list)

    def to_row(self) -> dict[str, Any]:
        """The row ``localeval run`` reads (a ``MultiTurnSample``), the scenario's references
        attached and the simulation's record beside them."""
        s = self.scenario
        row: dict[str, Any] = {"id": s.id, "messages": [m.to_dict() for m in self.messages]}
        if s.reference is not None:
            row["reference"] = s.reference
        if s.reference_tool_calls is not None:
            row["reference_tool_calls"] = s.reference_tool_calls
        if s.reference_topics is not None:
            row["reference_topics"] = s.reference_topics
        row["simulation"] = {"goal": s.goal, "persona": s.persona, "lang": s.lang,
                             "stop": self.stop, "user_turns": self.user_turns,
                             "notes": list(self.notes)}
        return {**s.extra, **row}


def converse(scenario: Scenario, agent: Agent, judging: Any, *, max_turns: int) -> Conversation:
    """The conversation of one scenario (see the module docstring)."""
    door = judging.for_sample(lang=scenario.lang)
    messages: list[Message] = []
    notes: list[str] = []
    turns = 0
    while True:
        if turns == 0 and scenario.first_message:
            text = scenario.first_message
        else:
            try:
                said = _user_turn(door, scenario, messages, opening=turns == 0)
            except JudgeCallError as e:
                notes.append(f"the judge failed the user's turn {turns + 1}: {e}")
                return Conversation(scenario, messages, "simulator_failed", turns, notes)
            if said.action != "message" or not said.message.strip():
                stop = said.action if said.action != "message" else "give_up"
                if said.action == "message":
                    notes.append(f"the simulated user wrote an empty message at turn {turns + 1}")
                return Conversation(scenario, messages, stop, turns, notes)
            text = said.message.strip()
        messages.append(Message("user", text))
        turns += 1
        if not _agent_turn(scenario, agent, turns, messages, notes):
            return Conversation(scenario, messages, "agent_loop", turns, notes)
        if turns >= max_turns:
            return Conversation(scenario, messages, "max_turns", turns, notes)


def _user_turn(door: Any, scenario: Scenario, messages: list[Message], *,
               opening: bool) -> UserTurn | UserOpening:
    sample = MultiTurnSample(id=scenario.id, messages=list(messages))
    schema = UserOpening if opening else UserTurn
    reply = door.ask(USER_STEP, schema, sample, goal=scenario.goal, persona=scenario.persona,
                     opening=opening, conversation=transcript(sample))
    return reply.output


def _agent_turn(scenario: Scenario, agent: Agent, turn: int, messages: list[Message],
                notes: list[str]) -> bool:
    """The agent's part of user turn ``turn``, appended to ``messages``; False when it was
    still calling tools after ``MAX_AGENT_STEPS`` calls."""
    for _ in range(MAX_AGENT_STEPS):
        reply = agent.reply(scenario, turn, messages)
        messages.extend(reply.messages)
        notes.extend(reply.notes)
        last = messages[-1]
        if last.role == "assistant" and not last.tool_calls:
            return True
        if last.role == "assistant":
            for call in last.tool_calls or ():
                result = stub_result(scenario.tools, call.name, call.args)
                if result is None:
                    notes.append(f"turn {turn}: no stub result for the call {call.name} "
                                 f"{_args(call.args)}")
                messages.append(Message("tool", NO_STUB if result is None else result,
                                        tool_call_id=call.id))
        # a tool message last: the agent's results are in; it is asked to go on
    notes.append(f"turn {turn}: the agent was still calling tools after {MAX_AGENT_STEPS} calls; "
                 "the conversation was stopped there")
    return False


def _args(args: dict[str, Any]) -> str:
    import json

    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
