"""A hostile agent is the team's failure, never localeval's: an exception or a malformed
message names the scenario and the turn (exit 2) and keeps the conversations finished
before it; an agent that calls tools forever is stopped; a huge reply is cut and said;
control characters are escaped on the terminal and kept in the data."""

from __future__ import annotations

import json
import textwrap

import pytest
from simulate_util import UserJudge, write_hook, write_scenarios

from localeval.cli.app import main
from localeval.simulate import MAX_AGENT_STEPS, MAX_REPLY_CHARS, PARTIAL_FILE

GOOD = '''
if messages[-1]["role"] == "tool":
    return {"role": "assistant", "content": "Done: " + messages[-1]["content"]}
call = row["reference_tool_calls"][0]
return {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function",
     "function": {"name": call["name"], "arguments": json.dumps(call["args"])}}]}
'''


@pytest.fixture
def judged(monkeypatch):
    judge = UserJudge()
    monkeypatch.setattr("localeval.run.build_judge", lambda *a, **k: judge)
    return judge


def _simulate(tmp_path, agent, *extra):
    return main(["simulate", str(write_scenarios(tmp_path)), "--agent", agent, "-o",
                 str(tmp_path / "out"), "--quiet", "--no-cache", *extra])


def _partial_ids(tmp_path):
    lines = (tmp_path / "out" / PARTIAL_FILE).read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(x)["id"] for x in lines]


def test_an_exception_names_the_scenario_and_turn_and_keeps_the_ones_before(tmp_path,
                                                                           judged, capsys):
    agent = write_hook(tmp_path, "raising", textwrap.dedent('''
        turns = sum(m["role"] == "user" for m in messages)
        if row["id"] == "s2" and turns == 2:
            raise RuntimeError("index \\x1b[31mgone\\x1b[0m")
        if row["id"] == "s2":
            return {"role": "assistant", "content": "Which city?"}
    ''') + GOOD)
    assert _simulate(tmp_path, agent) == 2
    err = capsys.readouterr().err
    assert "scenario s2, turn 2: the agent" in err
    assert "raised RuntimeError: index \\x1b[31mgone" in err  # escaped, never raw
    assert "\x1b" not in err and "Traceback" not in err
    assert "the 1 conversations finished before it are kept" in err
    assert _partial_ids(tmp_path) == ["s1"]
    assert not (tmp_path / "out" / "conversations.jsonl").exists()


@pytest.mark.parametrize("body, says", [
    ("return 42", "returned an int, not an assistant message"),
    ("return None", "returned None"),
    ('return {"role": "assistant", "content": None}', "malformed message: message 2"),
    ('return {"role": "user", "content": "hi"}', "returned a user message"),
    ('return {"role": "assistant", "content": "x", "tool_calls": [{"function": 3}]}',
     "malformed message"),
    ("import sys\nsys.exit(0)", "ended the process (sys.exit(0))"),
])
def test_a_malformed_reply_is_exit_2_naming_scenario_and_turn(tmp_path, judged, capsys, body,
                                                              says):
    agent = write_hook(tmp_path, "bad", body)
    assert _simulate(tmp_path, agent) == 2
    err = capsys.readouterr().err
    assert "scenario s1, turn 1: the agent" in err and says in err, err
    assert "Traceback" not in err


def test_an_agent_calling_tools_forever_is_stopped_and_said(tmp_path, judged, capsys):
    agent = write_hook(tmp_path, "looping", '''
        return {"role": "assistant", "content": "", "tool_calls": [
            {"name": "weather", "args": {"city": "Paris"}}]}
    ''')
    assert _simulate(tmp_path, agent) == 0
    rows = [json.loads(x) for x in (tmp_path / "out" / "conversations.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert {r["simulation"]["stop"] for r in rows} == {"agent_loop"}
    calls = [m for m in rows[1]["messages"] if m["role"] == "assistant"]
    assert len(calls) == MAX_AGENT_STEPS
    err = capsys.readouterr().err
    assert f"still calling tools after {MAX_AGENT_STEPS} calls" in err
    # calls without a stub get an error result, said once per call
    assert rows[0]["messages"][2]["content"].startswith("error: no result for this call")


def test_a_huge_reply_is_cut_and_control_characters_kept_as_data(tmp_path, judged, capsys):
    agent = write_hook(tmp_path, "huge", '''
        if messages[-1]["role"] == "user":
            return {"role": "assistant", "content": "Done: \\x1b[2J\\u202e" + "x" * 1_000_000}
    ''')
    assert _simulate(tmp_path, agent) == 0
    out = capsys.readouterr()
    assert f"kept the first {MAX_REPLY_CHARS:,}" in out.err
    assert "\x1b" not in out.out + out.err and "\u202e" not in out.out + out.err
    raw = (tmp_path / "out" / "conversations.jsonl").read_text(encoding="utf-8")
    row = json.loads(raw.splitlines()[0])
    reply = row["messages"][1]["content"]
    assert len(reply) == MAX_REPLY_CHARS and reply.startswith("Done: \x1b[2J\u202e")
    assert "\\u001b" in raw  # JSON escapes it: the file stays one line a conversation
    page = (tmp_path / "out" / "conversations.html").read_text(encoding="utf-8")
    assert len(page) < 2_000_000


def test_an_agent_that_runs_its_own_tools_returns_their_messages(tmp_path, judged):
    agent = write_hook(tmp_path, "own", '''
        if messages[-1]["role"] != "user":
            return {"content": "unreachable"}
        return [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": "t1", "type": "function",
                     "function": {"name": "lookup", "arguments": "{\\"q\\": 1}"}}]},
                {"role": "tool", "tool_call_id": "t1", "content": "own result"},
                {"role": "assistant", "content": "Done: own result"}]
    ''')
    assert _simulate(tmp_path, agent) == 0
    row = json.loads((tmp_path / "out" / "conversations.jsonl").read_text(encoding="utf-8")
                     .splitlines()[0])
    assert [m["role"] for m in row["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert row["messages"][2]["content"] == "own result"
    assert row["simulation"]["stop"] == "goal_reached"


@pytest.mark.parametrize("spec, said", [
    ("nosuch.py:reply", "--agent 'nosuch.py:reply': no file nosuch.py"),
    ("agent.py", "e.g. my_agent:reply"),
    ("agent.py:reply", "cannot be called as function(messages)"),
])
def test_an_agent_that_cannot_be_loaded_is_named_as_the_agent(tmp_path, judged, capsys,
                                                               monkeypatch, spec, said):
    """The pipeline loader's refusals, said of --agent: no "pipeline", no "question"."""
    (tmp_path / "agent.py").write_text("def reply():\n    return None\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _simulate(tmp_path, spec) == 2
    err = capsys.readouterr().err
    assert said in err and "pipeline" not in err and "question" not in err, err
    assert err.count("localeval: error:") == 1
