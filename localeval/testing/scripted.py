"""A judge that answers from a script, to pin metric arithmetic in tests.

The script maps a step name to what the judge answers for that step:

- a dict (or pydantic object): the same output every time;
- a list: one entry per call, consumed in order (each entry may itself be a
  dict, a ``ScriptedReply``, a callable or an exception);
- a callable ``f(request) -> dict``: computed per call (it may raise);
- an exception instance (e.g. ``JudgeCallError("truncated")``): raised.

With ``auto=True``, steps missing from the script get a schema-derived
output (``auto_output``): every list at its minimum size (at least one item),
every string a placeholder, every verdict or rating its highest allowed
value. Useful for layout and runner tests that need a full run, not values.

Outputs are validated against the request's schema like a real judge's, and
an invalid one raises ``JudgeCallError`` (a real judge's output could not be
invalid, so this is how a script mistake surfaces as an unscored sample).
When the request asks for verdict probabilities and the entry gives none,
the chosen value gets probability 1 (one-hot), which is what a perfectly
confident model would return.

Every request is recorded in ``requests`` so tests can assert on prompts,
languages and the shared-prefix layout. Usage counts characters as tokens and
"reuses" the common prefix with the previous prompt, mimicking llama.cpp's
single-slot KV cache, so layout regressions show up in ``usage`` too. A
``JudgeCallError`` it raises (scripted, or for invalid output) carries that
usage too, as a real judge's failed call does.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ValidationError

from localeval.errors import JudgeCallError
from localeval.judge import JudgeBackend, JudgeReply, JudgeRequest, Usage

__all__ = ["ScriptedJudge", "ScriptedReply", "auto_output"]


@dataclass(frozen=True)
class ScriptedReply:
    """An output with explicit verdict probabilities (one dict per verdict occurrence)."""

    output: Mapping[str, Any] | BaseModel
    probs: list[dict[str, float]] | None = None


class ScriptedJudge(JudgeBackend):
    """Judge protocol implementation driven by ``script`` (see module docstring).

    One call at a time (``JudgeBackend``'s defaults): a script's list entries
    are consumed in call order, which threads would shuffle.
    """

    fingerprint = "scripted"
    name = "scripted"

    def __init__(self, script: Mapping[str, Any] | None = None, *, auto: bool = False) -> None:
        self.script: dict[str, Any] = dict(script or {})
        self.auto = auto
        self.requests: list[JudgeRequest] = []
        self._pos: dict[str, int] = defaultdict(int)
        self._last_prompt = ""

    # -- inspection helpers ---------------------------------------------------
    def calls(self, step: str | None = None) -> list[JudgeRequest]:
        """Recorded requests, optionally only those of one step."""
        return [r for r in self.requests if step is None or r.step == step]

    def steps(self) -> list[str]:
        """Step names in call order."""
        return [r.step for r in self.requests]

    # -- the Judge protocol -----------------------------------------------------
    def ask(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        if request.step not in self.script:
            if self.auto:
                return self._reply(request, auto_output(request.schema))
            raise KeyError(f"ScriptedJudge has no script for step {request.step!r}")
        entry = self.script[request.step]
        if isinstance(entry, list):
            i = self._pos[request.step]
            if i >= len(entry):
                raise IndexError(f"ScriptedJudge script for step {request.step!r} exhausted "
                                 f"after {len(entry)} calls")
            self._pos[request.step] = i + 1
            entry = entry[i]
        return self._reply(request, entry)

    def _reply(self, request: JudgeRequest, entry: Any) -> JudgeReply:
        if callable(entry) and not isinstance(entry, (BaseModel, ScriptedReply, BaseException)):
            try:
                entry = _call(entry, request)
            except JudgeCallError as e:  # raised by the callable: given its usage below
                entry = e
        if isinstance(entry, JudgeCallError) and not entry.usage.calls:
            entry.usage = self._usage(request)  # a failed call costs what a reply would
        if isinstance(entry, BaseException):
            raise entry
        probs = None
        if isinstance(entry, ScriptedReply):
            entry, probs = entry.output, entry.probs
        data = entry.model_dump() if isinstance(entry, BaseModel) else entry
        try:
            output = request.schema.model_validate(data)
        except ValidationError as e:
            raise JudgeCallError(f"scripted output for step {request.step!r} does not match "
                                 f"{request.schema.__name__}: {e}",
                                 usage=self._usage(request)) from None
        if request.prob_field is None:
            probs = None
        elif probs is None:
            probs = _one_hot(output.model_dump(), request.prob_field)
        return JudgeReply(output=output, raw=output.model_dump_json(), usage=self._usage(request),
                          probs=probs)

    def _usage(self, request: JudgeRequest) -> Usage:
        prompt = "".join(f"<{m['role']}>{m['content']}" for m in request.messages)
        reused = len(os.path.commonprefix([prompt, self._last_prompt]))
        self._last_prompt = prompt
        return Usage(calls=1, prompt_tokens=len(prompt), reused_tokens=reused)


def _call(fn: Callable[[JudgeRequest], Any], request: JudgeRequest) -> Any:
    return fn(request)


def _one_hot(data: Any, field: str) -> list[dict[str, float]]:
    """Probability 1 on the chosen value of every occurrence of ``field``, in output order."""
    out: list[dict[str, float]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k == field and not isinstance(v, (dict, list)):
                    out.append({str(v): 1.0})
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(data)
    return out


def auto_output(schema: type[BaseModel]) -> dict[str, Any]:
    """A valid output for ``schema`` built from its JSON schema (see module docstring)."""
    js = schema.model_json_schema()
    defs = js.get("$defs", {})

    def build(node: dict[str, Any], label: str) -> Any:
        if "$ref" in node:
            return build(defs[node["$ref"].rsplit("/", 1)[1]], label)
        if "enum" in node:
            return max(node["enum"])
        kind = node.get("type")
        if kind == "object":
            return {k: build(v, k) for k, v in node.get("properties", {}).items()}
        if kind == "array":
            n = max(int(node.get("minItems", 1)), 1)
            return [build(node.get("items", {}), f"{label} {i + 1}") for i in range(n)]
        if kind == "string":
            return label[: int(node.get("maxLength", len(label)))]
        if kind == "integer":
            return int(node.get("minimum", 0))
        if kind == "number":
            return float(node.get("minimum", 0.0))
        if kind == "boolean":
            return True
        raise TypeError(f"auto_output cannot build {node!r}")

    return build(js, schema.__name__)
