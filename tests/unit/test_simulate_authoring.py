"""Scenarios written by the judge (``--from-tools``, ``--from-docs``), filtered as generated
questions are: a copy of the prompt's example, a goal in another language, a repeated goal
and an outcome that repeats its goal are dropped with their reason; the kept ones are
simulated. The page opens in headless Chromium without a console error."""

from __future__ import annotations

import json

from simulate_util import user, write_hook

from localeval.cli.app import main
from localeval.simulate import scenarios_from_tools
from localeval.testing import ScriptedJudge

TOOLS = [
    {"type": "function", "function": {"name": "book_room", "description": "Book a meeting room.",
                                      "parameters": {"type": "object", "properties": {
                                          "room": {"type": "string"},
                                          "time": {"type": "string"}}}}},
    {"name": "weather", "description": "Today's weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "convert_currency", "description": "Convert an amount between two currencies."},
    {"name": "send_invoice", "description": "Email an invoice to a customer."},
    {"name": "track_parcel", "description": "Where a parcel is, by its tracking number."},
]

#: What the scripted judge writes per tool: a good goal, a copy of the prompt's example,
#: a goal in Japanese (English asked for), the same goal again, an outcome that is the goal.
DRAFTS = {
    "book_room": ("Book room A1 for 9:00 tomorrow and tell me the booking number.",
                  "Room A1 is booked for 9:00 tomorrow and the user has the number."),
    "weather": ("Book meeting room B for tomorrow at 10:00 and get the booking number.",
                "Meeting room B is booked for tomorrow at 10:00 and the user has the booking "
                "number."),
    "convert_currency": ("100ドルを円に換算して金額を知りたい", "100ドルが何円になるか分かった。"),
    "send_invoice": ("Book room A1 for 9:00 tomorrow and tell me the booking number.",
                     "The invoice is sent."),
    "track_parcel": ("Find where parcel 123 is now.", "Find where parcel 123 is now."),
}


def _draft(request):
    name = request.sample.contexts[0].split(":", 1)[0]
    goal, outcome = DRAFTS[name]
    return {"goal": goal, "outcome": outcome}


def _judge():
    return ScriptedJudge({"simulate_goal_tool": _draft, "simulate_user": user})


def test_goals_from_tools_are_filtered_like_generated_questions(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    from localeval.metrics import Judging

    got = scenarios_from_tools(path, Judging(_judge()), lang="en")
    assert [s.id for s in got.kept] == ["tool-1"]
    assert got.kept[0].reference.startswith("Room A1 is booked")
    assert got.kept[0].extra["source"]["id"] == "book_room"
    reasons = {d["source"]: d["dropped"] for d in got.dropped}
    assert reasons == {"weather": "copies_example", "convert_currency": "wrong_language",
                       "send_invoice": "near_duplicate", "track_parcel": "reference_is_question"}


def test_the_command_writes_scenarios_then_conversations(tmp_path, monkeypatch, capsys, browser):
    path = tmp_path / "tools.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TOOLS[:2]), encoding="utf-8")
    monkeypatch.setattr("localeval.run.build_judge", lambda *a, **k: _judge())
    agent = write_hook(tmp_path, "agent", 'return {"content": "Done: booked, number 17"}')
    code = main(["simulate", "--from-tools", str(path), "--agent", agent, "-o",
                 str(tmp_path / "out"), "--quiet", "--no-cache", "--persona", "a busy manager"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "the filters kept 1" in err
    scenarios = (tmp_path / "out" / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(scenarios) == 1 and json.loads(scenarios[0])["persona"] == "a busy manager"
    dropped = (tmp_path / "out" / "scenarios_dropped.jsonl").read_text(encoding="utf-8")
    assert "copies_example" in dropped
    rows = [json.loads(x) for x in (tmp_path / "out" / "conversations.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert rows[0]["id"] == "tool-1" and rows[0]["reference"].startswith("Room A1")
    assert rows[0]["simulation"]["stop"] == "goal_reached"
    from localeval.testing import headless_dom

    dom, console = headless_dom((tmp_path / "out" / "conversations.html").as_uri(),
                                tmp_path / "profile")
    assert "Done: booked, number 17" in dom and "tool-1" in dom
    assert not [line for line in console if "Content Security Policy" in line or
                "Uncaught" in line]


def test_goals_from_documents_one_per_section(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.txt").write_text("Employees receive twenty days of paid annual leave each "
                                    "year. Leave requests go to the team lead three days ahead.",
                                    encoding="utf-8")

    def doc_goal(request):
        return {"goal": "I want a day off next Friday: whom do I ask, and by when?",
                "outcome": "The user asks the team lead three days ahead."}

    judge = ScriptedJudge({"simulate_goal_doc": doc_goal, "simulate_user": user})
    monkeypatch.setattr("localeval.run.build_judge", lambda *a, **k: judge)
    agent = write_hook(tmp_path, "agent", 'return {"content": "Done: ask your team lead."}')
    code = main(["simulate", "--from-docs", str(docs), "--agent", agent, "-o",
                 str(tmp_path / "out"), "--quiet", "--no-cache"])
    assert code == 0, capsys.readouterr().err
    rows = [json.loads(x) for x in (tmp_path / "out" / "conversations.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["doc-1"]
    assert rows[0]["source"]["kind"] == "doc" and "twenty days" in rows[0]["source"]["text"]
