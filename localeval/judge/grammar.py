"""JSON schema -> GBNF grammar for constrained judge output, with strict strings.

The conversion itself is llama-cpp-python's port of llama.cpp's
json-schema-to-grammar (``llama_cpp.llama_grammar.SchemaConverter``); what is
written here is what that port gets wrong or leaves open:

* Its string-character rule ``[^"\\\\]`` admits raw control characters
  (U+0000-U+001F), which strict ``json.loads`` rejects: with random weights
  most generated objects failed to parse. Upstream llama.cpp has since fixed
  the rule; :data:`STRICT_CHAR_RULE` is that fix, plus no ``\\u`` escapes of
  lone surrogates (valid JSON, but such a string cannot be written as UTF-8
  to the cache or results files).
* Unbounded strings and arrays let a model run to its token budget and cut
  the JSON. Every string must carry ``maxLength`` (or be an enum/const) and
  every array ``maxItems``; :func:`check_bounds` refuses anything else,
  naming the path, and nothing ever falls back to unconstrained JSON.
* :func:`max_tokens_for` turns the bounds into a token budget.
* :func:`allowed_values` finds the values of a verdict field, for verdict
  probabilities.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel

__all__ = [
    "STRICT_CHAR_RULE",
    "stock_char_rule",
    "json_schema",
    "check_bounds",
    "schema_to_gbnf",
    "stock_gbnf",
    "max_tokens_for",
    "allowed_values",
    "TOKENS_PER_CHAR",
]

#: One JSON string character: any code point except '"', '\\', DEL and the C0
#: controls, or an escape. ``\\u`` escapes exclude D800-DFFF (lone surrogates).
STRICT_CHAR_RULE = (
    r'[^"\\\x7F\x00-\x1F] | [\\] (["\\/bfnrt] | "u" ('
    r'[0-9a-cA-C] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} | [eEfF] [0-9a-fA-F]{3}))'
)


def stock_char_rule() -> str:
    """llama-cpp-python's own string-character rule (the one with the bug)."""
    from localeval.judge.llama.compat import json_schema_converter

    return json_schema_converter()[2]


#: Budget per string character: a CJK character unmerged is 3 byte tokens; an
#: escape such as \\u00e9 can be 6, which the judges' one doubling retry covers.
TOKENS_PER_CHAR = 3

_UNSUPPORTED = ("pattern", "patternProperties", "not", "if", "then", "else")


def json_schema(schema: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a pydantic model (or a schema dict, returned as is)."""
    if isinstance(schema, dict):
        return schema
    return schema.model_json_schema()


def _resolver(root: dict[str, Any]):
    def resolve(node: dict[str, Any], path: str, seen: tuple[str, ...]) -> tuple[dict, tuple]:
        while "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"{path}: only local $ref is supported, got {ref!r}")
            if ref in seen:
                raise ValueError(f"{path}: recursive schema via {ref} has no bound")
            seen = seen + (ref,)
            target: Any = root
            for part in ref[2:].split("/"):
                target = target[part]
            node = target
        return node, seen

    return resolve


def _walk(schema: dict[str, Any], visit) -> Any:
    """Depth-first over a schema, resolving local refs; ``visit(node, path, recurse)``."""
    resolve = _resolver(schema)

    def go(node: dict[str, Any], path: str, seen: tuple[str, ...]):
        node, seen = resolve(node, path, seen)
        return visit(node, path, lambda child, sub: go(child, sub, seen))

    return go(schema, "$", ())


def _alternatives(node: dict[str, Any]) -> list[dict[str, Any]] | None:
    alts = node.get("anyOf") or node.get("oneOf")
    if alts:
        return alts
    if isinstance(node.get("type"), list):
        return [{**node, "type": t} for t in node["type"]]
    return None


def check_bounds(schema: type[BaseModel] | dict[str, Any]) -> None:
    """Raise ValueError naming the first unbounded or unsupported part of ``schema``."""
    root = json_schema(schema)

    def visit(node: dict[str, Any], path: str, recurse) -> None:
        for kw in _UNSUPPORTED:
            if kw in node:
                raise ValueError(f"{path}: '{kw}' is not supported in judge output schemas")
        if "enum" in node or "const" in node:
            return
        alts = _alternatives(node)
        if alts is not None:
            for i, alt in enumerate(alts):
                recurse(alt, f"{path}|{i}")
            return
        if "allOf" in node:
            if len(node["allOf"]) != 1:
                raise ValueError(f"{path}: 'allOf' with several parts is not supported")
            recurse(node["allOf"][0], path)
            return
        t = node.get("type")
        if t == "string":
            if node.get("format") in ("date", "time", "date-time") or str(
                    node.get("format", "")).startswith("uuid"):
                return
            if "maxLength" not in node:
                raise ValueError(f"{path}: string has no maxLength; bound it, e.g. "
                                 "Field(max_length=300)")
        elif t == "array":
            items = node.get("items")
            if isinstance(items, list) or "prefixItems" in node:
                raise ValueError(f"{path}: tuple arrays are not supported")
            if "maxItems" not in node:
                raise ValueError(f"{path}: array has no maxItems; bound it, e.g. "
                                 "Field(max_length=20)")
            if not isinstance(items, dict) or not items:
                raise ValueError(f"{path}: array items have no schema")
            recurse(items, f"{path}[]")
        elif t == "object" or (t is None and "properties" in node):
            props = node.get("properties")
            if not props:
                raise ValueError(f"{path}: object has no properties (free-form objects are "
                                 "unbounded)")
            extra = node.get("additionalProperties")
            if extra not in (None, False):
                raise ValueError(f"{path}: additionalProperties is not supported")
            for k, v in props.items():
                recurse(v, f"{path}.{k}")
        elif t in ("integer", "number", "boolean", "null"):
            return
        else:
            raise ValueError(f"{path}: schema without a supported type: "
                             f"{json.dumps(node)[:120]}")

    _walk(root, visit)


def _converter_cls():
    from localeval.judge.llama.compat import json_schema_converter

    SchemaConverter, BuiltinRule, stock = json_schema_converter()

    def _add_primitive(self: Any, name: str, rule: Any) -> Any:
        if rule.content == stock:
            rule = BuiltinRule(STRICT_CHAR_RULE, [])
        return SchemaConverter._add_primitive(self, name, rule)

    # the stock converter with the corrected string-character rule (a class made at run
    # time: llama-cpp-python's converter comes through the fence, compat.py)
    StrictConverter = type("StrictConverter", (SchemaConverter,),
                           {"_add_primitive": _add_primitive, "__doc__":
                            "The stock converter with the corrected string-character rule."})

    return SchemaConverter, StrictConverter, stock


def _convert(root: dict[str, Any], strict: bool) -> str:
    stock_cls, strict_cls, stock_rule = _converter_cls()
    cls = strict_cls if strict else stock_cls
    conv = cls(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    resolved = conv.resolve_refs(json.loads(json.dumps(root)), "stdin")
    conv.visit(resolved, "")
    gbnf = conv.format_grammar()
    if strict and stock_rule in gbnf:
        raise AssertionError("stock string-character rule survived the conversion")
    return gbnf


@functools.lru_cache(maxsize=256)
def _gbnf_cached(schema_json: str, strict: bool) -> str:
    root = json.loads(schema_json)
    check_bounds(root)
    return _convert(root, strict)


def schema_to_gbnf(schema: type[BaseModel] | dict[str, Any]) -> str:
    """GBNF for ``schema`` with strict strings; ValueError if any part is unbounded.

    Memoised on the schema's JSON, so a judge converts each step's schema once.
    """
    return _gbnf_cached(json.dumps(json_schema(schema)), True)


def stock_gbnf(schema: type[BaseModel] | dict[str, Any]) -> str:
    """What ``LlamaGrammar.from_json_schema`` would give (the stock, buggy rule).

    Kept for the comparison test and the benchmark, never used for judging.
    """
    return _gbnf_cached(json.dumps(json_schema(schema)), False)


# -- token budget -----------------------------------------------------------------
_NUMBER_CHARS = {"integer": 17, "number": 17 + 17 + 18, "boolean": 5, "null": 4}


def max_tokens_for(schema: type[BaseModel] | dict[str, Any],
                   tokens_per_char: int = TOKENS_PER_CHAR) -> int:
    """Worst-case output tokens for ``schema``'s grammar.

    Structure (braces, keys, enum values, digits) is counted at one token per
    character, the worst a byte-level vocabulary can do; string content at
    ``tokens_per_char`` per character. Every optional space the grammar allows
    is counted, plus one token for end-of-generation.
    """
    root = json_schema(schema)
    check_bounds(root)
    S = 1  # the grammar's `space ::= " "?`

    def visit(node: dict[str, Any], path: str, recurse) -> int:
        if "const" in node:
            return len(json.dumps(node["const"], ensure_ascii=False)) + S
        if "enum" in node:
            return max(len(json.dumps(v, ensure_ascii=False)) for v in node["enum"]) + S
        alts = _alternatives(node)
        if alts is not None:
            return max(recurse(a, path) for a in alts)
        if "allOf" in node:
            return recurse(node["allOf"][0], path)
        t = str(node.get("type"))
        if t == "string":
            fmt = str(node.get("format", ""))
            if fmt:
                return 2 + 40 + S
            return 2 + tokens_per_char * int(node["maxLength"]) + S
        if t == "array":
            n = int(node["maxItems"])
            return 1 + S + n * (recurse(node["items"], path) + 1 + S) + 1 + S
        if t == "object" or "properties" in node:
            total = 1 + S + 1 + S
            for k, v in node["properties"].items():
                total += len(json.dumps(k, ensure_ascii=False)) + S + 1 + S + recurse(v, path)
                total += 1 + S  # comma
            return total
        return _NUMBER_CHARS[t] + S

    return int(_walk(root, visit)) + 1


# -- verdict fields ---------------------------------------------------------------
def allowed_values(schema: type[BaseModel] | dict[str, Any], field: str) -> list[Any]:
    """The enum values of property ``field`` wherever it occurs in ``schema``.

    Raises ValueError when the field is missing or is not a Literal/enum, or
    when its occurrences disagree.
    """
    root = json_schema(schema)
    found: list[list[Any]] = []

    def values_of(node: dict[str, Any], recurse) -> list[Any] | None:
        if "enum" in node:
            return list(node["enum"])
        if "const" in node:
            return [node["const"]]
        alts = _alternatives(node)
        if alts:
            out: list[Any] = []
            for a in alts:
                vals = recurse(a)
                if vals is None:
                    return None
                out += [v for v in vals if v not in out]
            return out
        return None

    def visit(node: dict[str, Any], path: str, recurse) -> None:
        alts = _alternatives(node)
        if alts is not None:
            for a in alts:
                recurse(a, path)
            return
        if "allOf" in node:
            recurse(node["allOf"][0], path)
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            recurse(node["items"], path + "[]")
        for k, v in (node.get("properties") or {}).items():
            if k == field:
                resolve = _resolver(root)

                def rec(n: dict[str, Any]) -> list[Any] | None:
                    n, _ = resolve(n, path, ())  # noqa: B023 - rec runs within this iteration
                    return values_of(n, rec)

                vals = rec(v)
                if vals is None:
                    raise ValueError(f"{path}.{k}: verdict field is not a Literal/enum")
                found.append(vals)
            else:
                recurse(v, f"{path}.{k}")

    _walk(root, visit)
    if not found:
        raise ValueError(f"schema has no field {field!r}")
    if any(f != found[0] for f in found[1:]):
        raise ValueError(f"field {field!r} has different allowed values in different places")
    return found[0]
