"""Fake checkers that follow ``localeval.checker.Checker``: known probabilities, no model.

Tokens are whitespace words, or single CJK characters, so windows are easy to
count; every ``support`` and ``spans`` call is recorded.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from localeval.checker import Span

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\s\u3040-\u30ff\u3400-\u9fff]+")


class FakeChecker:
    """A pair checker whose P(supported) is ``rule(document, claim)``."""

    family = "pair"
    marks_spans = False

    def __init__(self, rule: Callable[[str, str], float], *, window_tokens: int = 400,
                 max_tokens: int = 512, name: str = "fake-pair") -> None:
        self.rule = rule
        self.name = name
        self.fingerprint = f"fp-{name}-{window_tokens}"
        self.window_tokens = window_tokens
        self.max_tokens = max_tokens
        self.calls: list[list[tuple[str, str]]] = []

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(list(pairs))
        return [float(self.rule(d, c)) for d, c in pairs]

    def spans(self, context, question, answer):  # pragma: no cover - pair family
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))

    def token_bounds(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _TOKEN.finditer(text)]


class FakeSpanChecker(FakeChecker):
    """A span checker marking every occurrence of ``marked`` words in the answer."""

    family = "span"
    marks_spans = True

    def __init__(self, marked: dict[str, float], **kw) -> None:
        super().__init__(lambda d, c: 1.0, name="fake-span", **kw)
        self.marked = marked
        self.span_calls: list[tuple[object, str, str]] = []

    def spans(self, context, question, answer):
        self.span_calls.append((context, question, answer))
        out = []
        for word, p in self.marked.items():
            for m in re.finditer(re.escape(word), answer):
                out.append(Span(m.start(), m.end(), word, p))
        return sorted(out, key=lambda s: s.start)


def by_claim(table: dict[str, float], default: float = 0.0) -> Callable[[str, str], float]:
    """A rule: the probability of the claim in ``table``, whatever the document."""
    return lambda document, claim: table.get(claim, default)


def words_in(document: str, claim: str) -> float:
    """A rule: 0.95 when every word of the claim is in the document, else 0.05."""
    words = re.findall(r"\w+", claim.lower())
    doc = document.lower()
    return 0.95 if words and all(w in doc for w in words) else 0.05
