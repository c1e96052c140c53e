"""The constrained token loop: pick each next token under the grammar and strict UTF-8.

``llama_cpp.Llama`` does the loading, tokenising and batched evaluation; the
loop on top is ours because llama-cpp-python's sampler chain runs the grammar
over every vocabulary entry at every step (152K entries for Qwen), which
costs about a quarter of generation speed on a 0.5B model. Upstream
llama.cpp (``common_sampler_sample``) first picks a token without the grammar
and asks the grammar about that one token; only when it is rejected is the
vocabulary filtered and the pick repeated. That is exact (greedy: the best
allowed token either is the best token or is found by the filtered pick;
sampling: accept-or-resample from the renormalised distribution is the
constrained distribution) and is what is done here, with the filtering
narrowed to tokens whose first byte the grammar can take (``GrammarFilter``).

The loop also enforces what the grammar engine lacks (no control tokens, no
NUL bytes, only valid UTF-8: ``Utf8Prefix``) and counts prompt tokens reused
from the KV cache exactly.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from localeval.errors import JudgeCallError
from localeval.judge.llama.grammar_filter import GrammarFilter
from localeval.judge.llama.lookup import DraftGovernor, DraftStats, decode_drafted
from localeval.judge.llama.utf8 import Utf8Prefix, utf8_step
from localeval.judge.parse import invalid_output

__all__ = ["Decoding", "Generation", "TokenSampler"]


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
    #: Prompt-lookup drafting: tokens guessed, guesses kept, and generation decodes run.
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    decode_steps: int = 0


class TokenSampler(GrammarFilter):
    """Mixin for ``LlamaJudge``: the KV cache, token pieces and the generation loop.

    The host provides ``_llm`` (the loaded ``llama_cpp.Llama``), ``_lc`` (the
    ``llama_cpp`` module), ``_lock``, ``grammar_mode`` ("check-first" or
    "full") and the logit bias as ``_bias_ids``/``_bias_vals``, and calls
    ``_init_sampler`` once the model is loaded; ``draft`` ("none", "lookup" or
    "auto", see ``lookup``) says whether the loop guesses tokens ahead.
    """

    draft: str = "none"

    _llm: Any
    _lock: Any
    grammar_mode: str
    _bias_ids: np.ndarray
    _bias_vals: np.ndarray

    def _init_sampler(self) -> None:
        lc = self._lc
        self._vocab = lc.llama_model_get_vocab(self._llm.model)
        self.n_vocab = self._llm.n_vocab()
        self._pieces: dict[int, bytes] = {}
        self._eog = np.array([bool(lc.llama_vocab_is_eog(self._vocab, i))
                              for i in range(self.n_vocab)])
        self._init_grammar_filter()
        self._utf8_masks: dict[tuple[int, int, int], np.ndarray] = {}
        model = self._llm.model
        # Drafting rolls the KV cache back, which recurrent state cannot do.
        rollback = not (lc.llama_model_is_recurrent(model) or lc.llama_model_is_hybrid(model))
        self.drafting = DraftGovernor(self.draft if rollback else "none")

    def _piece(self, tok: int) -> bytes:
        p = self._pieces.get(tok)
        if p is None:
            buf = ctypes.create_string_buffer(64)
            n = self._lc.llama_token_to_piece(self._vocab, tok, buf, 64, 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = self._lc.llama_token_to_piece(self._vocab, tok, buf, -n, 0, False)
            p = buf.raw[:max(n, 0)]
            self._pieces[tok] = p
        return p

    def _logits(self) -> np.ndarray:
        ptr = self._lc.llama_get_logits_ith(self._llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def _eval_to(self, tokens: Sequence[int]) -> int:
        """Make the KV cache hold ``tokens`` with logits for the last; return reused count.

        The longest common prefix with what is cached is kept (at most all but
        the last token, whose logits are needed); the rest is evaluated.
        """
        llm = self._llm
        n = llm.n_tokens
        m = min(n, len(tokens) - 1)
        lcp = 0
        if m > 0:
            diff = np.flatnonzero(llm.input_ids[:m] != np.asarray(tokens[:m], dtype=np.intc))
            lcp = int(diff[0]) if diff.size else m
        if lcp < n and not llm._ctx.kv_cache_seq_rm(-1, lcp, -1):
            llm.reset()  # recurrent models cannot drop a suffix
            lcp = 0
        llm.n_tokens = lcp
        try:
            llm.eval(list(tokens[lcp:]))
        except RuntimeError as e:
            llm.reset()
            raise JudgeCallError(f"llama.cpp failed to evaluate the prompt ({e})") from None
        return lcp

    def _pick(self, logits: np.ndarray, grammar, temp: float, rng, utf8: Utf8Prefix
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
        if check_first and self._valid(grammar, tok, logits, utf8):
            return tok, False
        if check_first:
            if temp <= 0:
                found = self._best_of_top(grammar, logits, utf8)
            else:
                found = next((t for t in (self._draw(cum, rng) for _ in range(16))
                              if self._valid(grammar, t, logits, utf8)), None)
            if found is not None:
                return found, True
        if grammar is None:
            masked = logits.copy()
        elif self.grammar_mode == "check-first":
            masked = self._constrain_by_first_byte(grammar, logits)
        else:
            masked = self._constrain(grammar, logits)
        if temp > 0:
            p = np.where(np.isneginf(masked), 0.0, p)
        for attempt in range(17):
            if attempt == 16:
                # Many admitted tokens break UTF-8 here: filter the whole vocabulary once.
                bad = ~(self._utf8_mask(utf8.state) | self._eog)
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
            if self._eog[tok] or utf8.ok(self._piece(tok)):
                return tok, True
            masked[tok] = float("-inf")
            if temp > 0:
                p[tok] = 0.0
        raise invalid_output("the grammar admits no next token")

    def _draw(self, cum: np.ndarray, rng) -> int:
        tok = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
        return min(tok, self.n_vocab - 1)

    def _valid(self, grammar, tok: int, logits: np.ndarray, utf8: Utf8Prefix) -> bool:
        if grammar is not None and not self._accepts(grammar, tok, float(logits[tok])):
            return False
        return bool(self._eog[tok]) or utf8.ok(self._piece(tok))

    def _best_of_top(self, grammar, logits: np.ndarray, utf8: Utf8Prefix, k: int = 64
                     ) -> int | None:
        """The best valid token if one is among the ``k`` highest logits, else None."""
        k = min(k, self.n_vocab)
        top = np.argpartition(logits, -k)[-k:]
        top = top[np.argsort(-logits[top], kind="stable")]
        if grammar is not None:
            self._cand["id"][:k] = top
            self._cand["logit"][:k] = logits[top]
            kept = self._apply(grammar, k).copy()
            self._cand["id"][:k] = self._all_ids[:k]
        else:
            kept = logits[top]
        for tok, logit in zip(top.tolist(), kept.tolist()):
            if logit != float("-inf") and (self._eog[tok] or utf8.ok(self._piece(tok))):
                return tok
        return None

    def _utf8_mask(self, state: tuple[int, int, int]) -> np.ndarray:
        """Tokens whose bytes keep the output a valid UTF-8 prefix (memoised per state)."""
        mask = self._utf8_masks.get(state)
        if mask is None:
            mask = np.array([(pc := self._piece(i)) != b"" and b"\x00" not in pc
                             and utf8_step(state, pc) is not None
                             for i in range(self.n_vocab)])
            self._utf8_masks[state] = mask
        return mask

    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation:
        """Generate after ``prompt`` under grammar ``gbnf`` (None: unconstrained)."""
        with self._lock:
            t0 = time.perf_counter()
            reused = self._eval_to(prompt)
            seq = Decoding(self, gbnf, max_tokens, temperature, seed)
            try:
                if not seq.done:
                    seq.drafts = decode_drafted(self, seq, prompt, self.drafting)
            finally:
                seq.free()
            return seq.result(len(prompt), reused, t0)


class Decoding:
    """One sequence being generated: its grammar, sampler, UTF-8 check and output so far.

    The one implementation of a generation step, shared by the sequential
    loop (``TokenSampler.generate``) and the batched engine (``batch``), so
    both pick the same token from the same logits. ``host`` is the
    ``TokenSampler`` whose scratch buffers ``step`` uses: one thread at a time.
    """

    def __init__(self, host: TokenSampler, gbnf: str | None, max_tokens: int,
                 temperature: float, seed: int) -> None:
        self.host = host
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.grammar = host._grammar(gbnf) if gbnf is not None else None
        self.rng = np.random.default_rng(seed) if temperature > 0 else None
        self.utf8 = Utf8Prefix()
        self.tokens: list[int] = []
        self.pieces: list[bytes] = []
        self.stop = "length"
        self.rejections = 0
        self.done = max_tokens <= 0
        self.drafts = DraftStats()

    def step(self, logits: np.ndarray) -> int | None:
        """Pick the next token from ``logits``: the token to evaluate next, or None when done."""
        host = self.host
        if host._bias_ids.size:
            logits = logits.copy()
            logits[host._bias_ids] += host._bias_vals
        tok, rejected = host._pick(logits, self.grammar, self.temperature, self.rng, self.utf8)
        self.rejections += rejected
        if host._eog[tok]:
            self.stop = "eos"
            self.done = True
            return None
        if self.grammar is not None:
            host._lc.llama_sampler_accept(self.grammar, tok)
        self.tokens.append(tok)
        self.pieces.append(host._piece(tok))
        self.utf8.push(self.pieces[-1])
        if len(self.tokens) >= self.max_tokens:
            self.done = True
            return None
        return tok

    def free(self) -> None:
        if self.grammar is not None:
            self.host._lc.llama_sampler_free(self.grammar)
            self.grammar = None

    def result(self, prompt_tokens: int, reused: int, t0: float) -> Generation:
        raw = b"".join(self.pieces)
        return Generation(text=raw.decode("utf-8", errors="replace"), raw=raw,
                          tokens=self.tokens, pieces=self.pieces, stop=self.stop,
                          prompt_tokens=prompt_tokens, reused_tokens=reused,
                          seconds=time.perf_counter() - t0, grammar_rejections=self.rejections,
                          drafted_tokens=self.drafts.drafted,
                          accepted_tokens=self.drafts.accepted,
                          decode_steps=self.drafts.decode_steps)
