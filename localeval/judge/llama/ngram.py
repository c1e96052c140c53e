"""Prompt-lookup guessing: the next tokens guessed from what followed the last n tokens before.

A judge mostly writes what it has just read (statements copied from the
answer, reasons quoting the context, the instruction's own phrases). So the
next tokens are guessed by finding the last few tokens earlier in the prompt
or the output and copying what followed (``NgramDrafter``). The guesses are
checked by the model (``verify``), limited by the judge's policy
(``governor``) and, where the prompt has none, taken from the judge's
earlier outputs (``output_memory``).

Pure Python, no llama.cpp: the model side (grammar cut, multi-row decode, KV
rollback) lives with the decoder.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["NgramDrafter", "NGRAM_MAX", "NGRAM_MIN", "DRAFT_MAX", "DRAFT_BY_MATCH"]

#: Longest and shortest n-gram matched, and the most guesses per decode for a match of n
#: tokens (``DRAFT_BY_MATCH``; ``DRAFT_MAX`` caps them all). A longer match is a surer
#: guess, and every row past the second costs a third to a half of a one-row decode on
#: 2 CPU cores (docs/performance.md, "Prompt-lookup drafting"). Chosen by replaying the
#: demo judge's generations on the bundled example (scripts/bench_lookup.py --trace,
#: --simulate: 26 calls, 2,426 tokens) with the decode cost measured by row count on an
#: idle machine: 6/4/2/1 guesses after a 4/3/2/1-token match took 2.9 tokens per decode
#: at an estimated 1.24x the one-row loop's decode cost (2.0x the padded loop's); 12
#: guesses after any match took 3.8 tokens per decode but 0.92x (the rows cost more than
#: the decodes they save); 4/2/1 or 8/6/3/1 are within 2 %.
NGRAM_MAX = 4
NGRAM_MIN = 1
DRAFT_MAX = 12
DRAFT_BY_MATCH = {4: 6, 3: 4, 2: 2, 1: 1}


class NgramDrafter:
    """Guesses the next tokens by matching the last n tokens earlier in the history.

    The history is the prompt followed by the output so far. For n from
    ``ngram_max`` down to ``ngram_min`` the most recent earlier occurrence of
    the last n tokens is looked up, and the tokens that followed it are the
    guess. The index is a dict per n (n-gram -> where its continuation
    starts), updated as tokens are appended, so a lookup costs a few dict
    reads whatever the prompt's length (a scan per step would cost O(prompt)).
    """

    def __init__(self, history: Sequence[int] = (), ngram_max: int | None = None,
                 ngram_min: int | None = None, draft_max: int | None = None,
                 by_match: dict[int, int] | None = None) -> None:
        # Read when built, so that a benchmark can sweep the module's settings.
        ngram_max = NGRAM_MAX if ngram_max is None else ngram_max
        ngram_min = NGRAM_MIN if ngram_min is None else ngram_min
        if not 1 <= ngram_min <= ngram_max:
            raise ValueError("need 1 <= ngram_min <= ngram_max")
        self.sizes = range(ngram_max, ngram_min - 1, -1)
        self.draft_max = DRAFT_MAX if draft_max is None else draft_max
        #: guesses at most after a match of n tokens (``DRAFT_BY_MATCH``; {} for no cap)
        self.by_match = DRAFT_BY_MATCH if by_match is None else by_match
        if self.draft_max < 0:
            raise ValueError("draft_max must be >= 0")
        self.tokens: list[int] = []
        self._index: dict[int, dict[tuple[int, ...], int]] = {n: {} for n in self.sizes}
        self.extend(history)

    def extend(self, tokens: Sequence[int]) -> None:
        """Append ``tokens`` (prompt or output) to the history."""
        h = self.tokens
        for t in tokens:
            h.append(int(t))
            j = len(h) - 1  # the new token continues the n-grams ending just before it
            for n, index in self._index.items():
                if j >= n:
                    index[tuple(h[j - n:j])] = j

    def draft(self, limit: int | None = None) -> list[int]:
        """Up to ``limit`` (default ``draft_max``) guessed next tokens; [] when nothing matches."""
        return self.continuation(self.tokens, limit)

    def continuation(self, context: Sequence[int], limit: int | None = None) -> list[int]:
        """What followed the last n tokens of ``context`` in this history (longest n first).

        ``draft`` asks with the history itself; ``OutputMemory`` asks with
        another generation's context, to find its tail in earlier outputs.
        """
        k = self.draft_max if limit is None else min(limit, self.draft_max)
        h = self.tokens
        if k <= 0:
            return []
        for n in self.sizes:
            if len(context) < n:
                continue
            j = self._index[n].get(tuple(int(t) for t in context[len(context) - n:]))
            if j is not None:
                return h[j:j + min(k, self.by_match.get(n, k))]
        return []
