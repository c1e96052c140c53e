"""ragas's multi-turn shapes: ``HumanMessage``, ``AIMessage``, ``ToolMessage``, ``ToolCall``
and ``MultiTurnSample``, as thin mappings in ragas's JSON shape.

Each object is the dict ragas's ``to_dict()`` writes (``{"type": "ai", "content": ...,
"tool_calls": [{"name": ..., "args": {...}}]}``), readable as attributes
(``message.tool_calls``, ``call.args``), so a ragas script builds them unchanged and
localeval's conversation reader (``localeval.dataset``) checks them when they are
scored: a bad conversation (a tool message that follows no call, an unknown field)
is one clear error naming the sample, the turn and the field.
"""

from __future__ import annotations

from typing import Any, ClassVar, Sequence

__all__ = ["ToolCall", "HumanMessage", "AIMessage", "ToolMessage", "MultiTurnSample",
           "MULTI_TURN_FIELDS"]

#: ragas's ``MultiTurnSample`` fields, and localeval's sample id.
MULTI_TURN_FIELDS: tuple[str, ...] = ("user_input", "reference", "reference_tool_calls",
                                      "rubrics", "reference_topics", "id")


class _Shape(dict[str, Any]):  # a plain dict of JSON values, as ragas dumps them
    """A mapping of the given fields (None ones left out) readable as attributes."""

    fields: ClassVar[tuple[str, ...]] = ()

    def __getattr__(self, name: str) -> Any:
        if name in self.fields:
            return self.get(name)
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        return dict(self)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.items())
        return f"{type(self).__name__}({inner})"


class ToolCall(_Shape):
    """ragas's ``ToolCall(name=..., args={...})``."""

    fields = ("name", "args")

    def __init__(self, name: str, args: dict[str, Any] | None = None) -> None:
        super().__init__(name=name, args=dict(args or {}))


class _Message(_Shape):
    type_name: ClassVar[str] = ""
    fields: ClassVar[tuple[str, ...]] = ("content", "type", "metadata")

    def __init__(self, content: str = "", metadata: dict[str, Any] | None = None,
                 **more: Any) -> None:
        super().__init__(content=content, type=self.type_name)
        if metadata is not None:
            self["metadata"] = metadata
        self.update({k: v for k, v in more.items() if v is not None})

    def pretty_repr(self) -> str:
        return f"{self.prefix}: {self.get('content', '')}"

    prefix: ClassVar[str] = ""


class HumanMessage(_Message):
    """ragas's ``HumanMessage(content=...)``: a user turn."""

    type_name = "human"
    prefix = "Human"


class ToolMessage(_Message):
    """ragas's ``ToolMessage(content=...)``: a tool's result."""

    type_name = "tool"
    prefix = "ToolOutput"


class AIMessage(_Message):
    """ragas's ``AIMessage(content=..., tool_calls=[ToolCall(...)])``: an assistant turn."""

    type_name = "ai"
    fields = ("content", "type", "metadata", "tool_calls")

    def __init__(self, content: str = "", tool_calls: Sequence[Any] | None = None,
                 metadata: dict[str, Any] | None = None) -> None:
        super().__init__(content, metadata,
                         tool_calls=None if tool_calls is None else list(tool_calls))

    def pretty_repr(self) -> str:
        lines = [f"AI: {self['content']}"] if self.get("content") else []
        if self.get("tool_calls") is not None:
            lines.append("Tools:")
            lines.extend(f"  {c['name']}: {c['args']}" for c in self["tool_calls"])
        return "\n".join(lines)


class MultiTurnSample(_Shape):
    """ragas's ``MultiTurnSample(user_input=[...], reference_tool_calls=[...], ...)``."""

    fields = MULTI_TURN_FIELDS

    def __init__(self, **values: Any) -> None:
        unknown = [k for k in values if k not in MULTI_TURN_FIELDS]
        if unknown:
            raise TypeError(f"MultiTurnSample got an unexpected keyword argument '{unknown[0]}' "
                            f"(fields: {', '.join(MULTI_TURN_FIELDS)})")
        super().__init__({k: v for k, v in values.items() if v is not None})
        if "user_input" in self:
            self["user_input"] = list(self["user_input"])

    def to_messages(self) -> list[dict[str, Any]]:
        return [dict(m) for m in self.get("user_input") or ()]

    def pretty_repr(self) -> str:
        return "\n".join(m.pretty_repr() if hasattr(m, "pretty_repr") else str(m)
                         for m in self.get("user_input") or ())
