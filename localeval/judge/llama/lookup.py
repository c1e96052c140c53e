"""Prompt-lookup drafting: guess the next tokens from the prompt, then keep what the model agrees to.

A judge mostly writes what it has just read (statements copied from the
answer, reasons quoting the context, the instruction's own phrases). So the
next tokens are guessed by finding the last few tokens earlier in the prompt
or the output and copying what followed (``NgramDrafter``). The caller
evaluates the picked token and its guesses in one decode and walks the rows
(``verify_drafts``): a guess is kept while the pick at its row equals it, and
the first pick that differs is the next token.

Under greedy decoding that keeps outputs token for token those of the
one-token loop (given that a row's logits do not depend on the rows decoded
with it). Under sampling the pick at a guessed row must follow the
speculative-sampling rule for a deterministic draft (``accept_draft``): keep
guess x with probability p(x), otherwise draw from p with x removed and
renormalised, so the output distribution is p's. Drawing from p as the
one-token loop does and comparing the draw with x is the same rule (the draw
equals x with probability p(x); given it does not, it is distributed as p
without x), and it consumes the random numbers exactly as the one-token loop
does, so seeded outputs stay identical too; ``accept_draft`` is the rule
written out, for callers that sample differently.

Pure Python and numpy, no llama.cpp: the model side (grammar cut, multi-row
decode, KV rollback) lives with the decoder.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["DRAFT_MODES", "DraftGovernor", "DraftStats", "NgramDrafter", "OutputMemory",
           "accept_draft", "verify_drafts", "NGRAM_MAX", "NGRAM_MIN", "DRAFT_MAX",
           "DRAFT_BY_MATCH", "MEMORY_MAX"]

#: ``draft=`` values: never, always, or where the measured speed says it pays.
DRAFT_MODES = ("none", "lookup", "auto")
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
#: Guesses taken from the judge's earlier outputs (``OutputMemory``) where the prompt has none.
MEMORY_MAX = 1


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


class OutputMemory:
    """The judge's earlier outputs, for a guess where the prompt has none.

    A generation decode has at least two rows (``drafting.padded``), so when
    the prompt-lookup finds nothing (or only what the grammar refuses) the
    second row is paid for anyway; a guess from what this judge wrote before
    (the reply's JSON keys, quoting, the phrases its metric repeats) costs
    nothing there. llama.cpp's lookup keeps the same kind of "dynamic" n-gram
    cache across generations. The last ``keep`` tokens are kept: older ones
    are dropped in halves, so memory and lookups stay bounded.
    """

    def __init__(self, keep: int = 32768) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._ngrams = NgramDrafter()
        self._segments: list[list[int]] = []

    def remember(self, output: Sequence[int]) -> None:
        """Add one finished generation's output tokens."""
        with self._lock:
            self._segments.append([int(t) for t in output])
            self._ngrams.extend(self._segments[-1])
            if len(self._ngrams.tokens) > self.keep:
                total, kept = 0, list[list[int]]()
                for seg in reversed(self._segments):
                    if total + len(seg) > self.keep // 2:
                        break
                    kept.insert(0, seg)
                    total += len(seg)
                self._segments = kept
                self._ngrams = NgramDrafter()
                for seg in kept:
                    self._ngrams.extend(seg)

    def __len__(self) -> int:
        """Tokens remembered."""
        return len(self._ngrams.tokens)

    def guess(self, context: Sequence[int], limit: int) -> list[int]:
        """What followed ``context``'s last tokens in an earlier output ([] when never seen)."""
        with self._lock:
            return self._ngrams.continuation(context, limit)


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


def verify_drafts(guesses: Sequence[int],
                  pick: Callable[[int, int | None], int | None]) -> tuple[int, int | None]:
    """Walk one verification decode's rows; return (guesses kept, the next token).

    Row 0 holds the logits after the token before the guesses; row i + 1 those
    after guess i. ``pick(row, guess)`` chooses the token at ``row`` (the
    caller's one step: bias, grammar, UTF-8, greedy or ``accept_draft``),
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


@dataclass
class DraftStats:
    """What drafting did in one generation: guesses made and kept, decodes run."""

    drafted: int = 0
    accepted: int = 0
    decode_steps: int = 0

    def add(self, other: "DraftStats") -> None:
        self.drafted += other.drafted
        self.accepted += other.accepted
        self.decode_steps += other.decode_steps


class DraftGovernor:
    """The judge-wide drafting policy: how many guesses a step may carry, and the choice.

    A generation decode has two rows at least (``drafting.padded``), so one
    guess rides free in the second row; only guesses past it cost rows.
    Each step therefore carries up to ``step_limit()`` guesses: 0 with
    ``mode`` "none" (the plain loop: a pad row), no limit with "lookup", and
    with "auto" no limit while it is measured to pay, else 1 (the free row).
    Timing, not acceptance alone, decides, because what a row costs depends
    on the model and the device (an extra row is nearly free on a GPU and on
    a memory-bound CPU decode, not on a small model's compute-bound one on 2
    cores). While probing, every ``probe_every``-th step runs with one guess,
    so both kinds of step are timed on the same calls; after ``probe_steps``
    steps the seconds per generated token decide, once, for the life of the
    judge. ``memory`` (``OutputMemory``) is shared by the judge's generations.
    """

    def __init__(self, mode: str = "auto", probe_steps: int = 256, probe_every: int = 4) -> None:
        if mode not in DRAFT_MODES:
            raise ValueError(f"draft must be one of {', '.join(DRAFT_MODES)}")
        self.mode = mode
        self.probe_steps = probe_steps
        self.probe_every = probe_every
        #: whether steps carry as many guesses as the lookup finds (None: still measuring)
        self.decided: bool | None = None if mode == "auto" else mode == "lookup"
        self.memory = OutputMemory() if mode != "none" else None
        self._secs = [0.0, 0.0]  # one guess, many
        self._toks = [0, 0]
        self._steps = 0

    @property
    def enabled(self) -> bool:
        """Whether generations guess at all (every mode but "none")."""
        return self.mode != "none"

    def step_limit(self) -> int | None:
        """Guesses the next step may carry: 0, 1 (the free row) or None (no limit)."""
        if self.mode == "none":
            return 0
        if self.decided is False or (self.decided is None and self._steps % self.probe_every == 0):
            return 1
        return None

    def record(self, drafted: bool, tokens: int, seconds: float) -> None:
        """One decode step that produced ``tokens`` output tokens in ``seconds``.

        ``drafted``: the step had no guess limit (``step_limit()`` was None).
        """
        if self.decided is not None:
            return
        self._steps += 1
        self._secs[drafted] += seconds
        self._toks[drafted] += tokens
        if self._steps >= self.probe_steps and min(self._toks) > 0:
            one, many = (s / t for s, t in zip(self._secs, self._toks))
            self.decided = many < one

    def to_dict(self) -> dict[str, Any]:
        rates = [s / t if t else None for s, t in zip(self._secs, self._toks)]
        return {"mode": self.mode, "drafting": self.decided,
                "seconds_per_token_one_guess": rates[0], "seconds_per_token_drafted": rates[1]}
