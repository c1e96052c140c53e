"""Prompt-lookup speculative decoding inside the grammar-constrained token loop.

A judge mostly writes what it has just read (statements copied from the
answer, reasons quoting the context, the instruction's own phrases). So the
next tokens are guessed by finding the last few tokens earlier in the prompt
or the output and copying what followed (``NgramDrafter``); the guesses are
cut at the first one the grammar or the strict UTF-8 check would refuse, and
the token just picked plus its guesses are evaluated in ONE ``llama_decode``
with logits for every row. Each row's logits then go through the very same
step as the one-token loop (``Decoding.step``: bias, grammar, UTF-8,
temperature, the same random draws in the same order), and guesses are kept
while the step picks exactly them; the first pick that differs is the next
token, and the KV cache is cut back past the first refused guess.

Greedy outputs are therefore token for token those of the one-token loop.
With sampling the same holds for a given seed: the step draws from the same
distribution with the same generator at every position, and a guess is kept
only when the draw equals it. That is the speculative-sampling rule for a
one-hot draft (keep guess x with probability p(x); otherwise a draw from p
with x removed, renormalised), realised by consuming the random numbers
exactly as the one-token loop does, so seeded outputs are identical too.

``DraftGovernor`` is the automatic choice: it times decode steps with and
without guesses on the judge's own calls and turns drafting off for a model
or device where it does not pay (a random-weight model accepts nearly nothing).
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from localeval.errors import JudgeCallError
from localeval.judge.llama.utf8 import utf8_step

# ``host`` below is the judge (a ``sampler.TokenSampler``) and ``seq`` its
# ``sampler.Decoding``; typed loosely because sampler imports this module.
__all__ = ["DRAFT_MODES", "DraftGovernor", "DraftStats", "NgramDrafter", "decode_drafted"]

#: ``draft=`` values: never, always, or where the measured speed says it pays.
DRAFT_MODES = ("none", "lookup", "auto")
#: Longest and shortest n-gram matched, and guesses per decode (chosen by measurement:
#: docs/performance.md, "Prompt-lookup drafting").
NGRAM_MAX = 3
NGRAM_MIN = 1
DRAFT_MAX = 8


class NgramDrafter:
    """Guesses the next tokens by matching the last n tokens earlier in the history.

    The history is the prompt followed by the output so far. For n from
    ``ngram_max`` down to ``ngram_min`` the most recent earlier occurrence of
    the last n tokens is looked up, and the tokens that followed it are the
    guess. The index is a dict per n (n-gram -> where its continuation
    starts), updated as tokens are appended, so a lookup costs a few dict
    reads whatever the prompt's length.
    """

    def __init__(self, history: Sequence[int], ngram_max: int | None = None,
                 ngram_min: int | None = None, draft_max: int | None = None) -> None:
        # Read when built, so that a benchmark can sweep the module's settings.
        ngram_max = NGRAM_MAX if ngram_max is None else ngram_max
        ngram_min = NGRAM_MIN if ngram_min is None else ngram_min
        if not 1 <= ngram_min <= ngram_max:
            raise ValueError("need 1 <= ngram_min <= ngram_max")
        self.sizes = range(ngram_max, ngram_min - 1, -1)
        self.draft_max = DRAFT_MAX if draft_max is None else draft_max
        self.tokens: list[int] = []
        self._index: dict[int, dict[tuple[int, ...], int]] = {n: {} for n in self.sizes}
        self.extend(history)

    def extend(self, tokens: Sequence[int]) -> None:
        """Append ``tokens`` to the history."""
        h = self.tokens
        for t in tokens:
            h.append(int(t))
            j = len(h) - 1  # the new token continues the n-grams ending just before it
            for n, index in self._index.items():
                if j >= n:
                    index[tuple(h[j - n:j])] = j

    def draft(self, limit: int | None = None) -> list[int]:
        """Up to ``limit`` (default ``draft_max``) guessed next tokens; [] when nothing matches."""
        k = self.draft_max if limit is None else min(limit, self.draft_max)
        h = self.tokens
        if k <= 0:
            return []
        for n in self.sizes:
            if len(h) < n:
                continue
            j = self._index[n].get(tuple(h[len(h) - n:]))
            if j is not None:
                return h[j:j + k]
        return []


@dataclass
class DraftStats:
    """What drafting did in one generation: guesses made and kept, decodes run."""

    drafted: int = 0
    accepted: int = 0
    decode_steps: int = 0


class DraftGovernor:
    """The automatic choice: draft only while it is measured to pay on this judge.

    Timing, not acceptance alone, decides, because what a guess costs depends
    on the model and the device (an extra row is nearly free on a GPU and on
    a small model's memory-bound CPU decode, not on a large model's CPU
    decode). While probing, every ``probe_every``-th step of a drafting call
    is run without guesses, so both kinds of step are timed on the same
    calls; after ``probe_steps`` steps the seconds per generated token decide,
    once, for the life of the judge. ``mode`` "lookup" always drafts and
    "none" never does.
    """

    def __init__(self, mode: str = "auto", probe_steps: int = 256, probe_every: int = 4) -> None:
        if mode not in DRAFT_MODES:
            raise ValueError(f"draft must be one of {', '.join(DRAFT_MODES)}")
        self.mode = mode
        self.probe_steps = probe_steps
        self.probe_every = probe_every
        self.decided: bool | None = None if mode == "auto" else mode == "lookup"
        self._secs = [0.0, 0.0]  # plain, drafted
        self._toks = [0, 0]
        self._steps = 0

    @property
    def enabled(self) -> bool:
        """Whether a new generation should draft (probing counts as drafting)."""
        return self.decided is not False

    def plain_step(self) -> bool:
        """Whether the next step of a drafting call runs without guesses (a probe)."""
        return self.decided is None and self._steps % self.probe_every == 0

    def record(self, drafted: bool, tokens: int, seconds: float) -> None:
        """One decode step that produced ``tokens`` output tokens in ``seconds``."""
        if self.decided is not None:
            return
        self._steps += 1
        self._secs[drafted] += seconds
        self._toks[drafted] += tokens
        if self._steps >= self.probe_steps and min(self._toks) > 0:
            plain, drafted_rate = (s / t for s, t in zip(self._secs, self._toks))
            self.decided = drafted_rate < plain

    def to_dict(self) -> dict[str, Any]:
        rates = [s / t if t else None for s, t in zip(self._secs, self._toks)]
        return {"mode": self.mode, "drafting": self.decided,
                "seconds_per_token_plain": rates[0], "seconds_per_token_drafted": rates[1]}


def _cut_by_grammar(host: Any, seq: Any, guesses: list[int]) -> list[int]:
    """The guesses up to the first the grammar, the UTF-8 check or the end would refuse.

    An end-of-generation guess is cut too: the step that picks it ends the
    call without evaluating it. The grammar is asked on a copy, so the
    sequence's own grammar state is untouched.
    """
    state = seq.utf8.state
    kept: list[int] = []
    grammar = None
    try:
        for tok in guesses:
            piece = host._piece(tok)
            if host._eog[tok] or not piece or b"\x00" in piece:
                break
            state = utf8_step(state, piece)
            if state is None:
                break
            if seq.grammar is not None:
                if grammar is None:
                    grammar = host._lc.llama_sampler_clone(seq.grammar)
                if not host._accepts(grammar, tok, 0.0):
                    break
                host._lc.llama_sampler_accept(grammar, tok)
            kept.append(tok)
    finally:
        if grammar is not None:
            host._lc.llama_sampler_free(grammar)
    return kept


def _decode_rows(host: Any, tokens: list[int]) -> None:
    """Evaluate ``tokens`` after the cache in one decode, with logits for every row.

    A row's logits are bit for bit those of a decode of that token alone
    only because the judge's context uses flash attention (``judge``): without
    it llama.cpp's CPU attention for one row differs from that for two or more
    (SmolLM2 Q4_1: logits up to 0.5 apart), and drafting could change outputs.
    """
    llm = host._llm
    n_past = llm.n_tokens
    try:
        llm._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
        llm._ctx.decode(llm._batch)
    except RuntimeError as e:
        llm.reset()
        raise JudgeCallError(f"llama.cpp failed during generation ({e})") from None
    llm.input_ids[n_past:n_past + len(tokens)] = tokens
    llm.n_tokens = n_past + len(tokens)


def _truncate(llm: Any, keep: int) -> None:
    """Drop the cache entries from position ``keep`` on (the refused guesses)."""
    if not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
        llm.reset()
        raise JudgeCallError("llama.cpp could not roll back drafted tokens")
    llm.n_tokens = keep


def _row_logits(host: Any, i: int) -> np.ndarray:
    ptr = host._lc.llama_get_logits_ith(host._llm.ctx, i)
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)),
                                 shape=(host.n_vocab,))


def decode_drafted(host: Any, seq: Any, prompt: Sequence[int],
                   governor: DraftGovernor) -> DraftStats:
    """Run ``seq`` to its end, drafting where ``governor`` says; the cache holds the prompt.

    The one generation loop: with drafting off each decode is the picked
    token alone, which is the one-token loop.

    Leaves the cache as the one-token loop does: the prompt and every output
    token whose logits were used, nothing after (``llm.n_tokens`` and
    ``input_ids`` agree with it, so the next call's prefix reuse is exact).
    """
    llm = host._llm
    stats = DraftStats()
    drafter = NgramDrafter(prompt if governor.enabled else ())
    head = seq.step(host._logits())
    while head is not None:
        t0 = time.perf_counter()
        plain = not governor.enabled or governor.plain_step()
        if not plain:
            drafter.extend(seq.tokens[len(drafter.tokens) - len(prompt):])
        room = seq.max_tokens - len(seq.tokens) - 1  # picks left after the head's row
        guesses = [] if plain else _cut_by_grammar(host, seq, drafter.draft(room))
        base = llm.n_tokens
        _decode_rows(host, [head] + guesses)
        stats.decode_steps += 1
        stats.drafted += len(guesses)
        made = 0
        nxt = seq.step(_row_logits(host, 0))
        for i, guess in enumerate(guesses):
            if nxt != guess:
                break
            made += 1
            nxt = seq.step(_row_logits(host, i + 1))
        stats.accepted += made
        keep = base + 1 + made
        if keep < llm.n_tokens:  # drop the refused guesses' cache entries
            _truncate(llm, keep)
        if governor.enabled:
            governor.record(bool(guesses), 1 + made, time.perf_counter() - t0)
        head = nxt
    return stats
