"""One generation's prompt-lookup drafting, shared by both decoders.

``ngram``, ``output_memory`` and ``verify`` guess and verify in pure Python; this module ties it to a
``sampler.Decoding``: the drafter reads the prompt and the output so far,
the guesses are cut where the sequence's grammar, UTF-8 check or an end
token would refuse them (``Decoding.admitted``), and the rows of a
verification decode are walked with the sequence's own ``step`` (the same
bias, grammar, temperature and random draws as the one-token loop, so
greedy and seeded outputs are identical, not only equal in distribution).
The decoders own the model calls: they decode the head token and its
guesses in one decode (at least two rows: a lone head gets a pad row, see
``padded``) and roll the KV cache back past the first refused guess.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from localeval.judge.llama import output_memory
from localeval.judge.llama.governor import DraftGovernor, DraftStats
from localeval.judge.llama.ngram import NgramDrafter
from localeval.judge.llama.sampler import Decoding
from localeval.judge.llama.verify import verify_drafts

__all__ = ["SequenceDraft", "padded"]


def padded(head: int, guesses: Sequence[int]) -> list[int]:
    """The rows of one generation decode: the head and its guesses, or the head twice.

    Every generation decode is at least two rows wide, all rows with logits:
    llama.cpp computes a one-row decode with other kernels than a wider one,
    whose float32 results differ in the last bits (up to 0.7 in SmolLM2's
    logits), while a row's logits are bit-identical for every width from two
    on. With the floor, a token's logits do not depend on how many guesses
    were decoded beside it, so drafting cannot change an output. The pad row
    (the head again, at the next position) is removed from the cache at once.
    """
    return [head, *guesses] if guesses else [head, head]


class SequenceDraft:
    """The drafter and the counters of one generation."""

    def __init__(self, prompt: Sequence[int], governor: DraftGovernor) -> None:
        self.memory = governor.memory
        self.n_prompt = len(prompt)
        self.drafter = NgramDrafter(prompt) if governor.enabled else None
        self.stats = DraftStats()

    def guesses(self, seq: Decoding, limit: int | None = None) -> list[int]:
        """Guessed tokens after ``seq``'s output (its last token is the head), cut by its grammar.

        From the prompt and the output so far; where that finds nothing the
        grammar admits, from the judge's earlier outputs (``OutputMemory``).
        ``limit``: at most that many (the governor's ``step_limit``, or what
        the batch has room for).
        """
        d = self.drafter
        if d is None:
            return []
        d.extend(seq.tokens[len(d.tokens) - self.n_prompt:])
        # The pick after the last guess is a token too: leave room for it.
        room = seq.max_tokens - len(seq.tokens) - 1
        if limit is not None:
            room = min(room, limit)
        if room <= 0:
            return []
        got = seq.admitted(d.draft(room))
        if not got and self.memory is not None:
            got = seq.admitted(self.memory.guess(d.tokens, min(room, output_memory.MEMORY_MAX)))
        return got

    def verify(self, seq: Decoding, row_logits: Callable[[int], np.ndarray],
               guesses: Sequence[int]) -> tuple[int, int | None]:
        """Walk one decode's rows with ``seq.step``: (guesses kept, the next head or None).

        A generation that ends here leaves its output to the judge's memory.
        """
        kept, nxt = verify_drafts(guesses, lambda row, _guess: seq.step(row_logits(row)))
        st = self.stats
        st.decode_steps += 1
        st.drafted += len(guesses)
        st.accepted += kept
        if nxt is None and self.memory is not None:
            self.memory.remember(seq.tokens)
        return kept, nxt
