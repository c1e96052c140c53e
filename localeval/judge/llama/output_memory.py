"""The judge's earlier outputs, a source of guesses where the prompt has none.

Pure Python: one ``ngram.NgramDrafter`` over the outputs kept, under a lock
(the batched judge's generations finish on several threads).
"""

from __future__ import annotations

import threading
from typing import Sequence

from localeval.judge.llama.ngram import NgramDrafter

__all__ = ["OutputMemory", "MEMORY_MAX"]

#: Guesses taken from the judge's earlier outputs (``OutputMemory``) where the prompt has none.
MEMORY_MAX = 1


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
