"""Tool calls checked as the function-calling benchmarks check them: 0/1 per conversation.

Three judge-free metrics over ``localeval.toolcheck`` (docs/conversations-and-agents.md,
"Checked as function-calling benchmarks check"); each scores 1 or 0, so ``localeval
diff`` compares two versions with the exact paired test for 0/1 scores:

- ``tool_call_ast`` (``category``: ``auto`` (default), ``simple``, ``multiple``,
  ``parallel``, ``parallel_multiple``, ``irrelevance``): the calls made against
  ``possible_answers`` as the Berkeley Function Calling Leaderboard's AST checker decides,
  values compared by the types the row's ``tools`` declare. When ``possible_answers``
  gives one list per user message, the calls made after each user message are checked
  against that turn's list, and the conversation scores 1 only if every turn passes.
- ``tool_call_validity``: every call made is one the row's ``tools`` allow (the function
  exists, required arguments given, no undeclared argument, each value of its type and
  enum). A conversation without calls is valid.
- ``tool_trajectory`` (``mode``: ``strict`` (default), ``unordered``, ``subset``,
  ``superset``): the calls made, one step per assistant message, against
  ``reference_trajectory`` (steps), else ``possible_answers`` or ``reference_tool_calls``
  taken in order (for ``strict`` cut into the assistant's steps).

The details keep every failure with the conversation's turn (1-based message number) and
call (1-based, in conversation order) it concerns, which the report's conversation view
shows beside the call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.specs import register
from localeval.toolcheck import (
    CATEGORIES,
    TRAJECTORY_MODES,
    Call,
    CallVerdict,
    check_calls,
    cut_like,
    match_trajectory,
    read_functions,
    read_possible_answers,
    tool_call_validity,
)
from localeval.types import MultiTurnSample, Sample, Score

__all__ = ["ToolCallAst", "ToolCallValidity", "ToolTrajectory", "CHECK_KEY"]

NOT_A_CONVERSATION = "not a conversation: tool-call checks read a conversation's messages"
#: The details key that holds the failures the report shows beside the calls.
CHECK_KEY = "failures"

Category = Literal["auto", "simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]
Mode = Literal["strict", "unordered", "subset", "superset"]


@dataclass(frozen=True)
class _Made:
    """The calls made, with where each sits: (message number, call number), both 1-based."""

    calls: list[Call]
    where: list[tuple[int, int]]
    user_turn: list[int]  # how many user messages came before each call
    steps: list[list[Call]]


def _made(sample: MultiTurnSample) -> _Made:
    calls, where, turn, steps = [], [], [], []
    users = 0
    for n, m in enumerate(sample.messages, 1):
        if m.role == "user":
            users += 1
        if m.role != "assistant" or not m.tool_calls:
            continue
        step = []
        for c in m.tool_calls:
            call = Call(c.name, c.args)
            calls.append(call)
            step.append(call)
            where.append((n, len(calls)))
            turn.append(max(users, 1))
        steps.append(step)
    return _Made(calls, where, turn, steps)


def _failures(verdict: CallVerdict, where: list[tuple[int, int]],
              user_turn: int | None = None) -> list[dict[str, Any]]:
    out = []
    for f in verdict.failures:
        d = f.to_dict()
        at = where[f.call_index] if f.call_index is not None and f.call_index < len(
            where) else None
        d["turn"], d["call"] = at if at else (None, None)
        if user_turn is not None:
            d["user_turn"] = user_turn
        out.append(d)
    return out


def _functions(sample: MultiTurnSample) -> list[Any] | None:
    return read_functions(sample.tools) if sample.tools is not None else None


def _score(ok: bool, failures: list[dict[str, Any]], **details: Any) -> Score:
    return Score(1.0 if ok else 0.0, details={**details, CHECK_KEY: failures})


@register
@dataclass(frozen=True)
class ToolCallAst(Metric):
    """The calls made against the possible answers, as BFCL's AST checker decides."""

    name: ClassVar[str] = "tool_call_ast"
    description: ClassVar[str] = ("1 when the tool calls match the possible answers as BFCL's "
                                  "AST checker decides (category; types from tools), no judge")
    requires: ClassVar[tuple[str, ...]] = ("messages", "possible_answers")

    category: Category = "auto"

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {', '.join(CATEGORIES)}")

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        if not isinstance(sample, MultiTurnSample):
            return Score.unscored(NOT_A_CONVERSATION)
        if sample.possible_answers is None:
            return Score.unscored("missing possible_answers")
        made, fns = _made(sample), _functions(sample)
        raw = sample.possible_answers
        if not (raw and all(isinstance(t, list) for t in raw)):  # one list: the whole talk
            v = check_calls(made.calls, read_possible_answers(raw), fns, category=self.category)
            return _score(v.ok, _failures(v, made.where), category=v.category)
        failures: list[dict[str, Any]] = []
        cats = []
        for t, turn in enumerate(raw, 1):
            idx = [i for i, u in enumerate(made.user_turn) if u == t]
            v = check_calls([made.calls[i] for i in idx], read_possible_answers(turn), fns,
                            category=self.category)
            cats.append(v.category)
            failures.extend(_failures(v, [made.where[i] for i in idx], t))
        return _score(not failures, failures, category=cats, turns=len(raw))


@register
@dataclass(frozen=True)
class ToolCallValidity(Metric):
    """Every call made is one the tool definitions allow."""

    name: ClassVar[str] = "tool_call_validity"
    description: ClassVar[str] = ("1 when every tool call made is valid against the tool "
                                  "definitions (function, required, undeclared, type, enum)")
    requires: ClassVar[tuple[str, ...]] = ("messages", "tools")

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        if not isinstance(sample, MultiTurnSample):
            return Score.unscored(NOT_A_CONVERSATION)
        if sample.tools is None:
            return Score.unscored("missing tools")
        made = _made(sample)
        v = tool_call_validity(made.calls, read_functions(sample.tools))
        return _score(v.ok, _failures(v, made.where), calls=len(made.calls))


@register
@dataclass(frozen=True)
class ToolTrajectory(Metric):
    """The calls made, step by step, against the reference trajectory (agentevals' modes)."""

    name: ClassVar[str] = "tool_trajectory"
    description: ClassVar[str] = ("1 when the tool-call steps match the reference trajectory "
                                  "(mode: strict, unordered, subset, superset), no judge")
    requires: ClassVar[tuple[str, ...]] = ("messages",)

    mode: Mode = "strict"

    def __post_init__(self) -> None:
        if self.mode not in TRAJECTORY_MODES:
            raise ValueError(f"mode must be one of {', '.join(TRAJECTORY_MODES)}")

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        if not isinstance(sample, MultiTurnSample):
            return Score.unscored(NOT_A_CONVERSATION)
        made = _made(sample)
        if sample.reference_trajectory is not None:
            steps, source = sample.reference_trajectory, "reference_trajectory"
        else:
            flat = _flat_reference(sample)
            if flat is None:
                return Score.unscored("no reference calls: give reference_trajectory, "
                                      "possible_answers or reference_tool_calls")
            steps, source = cut_like(flat[0], made.steps), flat[1]
        v = match_trajectory(made.steps, steps, self.mode, _functions(sample))
        return _score(v.ok, _failures(v, made.where), reference=source,
                      steps=len(made.steps))


def _flat_reference(sample: MultiTurnSample) -> tuple[list[Any], str] | None:
    raw = sample.possible_answers
    if raw is not None:
        flat = [a for t in raw for a in t] if raw and all(isinstance(t, list) for t in raw) \
            else list(raw)
        return flat, "possible_answers"
    if sample.reference_tool_calls is not None:
        return [{"name": c.name, "arguments": c.args} for c in sample.reference_tool_calls], \
            "reference_tool_calls"
    return None
