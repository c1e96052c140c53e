"""Conversations from goals, offline (``localeval simulate``): the local judge plays the
user of a scenario, the team's own agent answers through a hook, and the conversations
are written as the ``MultiTurnSample`` rows ``localeval run`` scores, with the
scenario's references attached (docs/conversations-and-agents.md, "Conversations from
goals").

- ``scenarios``: a scenarios file read (goal, persona, references, first message,
  language, tool stubs); ``authoring``: scenarios written by the judge from tool
  specifications or documents, filtered by ``generate``'s filters;
- ``agent``: the hook (found as ``pipeline`` finds a pipeline), its replies checked by
  the conversation reader, its failures the team's;
- ``dialogue``: one conversation; ``run``: all of them, side by side, resumable
  (``checkpoint``), and the files; ``health``: the simulator's health in plain words;
  ``page``: conversations.html.

It sits beside ``generate`` (layer 6): it uses ``run``'s judge wiring and progress
bar, ``pipeline``'s hook loader and ``generate``'s filters through their faces.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Agent": ".agent",
    "MAX_REPLY_CHARS": ".agent",
    "Authored": ".authoring",
    "scenarios_from_docs": ".authoring",
    "scenarios_from_tools": ".authoring",
    "PARTIAL_FILE": ".checkpoint",
    "Conversation": ".dialogue",
    "MAX_AGENT_STEPS": ".dialogue",
    "STOPS": ".dialogue",
    "converse": ".dialogue",
    "simulator_health": ".health",
    "render_conversations_page": ".page",
    "write_conversations_page": ".page",
    "CONVERSATIONS_FILE": ".run",
    "SimulationResult": ".run",
    "simulate": ".run",
    "Scenario": ".scenarios",
    "read_scenarios": ".scenarios",
    "UserTurn": ".schemas",
    "ScenarioDraft": ".schemas",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
