"""One call against one expected call, and the verdict's types: ``Failure``, ``CallVerdict``.

A call matches an answer when (the Berkeley Function Calling Leaderboard's
``simple_function_checker``, every failure listed rather than the first): the names are
equal; every argument the schema requires is given; every argument given is declared by
the schema and named by the answer; each value is accepted (``values.compare_value``);
every argument the answer names is given unless it is optional.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from localeval.toolcheck.shapes import Call, Function, PossibleAnswer
from localeval.toolcheck.values import compare_value

__all__ = ["Failure", "CallVerdict", "match_call", "function_map"]


@dataclass(frozen=True)
class Failure:
    """Why a check failed: which call (0-based index in the calls checked; None when the
    failure is a call not made), which function and argument, in words, and a short code.

    Codes: ``wrong_value``, ``wrong_type``, ``missing_required``, ``unexpected_argument``,
    ``not_in_enum``, ``wrong_function``, ``not_a_function``, ``wrong_count``,
    ``missing_call``, ``extra_call``, ``should_not_call``.
    """

    call_index: int | None
    function: str | None
    argument: str | None
    reason: str
    kind: str

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call_index, "function": self.function,
                "argument": self.argument, "reason": self.reason, "kind": self.kind}


@dataclass(frozen=True)
class CallVerdict:
    """``ok`` and, when not, the failures (in the order found)."""

    ok: bool
    failures: list[Failure] = field(default_factory=list)
    category: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "category": self.category,
                "failures": [f.to_dict() for f in self.failures]}


def function_map(functions: Iterable[Function] | None) -> dict[str, Function] | None:
    return None if functions is None else {f.name: f for f in functions}


def match_call(call: Call, answer: PossibleAnswer, fmap: dict[str, Function] | None,
               index: int | None = None) -> list[Failure]:
    """Every way ``call`` fails ``answer`` (empty: it matches)."""
    if call.name != answer.name:
        if fmap is not None and call.name not in fmap:
            return [Failure(index, call.name, None, f"{call.name!r} is not one of the "
                            f"functions offered (expected {answer.name!r})", "not_a_function")]
        return [Failure(index, call.name, None, f"called {call.name!r}, expected "
                        f"{answer.name!r}", "wrong_function")]
    fn = fmap.get(call.name) if fmap is not None else None
    if fmap is not None and fn is None:
        return [Failure(index, call.name, None, f"{call.name!r} is not one of the functions "
                        "offered", "not_a_function")]
    out: list[Failure] = []
    args = call.arguments
    props = fn.properties if fn is not None else {}
    for req in fn.required if fn is not None else ():
        if req not in args:
            out.append(Failure(index, call.name, req, f"required argument {req!r} missing",
                               "missing_required"))
    for arg, value in args.items():
        if fn is not None and arg not in props:
            out.append(Failure(index, call.name, arg, f"argument {arg!r} is not declared by "
                               f"{call.name!r}", "unexpected_argument"))
            continue
        if arg not in answer.options:
            out.append(Failure(index, call.name, arg, f"argument {arg!r} is not in the "
                               "expected call", "unexpected_argument"))
            continue
        bad = compare_value(value, answer.options[arg], props.get(arg))
        if bad:
            out.append(Failure(index, call.name, arg, f"{arg}: {bad[1]}", bad[0]))
    for arg in answer.options:
        if arg not in args and arg not in answer.optional and not (
                fn is not None and arg in fn.required):  # already said above
            out.append(Failure(index, call.name, arg, f"argument {arg!r} missing (the "
                               "expected call gives it and it is not optional)",
                               "missing_required"))
    return out
