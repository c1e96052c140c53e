"""Asking llama.cpp's grammar sampler which tokens it accepts, as cheaply as possible.

Three ways, from cheapest to dearest: one token (``_accepts``, the usual case:
the model's first choice is allowed), the tokens whose first bytes the
grammar can take (``_constrain_by_first_byte``), or the whole vocabulary
(``_constrain``, what llama-cpp-python does at every step). All go through
one reusable ``llama_token_data_array`` so no step allocates a vocabulary-
sized ctypes array.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Callable

import numpy as np

from localeval.judge.llama.byte_index import ByteIndex

__all__ = ["GrammarFilter"]


class GrammarFilter:
    """Mixin for ``LlamaJudge``: grammar parsing, acceptance and vocabulary filtering.

    The host provides ``_lc`` (the ``llama_cpp`` module), ``_vocab``,
    ``n_vocab``, ``_eog`` (end-of-generation mask) and ``_piece`` (token ->
    bytes), and calls ``_init_grammar_filter`` once the model is loaded.
    """

    _lc: Any
    _vocab: Any
    n_vocab: int
    _eog: np.ndarray
    _piece: Callable[[int], bytes]

    def _init_grammar_filter(self) -> None:
        lc = self._lc
        # One reusable candidate array for the full grammar pass: llama_token_data is
        # {int32 id; float logit; float p}, packed to 12 bytes.
        self._cand = np.zeros(self.n_vocab, dtype=np.dtype(
            [("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
        self._all_ids = np.arange(self.n_vocab, dtype=np.int32)
        self._cand["id"] = self._all_ids
        self._cand_arr = lc.llama_token_data_array(
            data=self._cand.ctypes.data_as(lc.llama_token_data_p),
            size=self.n_vocab, selected=-1, sorted=False)
        self._one = lc.llama_token_data()
        self._one_arr = lc.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False)
        self._grammars: dict[str, Any] = {}  # gbnf -> parsed grammar sampler (cloned per call)

    def _grammar(self, gbnf: str):
        """A fresh grammar sampler for ``gbnf``; the caller frees it."""
        base = self._grammars.get(gbnf)
        if base is None:
            base = self._lc.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"),
                                                       b"root")
            if not base:
                raise ValueError("llama.cpp rejected the grammar:\n" + gbnf[:2000])
            self._grammars[gbnf] = base
        # Cloning a parsed grammar skips re-parsing the GBNF on every call.
        return self._lc.llama_sampler_clone(base)

    def _free_grammars(self) -> None:
        for g in self._grammars.values():
            self._lc.llama_sampler_free(g)
        self._grammars.clear()

    def _accepts(self, grammar, tok: int, logit: float) -> bool:
        self._one.id = tok
        self._one.logit = logit
        self._one.p = 0.0
        self._one_arr.size = 1
        self._one_arr.selected = -1
        self._lc.llama_sampler_apply(grammar, ctypes.byref(self._one_arr))
        return self._one.logit != float("-inf")

    def _constrain(self, grammar, logits: np.ndarray) -> np.ndarray:
        """Logits with every token the grammar rejects set to -inf (a full pass)."""
        self._cand["logit"] = logits
        return self._apply(grammar, self.n_vocab)

    def _apply(self, grammar, n: int) -> np.ndarray:
        """Run the grammar over the first ``n`` candidates; their logits, rejected at -inf."""
        self._cand_arr.size = n
        self._cand_arr.selected = -1
        self._cand_arr.sorted = False
        self._lc.llama_sampler_apply(grammar, ctypes.byref(self._cand_arr))
        return self._cand["logit"][:n]

    def _constrain_by_first_byte(self, grammar, logits: np.ndarray) -> np.ndarray:
        """Same result as ``_constrain``, usually far cheaper.

        The grammar reads a token byte by byte, so a token can only be
        allowed if its first byte, as a one-byte token, is (a UTF-8 lead byte
        is accepted as a partial character when some completion could
        match). Asking about the 256 one-byte tokens first leaves, at a
        structural position such as the inside of a key, a few hundred
        candidates instead of the whole vocabulary. A first byte shared by
        very many tokens (the space that starts half of a BPE vocabulary) is
        split the same way on the second byte, on a copy of the grammar that
        has taken the first.
        """
        index = self._byte_index
        parts = [index.eog_ids, index.no_byte_token]
        for b in index.byte_values[self._allowed_bytes(grammar)]:
            b = int(b)
            split = index.by_second.get(b)
            if split is None:
                parts.append(index.groups[b])
                continue
            after = self._lc.llama_sampler_clone(grammar)
            try:
                self._lc.llama_sampler_accept(after, int(index.byte_token[b]))
                seconds = index.byte_values[self._allowed_bytes(after)]
            finally:
                self._lc.llama_sampler_free(after)
            parts.append(index.short[b])
            parts += [split[int(b2)] for b2 in seconds if int(b2) in split]
            parts.append(index.second_orphans[b])
        ids = np.concatenate(parts)
        n = ids.size
        self._cand["id"][:n] = ids
        self._cand["logit"][:n] = logits[ids]
        kept = self._apply(grammar, n)
        masked = np.full(self.n_vocab, -np.inf, dtype=np.float32)
        masked[ids] = kept
        self._cand["id"] = self._all_ids  # restore the identity layout for full passes
        return masked

    def _allowed_bytes(self, grammar) -> np.ndarray:
        """Mask over ``_byte_index.byte_values``: which one-byte tokens the grammar takes now."""
        index = self._byte_index
        k = len(index.byte_tokens)
        self._cand["id"][:k] = index.byte_tokens
        self._cand["logit"][:k] = 0.0
        ok = np.isfinite(self._apply(grammar, k))
        return ok

    @functools.cached_property
    def _byte_index(self) -> ByteIndex:
        return ByteIndex.build([self._piece(i) for i in range(self.n_vocab)], self._eog)
