"""``CachedChecker``: a checker's answers kept in the SQLite cache, as judge calls are.

Each (document, claim) probability and each answer's spans is one entry of the
cache's ``judge_calls`` table, keyed by the checker's fingerprint (its files and
every setting that changes a probability) and the exact texts, so a second run,
or a second metric asking the same pair, runs no model. Only the pairs missing
from the cache go to the model, in one batched call. An entry of the wrong shape
is a miss, computed again and overwritten (the cache is a saving, never a source
of truth).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from localeval.cache import Cache, judge_label, text_key
from localeval.checker.base import Checker, Span

__all__ = ["CachedChecker", "support_key", "spans_key"]


def support_key(fingerprint: str, document: str, claim: str) -> str:
    return text_key("checker-support", fingerprint, document, claim)


def spans_key(fingerprint: str, context: Sequence[str], question: str, answer: str) -> str:
    return text_key("checker-spans", fingerprint, context, question, answer)


def _prob(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and 0.0 <= value <= 1.0 else None


def _spans(value: Any) -> list[Span] | None:
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 4 and isinstance(item[0], int)
                and isinstance(item[1], int) and isinstance(item[2], str)
                and _prob(item[3]) is not None):
            return None
        out.append(Span(item[0], item[1], item[2], float(item[3])))
    return out


class CachedChecker:
    """Wrap any checker; ``hits`` and ``misses`` count pairs (and span calls)."""

    def __init__(self, inner: Checker, cache: Cache) -> None:
        self.inner = inner
        self.cache = cache
        self.label = judge_label(inner.name, inner.fingerprint)
        self.hits = 0
        self.misses = 0

    # the wrapped checker's identity and capabilities, by name
    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def family(self) -> Any:
        return self.inner.family

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def window_tokens(self) -> int:
        return self.inner.window_tokens

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    @property
    def marks_spans(self) -> bool:
        return self.inner.marks_spans

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def token_bounds(self, text: str) -> list[tuple[int, int]]:
        return self.inner.token_bounds(text)

    def __repr__(self) -> str:
        return f"CachedChecker({self.inner!r}, hits={self.hits}, misses={self.misses})"

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        keys = [support_key(self.fingerprint, d, c) for d, c in pairs]
        found: dict[str, float] = {}
        for key in dict.fromkeys(keys):
            hit = self.cache.get_call(key)
            p = _prob(hit.get("p")) if hit is not None else None
            if p is not None:
                found[key] = p
        todo = {k: i for i, k in reversed(list(enumerate(keys))) if k not in found}
        self.hits += sum(k in found for k in keys)
        self.misses += len(todo)
        if todo:  # each missing pair once, all in one batched call
            fresh = self.inner.support([pairs[i] for i in todo.values()])
            for key, p in zip(todo, fresh):
                self.cache.put_call(key, self.label, "checker-support", {"p": float(p)})
                found[key] = float(p)
        return [found[k] for k in keys]

    def spans(self, context: str | Sequence[str], question: str, answer: str) -> list[Span]:
        passages = [context] if isinstance(context, str) else list(context)
        key = spans_key(self.fingerprint, passages, question, answer)
        hit = self.cache.get_call(key)
        got = _spans(hit.get("spans")) if hit is not None else None
        if got is not None:
            self.hits += 1
            return got
        self.misses += 1
        spans = self.inner.spans(passages, question, answer)
        self.cache.put_call(key, self.label, "checker-spans",
                            {"spans": [[s.start, s.end, s.text, s.probability] for s in spans]})
        return spans
