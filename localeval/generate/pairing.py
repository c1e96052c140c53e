"""Which chunks a multi-hop question may join: related ones, never two at random.

Two chunks are *related* when an embedder is given and the cosine of their
vectors is at least ``MIN_SIMILARITY`` (but under ``NEAR_COPY``: a near copy of a
chunk adds no second hop); without an embedder, when they share at least
``MIN_SHARED_RARE`` *rare* content words: words held by at most
``max(2, sqrt(N + 1))`` of the ``N`` chunks (a name, a number, a term of the
domain). Related partners are ranked by the *overlap score*, the sum over the
shared content words of their rarity ``ln((N + 1) / df) / ln(N + 1)`` (``df``
chunks hold the word): 1 for a word only these chunks hold, near 0 for one that
every chunk holds. Content words are the chunk's ROUGE tokens
(``localeval.lang.rouge_tokens``: lowercase words for English, morphemes for
Japanese, jieba words for Chinese) less a short list of function words, English
words under three letters and one-character CJK tokens.

Only chunks of one language are paired (the question is written in one), two
chunks with the same text never are, and each chunk keeps its ``MAX_PARTNERS``
most related partners, best first.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from localeval.corpus import Chunk
from localeval.lang import rouge_tokens

__all__ = ["Partner", "related_chunks", "overlap_score", "content_words", "rare_limit",
           "MIN_SIMILARITY", "NEAR_COPY", "MIN_SHARED_RARE", "MAX_PARTNERS"]

MIN_SIMILARITY = 0.5
NEAR_COPY = 0.98
MIN_SHARED_RARE = 2
MAX_PARTNERS = 5
_BLOCK = 512

_STOP = frozenset("""
the and for are was were been being has have had not but with from this that these those
their there they them then than its into onto over under about after before also such
which who whom whose what when where why how all any each other some more most only
own same very can will just should would could may might must shall does did doing
our ours your yours his her hers him she you out off per via upon while both few nor
one two
です ます した して こと これ それ あれ ある いる する なる ない れる られる という ため
から まで など よう もの ところ 的 了 是 在 和 与 及 我们 这个 一个 他们 没有 可以 什么 因为
所以 但是 如果 这些 那些 已经 还是 就是 而且 以及
""".split())


@dataclass(frozen=True)
class Partner:
    """A related chunk (its index in the chunk list) and how related it is."""

    index: int
    score: float


def content_words(text: str, lang: str) -> frozenset[str]:
    """The words of ``text`` that can relate it to another chunk (module docstring)."""
    tokens = rouge_tokens(text, lang if lang in ("en", "ja", "zh") else "en")
    shortest = 3 if lang not in ("ja", "zh") else 2
    return frozenset(t for t in tokens
                     if t not in _STOP and (len(t) >= shortest or (t.isdigit() and len(t) >= 2)))


def rare_limit(n_chunks: int) -> int:
    """A word held by at most this many of ``n_chunks`` chunks is rare."""
    return max(2, int(math.sqrt(n_chunks + 1)))


def overlap_score(shared: Iterable[str], df: Mapping[str, int], n_chunks: int) -> float:
    """The sum of the shared words' rarity (module docstring)."""
    top = math.log(n_chunks + 1)
    return sum(math.log((n_chunks + 1) / df[t]) / top for t in shared) if top > 0 else 0.0


def _pairable(chunks: Sequence[Chunk], i: int, j: int) -> bool:
    a, b = chunks[i], chunks[j]
    return i != j and a.lang == b.lang and a.text.strip() != b.text.strip()


def _best(found: list[Partner]) -> tuple[Partner, ...]:
    found.sort(key=lambda p: (-p.score, p.index))
    return tuple(found[:MAX_PARTNERS])


def related_chunks(chunks: Sequence[Chunk], embedder: Any = None) -> list[tuple[Partner, ...]]:
    """For each chunk, its related chunks, most related first (module docstring)."""
    if embedder is not None:
        return _by_embedding(chunks, embedder)
    return _by_overlap(chunks)


def _by_embedding(chunks: Sequence[Chunk], embedder: Any) -> list[tuple[Partner, ...]]:
    vectors = np.asarray(embedder.embed([c.text for c in chunks]), dtype=np.float32)
    out: list[tuple[Partner, ...]] = []
    for start in range(0, len(chunks), _BLOCK):
        sims = vectors[start:start + _BLOCK] @ vectors.T
        for row, i in enumerate(range(start, min(start + _BLOCK, len(chunks)))):
            hits = np.flatnonzero((sims[row] >= MIN_SIMILARITY) & (sims[row] < NEAR_COPY))
            out.append(_best([Partner(int(j), round(float(sims[row, j]), 6)) for j in hits
                              if _pairable(chunks, i, int(j))]))
    return out


def _by_overlap(chunks: Sequence[Chunk]) -> list[tuple[Partner, ...]]:
    words = [content_words(c.text, c.lang) for c in chunks]
    df: Counter[str] = Counter(t for ws in words for t in ws)
    n, rare = len(chunks), rare_limit(len(chunks))
    postings: dict[str, list[int]] = defaultdict(list)
    for i, ws in enumerate(words):
        for t in ws:
            if df[t] <= rare:
                postings[t].append(i)
    out: list[tuple[Partner, ...]] = []
    for i, ws in enumerate(words):
        shared_rare: Counter[int] = Counter(j for t in ws for j in postings.get(t, ()))
        found = [Partner(j, round(overlap_score(ws & words[j], df, n), 6))
                 for j, k in sorted(shared_rare.items())
                 if k >= MIN_SHARED_RARE and _pairable(chunks, i, j)]
        out.append(_best(found))
    return out
