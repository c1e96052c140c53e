"""The speculative-sampling rule written out, for the drafting tests.

The decoders never call it: they draw from p as the one-token loop does and
compare the draw with the guess, which is the same rule (localeval/judge/llama/verify.py).
Kept here so the tests can show that the rule, and a drafted sequence verified
with ``verify_drafts`` under it, leave the target distribution unchanged.
"""

from __future__ import annotations

import numpy as np


def accept_draft(p: np.ndarray, draft: int, rng: np.random.Generator) -> tuple[int, bool]:
    """The speculative-sampling pick at a row whose draft token is ``draft``.

    ``p`` holds the target's weights over the vocabulary (the constrained,
    tempered distribution; need not sum to 1). With a deterministic draft the
    draft distribution is a point mass, so the rule of Leviathan et al. (2023)
    and Chen et al. (2023) becomes: keep ``draft`` with probability p(draft),
    otherwise draw from p with ``draft`` removed, renormalised. The result is
    distributed exactly as p. Returns the token and whether it is the draft.
    """
    w = np.asarray(p, dtype=np.float64)
    total = float(w.sum())
    if not total > 0:
        raise ValueError("the target distribution has no mass")
    if rng.random() * total < w[draft]:
        return int(draft), True
    rest = w.copy()
    rest[draft] = 0.0
    cum = np.cumsum(rest)
    if not cum[-1] > 0:  # p is (numerically) all on the draft
        return int(draft), True
    tok = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return min(tok, len(w) - 1), False
