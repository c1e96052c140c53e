"""Trajectories: the calls made, step by step, against a reference, in agentevals' four modes.

A step is one assistant message's calls (parallel calls), compared as a set: order inside
a step never counts. Calls are compared by ``check.match_call`` (names, then each
argument by its declared type and accepted values), and calls are paired by a maximum
matching, each reference call taking a distinct call made.

==========  =========================================================================
mode        1 when (agentevals' ``trajectory_match_mode``)
==========  =========================================================================
strict      the same number of steps, and each step's calls match the reference
            step's calls one to one (agentevals: the same messages in the same order
            with the same tool calls)
unordered   the same calls overall, one to one, in any order and any steps
subset      every call made is one of the reference's (calls left out are fine)
superset    every reference call was made (extra calls are fine)
==========  =========================================================================

With no call expected and none made every mode gives 1; agentevals compares messages,
localeval the calls (message texts are not compared, as agentevals does not compare them).
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.errors import InvalidArgument
from localeval.toolcheck.calls import CallVerdict, Failure, function_map
from localeval.toolcheck.pairing import explain_unmatched, matching
from localeval.toolcheck.shapes import Call, Function, PossibleAnswer, as_call, read_possible_answers

__all__ = ["TRAJECTORY_MODES", "match_trajectory", "cut_like"]

TRAJECTORY_MODES = ("strict", "unordered", "subset", "superset")


def cut_like(reference: Sequence[Any], calls_by_turn: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """A flat reference cut into steps of the sizes the calls made came in (the rest in a
    last step), for a reference that gives no steps of its own: its calls are then taken
    in order, each of the assistant's steps compared as a set."""
    out: list[list[Any]] = []
    at = 0
    for step in calls_by_turn:
        out.append(list(reference[at:at + len(step)]))
        at += len(step)
    if at < len(reference):
        out.append(list(reference[at:]))
    return out


def _answers(step: Any, where: str) -> list[PossibleAnswer]:
    try:
        return read_possible_answers(list(step))
    except InvalidArgument as e:
        raise InvalidArgument(f"{where}: {e}") from None


def _steps(calls_by_turn: Sequence[Sequence[Any]]) -> list[list[Call]]:
    return [[as_call(c, f"step {t}, call {i}") for i, c in enumerate(step, 1)]
            for t, step in enumerate(calls_by_turn, 1)]


def _compare(made: list[Call], want: list[PossibleAnswer], fmap: dict[str, Function] | None,
             index: list[int], mode: str) -> list[Failure]:
    pairs = matching(made, want, fmap)
    return explain_unmatched(made, want, pairs, fmap, index, extra_ok=mode == "superset",
                             missing_ok=mode == "subset")


def match_trajectory(calls_by_turn: Sequence[Sequence[Any]],
                     reference_by_turn: Sequence[Sequence[Any]], mode: str = "strict",
                     functions: Sequence[Function] | None = None) -> CallVerdict:
    """The calls made (a list per assistant step) against the reference steps (each a list
    of expected calls, plain or with accepted values), in ``mode``. A failure's
    ``call_index`` counts the calls made across steps, from 0."""
    if mode not in TRAJECTORY_MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(TRAJECTORY_MODES)}, got {mode!r}")
    steps = _steps(calls_by_turn)
    refs = [_answers(s, f"reference step {t}") for t, s in enumerate(reference_by_turn, 1)]
    fmap = function_map(functions)
    starts, n = [], 0
    for s in steps:
        starts.append(n)
        n += len(s)
    if mode != "strict":
        made = [c for s in steps for c in s]
        want = [a for s in refs for a in s]
        fails = _compare(made, want, fmap, list(range(n)), mode)
        if mode == "unordered" and len(made) != len(want) and not fails:
            fails = [Failure(None, None, None, f"made {len(made)} call(s), expected "
                             f"{len(want)}", "wrong_count")]
        return CallVerdict(not fails, fails, mode)
    made_steps = [s for s in steps if s]
    made_starts = [starts[i] for i, s in enumerate(steps) if s]
    want_steps = [s for s in refs if s]
    fails = []
    if len(made_steps) != len(want_steps):
        fails.append(Failure(None, None, None, f"{len(made_steps)} step(s) with calls, "
                             f"expected {len(want_steps)}", "wrong_count"))
    for t in range(max(len(made_steps), len(want_steps))):
        made = made_steps[t] if t < len(made_steps) else []
        want = want_steps[t] if t < len(want_steps) else []
        at = made_starts[t] if t < len(made_starts) else n
        fails.extend(_compare(made, want, fmap, list(range(at, at + len(made))), mode))
    return CallVerdict(not fails, fails, mode)
