"""Is the pairwise judge fit, and did it give the probabilities soft verdicts need?

``check_pairwise_judge`` runs ``judge_check``'s known-answer pairwise check
(a right answer against a hallucinated one, both orders) through the
pairwise door, at temperature 0 and with the default criterion: it tests
whether the judge can do the pairwise task at all, whatever criterion the
comparison then uses. With the judge cache on, its calls are cached like
every other call, so a second run asks nothing.

``require_probabilities``: soft verdicts asked for explicitly (``--verdicts
soft``, ``verdicts="soft"``) need the judge's probabilities; a judge that
gives none (an HTTP server without logprobs) is a ModelError (exit 3), not
a silent fall-back to hard verdicts. Left to the default, the comparison
falls back to hard verdicts with a note.
"""

from __future__ import annotations

from typing import Any

from localeval.errors import ModelError, UsageError
from localeval.metrics import Judging
from localeval.pairwise.step import OrderReply, ask_order
from localeval.types import Sample

__all__ = ["check_pairwise_judge", "require_probabilities", "progress_bar", "CHECK_PAIRS",
           "NO_PROBS"]

#: Known-answer pairs the pairwise check asks by default (both orders each: 20 calls).
CHECK_PAIRS = 10
NO_PROBS = ("the judge returned no verdict probabilities (an HTTP server without logprobs?), "
            "and soft verdicts were asked for (--verdicts soft / verdicts='soft'): use a judge "
            "that returns them (an in-process GGUF judge, or a server with logprobs), ask for "
            "hard verdicts (--verdicts hard), or leave --verdicts out to fall back to hard "
            "verdicts with a note")


def require_probabilities(reply: OrderReply) -> OrderReply:
    """``reply``, or a ModelError when it holds a verdict but no probabilities."""
    if reply.verdict is not None and reply.probs is None:
        raise ModelError(NO_PROBS)
    return reply


def check_pairwise_judge(door: Judging, *, pairs: int | None = CHECK_PAIRS,
                         strict_soft: bool = False, progress: bool | None = False) -> Any:
    """The pairwise judge check (``judge_check.PairwiseCheck``) asked through ``door``.

    ``strict_soft``: stop at the first reply without probabilities
    (``require_probabilities``), before the comparison asks anything. ``progress``:
    a bar (or plain lines in a log) over its calls, as ``evaluate``'s.
    """
    from localeval.judge_check import pairwise_probes, run_pairwise_check

    if pairs is not None and (isinstance(pairs, bool) or pairs < 1):
        raise UsageError(f"the pairwise judge check needs at least 1 pair, not {pairs!r} "
                         "(judge_check=False skips it)")
    check = door.for_sample(temperature=0.0, seed=0)
    bar = progress_bar(check, 2 * len(pairwise_probes(pairs)), progress,
                       "pairwise judge check", "orders")

    def ask(first: Sample, second: Sample) -> str | None:
        check.begin_sample()
        reply = ask_order(check, first.question, first.reference, first, second,
                          criterion=None)
        if bar is not None:
            bar.update(check.usage)
        return (require_probabilities(reply) if strict_soft else reply).verdict

    try:
        return run_pairwise_check(ask, pairs=pairs)
    finally:
        if bar is not None:
            bar.close()


def progress_bar(door: Judging, total: int, progress: bool | None, description: str,
                 unit: str) -> Any:
    """``run``'s progress bar over ``total`` steps, with the door's live usage (calls,
    tokens per second, ETA); None when ``progress`` is False. ``diff --pairwise`` and
    ``rank`` ask for minutes with a small judge, so they show how far they are."""
    if progress is False or total < 1:
        return None
    from localeval.run import RunProgress

    return RunProgress(total, enabled=progress, description=description, usage=door.usage,
                       unit=unit)
