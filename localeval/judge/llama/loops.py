"""The loop guard: a small judge that repeats itself is made to step out of the loop.

Small models (the demo judge, SmolLM2-135M) fall into loops inside a JSON string,
"これは、これは、これは、…" or "The answer is the answer is …", and the grammar keeps
them there until the token budget is spent: on Japanese and Chinese samples most of
the demo judge's time went on such loops. llama.cpp's answer is a repetition penalty
over the last N tokens, which changes every reply of every judge a little (and so
every score); the guard here changes nothing until the output is plainly a loop:
the last ``span`` tokens repeat one run of at most ``MAX_PERIOD`` tokens at least
``MIN_REPEATS`` times (and at least ``MIN_SPAN`` tokens in all; a period of a few
Japanese words is dozens of byte-level tokens). Then, for that step, the token that
would go round once more is pushed down by ``PENALTY`` and the tokens that start
with a double quote are lifted by half as much: the grammar lets the quote through
only where it closes the string, so a looping string ends there and the JSON goes on.
Written by hand because the pick is ours (see ``sampler``); llama.cpp's samplers do
not see it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["loop_continuation", "MAX_PERIOD", "MIN_REPEATS", "MIN_SPAN", "PENALTY"]

#: The longest run (in tokens) that counts as the loop's period ...
MAX_PERIOD = 64
#: ... repeated at least this many times ...
MIN_REPEATS = 3
#: ... over at least this many tokens (so a period of 1 needs 32 same tokens in a row).
MIN_SPAN = 32
#: Subtracted from the logit of the token that would continue the loop: it is then
#: taken only if the grammar allows nothing else.
PENALTY = 1.0e4


def loop_continuation(tokens: Sequence[int]) -> int | None:
    """The token that would continue a loop at the end of ``tokens``, or None.

    The shortest period wins, so "ab ab ab ab …" bans "a", not the start of
    "abab"; it takes a few microseconds a step.
    """
    n = len(tokens)
    if n < MIN_SPAN:
        return None
    last = tokens[-1]
    for p in range(1, MAX_PERIOD + 1):
        span = max(MIN_SPAN, p * MIN_REPEATS)
        if span > n:
            break
        # this runs at every generated token: a period must bring the last token back,
        # so most periods are ruled out by one comparison, before any slice is taken
        if tokens[-1 - p] != last:
            continue
        window = list(tokens[-span:])
        if window[p:] == window[:-p]:
            return window[-p]
    return None
