"""``conversations.html``: the simulated conversations on one self-contained page, to read
before trusting them.

The counts, how the conversations ended, the simulator health sentences, and every
conversation turn by turn (user, assistant, its tool calls, the tool results), each
with its goal, persona, references and notes, marked where its user looped or never
stated the goal. Built with the page toolkit of every page (``report.page_env``,
``render_page``, ``write_page``: autoescape, the one Content-Security-Policy), every
text cut by the report's ``Clipper``; the first ``MAX_CONVERSATIONS`` are shown,
``MAX_MESSAGES`` messages each. conversations.jsonl holds everything.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

from localeval.report import Clipper, excerpt, page_env, render_page, write_page
from localeval.simulate.dialogue import STOPS
from localeval.simulate.health import loops, parrots_prompt, states_goal

__all__ = ["write_conversations_page", "render_conversations_page", "PAGE_FILE",
           "MAX_CONVERSATIONS", "MAX_MESSAGES"]

PAGE_FILE = "conversations.html"
MAX_CONVERSATIONS = 500
MAX_MESSAGES = 200
_TONE = {"goal_reached": "good", "max_turns": "mid", "give_up": "mid"}
_FILE = "conversations.jsonl"
SUMMARY = "simulation.json"


def _conversation(r: Mapping[str, Any], clip: Clipper) -> dict[str, Any]:
    sim = r.get("simulation") or {}
    msgs = list(r.get("messages") or [])
    users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
    warn = (["user loops"] if loops(users) else []) + (
        [] if states_goal(str(sim.get("goal") or ""), users) else ["goal never stated"]) + (
        ["parrots the prompt"] if any(parrots_prompt(u) for u in users) else [])
    shown = [{"role": m.get("role"), "content": clip.text(m.get("content") or "", _FILE),
              "calls": [clip.text(f"{c.get('name')} {json.dumps(c.get('args'), ensure_ascii=False)}",
                                  _FILE) for c in m.get("tool_calls") or []]}
             for m in msgs[:MAX_MESSAGES]]
    calls = r.get("reference_tool_calls")
    return {"id": str(r.get("id")), "excerpt": excerpt(users[0] if users else "") or "(no turn)",
            "goal": clip.text(str(sim.get("goal") or ""), _FILE),
            "persona": sim.get("persona") or "", "lang": sim.get("lang") or "",
            "stop": sim.get("stop") or "", "tone": _TONE.get(str(sim.get("stop")), "bad"),
            "user_turns": sim.get("user_turns", len(users)), "warn": warn,
            "reference": clip.text(r.get("reference"), _FILE) if r.get("reference") else None,
            "reference_calls": clip.text(json.dumps(calls, ensure_ascii=False), _FILE)
            if calls is not None else None,
            "messages": shown, "more": max(0, len(msgs) - MAX_MESSAGES),
            "notes": [clip.text(str(n), _FILE) for n in sim.get("notes") or []]}


def _view(rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any],
          folder: str | os.PathLike[str]) -> dict[str, Any]:
    clip = Clipper()
    stops = Counter(str((r.get("simulation") or {}).get("stop")) for r in rows)
    order = {s: i for i, s in enumerate(STOPS)}
    sig = summary.get("setup") or {}
    return {
        "n": len(rows), "agent": str(sig.get("agent", "")),
        "counts": [("scenarios", summary.get("scenarios", len(rows))),
                   ("conversations", len(rows)),
                   ("user turns", sum(int((r.get("simulation") or {}).get("user_turns", 0))
                                      for r in rows)),
                   ("not written", summary.get("not_written", 0))],
        "stops": sorted(stops.items(), key=lambda kv: order.get(kv[0], len(order))),
        "health": [str(h) for h in summary.get("simulator_health") or []],
        "notes": [clip.text(str(n), SUMMARY) for n in (summary.get("notes") or [])[:20]],
        "setup": [(str(k), clip.text(json.dumps(v, ensure_ascii=False)
                                          if not isinstance(v, str) else v, SUMMARY))
                      for k, v in sig.items()],
        "conversations": [_conversation(r, clip) for r in rows[:MAX_CONVERSATIONS]],
        "more": max(0, len(rows) - MAX_CONVERSATIONS),
        "command": (f"localeval run {Path(folder) / _FILE} -m "
                    "agent_goal_accuracy,tool_call_accuracy,tool_call_f1 -o RUN_DIR"),
    }


def render_conversations_page(rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any],
                              folder: str | os.PathLike[str] = ".") -> str:
    """The whole page as one string (UTF-8, no external reference)."""
    return render_page(page_env("localeval.simulate"), "conversations.html.j2",
                       css=("conversations.css",), v=_view(rows, summary, folder))


def write_conversations_page(out: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]],
                             summary: Mapping[str, Any]) -> Path:
    """Write ``out/conversations.html`` atomically and return its path."""
    folder = Path(out)
    return write_page(folder / PAGE_FILE, render_conversations_page(rows, summary, folder))
