"""One argument's value against its accepted values, by the type its schema declares.

The rules are the Berkeley Function Calling Leaderboard's AST checker's, written out
(docs/conversations-and-agents.md, "Type rules"); no library compares values this way:

- a declared type is checked first: ``integer`` takes an integer (not ``9.0``, not
  ``true``), ``float``/``number`` an integer or a float, ``boolean`` only ``true``/
  ``false``, ``string`` text, ``array``/``tuple`` a list (each item of its ``items``
  type), ``dict``/``object`` an object; ``any`` takes any value. Without a declared type
  the accepted values' own types decide.
- a value of another type than the declared one is still right when the accepted values
  are of that other type (BFCL's "variable" rule: an answer that names a variable where
  a number is declared); it is then compared exactly.
- strings are compared after BFCL's normalisation: spaces and ``, . / - _ * ^`` removed,
  lower case, ``'`` read as ``"``; with ``"format": "date"`` or ``"date-time"``
  declared, two ISO dates that parse are compared as dates.
- numbers by value (``9`` equals ``9.0`` once the type has passed); booleans only as
  booleans; lists item by item in order (any order with ``"x-unordered": true``);
  objects key by key, recursively; BFCL's per-key accepted values (``Choices``) with
  its optional keys.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Iterable

from localeval.toolcheck.shapes import OPTIONAL, TYPE_WORDS, Choices

__all__ = ["normalise", "kinds_of", "kind_of", "fits", "compare_value", "type_problem"]

_PUNCT = re.compile(r"[ ,./\-_*^]")


def normalise(text: str) -> str:
    """BFCL's string normalisation: spaces and ``, . / - _ * ^`` removed, lower case,
    ``'`` as ``"`` ("April 1, 2024" equals "april 1 2024")."""
    return _PUNCT.sub("", text).lower().replace("'", '"')


def kinds_of(schema: Any) -> frozenset[str] | None:
    """The kinds a schema declares (None: no type declared)."""
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if t is None:
        return None
    words = t if isinstance(t, list) else [t]
    return frozenset(TYPE_WORDS.get(str(w), str(w)) for w in words)


def kind_of(value: Any) -> str:
    """A JSON value's kind, as ``TYPE_WORDS`` names kinds (a float is ``float``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def fits(value: Any, kinds: frozenset[str]) -> bool:
    """Whether ``value`` is of one of ``kinds`` (an integer fits a float, as BFCL allows)."""
    k = kind_of(value)
    return "any" in kinds or k in kinds or (k == "integer" and "float" in kinds)


def type_problem(value: Any, schema: Any) -> str | None:
    """Why ``value`` is not of the type ``schema`` declares, at any depth (None: it is)."""
    kinds = kinds_of(schema)
    if kinds is not None and not fits(value, kinds):
        return f"expected {'/'.join(sorted(kinds))}, got {kind_of(value)} {_short(value)}"
    if isinstance(value, (list, tuple)) and isinstance(schema, dict) and "items" in schema:
        for i, item in enumerate(value, 1):
            why = type_problem(item, schema["items"])
            if why:
                return f"item {i}: {why}"
    if isinstance(value, dict) and isinstance(schema, dict):
        props = schema.get("properties") or {}
        for k, v in value.items():
            if k in props:
                why = type_problem(v, props[k])
                if why:
                    return f"key {k!r}: {why}"
    return None


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_kind(options: Iterable[Any]) -> str | None:
    """The kind of the first accepted value that is not ``""`` (BFCL's answer type)."""
    for o in options:
        if o is OPTIONAL or o == "":
            continue
        return "object" if isinstance(o, Choices) else kind_of(o)
    return None


def _date(text: str, fmt: str) -> Any:
    try:
        return (_dt.date.fromisoformat(text) if fmt == "date" else
                _dt.datetime.fromisoformat(text))
    except ValueError:
        return None


def _equal(value: Any, option: Any, schema: Any, exact: bool) -> bool:
    """Whether ``value`` equals one accepted ``option`` (``exact``: no string normalisation,
    BFCL's comparison of a "variable")."""
    if isinstance(option, Choices):
        return isinstance(value, dict) and _choices_problem(value, option, schema) is None
    if isinstance(option, str):
        if not isinstance(value, str):
            return False
        fmt = schema.get("format") if isinstance(schema, dict) else None
        if fmt in ("date", "date-time") and not exact:
            a, b = _date(value, fmt), _date(option, fmt)
            if a is not None and b is not None:
                return bool(a == b)
        return value == option if exact else normalise(value) == normalise(option)
    if isinstance(option, bool) or isinstance(value, bool):
        return isinstance(option, bool) and isinstance(value, bool) and value == option
    if isinstance(option, (int, float)):
        return isinstance(value, (int, float)) and value == option
    if option is None:
        return value is None
    items = schema.get("items") if isinstance(schema, dict) else None
    if isinstance(option, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(option):
            return False
        if isinstance(schema, dict) and schema.get("x-unordered"):
            return _multiset_equal(list(value), list(option), items, exact)
        return all(_equal(v, o, items, exact) for v, o in zip(value, option))
    if isinstance(option, dict):
        if not isinstance(value, dict) or set(value) != set(option):
            return False
        props = (schema.get("properties") or {}) if isinstance(schema, dict) else {}
        return all(_equal(value[k], option[k], props.get(k), exact) for k in option)
    return bool(value == option)


def _multiset_equal(values: list[Any], options: list[Any], schema: Any, exact: bool) -> bool:
    left = list(options)
    for v in values:
        for j, o in enumerate(left):
            if _equal(v, o, schema, exact):
                del left[j]
                break
        else:
            return False
    return True


def _choices_problem(value: dict[str, Any], choices: Choices, schema: Any) -> str | None:
    """BFCL's per-key check of an object: no key it does not list, each value among its
    key's accepted values, each key it lists given unless optional."""
    props = (schema.get("properties") or {}) if isinstance(schema, dict) else {}
    for k, v in value.items():
        if k not in choices.keys:
            return f"unexpected key {k!r}"
        opts = [o for o in choices.keys[k] if o is not OPTIONAL]
        if not any(_equal(v, o, props.get(k), False) for o in opts):
            return f"key {k!r}: {_short(v)} is not among {_short(opts)}"
    for k in choices.keys:
        if k not in value and k not in choices.optional:
            return f"missing key {k!r}"
    return None


def compare_value(value: Any, options: tuple[Any, ...], schema: Any) -> tuple[str, str] | None:
    """``(kind, reason)`` when ``value`` is not accepted, else None.

    ``kind`` is ``wrong_type`` (the declared type, or with none declared the accepted
    values' type, refuses it) or ``wrong_value``.
    """
    values = [o for o in options if o is not OPTIONAL]
    declared = kinds_of(schema)
    answer_kind = _first_kind(values)
    exact = False
    if declared is not None and "any" not in declared:
        if answer_kind is not None and not fits(_probe(answer_kind), declared):
            exact = True  # BFCL's variable: the answers are of another type than declared
            if kind_of(value) != answer_kind and not fits(value, declared):
                return "wrong_type", (f"expected {'/'.join(sorted(declared))} (or "
                                      f"{answer_kind}, as the accepted values are), got "
                                      f"{kind_of(value)} {_short(value)}")
        else:
            why = type_problem(value, _items_variable(schema, values))
            if why:
                return "wrong_type", why
    elif answer_kind is not None:
        k = kind_of(value)
        numeric = {k, answer_kind} <= {"integer", "float"}
        if k != answer_kind and not numeric and not any(
                kind_of(o) == k for o in values if not isinstance(o, Choices)):
            return "wrong_type", f"expected {answer_kind} as the accepted values, got {k} " \
                                 f"{_short(value)}"
    for o in values:
        if _equal(value, o, schema, exact):
            return None
    if len(values) == 1 and isinstance(values[0], Choices) and isinstance(value, dict):
        return "wrong_value", str(_choices_problem(value, values[0], schema))
    shown = [_shown(o) for o in values]
    return "wrong_value", f"{_short(value)} is not among the accepted values {_short(shown)}"


def _items_variable(schema: Any, values: list[Any]) -> Any:
    """The schema to type-check a list against: without its item type when the accepted
    lists hold items of another type (BFCL's variable rule, one level down: items
    ``["apple"]`` accepted where integers are declared, as the answer gives them)."""
    items = kinds_of(schema.get("items")) if isinstance(schema, dict) else None
    if items is None:
        return schema
    for o in values:
        if isinstance(o, list) and o:
            k = _first_kind(o)
            if k is not None and not fits(_probe(k), items):
                return {k: v for k, v in schema.items() if k != "items"}
            return schema
    return schema


def _shown(o: Any) -> Any:
    if isinstance(o, Choices):
        return {k: [x for x in vs if x is not OPTIONAL] for k, vs in o.keys.items()}
    return o


def _probe(kind: str) -> Any:
    """A value of ``kind``, to ask ``fits`` whether the declared type takes that kind."""
    return {"integer": 0, "float": 0.0, "boolean": False, "string": "", "array": [],
            "object": {}, "null": None}.get(kind)
