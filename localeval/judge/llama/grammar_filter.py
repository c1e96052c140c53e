"""Asking llama.cpp's grammar sampler which tokens it accepts, as cheaply as possible.

Three ways, from cheapest to dearest: one token (``accepts``, the usual case:
the model's first choice is allowed), the tokens whose first bytes the
grammar can take (``constrain_by_first_byte``), or the whole vocabulary
(``constrain``, what llama-cpp-python does at every step). All go through
one reusable candidate array (``compat.Candidates``) so no step allocates a
vocabulary-sized ctypes array. Parsed grammars are kept per GBNF text and
cloned per call, which skips re-parsing the GBNF on every call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localeval.judge.llama import compat
from localeval.judge.llama.model import ModelHandle

__all__ = ["GrammarFilter"]


class GrammarFilter:
    """Grammar parsing, acceptance and vocabulary filtering for one model.

    Its scratch arrays are shared: one thread at a time (the judge's lock or
    the batch engine's decode thread).
    """

    def __init__(self, model: ModelHandle) -> None:
        self.model = model
        self.n_vocab = model.n_vocab
        self.grammar = compat.Grammar(model.vocab)
        self.cand = compat.Candidates(model.vocab)
        self.all_ids = np.arange(self.n_vocab, dtype=np.int32)
        self.cand.rows["id"] = self.all_ids
        self._parsed: dict[str, Any] = {}  # gbnf -> parsed grammar sampler (cloned per call)

    def new(self, gbnf: str) -> Any:
        """A fresh grammar state for ``gbnf``; the caller frees it (``free``)."""
        base = self._parsed.get(gbnf)
        if base is None:
            base = self._parsed[gbnf] = self.grammar.parse(gbnf)
        return self.grammar.clone(base)

    def clone(self, g: Any) -> Any:
        """A copy of grammar state ``g`` (to try tokens on); the caller frees it."""
        return self.grammar.clone(g)

    def accept(self, g: Any, tok: int) -> None:
        """Advance grammar state ``g`` past ``tok``."""
        self.grammar.accept(g, tok)

    def free(self, g: Any) -> None:
        self.grammar.free(g)

    def free_all(self) -> None:
        """Free the parsed grammars kept for cloning (at close)."""
        for g in self._parsed.values():
            self.grammar.free(g)
        self._parsed.clear()

    def accepts(self, g: Any, tok: int, logit: float) -> bool:
        """Whether ``g`` allows ``tok`` next; nothing is committed."""
        return self.cand.accepts(g, tok, logit)

    def constrain(self, g: Any, logits: np.ndarray) -> np.ndarray:
        """Logits with every token the grammar rejects set to -inf (a full pass)."""
        self.cand.rows["logit"] = logits
        return self.cand.apply(g, self.n_vocab)

    def apply_top(self, g: Any, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """The grammar over candidates ``ids`` (with ``logits``): theirs, rejected at -inf."""
        k = ids.size
        self.cand.rows["id"][:k] = ids
        self.cand.rows["logit"][:k] = logits
        kept = self.cand.apply(g, k).copy()
        self.cand.rows["id"][:k] = self.all_ids[:k]
        return kept

    def constrain_by_first_byte(self, g: Any, logits: np.ndarray) -> np.ndarray:
        """Same result as ``constrain``, usually far cheaper.

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
        index = self.model.byte_index
        parts = [index.eog_ids, index.no_byte_token]
        for b in index.byte_values[self._allowed_bytes(g)]:
            b = int(b)
            split = index.by_second.get(b)
            if split is None:
                parts.append(index.groups[b])
                continue
            after = self.grammar.clone(g)
            try:
                self.grammar.accept(after, int(index.byte_token[b]))
                seconds = index.byte_values[self._allowed_bytes(after)]
            finally:
                self.grammar.free(after)
            parts.append(index.short[b])
            parts += [split[int(b2)] for b2 in seconds if int(b2) in split]
            parts.append(index.second_orphans[b])
        ids = np.concatenate(parts)
        n = ids.size
        rows = self.cand.rows
        rows["id"][:n] = ids
        rows["logit"][:n] = logits[ids]
        kept = self.cand.apply(g, n)
        masked = np.full(self.n_vocab, -np.inf, dtype=np.float32)
        masked[ids] = kept
        rows["id"] = self.all_ids  # restore the identity layout for full passes
        return masked

    def _allowed_bytes(self, g: Any) -> np.ndarray:
        """Mask over ``byte_index.byte_values``: which one-byte tokens the grammar takes now."""
        index = self.model.byte_index
        k = len(index.byte_tokens)
        self.cand.rows["id"][:k] = index.byte_tokens
        self.cand.rows["logit"][:k] = 0.0
        return np.isfinite(self.cand.apply(g, k))
