"""The constrained pick: each next token under the grammar and strict UTF-8.

``llama_cpp.Llama`` does the loading, tokenising and batched evaluation; the
pick on top is ours because llama-cpp-python's sampler chain runs the grammar
over every vocabulary entry at every step (152K entries for Qwen), which
costs about a quarter of generation speed on a 0.5B model. Upstream
llama.cpp (``common_sampler_sample``) first picks a token without the grammar
and asks the grammar about that one token; only when it is rejected is the
vocabulary filtered and the pick repeated. That is exact (greedy: the best
allowed token either is the best token or is found by the filtered pick;
sampling: accept-or-resample from the renormalised distribution is the
constrained distribution) and is what is done here, with the filtering
narrowed to tokens whose first byte the grammar can take (``GrammarFilter``).

The pick also enforces what the grammar engine lacks (no control tokens, no
NUL bytes, only valid UTF-8: ``Utf8Prefix``). ``Sampler`` holds what is
shared by every call (the grammar filter, the logit bias, the mode);
``Decoding`` is one sequence's state, whose ``step(logits)`` is the one
generation step of both decoders (``decoder``, ``batch``): the same logits
give the same token. The decoders own the model calls; nothing here decodes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.judge.llama.governor import DraftStats
from localeval.judge.llama.grammar_filter import GrammarFilter
from localeval.judge.llama.loops import PENALTY, loop_continuation
from localeval.judge.llama.model import ModelHandle
from localeval.judge.llama.utf8 import Utf8Prefix, utf8_step
from localeval.judge.parse import invalid_output

__all__ = ["Decoding", "Generation", "Sampler"]


@dataclass
class Generation:
    """One generation: the text, its tokens and where the time went."""

    text: str  # ``raw`` decoded (with replacement characters, for display only)
    raw: bytes
    tokens: list[int]
    pieces: list[bytes]
    stop: str  # "eos" | "length"
    prompt_tokens: int
    reused_tokens: int
    seconds: float = 0.0
    #: Picks that needed the filtered (slow) path: the first choice was not allowed.
    grammar_rejections: int = 0
    #: Guesses drafted and kept, and generation decodes (``drafting``).
    draft: DraftStats = field(default_factory=DraftStats)
    #: Steps at which the loop guard pushed down the token that would repeat a loop.
    loop_breaks: int = 0


class Sampler:
    """The token pick shared by every call of one judge.

    ``grammar_mode`` is "check-first" (upstream's shortcut) or "full" (filter
    the whole vocabulary at every step, as llama-cpp-python does; same
    output, slower). ``logit_bias`` is added to the logits before each pick.
    Scratch buffers are shared: one thread picks at a time.
    """

    def __init__(self, model: ModelHandle, grammar_mode: str,
                 logit_bias: dict[int, float]) -> None:
        self.model = model
        self.n_vocab = model.n_vocab
        self.eog = model.eog
        self.piece = model.piece
        self.filter = GrammarFilter(model)
        self.grammar_mode = grammar_mode
        self.bias_ids = np.array(list(logit_bias), dtype=np.int64)
        self.bias_vals = np.array(list(logit_bias.values()), dtype=np.float32)
        self._utf8_masks: dict[tuple[int, int, int], np.ndarray] = {}
        self._quotes: np.ndarray | None = None

    @property
    def quote_tokens(self) -> np.ndarray:
        """Tokens whose bytes start with a double quote (the loop guard's way out of a
        string; ``loops``), found once per judge."""
        if self._quotes is None:
            self._quotes = np.array([i for i in range(self.n_vocab)
                                     if self.piece(i).startswith(b'"')], dtype=np.int64)
        return self._quotes

    def start(self, gbnf: str | None, max_tokens: int, temperature: float, seed: int
              ) -> "Decoding":
        """A new sequence's state (its grammar parsed or cloned); ``free`` it when done."""
        return Decoding(self, gbnf, max_tokens, temperature, seed)

    def biased(self, logits: np.ndarray) -> np.ndarray:
        """``logits`` with the logit bias added (a copy only when there is a bias)."""
        if self.bias_ids.size:
            logits = logits.copy()
            logits[self.bias_ids] += self.bias_vals
        return logits

    def pick(self, logits: np.ndarray, grammar: Any, temp: float, rng: Any, utf8: Utf8Prefix
             ) -> tuple[int, bool]:
        """Next token, and whether its first choice was refused (the slow path).

        Besides the grammar, the token's bytes must keep the output valid
        UTF-8 (llama.cpp's grammar decoder accepts overlong sequences and
        encoded surrogates, which strict decoding rejects) and hold no NUL
        (the grammar stops reading a token at a NUL, so the rest of such a
        token would bypass it).

        In "check-first" mode a refused first choice is followed, before any
        filtering of the vocabulary, by the next best few (greedy: the
        best valid token among the top 64 is the best valid token overall)
        or by fresh draws from the same distribution (sampling: drawing until
        a valid token comes up is exact rejection sampling).
        """
        cum = None
        if temp <= 0:
            tok = int(np.argmax(logits))
        else:
            z = logits.astype(np.float64) / temp
            p = np.exp(z - z.max())
            cum = np.cumsum(p)
            tok = self._draw(cum, rng)
        check_first = grammar is None or self.grammar_mode == "check-first"
        if check_first and self.valid(grammar, tok, float(logits[tok]), utf8):
            return tok, False
        if check_first:
            if temp <= 0:
                found = self._best_of_top(grammar, logits, utf8)
            else:
                assert cum is not None
                found = next((t for t in (self._draw(cum, rng) for _ in range(16))
                              if self.valid(grammar, t, float(logits[t]), utf8)), None)
            if found is not None:
                return found, True
        if grammar is None:
            masked = logits.copy()
        elif self.grammar_mode == "check-first":
            masked = self.filter.constrain_by_first_byte(grammar, logits)
        else:
            masked = self.filter.constrain(grammar, logits)
        if temp > 0:
            p = np.where(np.isneginf(masked), 0.0, p)
        for attempt in range(17):
            if attempt == 16:
                # Many admitted tokens break UTF-8 here: filter the whole vocabulary once.
                bad = ~(self._utf8_mask(utf8.state) | self.eog)
                masked[bad] = float("-inf")
                if temp > 0:
                    p[bad] = 0.0
            if temp <= 0:
                tok = int(np.argmax(masked))
                if masked[tok] == float("-inf"):
                    break
            else:
                total = p.sum()
                if total <= 0:
                    break
                tok = min(int(np.searchsorted(np.cumsum(p), rng.random() * total,
                                              side="right")), self.n_vocab - 1)
            if self.eog[tok] or utf8.ok(self.piece(tok)):
                return tok, True
            masked[tok] = float("-inf")
            if temp > 0:
                p[tok] = 0.0
        raise invalid_output("the grammar admits no next token")

    def _draw(self, cum: np.ndarray, rng: Any) -> int:
        tok = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
        return min(tok, self.n_vocab - 1)

    def valid(self, grammar: Any, tok: int, logit: float, utf8: Utf8Prefix) -> bool:
        """Whether ``tok`` may come next (grammar, UTF-8, no NUL); nothing is committed."""
        if grammar is not None and not self.filter.accepts(grammar, tok, logit):
            return False
        return bool(self.eog[tok]) or utf8.ok(self.piece(tok))

    def _best_of_top(self, grammar: Any, logits: np.ndarray, utf8: Utf8Prefix, k: int = 64
                     ) -> int | None:
        """The best valid token if one is among the ``k`` highest logits, else None."""
        k = min(k, self.n_vocab)
        top = np.argpartition(logits, -k)[-k:]
        top = top[np.argsort(-logits[top], kind="stable")]
        kept = (self.filter.apply_top(grammar, top, logits[top]) if grammar is not None
                else logits[top])
        for tok, logit in zip(top.tolist(), kept.tolist()):
            if logit != float("-inf") and (self.eog[tok] or utf8.ok(self.piece(tok))):
                return tok
        return None

    def _utf8_mask(self, state: tuple[int, int, int]) -> np.ndarray:
        """Tokens whose bytes keep the output a valid UTF-8 prefix (memoised per state)."""
        mask = self._utf8_masks.get(state)
        if mask is None:
            mask = np.array([(pc := self.piece(i)) != b"" and b"\x00" not in pc
                             and utf8_step(state, pc) is not None
                             for i in range(self.n_vocab)])
            self._utf8_masks[state] = mask
        return mask

    def close(self) -> None:
        self.filter.free_all()


class Decoding:
    """One sequence being generated: its grammar, random stream, UTF-8 check and output.

    ``step(logits)`` commits one token; ``allows(tok)`` asks whether a token
    could come next without committing it, so a caller holding several
    candidate tokens (a draft) can cut them at the first one refused.
    """

    def __init__(self, sampler: Sampler, gbnf: str | None, max_tokens: int,
                 temperature: float, seed: int) -> None:
        self.sampler = sampler
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.grammar = sampler.filter.new(gbnf) if gbnf is not None else None
        self.rng = np.random.default_rng(seed) if temperature > 0 else None
        self.utf8 = Utf8Prefix()
        self.tokens: list[int] = []
        self.pieces: list[bytes] = []
        self.stop = "length"
        self.rejections = 0
        self.loop_breaks = 0
        self.done = max_tokens <= 0

    def allows(self, tok: int) -> bool:
        """Whether ``tok`` may come next (grammar, UTF-8, not EOG); nothing is committed."""
        s = self.sampler
        return not s.eog[tok] and s.valid(self.grammar, tok, 0.0, self.utf8)

    def admitted(self, guesses: list[int]) -> list[int]:
        """The longest prefix of ``guesses`` that could follow the output; nothing committed.

        A draft is cut at the first token the grammar, the UTF-8 check or a
        NUL refuses, or an end-of-generation token (on a clone of the grammar
        state), so that a verification decode carries no row that could never
        be kept. The cut only saves rows: ``step`` alone decides what is kept.
        """
        s = self.sampler
        utf8 = Utf8Prefix()
        utf8.state = self.utf8.state
        grammar = s.filter.clone(self.grammar) if self.grammar is not None and guesses else None
        kept: list[int] = []
        try:
            for tok in guesses:
                if s.eog[tok] or not s.valid(grammar, tok, 0.0, utf8):
                    break
                if grammar is not None:
                    s.filter.accept(grammar, tok)
                utf8.push(s.piece(tok))
                kept.append(tok)
        finally:
            if grammar is not None:
                s.filter.free(grammar)
        return kept

    def step(self, logits: np.ndarray) -> int | None:
        """Pick the next token from ``logits``: the token to evaluate next, or None when done."""
        s = self.sampler
        logits = s.biased(logits)
        again = loop_continuation(self.tokens)  # the loop guard (``loops``)
        if again is not None:
            logits = logits.copy()
            logits[s.quote_tokens] += PENALTY / 2
            logits[again] -= PENALTY
            self.loop_breaks += 1
        tok, rejected = s.pick(logits, self.grammar, self.temperature, self.rng, self.utf8)
        self.rejections += rejected
        if s.eog[tok]:
            self.stop = "eos"
            self.done = True
            return None
        if self.grammar is not None:
            s.filter.accept(self.grammar, tok)
        self.tokens.append(tok)
        self.pieces.append(s.piece(tok))
        self.utf8.push(self.pieces[-1])
        if len(self.tokens) >= self.max_tokens:
            self.done = True
            return None
        return tok

    def free(self) -> None:
        if self.grammar is not None:
            self.sampler.filter.free(self.grammar)
            self.grammar = None

    def result(self, prompt_tokens: int, reused: int, t0: float,
               draft: DraftStats | None = None) -> Generation:
        """The finished generation; ``draft``: its drafting counters (none: no decode drafted)."""
        raw = b"".join(self.pieces)
        return Generation(text=raw.decode("utf-8", errors="replace"), raw=raw,
                          tokens=self.tokens, pieces=self.pieces, stop=self.stop,
                          prompt_tokens=prompt_tokens, reused_tokens=reused,
                          seconds=time.perf_counter() - t0, grammar_rejections=self.rejections,
                          draft=draft or DraftStats(), loop_breaks=self.loop_breaks)
