"""A conversation's tool definitions and checked references: read, checked, kept as JSON.

Three optional fields of a conversation record (docs/conversations-and-agents.md,
"Checked as function-calling benchmarks check"):

- ``tools``: the tool definitions offered (OpenAI's ``tools`` list or BFCL's function
  docs); a file ``<data>.tools.json`` beside the data gives them to every record that has
  none of its own;
- ``possible_answers``: the expected calls with their accepted values (BFCL's
  ``{"func": {"arg": [v1, v2, ""]}}`` or plain calls), either one list for the whole
  conversation or one list per user message (multi-turn: checked turn by turn);
- ``reference_trajectory``: the expected steps, a list per assistant step of its calls.

Each is checked with ``localeval.toolcheck``'s readers when the row is read, so a bad
value stops the load with one message naming the row and column, and kept as the JSON it
was (the dataset's hash, the results and the report carry it as written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localeval.dataset.formats import loads_strict
from localeval.errors import DataError, InvalidArgument
from localeval.toolcheck import read_functions, read_possible_answers
from localeval.types import Message

__all__ = ["TOOL_FIELDS", "read_tool_field", "tools_beside", "TOOLS_SUFFIX"]

#: The conversation fields read here.
TOOL_FIELDS = ("tools", "possible_answers", "reference_trajectory")
#: The name of the file beside the data that gives every conversation its tools.
TOOLS_SUFFIX = ".tools.json"


def _per_turn(v: list[Any]) -> bool | None:
    """True: one list per user turn; False: one flat list; None: mixed."""
    lists = [isinstance(x, list) for x in v]
    return True if v and all(lists) else False if not any(lists) else None


def read_tool_field(name: str, value: Any, messages: list[Message]) -> list[Any]:
    """``value`` of field ``name`` checked; ``ValueError(message)`` when it is wrong."""
    try:
        if name == "tools":
            read_functions(value)
            if not isinstance(value, list):
                raise InvalidArgument("expected a list of tool definitions")
            return value
        if not isinstance(value, list):
            raise InvalidArgument(f"expected a list, got {type(value).__name__}")
        if name == "reference_trajectory":
            for t, step in enumerate(value, 1):
                if not isinstance(step, list):
                    raise InvalidArgument(f"step {t}: expected a list of calls (one list per "
                                          "assistant step)")
                _answers(step, f"step {t}")
            return value
        shape = _per_turn(value)
        if shape is None:
            raise InvalidArgument("mixes lists and calls: give one list of expected calls, "
                                  "or one list per user message")
        if shape:
            users = sum(1 for m in messages if m.role == "user")
            if len(value) != users:
                raise InvalidArgument(f"gives {len(value)} turn(s) of expected calls, but the "
                                      f"conversation has {users} user message(s): one list "
                                      "per user message")
            for t, turn in enumerate(value, 1):
                _answers(turn, f"turn {t}")
        else:
            _answers(value, "")
        return value
    except InvalidArgument as e:
        raise ValueError(str(e)) from None


def _answers(v: list[Any], where: str) -> None:
    try:
        read_possible_answers(v)
    except InvalidArgument as e:
        raise InvalidArgument(f"{where}, {e}" if where else str(e)) from None


def tools_beside(source: str) -> tuple[str, list[Any]] | None:
    """(path, tools) of the ``<data>.tools.json`` beside a data file, None when there is none."""
    path = Path(source)
    if not path.suffix or not path.is_file():
        return None
    beside = path.with_name(path.name[: -len(path.suffix)] + TOOLS_SUFFIX)
    if not beside.is_file():
        return None
    try:
        value = loads_strict(beside.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:  # UnicodeDecodeError and every JSON refusal too
        raise DataError(f"cannot read the tool definitions: {e}", file=str(beside)) from None
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]  # a request body's {"tools": [...]}
    try:
        read_functions(value)
    except InvalidArgument as e:
        raise DataError(str(e), file=str(beside)) from None
    if not isinstance(value, list):
        value = [value]
    return str(beside), value
