"""Decoders: what runs the model for a call, one sequence at a time or batched.

``LlamaJudge`` chooses one at construction: ``SequentialDecoder`` (this
module; one call at a time under the judge's lock, in ``Llama``'s own
context) or ``BatchDecoder`` (``batch``; calls from many threads decoded
together). Both serve the ``Decoder`` protocol, so the judge and the verdict
reader never ask which one they have:

- ``generate``: a whole generation after a prompt (``sampler.Decoding`` picks
  every token, so both decoders pick the same token from the same logits);
- ``logits_after``: the logits after a prompt, reusing the KV cache (verdict
  probabilities), passed back rather than left in shared state;
- ``exclusive``, ``interrupt``, ``resume``, ``close`` and ``counters``.

Generation decodes are at least two rows wide in both decoders and may carry
prompt-lookup guesses (``drafting``): ``SequentialDecoder.decode_rows`` (k
tokens in one ``llama_decode``, the logits of each) and a KV rollback past the
first refused guess.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Protocol, Sequence, TypeVar

import numpy as np

from localeval.errors import JudgeCallError
from localeval.judge.llama import compat
from localeval.judge.llama.decode_plan import prompt_chunks, reusable
from localeval.judge.llama.drafting import SequenceDraft, padded
from localeval.judge.llama.governor import DraftGovernor
from localeval.judge.llama.model import ModelHandle
from localeval.judge.llama.sampler import Decoding, Generation, Sampler

__all__ = ["Decoder", "SequentialDecoder"]

T = TypeVar("T")


class Decoder(Protocol):
    """What the judge asks of the model; see the module docstring."""

    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation: ...

    def logits_after(self, prompt: Sequence[int]) -> tuple[np.ndarray, int]: ...

    def exclusive(self, fn: Callable[[], T]) -> T: ...

    def interrupt(self) -> None: ...

    def resume(self) -> None: ...

    def close(self) -> None: ...

    def counters(self) -> dict[str, Any] | None: ...


class SequentialDecoder:
    """One call at a time, in the single sequence of ``Llama``'s context.

    ``lock`` is the judge's: held for a whole ``generate`` so that the
    sampler's scratch buffers and the KV cache serve one call at a time.
    """

    def __init__(self, model: ModelHandle, sampler: Sampler, lock: threading.RLock,
                 governor: DraftGovernor | None = None) -> None:
        self.model = model
        self.sampler = sampler
        self.lock = lock
        self.llm = model.llm
        self.n_batch = int(self.llm.n_batch)
        #: whether generation drafts (``governor.DraftGovernor``; default: never)
        self.governor = governor or DraftGovernor("none")
        # A pad row is removed after its decode: not possible in a recurrent state.
        self.can_pad = not compat.is_recurrent(self.llm)

    def counters(self) -> dict[str, Any] | None:
        """None: one call at a time has no batch counters."""
        return None

    def eval_to(self, tokens: Sequence[int]) -> int:
        """Make the KV cache hold ``tokens`` with logits for the last; return reused count.

        The longest common prefix with what is cached is kept, but never the
        last two tokens, and the rest is evaluated in decodes of two rows or
        more (``decode_plan.reusable``, ``prompt_chunks``), so the logits do
        not depend on what an earlier call left in the cache.
        """
        llm = self.llm
        cached = compat.cached_tokens(llm)
        m = min(len(cached), len(tokens))
        lcp = 0
        if m > 0:
            diff = np.flatnonzero(cached[:m] != np.asarray(tokens[:m], dtype=np.intc))
            lcp = int(diff[0]) if diff.size else m
        lcp = reusable(lcp, len(tokens))
        if not compat.kv_truncate(llm, lcp):
            llm.reset()  # recurrent models cannot drop a suffix
            lcp = 0
        try:
            pos = lcp
            for size in prompt_chunks(len(tokens) - lcp, self.n_batch):
                llm.eval(list(tokens[pos:pos + size]))
                pos += size
        except RuntimeError as e:
            llm.reset()
            raise JudgeCallError(f"llama.cpp failed to evaluate the prompt ({e})") from None
        return lcp

    def last_logits(self) -> np.ndarray:
        """A view of the logits after the last evaluated token (valid until the next eval)."""
        return compat.last_logits(self.llm, self.model.n_vocab)

    def logits_after(self, prompt: Sequence[int]) -> tuple[np.ndarray, int]:
        """A view of the logits after ``prompt``, and the prompt tokens served from the cache."""
        with self.lock:
            reused = self.eval_to(prompt)
            return self.last_logits(), reused

    def decode_rows(self, tokens: Sequence[int]) -> np.ndarray:
        """Evaluate ``tokens`` after the cache in one decode; (len(tokens), n_vocab) logits."""
        with self.lock:
            try:
                return compat.decode_rows(self.llm, tokens, self.model.n_vocab)
            except RuntimeError as e:
                self.llm.reset()
                raise JudgeCallError(f"llama.cpp failed during generation ({e})") from None

    def truncate(self, pos: int) -> None:
        """Roll the KV cache back so that it holds the first ``pos`` tokens only."""
        with self.lock:
            if not compat.kv_truncate(self.llm, pos):
                self.llm.reset()

    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation:
        """Generate after ``prompt`` under grammar ``gbnf`` (None: unconstrained)."""
        with self.lock:
            t0 = time.perf_counter()
            reused = self.eval_to(prompt)
            seq = self.sampler.start(gbnf, max_tokens, temperature, seed)
            draft = SequenceDraft(prompt, self.governor)
            try:
                head = None if seq.done else seq.step(self.last_logits())
                if self.can_pad:
                    self._drafted(seq, draft, head)
                else:
                    self._one_by_one(seq, head)
            finally:
                seq.free()
            return seq.result(len(prompt), reused, t0, draft.stats)

    def _drafted(self, seq: Decoding, draft: SequenceDraft, head: int | None) -> None:
        """The generation loop: each head with its guesses (or a pad row) in one decode."""
        gov = self.governor
        while head is not None:
            t = time.perf_counter()
            limit = gov.step_limit()
            guesses = draft.guesses(seq, limit)
            base = len(compat.cached_tokens(self.llm))
            logits = self.decode_rows(padded(head, guesses))
            kept, head = draft.verify(seq, logits.__getitem__, guesses)
            # Drop the pad row or the refused guesses (and the last pick, not yet evaluated).
            if not compat.kv_truncate(self.llm, base + 1 + kept):
                self.llm.reset()
                raise JudgeCallError("llama.cpp could not roll back drafted tokens")
            gov.record(limit is None, 1 + kept, time.perf_counter() - t)

    def _one_by_one(self, seq: Decoding, head: int | None) -> None:
        """One-row decodes: for recurrent models, which cannot drop a pad row."""
        while head is not None:
            try:
                self.llm.eval([head])
            except RuntimeError as e:
                self.llm.reset()
                raise JudgeCallError(f"llama.cpp failed during generation ({e})") from None
            head = seq.step(self.last_logits())

    def exclusive(self, fn: Callable[[], T]) -> T:
        """``fn()`` under the lock; the cached prefix is forgotten after it."""
        with self.lock:
            try:
                return fn()
            finally:
                self.llm.reset()

    def interrupt(self) -> None:
        """Nothing to cut: the one call in flight runs in the interrupted thread itself."""

    def resume(self) -> None:
        """Nothing to resume (see ``interrupt``)."""

    def close(self) -> None:
        """Nothing of its own to free: the judge closes the model."""
