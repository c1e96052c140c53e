"""What the checks read: calls, possible answers and function schemas, from their JSON shapes.

A ``Call`` is a call the model made (a name and its arguments). A ``PossibleAnswer`` is
one expected call with, for each argument, the values that are accepted: the Berkeley
Function Calling Leaderboard's ``possible_answer`` shape ``{"func": {"arg": [v1, v2, ""]}}``
(``""`` among the values: the argument may be left out) or a plain call ``{"name": ...,
"arguments": {...}}`` (exactly those values, every argument given). A ``Function`` is one
tool definition: OpenAI's ``tools`` entry ``{"type": "function", "function": {...}}``, a
bare function object, or BFCL's function doc (``"type": "dict"`` and BFCL's type words).

Every reader raises ``InvalidArgument`` (a ``ValueError``) with the path inside the value
that is wrong (``answer 2, argument 'city'``), so the dataset can name row and column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from localeval.errors import InvalidArgument
from localeval.strict_json import loads_strict

__all__ = ["Call", "PossibleAnswer", "Choices", "Function", "OPTIONAL", "read_calls",
           "read_possible_answers", "read_functions", "as_call", "TYPE_WORDS"]

#: A schema's type word -> the kind the checks compare by. BFCL writes ``dict``, ``float``,
#: ``tuple`` and ``any``; JSON Schema writes ``object``, ``number`` and ``array``.
TYPE_WORDS = {"string": "string", "integer": "integer", "float": "float", "number": "float",
              "boolean": "boolean", "array": "array", "tuple": "array", "dict": "object",
              "object": "object", "any": "any", "null": "null"}


class _Optional:
    """The marker of an argument (or key) that may be left out: BFCL's ``""``."""

    def __repr__(self) -> str:
        return "OPTIONAL"


OPTIONAL: Any = _Optional()


@dataclass(frozen=True)
class Call:
    """A tool call made: the function's name and its arguments (JSON values)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Choices:
    """BFCL's accepted values of an object argument: each key -> the accepted values
    (``optional``: the keys that may be left out). Only BFCL's shape makes one; a plain
    answer's object is one exact value."""

    keys: dict[str, tuple[Any, ...]]
    optional: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PossibleAnswer:
    """One expected call: ``options[arg]`` are the accepted values of each argument,
    ``optional`` the arguments that may be left out (a plain answer has none)."""

    name: str
    options: dict[str, tuple[Any, ...]]
    optional: frozenset[str] = frozenset()

    @classmethod
    def exact(cls, name: str, arguments: Mapping[str, Any]) -> "PossibleAnswer":
        """The plain shape: exactly these values, every argument given."""
        return cls(name, {k: (v,) for k, v in arguments.items()})

    def to_dict(self) -> dict[str, Any]:
        """BFCL's shape (``""`` for an optional argument), for details and reports."""
        return {self.name: {k: [_shown(v) for v in vs if v is not OPTIONAL]
                            + ([""] if k in self.optional and "" not in vs else [])
                            for k, vs in self.options.items()}}


def _shown(v: Any) -> Any:
    if isinstance(v, Choices):
        return {k: [_shown(x) for x in vs] for k, vs in v.keys.items()}
    if isinstance(v, list):
        return [_shown(x) for x in v]
    return v


@dataclass(frozen=True)
class Function:
    """One tool definition: its name and the JSON schema of its arguments object
    (``parameters``: ``properties`` and ``required``, BFCL's type words allowed)."""

    name: str
    parameters: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    @property
    def properties(self) -> dict[str, Any]:
        return self.parameters.get("properties") or {}

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.parameters.get("required") or ())

    @property
    def closed(self) -> bool:
        """Undeclared arguments are refused unless ``additionalProperties`` allows them."""
        return self.parameters.get("additionalProperties", False) in (False, None)


def _bad(where: str, what: str) -> InvalidArgument:
    return InvalidArgument(f"{where}: {what}" if where else what)


def _kind(v: Any) -> str:
    return "null" if v is None else {"str": "text", "dict": "an object", "list": "a list"}.get(
        type(v).__name__, type(v).__name__)


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    """Arguments: an object, or OpenAI's JSON text of one."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:  # by the data files' rule: no NaN, no absurd nesting or digits
            raw = loads_strict(raw) if raw.strip() else {}
        except json.JSONDecodeError as e:
            raise _bad(where, f"arguments are not JSON ({e.msg})") from None
        except ValueError as e:  # JSONValueError: says what JSON forbids
            raise _bad(where, f"arguments are not JSON ({e})") from None
    if not isinstance(raw, dict):
        raise _bad(where, f"arguments must be an object, got {_kind(raw)}")
    return raw


def _named(obj: Mapping[str, Any], where: str, what: str) -> tuple[Mapping[str, Any], str]:
    """The object's body (OpenAI's ``{"function": {...}}`` or the object itself) and its
    name, for a call and a tool definition alike."""
    inner = obj.get("function")
    body: Mapping[str, Any] = inner if isinstance(inner, Mapping) else obj
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _bad(where, f"the {what} has no name")
    return body, name


def as_call(obj: Any, where: str = "") -> Call:
    """A ``Call`` from a ``Call``, any object with ``name`` and ``args``/``arguments`` (the
    dataset's ``ToolCall``), ``{"name", "arguments"|"args"}`` or OpenAI's ``{"function":
    {"name", "arguments"}}``."""
    if isinstance(obj, Call):
        return obj
    if not isinstance(obj, Mapping) and hasattr(obj, "name"):
        args = getattr(obj, "arguments", None)
        args = getattr(obj, "args", None) if args is None else args
        return Call(str(obj.name), dict(args or {}))
    if not isinstance(obj, Mapping):
        raise _bad(where, f"expected a call object, got {_kind(obj)}")
    body, name = _named(obj, where, "call")
    raw = body.get("arguments", body.get("args"))
    return Call(name, _arguments(raw, where))


def read_calls(obj: Any) -> list[Call]:
    """A list of calls in any shape ``as_call`` reads."""
    if not isinstance(obj, (list, tuple)):
        raise _bad("", f"expected a list of calls, got {_kind(obj)}")
    return [as_call(c, f"call {i}") for i, c in enumerate(obj, 1)]


def _choices(opt: Any, where: str, depth: int) -> Any:
    """One accepted value of BFCL's shape: an object at the argument's level (or as an item
    of a list argument) holds per-key accepted values; deeper, values are exact, as BFCL
    compares them."""
    if isinstance(opt, dict) and depth < 2:
        keys: dict[str, tuple[Any, ...]] = {}
        optional = set()
        for k, vs in opt.items():
            vs = vs if isinstance(vs, list) else [vs]
            keys[str(k)] = tuple(vs)
            if "" in vs:
                optional.add(str(k))
        return Choices(keys, frozenset(optional))
    if isinstance(opt, list) and depth < 1:
        return [_choices(x, where, depth + 1) for x in opt]
    return opt


def _one_answer(obj: Any, where: str) -> PossibleAnswer:
    if isinstance(obj, PossibleAnswer):
        return obj
    if not isinstance(obj, Mapping) or isinstance(obj.get("name"), str) or isinstance(
            obj.get("function"), Mapping):
        c = as_call(obj, where)
        return PossibleAnswer.exact(c.name, c.arguments)
    if len(obj) != 1:
        raise _bad(where, "expected one function name -> its arguments' accepted values "
                   f"(BFCL's shape), or {{\"name\": ..., \"arguments\": {{...}}}}; got an "
                   f"object of {len(obj)} keys")
    (name, args), = obj.items()
    if not isinstance(args, Mapping):
        raise _bad(where, f"function {name!r}: expected an object of arguments, got "
                   f"{_kind(args)}")
    options: dict[str, tuple[Any, ...]] = {}
    optional = set()
    for arg, vs in args.items():
        if not isinstance(vs, list):
            raise _bad(where, f"function {name!r}, argument {arg!r}: BFCL's shape gives a "
                       f"list of accepted values, got {_kind(vs)}")
        if not vs:
            raise _bad(where, f"function {name!r}, argument {arg!r}: no accepted value")
        options[str(arg)] = tuple(_choices(v, where, 0) for v in vs)
        if "" in vs:
            optional.add(str(arg))
    return PossibleAnswer(str(name), options, frozenset(optional))


def read_possible_answers(obj: Any) -> list[PossibleAnswer]:
    """Expected calls, each in BFCL's shape ``{"func": {"arg": [v1, v2, ""]}}`` or a plain
    call (``{"name", "arguments"|"args"}``, OpenAI's call shape, a ``Call``); one object
    is read as a list of one."""
    if isinstance(obj, (Mapping, PossibleAnswer, Call)):
        obj = [obj]
    if not isinstance(obj, (list, tuple)):
        raise _bad("", f"expected a list of expected calls, got {_kind(obj)}")
    return [_one_answer(a, f"answer {i}") for i, a in enumerate(obj, 1)]


def _check_schema(schema: Any, where: str) -> None:
    """Type words known, ``properties`` an object, ``required`` a list of names, at every level."""
    stack = [(schema, where)]
    while stack:
        s, at = stack.pop()
        if not isinstance(s, Mapping):
            raise _bad(at, f"a schema must be an object, got {_kind(s)}")
        t = s.get("type")
        for word in t if isinstance(t, list) else [] if t is None else [t]:
            if word not in TYPE_WORDS:
                raise _bad(at, f"unknown type {word!r} (known: {', '.join(TYPE_WORDS)})")
        props = s.get("properties")
        if props is not None:
            if not isinstance(props, Mapping):
                raise _bad(at, f"properties must be an object, got {_kind(props)}")
            stack.extend((p, f"{at}, property {k!r}") for k, p in props.items())
        req = s.get("required")
        if req is not None and not (isinstance(req, list) and all(isinstance(r, str)
                                                                   for r in req)):
            raise _bad(at, "required must be a list of argument names")
        if "items" in s:
            stack.append((s["items"], f"{at}, items"))
        if "enum" in s and not isinstance(s["enum"], list):
            raise _bad(at, "enum must be a list of values")


def read_functions(obj: Any) -> list[Function]:
    """Tool definitions: OpenAI's ``tools`` list (``{"type": "function", "function": {name,
    description, parameters}}``), bare function objects, or BFCL's function docs; one object
    is read as a list of one. Two functions of one name are refused."""
    if isinstance(obj, (Mapping, Function)):
        obj = [obj]
    if not isinstance(obj, (list, tuple)):
        raise _bad("", f"expected a list of tool definitions, got {_kind(obj)}")
    out: list[Function] = []
    seen: set[str] = set()
    for i, f in enumerate(obj, 1):
        where = f"tool {i}"
        if isinstance(f, Function):
            fn = f
        else:
            if not isinstance(f, Mapping):
                raise _bad(where, f"expected a tool definition object, got {_kind(f)}")
            body, name = _named(f, where, "tool")
            params = body.get("parameters") or {}
            _check_schema(params, f"{where} ({name})")
            desc = body.get("description")
            fn = Function(name, dict(params), desc if isinstance(desc, str) else "")
        if fn.name in seen:
            raise _bad(where, f"a second tool named {fn.name!r}")
        seen.add(fn.name)
        out.append(fn)
    return out
