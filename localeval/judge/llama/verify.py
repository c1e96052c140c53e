"""The verification walk: keep the guesses the model agrees to, and the next token.

The caller evaluates the picked token and its guesses (``ngram``) in one
decode and walks the rows (``verify_drafts``): a guess is kept while the pick
at its row equals it, and the first pick that differs is the next token.

Under greedy decoding that keeps outputs token for token those of the
one-token loop (given that a row's logits do not depend on the rows decoded
with it). Under sampling the pick at a guessed row must follow the
speculative-sampling rule for a deterministic draft: keep guess x with
probability p(x), otherwise draw from p with x removed and renormalised, so
the output distribution is p's (Leviathan et al. 2023, Chen et al. 2023).
Drawing from p as the one-token loop does and comparing the draw with x is
the same rule (the draw equals x with probability p(x); given it does not, it
is distributed as p without x), and it consumes the random numbers exactly as
the one-token loop does, so seeded outputs stay identical too: the decoders'
pick is ``sampler.Decoding.step``, unchanged. (The rule written out, and the
check that both leave the distribution unchanged, are in
tests/unit/test_lookup_drafter.py.)

Pure Python, no llama.cpp.
"""

from __future__ import annotations

from typing import Callable, Sequence

__all__ = ["verify_drafts"]


def verify_drafts(guesses: Sequence[int],
                  pick: Callable[[int, int | None], int | None]) -> tuple[int, int | None]:
    """Walk one verification decode's rows; return (guesses kept, the next token).

    Row 0 holds the logits after the token before the guesses; row i + 1 those
    after guess i. ``pick(row, guess)`` chooses the token at ``row`` (the
    caller's one step: bias, grammar, UTF-8, greedy or sampled),
    where ``guess`` is the draft token for that row or None past the last
    guess; it returns None when the generation ends. Guesses are kept while
    the pick equals them; the first pick that differs (or the pick after the
    last guess) is the next token to evaluate, and the cache entries of the
    refused guesses (rows after the kept ones) are the caller's to remove.
    """
    kept = 0
    nxt = pick(0, guesses[0] if guesses else None)
    while kept < len(guesses) and nxt == guesses[kept]:
        kept += 1
        nxt = pick(kept, guesses[kept] if kept < len(guesses) else None)
    return kept, nxt
