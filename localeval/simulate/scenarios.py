"""Scenarios in: a goal, a persona, the references a run scores against, and tool stubs.

A scenarios file is read by ``dataset``'s reader of every table (``read_table``:
JSONL, JSON, CSV, TSV, Parquet), one scenario a row (docs/conversations-and-agents.md,
"Conversations from goals"):

- ``goal`` (required): what the simulated user wants;
- ``persona``: who the user is, in a few words;
- ``reference`` (also ``reference_goal``, ``reference_outcome``): the outcome that
  reaches the goal, which ``agent_goal_accuracy`` compares the end state with;
- ``reference_tool_calls``: the calls the agent should make (``{"name", "args"}`` or
  OpenAI's shape), for ``tool_call_accuracy`` and ``tool_call_f1``;
- ``reference_topics``: for ``topic_adherence``;
- ``first_message``: the user's opening, written as given (else the judge writes it);
- ``lang``: ``en``, ``ja`` or ``zh`` (default: the goal's language);
- ``tool_stubs`` (also ``tools`` when it is a table, ``stubs``): the stub table,
  ``{tool name: result}`` or ``{tool name: [{"args": {...},
  "result": ...}, ...]}`` (an entry without ``args`` answers any call), the results
  a call gets when the agent does not run the tool itself (a ``tools`` list is the
  tool definitions instead, kept with the conversation for the tool-checking metrics);
- ``id`` (else ``s1``, ``s2``... by row); other columns are kept with the conversation.

In a CSV a list or table cell is JSON text. The reference calls are read by the
conversation reader ``localeval run`` uses (``dataset.load_dataset``), so a call
``run`` would refuse is refused here, naming the row.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from localeval.dataset import load_dataset, loads_strict, read_table
from localeval.errors import DataError
from localeval.lang import detect_lang

__all__ = ["Scenario", "read_scenarios", "stub_result", "FIELDS", "LANGS"]

LANGS = ("en", "ja", "zh")
#: Column -> field (the usual names of each).
_ALIASES = {"goal": "goal", "user_goal": "goal", "persona": "persona", "lang": "lang",
            "language": "lang", "first_message": "first_message", "reference": "reference",
            "reference_goal": "reference", "reference_outcome": "reference",
            "reference_tool_calls": "reference_tool_calls",
            "reference_topics": "reference_topics", "tool_stubs": "tools", "tools": "tools",
            "stubs": "tools",
            "id": "id"}
FIELDS = tuple(dict.fromkeys(_ALIASES.values()))


@dataclass(frozen=True)
class Scenario:
    """One scenario, checked: what the simulated user wants and what a run scores against."""

    id: str
    goal: str
    persona: str = ""
    lang: str = "en"
    first_message: str | None = None
    reference: str | None = None
    #: ``[{"name": ..., "args": {...}}]``, as the conversation reader read them
    reference_tool_calls: list[dict[str, Any]] | None = None
    reference_topics: list[str] | None = None
    tools: dict[str, Any] | None = None
    #: the other columns of the row, kept with the conversation
    extra: dict[str, Any] = field(default_factory=dict)
    row: int | None = None

    def to_row(self) -> dict[str, Any]:
        """The scenario as a row of a scenarios file (what ``read_scenarios`` reads back)."""
        row: dict[str, Any] = {"id": self.id, "goal": self.goal, "persona": self.persona,
                               "lang": self.lang}
        for name in ("first_message", "reference", "reference_tool_calls",
                     "reference_topics", "tools"):
            value = getattr(self, name)
            if value is not None:
                row["tool_stubs" if name == "tools" else name] = value
        return {**row, **self.extra}


def read_scenarios(path: str | os.PathLike[str]) -> list[Scenario]:
    """Every scenario of ``path``; the first problem is one ``DataError`` naming the file,
    the line or row and the column."""
    table = read_table(path)
    out: list[Scenario] = []
    seen: dict[str, int] = {}
    for k, (n, rec) in enumerate(table.rows, 1):
        s = _scenario(rec, n, k, table.source, table.unit)
        if s.id in seen:
            raise DataError(f"duplicate id '{s.id}' (first seen at {table.unit} {seen[s.id]})",
                            file=table.source, row=n, column="id", unit=table.unit)
        seen[s.id] = n
        out.append(s)
    if not out:
        raise DataError("no scenarios: the file holds no row", file=table.source)
    return out


def _scenario(rec: Mapping[str, Any], n: int, k: int, source: str, unit: str) -> Scenario:
    def bad(column: str, message: str) -> DataError:
        return DataError(message, file=source, row=n, column=column, unit=unit)

    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for col, v in rec.items():
        name = _ALIASES.get(str(col))
        if v is None or v == "" or (isinstance(v, float) and v != v):
            continue  # an empty cell (a CSV, a DataFrame's NaN)
        if name is None:
            extra[str(col)] = v
        elif name in values:
            raise bad(str(col), f"'{col}' gives the {name} a second time; keep one column")
        else:
            values[name] = (str(col), v)
    if "goal" not in values:
        raise bad("goal", "no goal: each scenario needs the goal the simulated user pursues "
                  "(a column 'goal')")
    text = {f: _text(values, f, bad) for f in ("goal", "persona", "first_message", "reference")}
    if not (text["goal"] or "").strip():
        raise bad(values["goal"][0], "the goal is empty")
    lang = _text(values, "lang", bad) or detect_lang(text["goal"] or "")
    if lang not in LANGS:
        raise bad(values.get("lang", ("lang",))[0],
                  f"unknown language {lang!r}; the simulator writes {', '.join(LANGS)}")
    sid = values["id"][1] if "id" in values else f"s{k}"
    if isinstance(sid, bool) or not isinstance(sid, (str, int)):
        raise bad(values["id"][0], f"id must be a string or an integer, not {type(sid).__name__}")
    calls = _reference_calls(values, bad)
    topics = _json_cell(values, "reference_topics", bad)
    if topics is not None and not (isinstance(topics, list)
                                   and all(isinstance(t, str) for t in topics)):
        raise bad(values["reference_topics"][0], "expected a list of topics (strings)")
    tools = _json_cell(values, "tools", bad)
    if isinstance(tools, list):  # tool definitions (OpenAI's ``tools``): kept for the run
        extra["tools"], tools = tools, None
    if tools is not None:
        _check_stubs(tools, values["tools"][0], bad)
    return Scenario(id=str(sid), goal=(text["goal"] or "").strip(), persona=text["persona"] or "",
                    lang=lang, first_message=text["first_message"],
                    reference=text["reference"], reference_tool_calls=calls,
                    reference_topics=topics, tools=tools, extra=extra, row=n)


def _text(values: dict[str, Any], name: str, bad: Any) -> str | None:
    if name not in values:
        return None
    col, v = values[name]
    if not isinstance(v, str):
        raise bad(col, f"expected text, got {type(v).__name__}")
    return v


def _json_cell(values: dict[str, Any], name: str, bad: Any) -> Any:
    """A list or table: as the JSON gave it, or JSON text in a CSV cell."""
    if name not in values:
        return None
    col, v = values[name]
    if isinstance(v, str):
        try:
            return loads_strict(v)
        except ValueError as e:
            raise bad(col, f"not JSON ({e}): {v[:80]!r}") from None
    return v


def _reference_calls(values: dict[str, Any], bad: Any) -> list[dict[str, Any]] | None:
    """The reference calls, read by the conversation reader ``localeval run`` uses."""
    raw = _json_cell(values, "reference_tool_calls", bad)
    if raw is None:
        return None
    probe = [{"messages": [{"role": "user", "content": "-"}], "reference_tool_calls": raw}]
    try:
        sample = load_dataset(probe).samples[0]
    except DataError as e:
        reason = str(e).split("'reference_tool_calls': ", 1)[-1]
        raise bad(values["reference_tool_calls"][0], reason) from None
    return [{"name": c.name, "args": c.args} for c in sample.reference_tool_calls or []]


def _check_stubs(tools: Any, col: str, bad: Any) -> None:
    if not isinstance(tools, dict):
        raise bad(col, "the stub table must be an object {tool name: result, ...}")
    for name, value in tools.items():
        if _is_table(value):
            for i, entry in enumerate(value, 1):
                args = entry.get("args", entry.get("arguments"))
                if args is not None and not isinstance(args, dict):
                    raise bad(col, f"tools.{name}[{i}].args: expected an object of arguments")


def _is_table(value: Any) -> bool:
    """A list of ``{"args": ..., "result": ...}`` entries (any other value is one result)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(e, dict) and "result" in e for e in value))


def stub_result(tools: Mapping[str, Any] | None, name: str,
                args: Mapping[str, Any]) -> str | None:
    """The stub's result for a call, as a tool message's text; None when the table has
    none (no such tool, or no entry for these arguments)."""
    if not tools or name not in tools:
        return None
    value = tools[name]
    if _is_table(value):
        exact = [e for e in value if e.get("args", e.get("arguments")) == dict(args)]
        fallback = [e for e in value if e.get("args", e.get("arguments")) is None]
        chosen = (exact or fallback or [None])[0]
        if chosen is None:
            return None
        value = chosen["result"]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                            sort_keys=True)
