"""What the synthesizers write, and from which chunks: counts, order, fair coverage.

``counts`` splits ``n`` questions by the distribution (largest remainders, ties in
the synthesizers' order); ``interleave`` orders the synthesizers so that every
prefix of the plan keeps the distribution; ``Rotation`` hands out documents and
chunks fairly: the least-used document that can serve a synthesizer, ties broken
by a seeded order of the documents, so every document serves once before any
serves twice; within a document, the least-used chunk, ties by a seeded order too.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Iterable, Mapping, Sequence

from localeval.corpus import Chunk
from localeval.errors import InvalidArgument
from localeval.generate.candidates import SYNTHESIZERS

__all__ = ["DEFAULT_DISTRIBUTION", "counts", "interleave", "Rotation"]

#: Half single-hop questions, a quarter of each multi-hop kind.
DEFAULT_DISTRIBUTION = {"single_hop_specific": 0.5, "multi_hop_specific": 0.25,
                        "multi_hop_abstract": 0.25}


def _shares(distribution: Mapping[str, float] | None) -> dict[str, float]:
    dist = dict(DEFAULT_DISTRIBUTION if distribution is None else distribution)
    unknown = sorted(set(dist) - set(SYNTHESIZERS))
    if unknown:
        raise InvalidArgument(f"unknown synthesizer {unknown[0]!r} in the distribution; "
                              f"known: {', '.join(SYNTHESIZERS)}")
    try:
        shares = {s: float(dist.get(s, 0.0)) for s in SYNTHESIZERS}
    except (TypeError, ValueError):
        raise InvalidArgument("the distribution's shares must be numbers") from None
    if any(v < 0 or v != v or v == float("inf") for v in shares.values()) \
            or sum(shares.values()) <= 0:
        raise InvalidArgument("the distribution's shares must be finite, not negative, "
                              f"and not all 0: {dist}")
    total = sum(shares.values())
    return {s: v / total for s, v in shares.items()}


def counts(n: int, distribution: Mapping[str, float] | None = None,
           *, feasible: Iterable[str] = SYNTHESIZERS) -> dict[str, int]:
    """How many questions each synthesizer writes.

    A synthesizer that cannot write any (``feasible`` leaves it out: no two
    related chunks, no document of several chunks) gives its share to the
    others in proportion, or to single_hop_specific when they have none.
    """
    shares = _shares(distribution)
    able = [s for s in SYNTHESIZERS if s in set(feasible)]
    if not able:
        return {s: 0 for s in SYNTHESIZERS}
    kept = {s: shares[s] for s in able}
    if sum(kept.values()) <= 0:
        kept = {s: (1.0 if s == able[0] else 0.0) for s in able}
    total = sum(kept.values())
    exact = {s: n * v / total for s, v in kept.items()}
    out = {s: int(exact.get(s, 0.0)) for s in SYNTHESIZERS}
    left = n - sum(out.values())
    by_remainder = sorted(able, key=lambda s: (-(exact[s] - out[s]), SYNTHESIZERS.index(s)))
    for s in by_remainder[:left]:
        out[s] += 1
    return out


def interleave(per_synthesizer: Mapping[str, int]) -> list[str]:
    """The synthesizers in plan order: at each step the one furthest behind its share."""
    n = sum(per_synthesizer.values())
    done: Counter[str] = Counter()
    plan = []
    for step in range(n):
        left = [s for s in SYNTHESIZERS if done[s] < per_synthesizer.get(s, 0)]
        lag = [per_synthesizer[s] * (step + 1) / n - done[s] for s in left]
        pick = left[lag.index(max(lag))]  # the first of the furthest behind
        done[pick] += 1
        plan.append(pick)
    return plan


class Rotation:
    """Fair, seeded hand-out of documents and their chunks (module docstring)."""

    def __init__(self, chunks: Sequence[Chunk], seed: int) -> None:
        self.chunks = list(chunks)
        docs = sorted({c.doc_id for c in self.chunks})
        random.Random(seed).shuffle(docs)
        self.doc_rank = {d: i for i, d in enumerate(docs)}
        self.by_doc: dict[str, list[int]] = {d: [] for d in docs}
        for i, c in enumerate(self.chunks):
            self.by_doc[c.doc_id].append(i)
        self.chunk_rank: dict[int, int] = {}
        for d, members in self.by_doc.items():
            order = list(members)
            random.Random(f"{seed}:{d}").shuffle(order)
            self.chunk_rank.update((i, r) for r, i in enumerate(order))
        self.doc_uses: Counter[str] = Counter()
        self.chunk_uses: Counter[int] = Counter()

    def documents(self) -> list[str]:
        return sorted(self.by_doc, key=self.doc_rank.__getitem__)

    def next_document(self, serves: Callable[[str], bool]) -> str | None:
        """The least-used document for which ``serves`` holds (None: none does)."""
        able = [d for d in self.by_doc if serves(d)]
        if not able:
            return None
        return min(able, key=lambda d: (self.doc_uses[d], self.doc_rank[d]))

    def order(self, indexes: Iterable[int]) -> list[int]:
        """Chunk indexes, least used first, ties in the seeded order."""
        return sorted(indexes, key=lambda i: (self.chunk_uses[i], self.doc_rank[
            self.chunks[i].doc_id], self.chunk_rank[i]))

    def use(self, doc_id: str, indexes: Iterable[int]) -> None:
        """Count one question written from ``doc_id`` (the anchor) and these chunks."""
        self.doc_uses[doc_id] += 1
        self.chunk_uses.update(indexes)
