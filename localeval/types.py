"""Core value types: a sample to evaluate, the score a metric gives it, a judge's usage.

A conversation (``MultiTurnSample``: messages, tool calls, references) is a ``Sample``
too, so that a run, its results and its report carry it as they carry any sample.

All round-trip through JSON so that results files can be re-read (resume,
``compare``) without the objects that produced them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Sample", "Score", "Usage", "SAMPLE_FIELDS", "ToolCall", "Message", "MultiTurnSample",
           "MULTI_TURN_FIELDS", "ROLES"]

#: Canonical sample fields a metric may require (RAGAS v1 names are aliases).
SAMPLE_FIELDS = (
    "question",
    "answer",
    "contexts",
    "reference",
    "reference_contexts",
    "retrieved_ids",
    "relevant_ids",
)


@dataclass(slots=True)  # no per-sample __dict__: a million samples are held at once
class Sample:
    """One RAG interaction. Field names follow RAGAS v1; v2 names are accepted on load.

    ``relevant_ids`` is always a mapping id -> graded relevance (a plain list
    loads as grade 1 each). ``row`` is the 1-based line or row in the source,
    kept so that error messages can point at it.
    """

    id: str
    question: str | None = None
    answer: str | None = None
    contexts: list[str] | None = None
    reference: str | None = None
    reference_contexts: list[str] | None = None
    retrieved_ids: list[str] | None = None
    relevant_ids: dict[str, float] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    row: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("row")
        return {k: v for k, v in d.items() if v is not None and v != {}}

    def has(self, name: str) -> bool:
        """True when the field is present (empty strings and lists count as present)."""
        return getattr(self, name, None) is not None


#: The fields of a conversation a metric may require (``MultiTurnSample``).
MULTI_TURN_FIELDS = ("messages", "reference_tool_calls", "reference_topics", "tools",
                     "possible_answers", "reference_trajectory")
#: Message roles: the user, the assistant (which may call tools), a tool's result, and the
#: system prompt (kept and shown; no metric scores it).
ROLES = ("system", "user", "assistant", "tool")


@dataclass(slots=True)
class ToolCall:
    """One tool call: the tool's name and its arguments (any JSON values, nested too).

    ``id`` is the caller's id for the call (OpenAI's ``tool_call_id``), kept so that
    a tool message can say which call it answers; no metric compares it.
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args, **({"id": self.id} if self.id else {})}


@dataclass(slots=True)
class Message:
    """One turn of a conversation: ``role`` (one of ``ROLES``) and its text.

    An assistant message may carry ``tool_calls``; a tool message holds a call's
    result in ``content`` and, when the data named it, the ``tool_call_id`` it answers.
    """

    role: str
    content: str = ""
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls is not None:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        return d


@dataclass(slots=True)
class MultiTurnSample(Sample):
    """A conversation: user, assistant and tool messages, with optional references.

    As ragas's ``MultiTurnSample``: ``reference`` (the expected outcome),
    ``reference_tool_calls`` (the calls the assistant should make) and
    ``reference_topics`` (what it should stay on). The single-turn fields
    (question, answer, contexts...) stay None: the messages hold the conversation.
    """

    messages: list[Message] = field(default_factory=list)
    reference_tool_calls: list[ToolCall] | None = None
    reference_topics: list[str] | None = None
    #: The tool definitions offered, the expected calls with their accepted values (flat, or
    #: one list per user message) and the expected steps, as the data wrote them (JSON);
    #: ``localeval.toolcheck`` reads them (docs/conversations-and-agents.md).
    tools: list[Any] | None = None
    possible_answers: list[Any] | None = None
    reference_trajectory: list[Any] | None = None

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the assistant made, in the order of the conversation."""
        return [c for m in self.messages if m.role == "assistant" for c in m.tool_calls or ()]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "messages": [m.to_dict() for m in self.messages]}
        if self.reference is not None:
            d["reference"] = self.reference
        if self.reference_tool_calls is not None:
            d["reference_tool_calls"] = [c.to_dict() for c in self.reference_tool_calls]
        if self.reference_topics is not None:
            d["reference_topics"] = list(self.reference_topics)
        for f in ("tools", "possible_answers", "reference_trajectory"):
            if getattr(self, f) is not None:
                d[f] = getattr(self, f)
        if self.metadata:
            d["metadata"] = self.metadata
        return d


@dataclass(slots=True)
class Score:
    """A metric's value for one sample, or the reason there is none.

    ``value`` is None when unscored; ``reason`` then says why. ``details``
    carries the working (statements, verdicts, generated questions...), which
    ``results.jsonl`` exposes.
    """

    value: float | None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.value is not None:
            v = float(self.value)
            if math.isnan(v):
                # A bare NaN is never allowed: it must carry a reason.
                self.value = None
                self.reason = self.reason or "metric returned NaN"
            else:
                self.value = v

    @classmethod
    def unscored(cls, reason: str, **details: Any) -> "Score":
        return cls(None, reason, dict(details))

    @property
    def scored(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "reason": self.reason, "details": self.details}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Score":
        return cls(d.get("value"), d.get("reason"), dict(d.get("details") or {}))


@dataclass
class Usage:
    """Token and time accounting for one call or a sum of calls.

    ``reused_tokens`` are prompt tokens served from the KV cache of the
    previous prompt (prefix reuse); ``evaluated_tokens`` is what was computed.
    ``copied_calls`` counts replies that copied the prompt's few-shot example
    (asked again without it) and ``copy_failures`` those whose second reply
    copied too (the metric is then unscored): the run's judge health reads them.
    """

    calls: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    copied_calls: int = 0
    copy_failures: int = 0
    #: In-process judge, prompt-lookup drafting: guessed tokens, guesses kept, and the
    #: generation decodes run (fewer than generated tokens when guesses were kept).
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    decode_steps: int = 0

    @property
    def evaluated_tokens(self) -> int:
        return self.prompt_tokens - self.reused_tokens

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.reused_tokens += other.reused_tokens
        self.generated_tokens += other.generated_tokens
        self.seconds += other.seconds
        self.cache_hits += other.cache_hits
        self.copied_calls += other.copied_calls
        self.copy_failures += other.copy_failures
        self.drafted_tokens += other.drafted_tokens
        self.accepted_tokens += other.accepted_tokens
        self.decode_steps += other.decode_steps

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "reused_tokens": self.reused_tokens,
            "evaluated_tokens": self.evaluated_tokens,
            "generated_tokens": self.generated_tokens,
            "seconds": round(self.seconds, 3),
            "cache_hits": self.cache_hits,
            "copied_calls": self.copied_calls,
            "copy_failures": self.copy_failures,
            "drafted_tokens": self.drafted_tokens,
            "accepted_tokens": self.accepted_tokens,
            "decode_steps": self.decode_steps,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Usage":
        return cls(**{k: d[k] for k in ("calls", "prompt_tokens", "reused_tokens",
                                        "generated_tokens", "seconds", "cache_hits", "copied_calls",
                                        "copy_failures", "drafted_tokens", "accepted_tokens",
                                        "decode_steps") if k in d})
