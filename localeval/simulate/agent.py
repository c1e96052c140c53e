"""The team's agent, through a hook: ``MODULE:FUNCTION(messages)`` -> its turn.

The hook is found as ``localeval answer --pipeline`` finds a pipeline
(``pipeline.load_pipeline``: a module on the path or a file, a dotted name). It is
called with the conversation so far as OpenAI chat messages (``role``, ``content``,
an assistant's ``tool_calls`` as ``{"id", "type": "function", "function": {"name",
"arguments"}}``, a tool message's ``tool_call_id``), and with ``row=`` (the
scenario's row) when it takes it. It returns its turn:

- an assistant message (a dict, ``content`` and optionally ``tool_calls`` in either
  call shape), or
- a list of messages: assistant messages and the ``tool`` messages of the tools it
  ran itself, ending with its answer or with calls left for the scenario's stubs.

A reply is checked by the conversation reader ``localeval run`` uses
(``dataset.load_dataset``), so a conversation written here is one ``run`` reads.
Whatever the hook does wrong is the team's: an exception, a reply that is not a
message, a message the reader refuses, or ``sys.exit`` is one ``UsageError`` naming
the scenario and the turn (exit 2). A reply longer than ``MAX_REPLY_CHARS`` is cut
there and the cut is said; control characters are kept as data (the terminal shows
them escaped, ``cli.console``).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from localeval.dataset import load_dataset
from localeval.errors import DataError, UsageError, printable
from localeval.pipeline import Pipeline, load_pipeline
from localeval.types import Message

__all__ = ["Agent", "Reply", "openai_message", "MAX_REPLY_CHARS"]

#: A message's text is cut at this many characters (a runaway agent's megabyte reply
#: would swell the file, the page and every judge prompt after it).
MAX_REPLY_CHARS = 20_000


@dataclass
class Reply:
    """The agent's new messages on one call, and what was cut from them."""

    messages: list[Message]
    notes: list[str] = field(default_factory=list)


def openai_message(m: Message) -> dict[str, Any]:
    """A message as the hook sees it: OpenAI's chat shape."""
    d: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        d["tool_calls"] = [{"id": c.id, "type": "function",
                            "function": {"name": c.name,
                                         "arguments": json.dumps(c.args, ensure_ascii=False)}}
                           for c in m.tool_calls]
    if m.tool_call_id is not None:
        d["tool_call_id"] = m.tool_call_id
    return d


def _as_agent(text: str) -> str:
    """The pipeline loader's message, said of ``--agent`` (it names a "pipeline" called with
    a question; an agent is called with the messages)."""
    if text.startswith("pipeline"):
        text = text[len("pipeline"):]
    text = text.replace("(question", "(messages").replace("my_rag:answer", "my_agent:reply")
    return "--agent" + (text if text.startswith(" ") else " " + text.lstrip(":").lstrip())


class Agent:
    """The hook, called turn by turn; ``label`` names it, ``version`` hashes its file."""

    def __init__(self, spec: str | Callable[..., Any] | Pipeline) -> None:
        try:
            self.hook = load_pipeline(spec)
        except UsageError as e:
            raise UsageError(_as_agent(str(e))) from None
        self.label = self.hook.label
        self.file = _source_file(self.hook.function)
        self.version = _file_hash(self.file)

    def reply(self, scenario: Any, turn: int, history: list[Message]) -> Reply:
        """The agent's messages after ``history`` (user turn ``turn`` of ``scenario``)."""
        where = f"scenario {printable(scenario.id)}, turn {turn}"
        shown = [openai_message(m) for m in history]
        try:
            value = self.hook(shown, copy.deepcopy(scenario.to_row()))
        except KeyboardInterrupt:
            raise
        except Exception as e:  # the team's code: stop, name the scenario and the turn
            raise self._failed(where, f"raised {type(e).__name__}: {e}" if str(e)
                               else f"raised {type(e).__name__}") from None
        except BaseException as e:  # noqa: BLE001 - sys.exit in the agent's code
            what = f"sys.exit({e.code!r})" if isinstance(e, SystemExit) else type(e).__name__
            raise self._failed(where, f"ended the process ({what})") from None
        raw = [value] if isinstance(value, dict) else value
        if not isinstance(raw, list) or not raw or not all(isinstance(m, dict) for m in raw):
            raise self._failed(where, f"returned {_kind(value)}, not an assistant message (a "
                               "dict with 'content' and optionally 'tool_calls') or a list of "
                               "messages")
        notes: list[str] = []
        fixed = [self._message(m, where, len(history) + i, notes) for i, m in enumerate(raw)]
        rows = [m.to_dict() for m in history] + fixed
        try:
            read = load_dataset([{"messages": rows}]).samples[0].messages
        except DataError as e:
            # the reader counts the conversation's messages; "turn" here is the user's
            reason = str(e).split("'messages': ", 1)[-1].replace("turn ", "message ", 1)
            raise self._failed(where, f"returned a malformed message: {reason}") from None
        return Reply(list(read[len(history):]), notes)

    def _message(self, m: dict[str, Any], where: str, at: int,
                 notes: list[str]) -> dict[str, Any]:
        """One returned message, with the agent's role checked, ids given to calls without
        one (so the stubs' tool messages can name them) and a runaway text cut."""
        m = dict(m)
        role = m.setdefault("role", "assistant")
        if role not in ("assistant", "tool", "ai"):
            raise self._failed(where, f"returned a {printable(role)!s} message; the agent "
                               "returns assistant messages and the tool messages of its own "
                               "tools")
        content = m.get("content")
        if isinstance(content, str) and len(content) > MAX_REPLY_CHARS:
            notes.append(f"{where}: the agent's {role} message was {len(content):,} characters; "
                         f"kept the first {MAX_REPLY_CHARS:,}")
            m["content"] = content[:MAX_REPLY_CHARS]
        calls = m.get("tool_calls")
        if isinstance(calls, list):
            m["tool_calls"] = [dict(c, id=f"call-{at}-{k}") if isinstance(c, dict)
                               and not c.get("id") else c for k, c in enumerate(calls, 1)]
        return m

    def _failed(self, where: str, what: str) -> UsageError:
        return UsageError(f"{where}: the agent {printable(self.label)} {printable(what)}: this is "
                          "the agent's code, not localeval's")


def _source_file(function: Any) -> str | None:
    try:
        return inspect.getsourcefile(inspect.unwrap(function))
    except (TypeError, ValueError):
        return None


def _file_hash(path: str | None) -> str | None:
    """The agent's file's content hash: a changed agent is another version, whose
    conversations an earlier checkpoint must not hand back."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return None


def _kind(value: Any) -> str:
    name = "None" if value is None else type(value).__name__
    return name if value is None else (f"an {name}" if name[0].lower() in "aeiou" else f"a {name}")
