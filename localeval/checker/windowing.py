"""A document cut to a checker's window, as MiniCheck chunks documents, with overlap.

MiniCheck (``minicheck/inference.py``, ``inference_per_example``) splits a
document into sentences, packs whole sentences into chunks of at most 400 tokens
(500 for Flan-T5), checks the claim against every chunk and takes the largest
P(supported): a claim is supported if any chunk supports it. Here the sentences
come from the project's splitter (``localeval.lang.split_sentences``, so
Japanese and Chinese are cut at 。！？ too), are counted in the checker's own
tokens, and each window after the first begins with the last sentence of the
one before it, so that a claim resting on two neighbouring sentences at a
boundary still finds both in one window. A sentence longer than the window is
cut at token boundaries into pieces that overlap by an eighth of the window.
Every window is an exact slice of the document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localeval.lang import detect_lang, split_sentences

if TYPE_CHECKING:  # pragma: no cover
    from localeval.checker.base import Checker

__all__ = ["windows", "cut_text", "budget_for"]

#: Tokens kept free beside the document and claim for the format's own text.
_RESERVE = 16
_MIN_BUDGET = 16


def budget_for(claim: str, checker: Checker) -> int:
    """How many document tokens one call can take beside ``claim``."""
    room = checker.max_tokens - checker.count_tokens(claim) - _RESERVE
    return max(_MIN_BUDGET, min(checker.window_tokens, room))


def windows(document: str, claim: str, checker: Checker) -> list[str]:
    """``document`` cut into windows that fit beside ``claim`` in one call of ``checker``."""
    return cut_text(document, budget_for(claim, checker), checker)


def _units(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as (start, end) spans that cover it; a sentence the
    splitter changed is not found back, and its text stays with the one before."""
    starts, cursor = [0], 0
    for sentence in split_sentences(text, detect_lang(text)):
        i = text.find(sentence, cursor)
        if i < 0:
            continue
        if i > starts[-1]:
            starts.append(i)
        cursor = i + len(sentence)
    ends = [*starts[1:], len(text)]
    return [(s, e) for s, e in zip(starts, ends) if text[s:e].strip()]


def _pieces(text: str, start: int, end: int, budget: int, checker: Checker) -> list[tuple[int, int]]:
    """An over-long sentence as token slices of ``budget`` that overlap by budget // 8."""
    bounds = checker.token_bounds(text[start:end])
    # a slice tokenised again may take a token or two more at its cut edges
    budget = max(1, budget - 2)
    step = max(1, budget - budget // 8)
    out: list[tuple[int, int]] = []
    for first in range(0, len(bounds), step):
        last = min(first + budget, len(bounds)) - 1
        out.append((start + bounds[first][0], start + bounds[last][1]))
        if last == len(bounds) - 1:
            break
    return out


def cut_text(text: str, budget: int, checker: Checker) -> list[str]:
    """``text`` as windows of at most about ``budget`` tokens of ``checker`` (see above)."""
    if not text.strip() or checker.count_tokens(text) <= budget:
        return [text]
    units: list[tuple[int, int, int]] = []  # start, end, tokens
    for s, e in _units(text):
        n = checker.count_tokens(text[s:e])
        if n <= budget:
            units.append((s, e, n))
        else:
            units.extend((ps, pe, budget) for ps, pe in _pieces(text, s, e, budget, checker))
    out: list[str] = []
    i, carried = 0, False  # carried: units[i] is the last sentence of the window before
    while i < len(units):
        j, used = i, 0
        while j < len(units) and (j == i or used + units[j][2] <= budget):
            used += units[j][2]
            j += 1
        if carried and j == i + 1:  # nothing beside the carried sentence fits: no overlap
            i, carried = i + 1, False
            continue
        out.append(text[units[i][0]:units[j - 1][1]].strip())
        if j >= len(units):
            break
        # overlap: the next window begins with this one's last sentence when it is short
        carried = j - 1 > i and units[j - 1][2] <= budget // 2
        i = j - 1 if carried else j
    return [w for w in out if w] or [text]
