"""A conversation (``types.MultiTurnSample``) as people read it: turn by turn, and as text.

Three views of one conversation, for every page that shows samples:

- ``conversation_view``: the report's turns as plain data (role, text, an assistant's
  tool calls with their arguments as indented JSON and the tool-call checks' failures
  of each call, the call a tool result answers), the tools offered, and the reference
  tool calls and topics, which ``templates/_conversation.html.j2``
  renders; as everywhere in the report, the template escapes every string.
- ``sample_question``: what a sample is known by in a list (the report's sample
  list and worst samples, the per-sample gate, pairing two versions by question,
  the label sheet): its question, else a conversation's first user turn.
- ``conversation_text``: the whole conversation as plain text, for a label sheet's
  cell and the word-level change between two versions on diff.html.

Each takes a sample as the report holds it (``Sample.to_dict()``'s mapping) or as
a ``types.Sample`` object (``MultiTurnSample``'s messages as ``Message`` objects),
so that one function serves the report and the analyses of finished runs.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from localeval.types import MULTI_TURN_FIELDS

__all__ = ["conversation_view", "sample_question", "conversation_text", "is_conversation",
           "CONVERSATION_FIELDS", "HEAD_TURNS", "TAIL_TURNS"]

#: The fields the conversation view shows (so the report lists them nowhere else).
CONVERSATION_FIELDS = MULTI_TURN_FIELDS
#: A long conversation shows its first HEAD_TURNS and last TAIL_TURNS turns, with a note
#: between them: a 2,000-turn conversation stays a readable section of a bounded page,
#: and its final answer stays in sight.
HEAD_TURNS = 150
TAIL_TURNS = 50
_WHERE = "the dataset"


def _get(x: Any, name: str) -> Any:
    """A field of a mapping (the report's samples) or an attribute (``types`` objects)."""
    return x.get(name) if isinstance(x, Mapping) else getattr(x, name, None)


def _messages(sample: Any) -> list[Any] | None:
    msgs = _get(sample, "messages")
    return list(msgs) if isinstance(msgs, (list, tuple)) else None


def is_conversation(sample: Any) -> bool:
    """Whether ``sample`` is a conversation (its messages are a list)."""
    return sample is not None and _messages(sample) is not None


def sample_question(sample: Any) -> str | None:
    """The sample's question; for a conversation without one, its first user turn that
    holds text (the turn that opens the conversation, as a question opens a sample)."""
    if sample is None:
        return None
    q = _get(sample, "question")
    if isinstance(q, str):
        return q
    for m in _messages(sample) or ():
        text = _get(m, "content")
        if _get(m, "role") == "user" and isinstance(text, str) and text.strip():
            return text
    return None


def _args_json(args: Any, indent: int | None) -> str:
    """Arguments as JSON text, key order kept (the metrics compare nested key order, as
    ragas does); ``default=str`` so a value JSON cannot hold still shows."""
    return json.dumps(args if args is not None else {}, ensure_ascii=False, indent=indent,
                      default=str)


def _calls(msg: Any) -> list[Any]:
    calls = _get(msg, "tool_calls")
    return list(calls) if isinstance(calls, (list, tuple)) else []


def _answers(msgs: list[Any]) -> list[str | None]:
    """Per message, the name of the call a tool message answers: by its ``tool_call_id``,
    else the next unanswered call of the assistant turn before it (ragas's shape has no
    ids: a tool message answers the calls in order)."""
    out: list[str | None] = []
    by_id: dict[Any, str] = {}
    pending: list[str] = []
    for m in msgs:
        role = _get(m, "role")
        if role == "assistant":
            calls = _calls(m)
            by_id.update({_get(c, "id"): str(_get(c, "name")) for c in calls if _get(c, "id")})
            pending = [str(_get(c, "name")) for c in calls]
            out.append(None)
        elif role == "tool":
            cid = _get(m, "tool_call_id")
            name = by_id.get(cid) if cid else None
            if name is None and pending:
                name = pending[0]
            if name is not None and name in pending:
                pending.remove(name)
            out.append(name)
        else:
            out.append(None)
    return out


def _turn(n: int, msg: Any, answers: str | None, clip: Any,
          checks: Mapping[tuple[int, int], list[dict[str, Any]]] | None = None,
          first_call: int = 1) -> dict[str, Any]:
    text = _get(msg, "content")
    return {
        "n": n,
        "role": str(_get(msg, "role") or ""),
        "text": clip.text(text, _WHERE) if isinstance(text, str) and text != "" else None,
        "calls": [{"name": clip.text(str(_get(c, "name")), _WHERE),
                   "id": _get(c, "id"),
                   "args": clip.text(_args_json(_get(c, "args"), 2), _WHERE),
                   "checks": (checks or {}).get((n, first_call + k), [])}
                  for k, c in enumerate(_calls(msg))],
        "call_id": _get(msg, "tool_call_id"),
        "answers": answers,
    }


def _checks(details: Mapping[str, Any] | None, clip: Any
            ) -> tuple[dict[tuple[int, int], list[dict[str, Any]]], list[dict[str, Any]]]:
    """The tool-call checks' failures (a metric's details ``failures``: ``turn``, ``call``,
    ``function``, ``argument``, ``reason``, ``kind``), by (turn, call) for the call they
    concern, and the rest (a call not made, a wrong count) apart."""
    by_call: dict[tuple[int, int], list[dict[str, Any]]] = {}
    rest: list[dict[str, Any]] = []
    for key, d in (details or {}).items():
        fails = d.get("failures") if isinstance(d, Mapping) else None
        if not isinstance(fails, list):
            continue
        for f in fails:
            if not isinstance(f, Mapping) or "reason" not in f or "kind" not in f:
                continue
            item = {"metric": str(key), "kind": str(f["kind"]),
                    "argument": None if f.get("argument") is None else str(f["argument"]),
                    "function": None if f.get("function") is None else str(f["function"]),
                    "reason": clip.text(str(f["reason"]), "results.jsonl"),
                    "user_turn": f.get("user_turn")}
            turn, call = f.get("turn"), f.get("call")
            if isinstance(turn, int) and isinstance(call, int):
                by_call.setdefault((turn, call), []).append(item)
            else:
                rest.append(item)
    return by_call, rest


def conversation_view(sample: Any, clip: Any,
                      details: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The report's view of a conversation (None for a single-turn sample).

    ``clip``: the page's ``clip.Clipper``, so a conversation's texts count against the
    page's budget as any sample's do. Turns keep their numbers (1-based) across the
    gap a long conversation leaves. ``details``: the sample's metric details (metric key
    -> details); the tool-call checks' failures are shown beside the call they concern
    (which argument, why), and those of no call made (a missing call) above the turns.
    """
    msgs = _messages(sample)
    if msgs is None:
        return None
    by_call, unplaced = _checks(details, clip)
    first = [1]
    for m in msgs:  # the conversation-wide number of each message's first call
        first.append(first[-1] + (len(_calls(m)) if _get(m, "role") == "assistant" else 0))
    answers = _answers(msgs)
    n = len(msgs)
    cut = n > HEAD_TURNS + TAIL_TURNS
    head = range(min(n, HEAD_TURNS)) if cut else range(n)
    tail = range(n - TAIL_TURNS, n) if cut else range(0)
    refs = _get(sample, "reference_tool_calls")
    topics = _get(sample, "reference_topics")
    return {
        "turns": [_turn(i + 1, msgs[i], answers[i], clip, by_call, first[i]) for i in head],
        "tail": [_turn(i + 1, msgs[i], answers[i], clip, by_call, first[i]) for i in tail],
        "unplaced_checks": unplaced,
        "tools": None if _get(sample, "tools") is None else [
            clip.text(_tool_name(t), _WHERE) for t in _get(sample, "tools") or ()],
        "gap": {"count": n - HEAD_TURNS - TAIL_TURNS, "first": HEAD_TURNS + 1,
                "last": n - TAIL_TURNS} if cut else None,
        "n_turns": n,
        "n_calls": sum(len(_calls(m)) for m in msgs if _get(m, "role") == "assistant"),
        "reference_calls": None if refs is None else [
            {"name": clip.text(str(_get(c, "name")), _WHERE),
             "args": clip.text(_args_json(_get(c, "args"), 2), _WHERE)} for c in refs],
        "topics": None if topics is None else [clip.text(str(t), _WHERE) for t in topics],
    }


def _tool_name(tool: Any) -> str:
    """A tool definition's name (OpenAI's ``{"function": {"name"}}`` or a bare ``name``)."""
    body = tool.get("function") if isinstance(tool, Mapping) and isinstance(
        tool.get("function"), Mapping) else tool
    return str(body.get("name")) if isinstance(body, Mapping) else str(body)


def _call_line(call: Any) -> str:
    return f"{_get(call, 'name')} {_args_json(_get(call, 'args'), None)}"


def _text_lines(msgs: list[Any]) -> Iterable[str]:
    for m, answers in zip(msgs, _answers(msgs)):
        role = str(_get(m, "role") or "")
        text = _get(m, "content")
        text = text if isinstance(text, str) else ""
        if role == "tool":
            yield f"tool ({answers}): {text}" if answers else f"tool: {text}"
            continue
        if text or not _calls(m):
            yield f"{role}: {text}"
        for c in _calls(m):
            yield f"{role} calls {_call_line(c)}"


def conversation_text(sample: Any) -> str | None:
    """The conversation as plain text, one turn a line (``user: ...``, ``assistant calls
    weather {"city": "Paris"}``, ``tool (weather): 18C``), then the reference tool calls
    and topics; None for a single-turn sample. A turn's own line breaks are kept."""
    msgs = _messages(sample)
    if msgs is None:
        return None
    lines = list(_text_lines(msgs))
    refs = _get(sample, "reference_tool_calls")
    if refs is not None:
        lines.append("expected tool calls: " + ("; ".join(_call_line(c) for c in refs)
                                                if refs else "none"))
    topics = _get(sample, "reference_topics")
    if topics:
        lines.append("reference topics: " + ", ".join(str(t) for t in topics))
    return "\n".join(lines)
