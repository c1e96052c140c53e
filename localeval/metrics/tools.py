"""Tool-call metrics of conversations, with ragas 0.4's arithmetic: no judge needed.

Both compare the tool calls the assistant made (every assistant message's
``tool_calls``, in the order of the conversation) with the sample's
``reference_tool_calls``; tests/golden/test_ragas_tool_goldens.py pins them to
ragas's own scores.

``tool_call_accuracy`` (ragas's ``ToolCallAccuracy``): the calls are paired in
order (``strict_order=false``: both lists sorted first by name, then argument
names and values, as ragas sorts them); a pair of the same tool scores the share
of the reference's arguments the call matched, and the sum is divided by the
number of reference calls. The score is 0 unless the names line up (the same
sequence, or the same multiset with ``strict_order=false``). Arguments are
compared as ragas compares them, as Python's text of each value (``str``): 1 and
1.0 differ, ``True`` equals the string "True", nested objects compare as their
text, keys in order. ``arg_comparison`` is ``exact`` (ragas's default,
``ExactMatch``) or a string distance (``levenshtein``, ``hamming``, ``jaro``,
``jaro_winkler``: ragas's ``NonLLMStringSimilarity`` as ``arg_comparison_metric``),
which scores each argument 1 - the normalised distance.

``tool_call_f1`` (ragas's ``ToolCallF1``): the calls as sets of (name, arguments),
a match needing the name and every argument equal (nested values compared as
values, where 1, 1.0 and true are equal, as in ragas's hashing); F1 of precision
and recall, rounded to 4 decimals as ragas rounds it. A call made twice counts once.

Degenerate cases, decided as ragas decides (docs/conversations-and-agents.md):

==========================================  ===================  =============
case                                        tool_call_accuracy   tool_call_f1
==========================================  ===================  =============
no calls expected and none made             1.0                  0.0
calls expected, none made                   0.0                  0.0
no calls expected, some made                0.0                  0.0
a call expects no arguments and gets none   counts 1 (its pair)  matches
a call expects no arguments and gets some   counts 0 (its pair)  no match
==========================================  ===================  =============

A sample without ``reference_tool_calls`` is unscored (missing), as ragas
requires them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.specs import register
from localeval.metrics.strings import string_similarity
from localeval.types import MultiTurnSample, Sample, Score, ToolCall

__all__ = ["ToolCallAccuracy", "ToolCallF1", "ARG_COMPARISONS", "hashable"]

ArgComparison = Literal["exact", "levenshtein", "hamming", "jaro", "jaro_winkler"]
ARG_COMPARISONS: tuple[str, ...] = ("exact", "levenshtein", "hamming", "jaro", "jaro_winkler")
NOT_A_CONVERSATION = "not a conversation: tool-call metrics read a conversation's messages"


def _sort_key(call: ToolCall) -> tuple[str, ...]:
    """ragas's sort key: the name, then each argument's name and text, names sorted."""
    key = [call.name]
    for name in sorted(call.args):
        key.extend((name, str(call.args[name])))
    return tuple(key)


def hashable(value: Any) -> Any:
    """A JSON value as a hashable one, as ragas's ``make_hashable``: objects as frozensets
    of (key, value) pairs, arrays as tuples. Written out (no library does this) so the
    equality is ragas's: 1, 1.0 and True hash and compare equal."""
    if isinstance(value, dict):
        return frozenset((k, hashable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, set):
        return frozenset(hashable(v) for v in value)
    return value


@dataclass(frozen=True)
class _ToolCallMetric(Metric):
    """The calls made and the reference calls of a conversation, to ``compare``."""

    requires: ClassVar[tuple[str, ...]] = ("messages", "reference_tool_calls")

    def compare(self, made: list[ToolCall], expected: list[ToolCall]) -> Score:
        raise NotImplementedError

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        if not isinstance(sample, MultiTurnSample):
            return Score.unscored(NOT_A_CONVERSATION)
        if sample.reference_tool_calls is None:
            return Score.unscored("missing reference_tool_calls")
        return self.compare(sample.tool_calls(), list(sample.reference_tool_calls))


@register
@dataclass(frozen=True)
class ToolCallAccuracy(_ToolCallMetric):
    """Calls paired with the reference's in order; argument matches, 0 if names misalign."""

    name: ClassVar[str] = "tool_call_accuracy"
    description: ClassVar[str] = ("tool calls against the reference calls, in order (ragas "
                                  "ToolCallAccuracy; strict_order, arg_comparison)")

    strict_order: bool = True
    arg_comparison: ArgComparison = "exact"

    def __post_init__(self) -> None:
        if self.arg_comparison not in ARG_COMPARISONS:
            raise ValueError(f"arg_comparison must be one of {', '.join(ARG_COMPARISONS)}")

    def _arg_score(self, pred: dict[str, Any], ref: dict[str, Any]) -> float:
        if not ref and not pred:
            return 1.0
        if not ref:
            return 0.0
        total = 0.0
        for arg, want in ref.items():
            if arg in pred:
                got, exp = str(pred[arg]), str(want)
                total += float(got == exp) if self.arg_comparison == "exact" else \
                    string_similarity(exp, got, self.arg_comparison)
        return total / len(ref)

    def compare(self, made: list[ToolCall], expected: list[ToolCall]) -> Score:
        pred, ref = made, expected
        counts = {"made": len(pred), "expected": len(ref)}
        if not pred and not ref:
            return Score(1.0, details={**counts, "note": "no tool call expected and none made"})
        if not pred:
            return Score(0.0, details={**counts, "note": "no tool call made"})
        if not ref:
            return Score(0.0, details={**counts, "note": "no tool call expected, some made"})
        if not self.strict_order:
            pred, ref = sorted(pred, key=_sort_key), sorted(ref, key=_sort_key)
        names_p, names_r = [c.name for c in pred], [c.name for c in ref]
        aligned = names_p == names_r if self.strict_order else sorted(names_p) == sorted(names_r)
        pairs = []
        total = 0.0
        for r, p in zip(ref, pred):
            s = self._arg_score(p.args, r.args) if r.name == p.name else 0.0
            total += s
            pairs.append({"expected": r.name, "made": p.name, "args_score": s})
        value = total / len(ref)
        compared = min(len(pred), len(ref))
        if compared < len(ref):
            value *= compared / len(ref)  # ragas's coverage penalty
        return Score(value * int(aligned), details={**counts, "sequence_aligned": aligned,
                                                    "pairs": pairs})


@register
@dataclass(frozen=True)
class ToolCallF1(_ToolCallMetric):
    """F1 of the calls made against the reference calls, as sets of (name, arguments)."""

    name: ClassVar[str] = "tool_call_f1"
    description: ClassVar[str] = ("F1 of tool calls made against the reference calls, name and "
                                  "arguments equal (ragas ToolCallF1)")

    def compare(self, made: list[ToolCall], expected: list[ToolCall]) -> Score:
        want = {(c.name, hashable(c.args)) for c in expected}
        got = {(c.name, hashable(c.args)) for c in made}
        tp, fp, fn = len(got & want), len(got - want), len(want - got)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return Score(round(f1, 4), details={"tp": tp, "fp": fp, "fn": fn,
                                            "precision": precision, "recall": recall})
