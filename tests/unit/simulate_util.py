"""What the simulate tests share: scenarios, a scripted user (the judge's step answered by
rule) and scripted agents written as modules into the test's folder."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from localeval.testing import ScriptedJudge

SCENARIOS = [
    {"id": "s1", "goal": "Book meeting room A1 for 9:00 tomorrow.", "persona": "a busy manager",
     "reference": "Room A1 is booked for 9:00 tomorrow.",
     "reference_tool_calls": [{"name": "book_room", "args": {"room": "A1", "time": "9:00"}}],
     "tool_stubs": {"book_room": [{"args": {"room": "A1", "time": "9:00"},
                                   "result": "booked A1 at 9:00, number 17"},
                                  {"result": "no such room"}]}},
    {"id": "s2", "goal": "Find the weather in Paris for today.",
     "reference": "The user knows it is 18C and sunny in Paris.",
     "reference_tool_calls": [{"name": "weather", "args": {"city": "Paris"}}],
     "tool_stubs": {"weather": "18C, sunny"}},
    {"id": "s3", "goal": "Book meeting room B2 for 14:00 tomorrow.",
     "reference": "Room B2 is booked for 14:00 tomorrow.",
     "reference_tool_calls": [{"name": "book_room", "args": {"room": "B2", "time": "14:00"}}],
     "tool_stubs": {"book_room": {"status": "booked", "number": 18}}},
    {"id": "s4", "goal": "明日10時に会議室Cを予約して予約番号を受け取る", "lang": "ja",
     "first_message": "明日10時に会議室Cを予約してください。",
     "reference": "会議室Cが明日10時に予約された。",
     "reference_tool_calls": [{"name": "book_room", "args": {"room": "C", "time": "10:00"}}],
     "tool_stubs": {"book_room": "予約番号 19"}},
]

#: The agents, as the team would write them: v1 calls the scenario's reference tool with
#: its arguments (from ``row=``), v2 the same tool with a wrong argument.
AGENT = textwrap.dedent('''
    import json, os

    WRONG = {WRONG}

    def reply(messages, row=None):
        stop = os.environ.get("SIMULATE_TEST_STOP_AT")
        if stop and row["id"] == stop:
            raise KeyboardInterrupt
        last = messages[-1]
        if last["role"] == "tool":
            return {{"role": "assistant", "content": "Done: " + last["content"]}}
        if any(m["role"] == "tool" for m in messages):
            return {{"role": "assistant", "content": "It is done already."}}
        call = dict(row["reference_tool_calls"][0])
        args = dict(call["args"])
        if WRONG:
            args = {{k: str(v) + "?" for k, v in args.items()}}
        return {{"role": "assistant", "content": None, "tool_calls": [
            {{"id": "c1", "type": "function",
              "function": {{"name": call["name"], "arguments": json.dumps(args)}}}}]}}
''')


def write_agent(folder: Path, name: str, wrong: bool = False) -> str:
    """The agent module ``name`` in ``folder``; its spec for --agent."""
    path = folder / f"{name}.py"
    path.write_text(AGENT.format(WRONG=wrong), encoding="utf-8")
    return f"{path}:reply"


def write_hook(folder: Path, name: str, body: str) -> str:
    """A module whose ``reply(messages, row=None)`` is ``body``; its spec."""
    path = folder / f"{name}.py"
    path.write_text("import json\n\ndef reply(messages, row=None):\n"
                    + textwrap.indent(textwrap.dedent(body), "    "), encoding="utf-8")
    return f"{path}:reply"


def write_scenarios(folder: Path, rows: list[dict[str, Any]] = SCENARIOS) -> Path:
    path = folder / "scenarios.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def user(request: Any) -> dict[str, Any]:
    """The simulated user by rule: states the goal, then says it is reached once the agent
    reported a result, else repeats what is missing."""
    goal = request.inputs["goal"]
    if request.inputs["opening"]:
        return {"action": "message", "message": f"Please help: {goal}"}
    said = [m for m in request.inputs["conversation"] if m["role"] == "assistant"]
    if said and said[-1]["content"].startswith("Done"):
        return {"action": "goal_reached", "message": ""}
    return {"action": "message", "message": f"I still need this: {goal}"}


class UserJudge(ScriptedJudge):
    """The scripted user, one call at a time."""

    def __init__(self) -> None:
        super().__init__({"simulate_user": user})


class WideUserJudge(UserJudge):
    """The same user, from a judge that says it serves three calls at once."""

    capacity = 3
