"""``localeval simulate``'s mechanics with a scripted user and scripted agents: scenarios to
conversations in the shape ``localeval run`` reads, the stubs, the references attached,
tool metrics scored at once; the same file at any ``--parallel``; Ctrl-C (through the agent)
then the same command: the same file, byte for byte."""

from __future__ import annotations

import json

import pytest
from simulate_util import UserJudge, WideUserJudge, write_agent, write_scenarios

from localeval.cli.app import main
from localeval.dataset import load_dataset
from localeval.simulate import PARTIAL_FILE, simulate


def _run(tmp_path, out, judge=None, **kw):
    return simulate(write_scenarios(tmp_path), write_agent(tmp_path, "agent_v1"),
                    tmp_path / out, judge=judge or UserJudge(), cache=False, progress=False,
                    **kw)


def test_scenarios_become_conversations_run_reads_with_their_references(tmp_path):
    res = _run(tmp_path, "out", max_turns=4)
    rows = [json.loads(x) for x in (tmp_path / "out" / "conversations.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["s1", "s2", "s3", "s4"]
    s1 = rows[0]
    roles = [m["role"] for m in s1["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert s1["messages"][0]["content"] == "Please help: Book meeting room A1 for 9:00 tomorrow."
    assert s1["messages"][1]["tool_calls"] == [{"name": "book_room",
                                                "args": {"room": "A1", "time": "9:00"},
                                                "id": "c1"}]
    # the stub table's entry for these arguments, not its fallback
    assert s1["messages"][2] == {"role": "tool", "content": "booked A1 at 9:00, number 17",
                                 "tool_call_id": "c1"}
    assert s1["reference"] == "Room A1 is booked for 9:00 tomorrow."
    assert s1["reference_tool_calls"] == [{"name": "book_room",
                                           "args": {"room": "A1", "time": "9:00"}}]
    assert s1["simulation"]["stop"] == "goal_reached" and s1["simulation"]["user_turns"] == 1
    # a JSON result is written as JSON text; the given first message is used as is
    assert rows[2]["messages"][2]["content"] == '{"number": 18, "status": "booked"}'
    assert rows[3]["messages"][0]["content"] == "明日10時に会議室Cを予約してください。"
    assert rows[3]["simulation"]["lang"] == "ja"
    assert res.stops == {"goal_reached": 4} and not res.health
    data = load_dataset(tmp_path / "out" / "conversations.jsonl")
    assert len(data.samples) == 4 and data.samples[0].reference_tool_calls[0].name == "book_room"
    assert not (tmp_path / "out" / PARTIAL_FILE).exists()
    page = (tmp_path / "out" / "conversations.html").read_text(encoding="utf-8")
    assert "booked A1 at 9:00, number 17" in page and "Content-Security-Policy" in page


def test_tool_metrics_score_the_conversations_at_once(tmp_path, capsys):
    _run(tmp_path, "out")
    code = main(["run", str(tmp_path / "out" / "conversations.jsonl"), "-m",
                 "tool_call_accuracy,tool_call_f1", "-o", str(tmp_path / "run"), "--quiet",
                 "--no-cache"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["tool_call_accuracy"]["mean"] == 1.0
    assert summary["metrics"]["tool_call_f1"]["mean"] == 1.0


def test_a_user_who_never_reaches_the_goal_stops_at_max_turns(tmp_path):
    def stubborn(request):
        return {"action": "message", "message": "I need room A1 at 9:00, really."}

    from localeval.testing import ScriptedJudge

    res = _run(tmp_path, "out", judge=ScriptedJudge({"simulate_user": stubborn}), max_turns=3)
    row = res.rows[0]
    assert row["simulation"]["stop"] == "max_turns"
    assert [m["role"] for m in row["messages"]].count("user") == 3
    # the same message three times: a looping user, said in plain words
    assert any("repeated an earlier message" in h for h in res.health)
    assert res.summary["simulator_figures"]["looping_users"] == ["s1", "s2", "s3", "s4"]


def test_the_same_conversations_at_any_parallel(tmp_path):
    _run(tmp_path, "one")
    _run(tmp_path, "three", judge=WideUserJudge(), parallel=3)
    one = (tmp_path / "one" / "conversations.jsonl").read_bytes()
    assert one == (tmp_path / "three" / "conversations.jsonl").read_bytes()


def test_interrupted_through_the_agent_then_resumed_is_byte_identical(tmp_path, monkeypatch,
                                                                      capsys):
    scenarios = write_scenarios(tmp_path)
    agent = write_agent(tmp_path, "agent_v1")
    def argv(out):
        return ["simulate", str(scenarios), "--agent", agent, "-o", str(tmp_path / out),
                "--quiet", "--no-cache"]

    monkeypatch.setattr("localeval.run.build_judge", lambda *a, **k: UserJudge())
    assert main(argv("whole")) == 0
    monkeypatch.setenv("SIMULATE_TEST_STOP_AT", "s3")  # Ctrl-C after two scenarios
    assert main(argv("out")) == 130
    err = capsys.readouterr().err
    assert "conversations.partial.jsonl" in err and "Run the same command again" in err
    partial = (tmp_path / "out" / PARTIAL_FILE).read_text(encoding="utf-8").splitlines()
    assert "checkpoint" in json.loads(partial[0])
    assert [json.loads(x)["id"] for x in partial[1:]] == ["s1", "s2"]
    assert not (tmp_path / "out" / "conversations.jsonl").exists()
    monkeypatch.delenv("SIMULATE_TEST_STOP_AT")
    judge = UserJudge()
    monkeypatch.setattr("localeval.run.build_judge", lambda *a, **k: judge)
    assert main(argv("out")) == 0
    assert "resuming: 2 conversations" in capsys.readouterr().err
    assert {r.sample.id for r in judge.requests} == {"s3", "s4"}  # s1, s2 not asked again
    assert ((tmp_path / "out" / "conversations.jsonl").read_bytes()
            == (tmp_path / "whole" / "conversations.jsonl").read_bytes())
    assert not (tmp_path / "out" / PARTIAL_FILE).exists()


@pytest.mark.parametrize("row, column, says", [
    ({"persona": "x"}, "goal", "no goal"),
    ({"goal": "g", "lang": "fr"}, "lang", "unknown language 'fr'"),
    ({"goal": "g", "reference_tool_calls": [{"args": {}}]}, "reference_tool_calls",
     "name is missing"),
    ({"goal": "g", "tool_stubs": 5}, "tool_stubs", "stub table must be an object"),
    ({"goal": "g", "tool_stubs": "{x"}, "tool_stubs", "not JSON"),
])
def test_a_bad_scenario_is_one_message_naming_row_and_column(tmp_path, capsys, row, column,
                                                             says):
    path = write_scenarios(tmp_path, [{"goal": "fine"}, row])
    code = main(["simulate", str(path), "--agent", write_agent(tmp_path, "a"), "-o",
                 str(tmp_path / "out"), "--judge", "demo", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "line 2" in err and f"'{column}'" in err and says in err and "Traceback" not in err


def test_a_user_who_echoes_the_prompt_and_gives_up_at_once_is_said(tmp_path):
    from localeval.testing import ScriptedJudge

    def echo(request):
        if request.inputs["opening"]:
            return {"action": "message", "message": "You play the Human, a user who talks to an "
                                                    "AI assistant."}
        return {"action": "give_up", "message": ""}

    res = _run(tmp_path, "out", judge=ScriptedJudge({"simulate_user": echo}))
    figures = res.summary["simulator_figures"]
    assert figures["parroted_prompt"] == ["s1", "s2", "s3"]  # s4 opens with its first message
    assert figures["gave_up_at_once"] == ["s1", "s2", "s3", "s4"]
    assert figures["goal_never_stated"] == ["s1", "s2", "s3"]
    said = " ".join(res.health)
    assert "repeated the simulator's own instructions in 75%" in said
    assert "gave up right after the agent's first reply in 100%" in said
    assert "never stated the goal in 75%" in said
    page = (tmp_path / "out" / "conversations.html").read_text(encoding="utf-8")
    assert "parrots the prompt" in page and "goal never stated" in page


def test_interrupted_with_conversations_side_by_side_then_resumed(tmp_path, monkeypatch):
    _run(tmp_path, "whole")
    monkeypatch.setenv("SIMULATE_TEST_STOP_AT", "s3")
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, "out", judge=WideUserJudge(), parallel=2)
    lines = (tmp_path / "out" / PARTIAL_FILE).read_text(encoding="utf-8").splitlines()[1:]
    kept = {json.loads(x)["id"] for x in lines}
    assert {"s1", "s2"} <= kept and "s3" not in kept
    monkeypatch.delenv("SIMULATE_TEST_STOP_AT")
    res = _run(tmp_path, "out", judge=WideUserJudge(), parallel=2)
    assert res.resumed == len(kept)
    assert ((tmp_path / "out" / "conversations.jsonl").read_bytes()
            == (tmp_path / "whole" / "conversations.jsonl").read_bytes())
