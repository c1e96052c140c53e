"""The part every transformers checker shares: tokenizer, device, dtype, batches.

A batch is sorted by length first so that padding stays small, and the results
are put back in input order; each backend writes only ``_score_batch``. In
float32 a padded batch gives each row what it gives alone (attention masks
hide the padding), which ``tests/unit/test_checker_families.py`` checks to 1e-5.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from localeval.checker.base import Family, Span
from localeval.checker.layout import Layout
from localeval.errors import ModelError, UsageError, printable

__all__ = ["TransformersChecker", "torch_dtype", "DTYPES"]

T = TypeVar("T")
R = TypeVar("R")

DTYPES = ("float32", "bfloat16", "float16")


def torch_dtype(name: str, device: str) -> Any:
    """The torch dtype for ``name``; float32 on CPU whatever was asked (half precision
    on CPU is slower and less exact there)."""
    import torch

    if name not in DTYPES:
        raise ModelError(f"unknown checker dtype {name!r}; use {', '.join(DTYPES)}")
    if device == "cpu":
        return torch.float32
    return getattr(torch, name)


class TransformersChecker:
    """Base of the checkers run by transformers in this process (one model, one lock)."""

    family: Family = "pair"
    marks_spans: bool = False

    def __init__(self, layout: Layout, tokenizer: Any, model: Any, *, device: str,
                 dtype: str, batch_size: int, fingerprint: str, name: str) -> None:
        self.layout = layout
        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.dtype = dtype
        self.batch_size = max(1, int(batch_size))
        self.fingerprint = fingerprint
        self.name = name
        self.window_tokens = layout.window_tokens
        self.max_tokens = layout.max_tokens
        #: model calls made (batches), for the cache tests and the benchmark
        self.calls = 0
        self._lock = threading.Lock()  # one forward pass at a time on one model
        import inspect

        accepted = inspect.signature(model.forward).parameters
        #: the tokenizer's outputs this model's forward takes (ModernBERT has no type ids)
        self._inputs = tuple(k for k in ("input_ids", "attention_mask", "token_type_ids")
                             if k in accepted or k == "input_ids")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}, {self.layout.format}, "
                f"device={self.device})")

    # -- tokens -----------------------------------------------------------------------
    def token_bounds(self, text: str) -> list[tuple[int, int]]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [(int(s), int(e)) for s, e in enc["offset_mapping"]]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def clip(self, text: str, tokens: int) -> str:
        """``text`` cut after its first ``tokens`` tokens (whole tokens, original characters)."""
        bounds = self.token_bounds(text)
        if len(bounds) <= tokens:
            return text
        return text[:bounds[tokens - 1][1]] if tokens > 0 else ""

    def fit(self, document: str, claim: str, overhead: int) -> str:
        """The document cut so that it, the claim and ``overhead`` tokens fit in the model's
        input: the claim is never what gets truncated."""
        room = self.max_tokens - overhead - self.count_tokens(claim)
        if self.count_tokens(document) <= room:
            return document
        return self.clip(document, max(room, 0))

    # -- batches ----------------------------------------------------------------------
    def batched(self, items: Sequence[T], size: Callable[[T], int],
                run: Callable[[list[T]], list[R]]) -> list[R]:
        """``run`` over batches of ``items`` sorted by ``size``; results in input order."""
        order = sorted(range(len(items)), key=lambda i: size(items[i]))
        out: list[R | None] = [None] * len(items)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            with self._lock:
                results = run([items[i] for i in idx])
                self.calls += 1
            for i, r in zip(idx, results):
                out[i] = r
        if any(r is None for r in out):
            raise ModelError(f"checker {printable(self.name)} returned too few results")
        return out  # type: ignore[return-value]  # every slot filled above

    def to_device(self, enc: Any) -> dict[str, Any]:
        return {k: v.to(self.device) for k, v in enc.items() if k in self._inputs}

    # -- the protocol -----------------------------------------------------------------
    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        raise NotImplementedError

    def spans(self, context: str | Sequence[str], question: str, answer: str) -> list[Span]:
        raise UsageError(f"checker {printable(self.name)} ({self.family} family) marks no "
                         "spans; only a span checker (LettuceDetect) does")
