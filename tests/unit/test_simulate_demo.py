"""End to end with the demo judge (SmolLM2-135M through llama.cpp) as the user and two
versions of a scripted agent: scenarios -> conversations -> ``localeval run`` with the tool
and goal metrics -> ``localeval diff`` of the two versions."""

from __future__ import annotations

import json

from simulate_util import SCENARIOS, write_agent, write_scenarios

from localeval.cli.app import main
from localeval.simulate import STOPS


def _jsonl(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_scenarios_to_conversations_to_run_to_diff_with_the_demo_judge(tmp_path, smollm2,
                                                                       capsys):
    scenarios = write_scenarios(tmp_path, SCENARIOS[:2])
    judge = ["--judge", str(smollm2), "--no-cache", "--threads", "2"]
    for version, wrong in (("v1", False), ("v2", True)):
        agent = write_agent(tmp_path, f"agent_{version}", wrong=wrong)
        code = main(["simulate", str(scenarios), "--agent", agent, "-o",
                     str(tmp_path / version), "--max-turns", "2", "--quiet", *judge])
        assert code == 0, capsys.readouterr().err
        rows = _jsonl(tmp_path / version / "conversations.jsonl")
        assert [r["id"] for r in rows] == ["s1", "s2"]
        for r in rows:
            users = [m["content"] for m in r["messages"] if m["role"] == "user"]
            # the model wrote the opening (the grammar allows only a message there)
            assert users and users[0].strip() and len(users) <= 2
            assert r["simulation"]["stop"] in STOPS
            assert r["reference"] and r["reference_tool_calls"]
        summary = json.loads((tmp_path / version / "simulation.json").read_text(encoding="utf-8"))
        assert summary["usage"]["conversations"]["calls"] >= 2
        assert "simulate_user" in summary["setup"]["prompts"]
        code = main(["run", str(tmp_path / version / "conversations.jsonl"), "-m",
                     "agent_goal_accuracy,tool_call_accuracy,tool_call_f1", "--reasons",
                     "none", "-o",
                     str(tmp_path / f"run_{version}"), "--quiet", *judge])
        assert code == 0, capsys.readouterr().err
    scored = {v: json.loads((tmp_path / f"run_{v}" / "summary.json").read_text(encoding="utf-8"))
              ["metrics"] for v in ("v1", "v2")}
    assert scored["v1"]["tool_call_accuracy"]["mean"] == 1.0
    assert scored["v2"]["tool_call_accuracy"]["mean"] == 0.0
    assert scored["v1"]["agent_goal_accuracy"]["n"] + scored["v1"]["agent_goal_accuracy"].get(
        "unscored", 0) == 2
    code = main(["diff", str(tmp_path / "run_v1"), str(tmp_path / "run_v2"), "-o",
                 str(tmp_path / "diff"), "--quiet", "--no-cache"])
    assert code == 0, capsys.readouterr().err
    diff = json.loads((tmp_path / "diff" / "diff.json").read_text(encoding="utf-8"))
    tools = next(m for m in diff["metrics"] if m["metric"] == "tool_call_accuracy")
    assert tools["counts"]["worse"] == 2 and tools["mean_new"] - tools["mean_base"] == -1.0
    assert any(m["metric"] == "agent_goal_accuracy" for m in diff["metrics"])


def test_a_batched_gguf_judge_gives_the_same_conversations_as_one_at_a_time(tmp_path,
                                                                            tiny_gguf, bias):
    """--parallel with the in-process llama.cpp judge (its turns decoded in one batch): the
    same file, byte for byte; then Ctrl-C through the agent and the same call again."""
    from localeval.judge import LlamaJudge
    from localeval.simulate import simulate

    scenarios = write_scenarios(tmp_path, SCENARIOS[:3])
    agent = write_agent(tmp_path, "agent_v1")
    files = {}
    for n in (1, 3):
        judge = LlamaJudge(tiny_gguf, n_threads=1, n_ctx=2048, logit_bias=bias, parallel=n)
        try:
            res = simulate(scenarios, agent, tmp_path / f"p{n}", judge=judge, max_turns=2,
                           parallel=n, cache=False, progress=False)
        finally:
            judge.close()
        assert len(res.rows) == 3
        files[n] = (tmp_path / f"p{n}" / "conversations.jsonl").read_bytes()
    assert files[1] == files[3]
