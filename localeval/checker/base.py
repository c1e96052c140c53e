"""What a checker is: a small model that says whether a document supports a claim.

A checker is not a generative judge: it reads (document, claim) pairs and returns
the probability that the document supports the claim, batched, in one forward
pass each; a span checker also marks which characters of an answer it finds
unsupported. Callers decide from the declared members (``family``,
``marks_spans``, ``window_tokens``), never from the class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["Family", "FAMILIES", "Span", "Checker", "pick_device"]

#: ``pair``: a sequence classifier over (document, claim); ``text2text``: an
#: encoder-decoder read at its first decoder step; ``span``: a token classifier
#: that marks unsupported tokens of an answer.
Family = Literal["pair", "text2text", "span"]
FAMILIES: tuple[str, ...] = ("pair", "text2text", "span")


@dataclass(frozen=True)
class Span:
    """Characters ``answer[start:end]`` marked unsupported, with the highest
    per-token probability of "unsupported" inside them."""

    start: int
    end: int
    text: str
    probability: float


@runtime_checkable
class Checker(Protocol):
    """A loaded checker model (``load_checker``).

    ``fingerprint`` is the sha256 of the folder's files and of every setting that
    changes a probability (format, label, dtype): the call cache keys on it.
    ``window_tokens`` is how many tokens of a document one call reads
    (``windows`` cuts longer documents); ``max_tokens`` the model's whole input.
    """

    @property
    def name(self) -> str: ...

    @property
    def family(self) -> Family: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def window_tokens(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def marks_spans(self) -> bool: ...

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(supported) for each (document, claim) pair, in input order."""
        ...

    def spans(self, context: str | Sequence[str], question: str, answer: str) -> list[Span]:
        """The unsupported spans of ``answer`` (span family only)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as this checker's tokenizer cuts it (no special tokens)."""
        ...

    def token_bounds(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of each token of ``text`` (no special tokens)."""
        ...


def pick_device(device: str = "auto") -> str:
    """``auto``: CUDA when torch sees one, else CPU. An explicit CUDA must exist."""
    import torch

    from localeval.errors import ModelError

    dev = (device or "auto").strip().lower()
    if dev == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if dev.startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"checker device {device} requested but CUDA is not available; "
                         "use device 'cpu' or 'auto'")
    if dev not in ("cpu", "mps") and not dev.startswith("cuda"):
        raise ModelError(f"unknown checker device {device!r}; use auto, cpu or cuda")
    return dev
