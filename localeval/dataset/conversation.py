"""Conversations in: records of messages and tool calls into ``MultiTurnSample`` rows.

Two shapes are read, message by message, so a file may mix them:

- ragas's ``MultiTurnSample`` JSON (``EvaluationDataset.to_jsonl``): ``user_input``
  is a list of messages ``{"type": "human" | "ai" | "tool", "content": ...}``, an
  ``ai`` message's ``tool_calls`` are ``[{"name": ..., "args": {...}}]``;
- OpenAI chat messages: ``messages`` is a list of ``{"role": "user" | "assistant" |
  "tool" | "system", "content": ...}``, an assistant's ``tool_calls`` are
  ``[{"id": ..., "type": "function", "function": {"name": ..., "arguments": "<JSON
  text>"}}]`` and a tool message's ``tool_call_id`` names the call it answers.

``reference``, ``reference_tool_calls`` (either call shape), ``reference_topics`` and
the tool-checking fields (``tools``, ``possible_answers``, ``reference_trajectory``, read
by ``tool_fields``; the tools may also come from ``<data>.tools.json`` beside the file)
are read beside them; other columns become metadata, as for single-turn rows. A
record is a conversation when its ``messages`` or ``user_input`` is a list
(``is_conversation``); ``loading`` reads a source as conversations when its first
record is one, and then every record must be.

Each problem is one ``DataError`` naming the source, the line or row, the column,
the turn (1-based) and the field inside it: an unknown role, a tool message that
follows no tool call (ragas's rule: after an assistant message with calls, or after
another tool message), a ``tool_call_id`` that names none of those calls, arguments
that are not a JSON object, an empty conversation. Messages are read in one pass
without recursion, so a conversation thousands of turns long costs only its size.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping

from localeval.dataset.formats import kind_of, loads_strict
from localeval.dataset.samples import (
    ALIASES,
    MAX_NESTING,
    Dataset,
    not_a_record,
    read_as,
    too_deep,
    unnumpy,
    unused_columns,
)
from localeval.dataset.tool_fields import TOOL_FIELDS, read_tool_field, tools_beside
from localeval.errors import DataError, printable
from localeval.types import MULTI_TURN_FIELDS, SAMPLE_FIELDS, Message, MultiTurnSample, ToolCall

__all__ = ["is_conversation", "conversations_from_rows", "CONVERSATION_FIELDS", "ROLE_NAMES"]

#: Fields a conversation record may give (the rest is metadata).
CONVERSATION_FIELDS = ("id", "reference", *MULTI_TURN_FIELDS)
#: Role names as the data writes them -> the sample's role (ragas's types, OpenAI's roles;
#: OpenAI's ``developer`` is its newer name for the system prompt).
ROLE_NAMES = {"human": "user", "ai": "assistant", "tool": "tool", "user": "user",
              "assistant": "assistant", "system": "system", "developer": "system"}
#: Column names -> conversation field (ragas's and the usual aliases).
_ALIASES = {"user_input": "messages", "ground_truth": "reference", "sample_id": "id",
            "qid": "id"}


def _bad(column: str, message: str) -> ValueError:
    """A problem inside one record: ``ValueError(column, message)``, the message naming the
    turn and the field; ``conversations_from_rows`` makes it the record's DataError."""
    return ValueError(column, message)


def is_conversation(rec: Mapping[str, Any], cmap: Mapping[str, str] | None = None) -> bool:
    """True when the record holds a conversation: ``messages``, ``user_input`` (or the
    column ``cmap`` maps to ``messages``) is a list."""
    cols = [c for c, f in (cmap or {}).items() if f == "messages"] or ["messages", "user_input"]
    return any(isinstance(unnumpy(rec.get(c)), list) for c in cols)


def conversations_from_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], source: str,
                            cmap: Mapping[str, str], row_word: str = "line") -> Dataset:
    """Numbered records into a ``Dataset`` of ``MultiTurnSample``; the first problem is one
    ``DataError`` naming the record, the column, the turn and the field."""
    samples: list[Any] = []
    seen: dict[str, int] = {}
    present: set[str] = set()
    names: dict[str, str] = {}
    columns: set[str] = set()
    for col, f in cmap.items():
        if f not in CONVERSATION_FIELDS:
            raise DataError(f"--columns {f}={col}: a conversation has no '{f}' (its fields: "
                            f"{', '.join(CONVERSATION_FIELDS)})", file=source)
    for k, (n, rec) in enumerate(rows, 1):
        if not isinstance(rec, Mapping):
            raise not_a_record(rec, source, n, row_word)
        columns.update(str(c) for c in rec)
        try:
            s = _sample(n, rec, cmap, k, names)
        except ValueError as e:
            if len(e.args) != 2:
                raise
            col = e.args[0]
            how = read_as(col, cmap[col], cmap) if col in cmap else ""
            raise DataError(e.args[1] + how, file=source, row=n, column=printable(col),
                            unit=row_word) from None
        if s.id in seen:  # named by this row's id column (``qid`` here, ``id`` there)
            col = next((str(c) for c, v in rec.items() if v is not None
                        and _field(str(c), cmap, rec) == "id"), "id")
            raise DataError(f"duplicate id '{printable(s.id)}' (first seen at {row_word} "
                            f"{seen[s.id]})", file=source, row=n, column=printable(col),
                            unit=row_word)
        seen[s.id] = n
        present.update(f for f in (*SAMPLE_FIELDS, *MULTI_TURN_FIELDS) if s.has(f))
        samples.append(s)
    if not samples:
        raise DataError("no samples: the data is empty", file=source)
    beside = tools_beside(source) if any(s.tools is None for s in samples) else None
    if beside is not None:  # <data>.tools.json: the tools of every row without its own
        for s in samples:
            if s.tools is None:
                s.tools = beside[1]
        present.add("tools")
    unused_columns(cmap, columns, source)
    return Dataset(samples, source, present, names, row_word)


def _field(col: str, cmap: Mapping[str, str], rec: Mapping[str, Any]) -> str | None:
    """The conversation field column ``col`` gives, or None (metadata)."""
    if col in cmap:
        return cmap[col]
    canon = col if col in CONVERSATION_FIELDS else _ALIASES.get(col)
    if canon is None or canon in cmap.values():
        return None
    if col == "user_input" and "messages" in rec:
        return None  # both given: ``messages`` is read, user_input is refused below
    return canon


def _sample(n: int, rec: Mapping[str, Any], cmap: Mapping[str, str], ordinal: int,
            names: dict[str, str]) -> MultiTurnSample:
    if not is_conversation(rec, cmap):
        col = next((str(c) for c in rec if _field(str(c), cmap, rec) == "messages"), "messages")
        v = unnumpy(rec.get(col))
        what = "missing" if v is None else f"{kind_of(v)}, not a list of messages"
        raise _bad(col, f"this row is not a conversation (its messages are {what}), but the "
                   "data's first row is: every row must hold a list of messages")
    values: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for col, v in rec.items():
        col = str(col)
        v = unnumpy(v)
        if isinstance(v, float) and math.isnan(v):
            v = None  # a DataFrame's empty cell
        f = _field(col, cmap, rec)
        if f is None:
            if col == "user_input" and "messages" in rec and v is not None:
                raise _bad(col, "both 'messages' and 'user_input' given for the conversation; "
                           "keep one")
            if col in SAMPLE_FIELDS or ALIASES.get(col) in ("question", "answer", "contexts"):
                if v is not None:
                    raise _bad(col, f"a conversation row has no '{col}': the messages hold the "
                               "question and the answers (docs/conversations-and-agents.md)")
                continue
            meta[col] = v
            if too_deep(v):
                raise _bad(col, f"nested more than {MAX_NESTING} levels deep")
            continue
        names.setdefault(f, col)
        values[f] = (col, v)
    col, raw = values["messages"]
    sample = MultiTurnSample(id=str(ordinal), metadata=meta, row=n,
                             messages=_messages(raw, col))
    if "id" in values:
        col, v = values["id"]
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                raise _bad(col, f"id must be a string or integer, got {kind_of(v)}")
            sample.id = str(v)
    if "reference" in values and values["reference"][1] is not None:
        col, v = values["reference"]
        if not isinstance(v, str):
            raise _bad(col, f"expected text, got {kind_of(v)}")
        sample.reference = v
    if "reference_tool_calls" in values and values["reference_tool_calls"][1] is not None:
        col, v = values["reference_tool_calls"]
        sample.reference_tool_calls = _calls(v, col, "")
    if "reference_topics" in values and values["reference_topics"][1] is not None:
        col, v = values["reference_topics"]
        if not isinstance(v, list) or not all(isinstance(t, str) for t in v):
            raise _bad(col, "expected a list of topics (strings), e.g. [\"billing\", \"refunds\"]")
        sample.reference_topics = list(v)
    for f in TOOL_FIELDS:  # tools, possible_answers, reference_trajectory
        if f in values and values[f][1] is not None:
            col, v = values[f]
            try:
                setattr(sample, f, read_tool_field(f, v, sample.messages))
            except ValueError as e:
                raise _bad(col, f"field {f}: {e}") from None
    return sample


def _messages(raw: list[Any], col: str) -> list[Message]:
    """The messages of one conversation, checked turn by turn."""
    if not raw:
        raise _bad(col, "empty conversation: the list of messages holds no message")
    out: list[Message] = []
    calls_before: list[ToolCall] | None = None  # the calls the next tool message may answer
    calls_turn = 0
    for t, m in enumerate(raw, 1):
        m = unnumpy(m)
        if not isinstance(m, dict):
            raise _bad(col, f"turn {t}: expected a message object, got {kind_of(m)}")
        role = _role(m, t, col)
        where = f"turn {t} ({role})"
        content = _content(m.get("content"), role, where, col, bool(m.get("tool_calls")))
        if role == "tool":
            if calls_before is None:
                prev = out[-1].role if out else None
                raise _bad(col, f"{where}: a tool message without a preceding tool call ("
                           + (f"turn {t - 1} is a {prev} message" if prev else "it is the first "
                              "message") + "): a tool message must follow the assistant message "
                           "whose call it answers, or another tool message")
            tid = m.get("tool_call_id")
            if tid is not None and not isinstance(tid, str):
                raise _bad(col, f"{where}, field tool_call_id: expected a string, got "
                           f"{kind_of(tid)}")
            ids = [c.id for c in calls_before if c.id]
            if tid is not None and ids and tid not in ids:
                raise _bad(col, f"{where}, field tool_call_id: {tid!r} names no call of the "
                           f"assistant message at turn {calls_turn} (its calls: "
                           f"{', '.join(ids)})")
            out.append(Message("tool", content, tool_call_id=tid))
            continue
        calls = None
        if m.get("tool_calls") is not None:
            if role != "assistant":
                raise _bad(col, f"{where}, field tool_calls: only an assistant message calls "
                           "tools")
            calls = _calls(m["tool_calls"], col, f"{where}, field ")
        if m.get("function_call") is not None:
            raise _bad(col, f"{where}, field function_call: the older OpenAI function_call is "
                       "not read; write it as tool_calls")
        out.append(Message(role, content, calls))
        calls_before, calls_turn = (calls, t) if calls else (None, 0)
    return out


def _role(m: Mapping[str, Any], t: int, col: str) -> str:
    key = "role" if "role" in m else "type" if "type" in m else None
    if key is None:
        raise _bad(col, f"turn {t}: the message has no role (OpenAI: \"role\": \"user\", "
                   "\"assistant\", \"tool\", \"system\"; ragas: \"type\": \"human\", \"ai\", "
                   "\"tool\")")
    name = m[key]
    if not isinstance(name, str) or name not in ROLE_NAMES:
        shown = repr(name) if isinstance(name, str) else kind_of(name)
        raise _bad(col, f"turn {t}, field {key}: unknown role {shown}; roles: user, assistant, "
                   "tool, system (ragas's types: human, ai, tool)")
    return ROLE_NAMES[name]


def _content(v: Any, role: str, where: str, col: str, has_calls: bool) -> str:
    """A message's text: a string, a list of OpenAI text parts, or nothing beside calls."""
    if isinstance(v, str):
        return v
    if v is None:
        if role == "assistant" and has_calls:
            return ""  # OpenAI writes null content beside tool calls
        raise _bad(col, f"{where}, field content: missing; a {role} message needs its text")
    if isinstance(v, list):
        texts = []
        for i, part in enumerate(v, 1):
            part = unnumpy(part)
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text" and isinstance(
                    part.get("text"), str):
                texts.append(part["text"])
            else:
                kind = part.get("type") if isinstance(part, dict) else kind_of(part)
                raise _bad(col, f"{where}, field content: part {i} is {kind!r}; only text "
                           "parts ({\"type\": \"text\", \"text\": ...}) are read")
        return "\n".join(texts)
    raise _bad(col, f"{where}, field content: expected text, got {kind_of(v)}")


def _calls(v: Any, col: str, where: str) -> list[ToolCall]:
    """Tool calls in either shape: ``{name, args}`` or OpenAI's ``{id, type, function}``."""
    v = unnumpy(v)
    if not isinstance(v, list):
        raise _bad(col, f"{where}tool_calls: expected a list of tool calls, got {kind_of(v)}")
    out = []
    for i, c in enumerate(v, 1):
        at = f"{where}tool_calls[{i}]"
        c = unnumpy(c)
        if not isinstance(c, dict):
            raise _bad(col, f"{at}: expected a tool call object, got {kind_of(c)}")
        cid = c.get("id")
        if cid is not None and not isinstance(cid, str):
            raise _bad(col, f"{at}.id: expected a string, got {kind_of(cid)}")
        if "function" in c:
            fn = c["function"]
            if not isinstance(fn, dict):
                raise _bad(col, f"{at}.function: expected an object, got {kind_of(fn)}")
            name, args = fn.get("name"), _arguments(fn.get("arguments"), f"{at}.function", col)
            at += ".function"
        else:
            name, args = c.get("name"), c.get("args", {})
            if not isinstance(args, dict):
                raise _bad(col, f"{at}.args: expected an object of arguments, got "
                           f"{kind_of(args)}")
        if not isinstance(name, str) or not name.strip():
            raise _bad(col, f"{at}.name: the tool's name is "
                       + ("missing" if name is None else f"{kind_of(name)}, not a name"))
        if too_deep(args):
            raise _bad(col, f"{at}: arguments nested more than {MAX_NESTING} levels deep")
        out.append(ToolCall(name, _plain_values(args), cid))
    return out


def _plain_values(args: dict[str, Any]) -> dict[str, Any]:
    """A copy of the arguments with numpy arrays inside (a DataFrame's cells) as lists,
    made without recursion (the caller's objects are never changed or shared)."""
    out: dict[str, Any] = {}
    stack: list[tuple[Any, Any]] = [(args, out)]
    while stack:
        src, dst = stack.pop()
        items = src.items() if isinstance(src, dict) else enumerate(src)
        for k, v in items:
            v = unnumpy(v)
            if isinstance(v, (dict, list)):
                copy: Any = {} if isinstance(v, dict) else [None] * len(v)
                stack.append((v, copy))
                v = copy
            dst[k] = v
    return out


def _arguments(raw: Any, at: str, col: str) -> dict[str, Any]:
    """OpenAI's ``arguments``: a JSON text of an object (an object as such is taken too)."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raise _bad(col, f"{at}.arguments: expected a JSON text, got {kind_of(raw)}")
    if not raw.strip():
        return {}
    try:
        args = loads_strict(raw)
    except json.JSONDecodeError as e:
        raise _bad(col, f"{at}.arguments: not JSON ({e.msg} at column {e.colno}): "
                   f"{raw[:80]!r}") from None
    except ValueError as e:
        raise _bad(col, f"{at}.arguments: {e}") from None
    if not isinstance(args, dict):
        raise _bad(col, f"{at}.arguments: expected a JSON object of arguments, got "
                   f"{kind_of(args)}")
    return args
