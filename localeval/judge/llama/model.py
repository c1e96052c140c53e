"""``ModelHandle``: the loaded model and what is read once from its vocabulary.

One object owns ``llama_cpp.Llama`` and everything derived from the model
alone: the token pieces (memoised), the end-of-generation mask, the
first-byte index the grammar filter narrows by, the first byte of every
token (verdict probabilities), the tokeniser and the context size. The
sampler, the decoders and the verdict reader get this handle and nothing
else of the model, so none of them needs the judge that wires them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from localeval.judge.llama import compat
from localeval.judge.llama.byte_index import ByteIndex

__all__ = ["ModelHandle"]


class ModelHandle:
    """A loaded ``llama_cpp.Llama`` (``llm``) whose calls are served ``n_ctx`` tokens each."""

    def __init__(self, llm: Any, n_ctx: int) -> None:
        self.llm = llm
        self.n_ctx = n_ctx
        self.vocab = compat.Vocab(llm)
        self.n_vocab = self.vocab.n_vocab
        self._pieces: dict[int, bytes] = {}
        self.eog = np.array([self.vocab.is_eog(i) for i in range(self.n_vocab)])

    def piece(self, tok: int) -> bytes:
        """The bytes token ``tok`` writes (b"" for control tokens), memoised."""
        p = self._pieces.get(tok)
        if p is None:
            p = self._pieces[tok] = self.vocab.piece(tok)
        return p

    @functools.cached_property
    def byte_index(self) -> ByteIndex:
        """The vocabulary grouped by first bytes (built on first use: the grammar's slow path)."""
        return ByteIndex.build([self.piece(i) for i in range(self.n_vocab)], self.eog)

    @functools.cached_property
    def first_bytes(self) -> np.ndarray:
        """First byte of every token as ``Llama.detokenize`` writes it (-1: none)."""
        table = np.full(self.n_vocab, -1, dtype=np.int16)
        for t in range(self.n_vocab):
            try:
                piece = self.llm.detokenize([t])
            except Exception:  # noqa: BLE001 - a control token without a piece
                continue
            if piece:
                table[t] = piece[0]
        return table

    def tokenize(self, data: bytes, *, add_bos: bool = False, special: bool = False
                 ) -> list[int]:
        return list(self.llm.tokenize(data, add_bos=add_bos, special=special))

    def detokenize(self, tokens: list[int]) -> bytes:
        return bytes(self.llm.detokenize(tokens))

    def token_bos(self) -> int:
        return int(self.llm.token_bos())

    def token_eos(self) -> int:
        return int(self.llm.token_eos())

    def token_text(self, tok: int) -> str:
        return compat.token_text(self.llm, tok)

    def close(self) -> None:
        self.llm.close()
