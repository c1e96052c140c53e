"""Calls made against possible answers, by BFCL's categories: one verdict and its failures.

Categories (docs/conversations-and-agents.md, "Checked as function-calling benchmarks
check"), each a decision:

- ``simple``: one call expected; exactly one call made, and it matches the answer.
- ``multiple``: one call expected among several offered functions; the same check, the
  function's schema found by the answer's name (BFCL's "multiple").
- ``parallel`` and ``parallel_multiple``: several calls expected, in any order; as many
  calls made, and each expected call matched by a distinct call made. BFCL pairs them
  greedily (each answer takes the first call that fits); here a maximum matching is
  found, so an order of calls that a greedy pass would misjudge is still accepted.
- ``irrelevance``: no call should be made; any call fails.
- ``auto``: irrelevance when no call is expected, simple for one, parallel for more.

How one call is matched to one answer is ``calls.match_call``; how several are paired,
``pairing.matching``.
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.errors import InvalidArgument
from localeval.toolcheck.calls import CallVerdict, Failure, function_map, match_call
from localeval.toolcheck.pairing import explain_unmatched, matching
from localeval.toolcheck.shapes import Function, PossibleAnswer, as_call

__all__ = ["CATEGORIES", "check_calls"]

CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "auto")


def _category(category: str, answers: Sequence[PossibleAnswer]) -> str:
    if category not in CATEGORIES:
        raise InvalidArgument(f"category must be one of {', '.join(CATEGORIES)}, got "
                              f"{category!r}")
    if category != "auto":
        return category
    return "irrelevance" if not answers else "simple" if len(answers) == 1 else "parallel"


def check_calls(calls: Sequence[Any], answers: Sequence[PossibleAnswer],
                functions: Sequence[Function] | None, *, category: str = "auto"
                ) -> CallVerdict:
    """The calls made against the expected calls, as BFCL's AST checker decides for
    ``category`` (module docstring). ``functions``: the schemas offered, None when unknown
    (then names and values are compared without declared types)."""
    cat = _category(category, answers)
    made = [as_call(c, f"call {i}") for i, c in enumerate(calls, 1)]
    fmap = function_map(functions)
    if cat == "irrelevance":
        fails = [Failure(i, c.name, None, f"called {c.name!r}, but no function should be "
                         "called", "should_not_call") for i, c in enumerate(made)]
        return CallVerdict(not fails, fails, cat)
    count: list[Failure] = []
    if len(made) != len(answers):
        count = [Failure(None, None, None, f"made {len(made)} call(s), expected "
                         f"{len(answers)}", "wrong_count")]
    if cat in ("simple", "multiple"):
        if count or not answers:
            rest = explain_unmatched(made, answers, matching(made, answers, fmap), fmap)
            return CallVerdict(False, count + rest, cat)
        fails = match_call(made[0], answers[0], fmap, 0)
        return CallVerdict(not fails, fails, cat)
    pairs = matching(made, answers, fmap)
    fails = count + explain_unmatched(made, answers, pairs, fmap)
    return CallVerdict(not fails, fails, cat)
