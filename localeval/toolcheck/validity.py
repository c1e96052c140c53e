"""Calls made against the tool definitions alone: is each call one the tools allow?

Per call, each rule its own failure (``Failure.kind``):

- ``not_a_function``: no tool of that name is offered;
- ``missing_required``: an argument the schema's ``required`` lists is not given;
- ``unexpected_argument``: an argument the schema does not declare (refused unless the
  schema says ``"additionalProperties": true``; the same rule inside nested objects that
  declare ``properties``);
- ``wrong_type``: a value not of its declared type, at any depth (``values.fits``: an
  integer is accepted for a float, ``9.0`` is not an integer, a boolean is not a number);
- ``not_in_enum``: a value outside the schema's ``enum`` (strings compared exactly).

Written by hand rather than with ``jsonschema``: its ``integer`` accepts ``9.0``, it does
not know BFCL's type words (``dict``, ``float``, ``tuple``, ``any``), and its errors do not
sort into these rules without parsing them.
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.toolcheck.calls import CallVerdict, Failure
from localeval.toolcheck.shapes import Function, as_call
from localeval.toolcheck.values import fits, kind_of, kinds_of

__all__ = ["tool_call_validity"]


def _value_failures(value: Any, schema: Any, path: str, index: int, fn: str) -> list[Failure]:
    out: list[Failure] = []
    stack = [(value, schema, path)]
    while stack:
        v, s, at = stack.pop()
        if not isinstance(s, dict):
            continue
        kinds = kinds_of(s)
        if kinds is not None and not fits(v, kinds):
            out.append(Failure(index, fn, path, f"{at}: expected {'/'.join(sorted(kinds))}, "
                               f"got {kind_of(v)} {v!r}"[:300], "wrong_type"))
            continue
        if "enum" in s and isinstance(s["enum"], list) and not any(
                kind_of(v) == kind_of(e) and v == e or (
                    kind_of(v) in ("integer", "float") and kind_of(e) in ("integer", "float")
                    and v == e) for e in s["enum"]):
            out.append(Failure(index, fn, path, f"{at}: {v!r} is not one of "
                               f"{s['enum']!r}"[:300], "not_in_enum"))
        if isinstance(v, dict) and isinstance(s.get("properties"), dict):
            props = s["properties"]
            for req in s.get("required") or ():
                if req not in v:
                    out.append(Failure(index, fn, path, f"{at}: required key {req!r} missing",
                                       "missing_required"))
            open_ = s.get("additionalProperties", False) not in (False, None)
            for k, item in v.items():
                if k in props:
                    stack.append((item, props[k], f"{at}.{k}"))
                elif not open_:
                    out.append(Failure(index, fn, path, f"{at}: key {k!r} is not declared",
                                       "unexpected_argument"))
        elif isinstance(v, list) and isinstance(s.get("items"), dict):
            stack.extend((item, s["items"], f"{at}[{i}]") for i, item in enumerate(v))
    return out


def tool_call_validity(calls: Sequence[Any], functions: Sequence[Function]) -> CallVerdict:
    """Every call made checked against ``functions`` (module docstring); ``ok`` when all
    are valid (no call made is valid)."""
    fmap = {f.name: f for f in functions}
    out: list[Failure] = []
    for i, raw in enumerate(calls):
        c = as_call(raw, f"call {i + 1}")
        fn = fmap.get(c.name)
        if fn is None:
            out.append(Failure(i, c.name, None, f"{c.name!r} is not one of the tools offered ("
                               + (", ".join(sorted(fmap)) or "none") + ")", "not_a_function"))
            continue
        props = fn.properties
        for req in fn.required:
            if req not in c.arguments:
                out.append(Failure(i, c.name, req, f"required argument {req!r} missing",
                                   "missing_required"))
        for arg, value in c.arguments.items():
            if arg not in props:
                if fn.closed:
                    out.append(Failure(i, c.name, arg, f"argument {arg!r} is not declared by "
                                       f"{c.name!r}", "unexpected_argument"))
                continue
            out.extend(_value_failures(value, props[arg], arg, i, c.name))
    return CallVerdict(not out, out, "validity")
