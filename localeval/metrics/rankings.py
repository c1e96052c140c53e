"""The judged rankings of a whole dataset as flat numpy arrays, and the
per-query measures the retrieval metrics are made of.

The retrieval metrics' ``score_batch`` gets every sample at once. Here the
dataset becomes flat numpy arrays in one pass of C-level set operations per
query (``prepare_rankings``), and hits, first relevant rank, average
precision and DCG are computed for all queries together (``RankingOps``).
The pass is shared by the retrieval metrics of one run through a cache
scoped to the run's ``Judging`` (``rankings_for``). The metric classes and
trec_eval's conventions are in ``localeval.metrics.retrieval``.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from localeval.metrics.model_access import Judging

__all__ = ["Rankings", "RankingOps", "average_precision", "prepare_rankings", "rankings_for",
           "safe_div"]


@dataclass(frozen=True)
class Rankings:
    """Judged rankings of many queries, as flat numpy arrays.

    Only what the measures need is kept: every *relevant* retrieved document
    (grade > 0, duplicates removed) as ``grade`` / ``query`` / ``rank``
    (1-based), sorted by query then rank; per query ``n_ret`` (retrieved
    after de-duplication), ``num_rel`` (judged grade > 0) and ``duplicates``;
    and the ideal ranking, every positive judged grade best first, as
    ``ideal`` / ``ideal_query`` / ``ideal_rank``. Non-relevant documents
    contribute nothing to any measure except through the ranks.
    """

    grade: np.ndarray
    query: np.ndarray
    rank: np.ndarray
    n_ret: np.ndarray
    num_rel: np.ndarray
    duplicates: np.ndarray
    ideal: np.ndarray
    ideal_query: np.ndarray
    ideal_rank: np.ndarray

    @property
    def n_queries(self) -> int:
        return int(self.n_ret.size)


def _flat_positions(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group index, 1-based position in group) for consecutive groups of ``lens``."""
    query = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
    starts = np.cumsum(lens) - lens
    rank = np.arange(query.size, dtype=np.int64) - starts[query] + 1
    return query, rank


# Above this many judged documents in one ranking, look ranks up through a
# position dict instead of list.index (which scans the ranking each time).
_INDEX_SCAN_LIMIT = 16


def prepare_rankings(pairs: Sequence[tuple[Sequence[str], dict[str, float]]]) -> Rankings:
    """Build ``Rankings`` from (retrieved_ids, relevant_ids) per query.

    Per query the work is C-level and independent of the ranking's length
    apart from one set: the set doubles as the duplicate check, its
    intersection with the judged ids finds the few judged documents
    retrieved, and only those are located in the ranking. Sorting happens
    once, in numpy, for all queries.
    """
    rel_q: list[int] = []
    rel_rank: list[int] = []
    rel_grade: list[float] = []
    lens: list[int] = []
    dups: list[int] = []
    judged_grades: list[float] = []
    judged_lens: list[int] = []
    for qi, (retrieved, judged) in enumerate(pairs):
        n = len(retrieved)
        present = set(retrieved)
        if len(present) != n:  # rare: keep each id's first rank only
            retrieved = list(dict.fromkeys(retrieved))
            dups.append(n - len(retrieved))
            n = len(retrieved)
        else:
            dups.append(0)
        lens.append(n)
        judged_grades.extend(judged.values())
        judged_lens.append(len(judged))
        found = [d for d in present.intersection(judged) if judged[d] > 0]
        if not found:
            continue
        if len(found) > _INDEX_SCAN_LIMIT:
            where = {d: i for i, d in enumerate(retrieved)}
            ranks = [where[d] + 1 for d in found]
        else:
            index = retrieved.index if isinstance(retrieved, list) else list(retrieved).index
            ranks = [index(d) + 1 for d in found]
        rel_q.extend(repeat(qi, len(found)))
        rel_rank.extend(ranks)
        rel_grade.extend(judged[d] for d in found)
    n_ret = np.asarray(lens, dtype=np.int64)
    query = np.asarray(rel_q, dtype=np.int64)
    rank = np.asarray(rel_rank, dtype=np.int64)
    grade = np.asarray(rel_grade, dtype=np.float64)
    order = np.lexsort((rank, query))
    query, rank, grade = query[order], rank[order], grade[order]
    # Ideal ranking: every positive judged grade, best first, per query.
    jg = np.asarray(judged_grades, dtype=np.float64)
    jq = np.repeat(np.arange(n_ret.size, dtype=np.int64), judged_lens)
    pos = jg > 0
    jg, jq = jg[pos], jq[pos]
    order = np.lexsort((-jg, jq))
    ideal, ideal_query = jg[order], jq[order]
    num_rel = np.bincount(ideal_query, minlength=n_ret.size).astype(np.int64)
    _, ideal_rank = _flat_positions(num_rel)
    return Rankings(grade, query, rank, n_ret, num_rel, np.asarray(dups, dtype=np.int64),
                    ideal, ideal_query, ideal_rank)


class _RunCache:
    """Rankings built for one run, shared by the retrieval metrics of that run.

    Building ``Rankings`` touches every retrieved id (a memory-bound pass,
    most of the cost); a run asking for ndcg, map and mrr would pay it three
    times. The cache is scoped to the run (``Judging.run_key``, shared by the
    run's per-sample doors; dropped when the run's doors are garbage-collected)
    and is used only if the queries are the
    very same list and dict objects, with the same lengths, as when it was
    built; without a context nothing is cached.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[weakref.ref, list, list[int], Rankings]] = {}

    def get(self, pairs: list[tuple[Any, Any]], ctx: Judging | None) -> Rankings:
        if ctx is None:
            return prepare_rankings(pairs)
        run = ctx.run_key
        key = id(run)
        lengths = [n for ret, rel in pairs for n in (len(ret), len(rel))]
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit[0]() is run and hit[2] == lengths and len(hit[1]) == len(
                pairs) and all(a is c and b is d for (a, b), (c, d) in zip(pairs, hit[1])):
            return hit[3]
        rankings = prepare_rankings(pairs)
        try:
            ref = weakref.ref(run, functools.partial(self._drop_ref, key))
        except TypeError:  # a run key without weak references: do not cache
            return rankings
        with self._lock:
            self._entries[key] = (ref, list(pairs), lengths, rankings)
        return rankings

    def _drop_ref(self, key: int, _ref: Any) -> None:
        """The weakref callback: ``run`` is gone, so is its entry."""
        self._drop(key)

    def _drop(self, key: int) -> None:
        with self._lock:
            self._entries.pop(key, None)


_run_cache = _RunCache()


def rankings_for(pairs: list[tuple[Any, Any]], ctx: Judging | None) -> Rankings:
    """``Rankings`` of (retrieved_ids, relevant_ids) pairs, built once per run's ``Judging``."""
    return _run_cache.get(pairs, ctx)


def _discounts(max_rank: int) -> np.ndarray:
    # log2 from C's libm (math.log2), as trec_eval uses, so DCG sums are the
    # same doubles; numpy's vectorised log2 may differ in the last bit.
    return np.array([math.log2(r + 1) for r in range(1, max_rank + 1)], dtype=np.float64)


class RankingOps:
    """Per-query quantities over a Rankings, shared by the metric classes."""

    def __init__(self, r: Rankings) -> None:
        self.r = r

    def _within(self, rank: np.ndarray, k: int | None) -> np.ndarray:
        return np.ones(rank.size, dtype=bool) if k is None else rank <= k

    def hits(self, k: int | None) -> np.ndarray:
        """Relevant documents in the top k (all retrieved without k)."""
        r = self.r
        return np.bincount(r.query[self._within(r.rank, k)], minlength=r.n_queries)

    def first_relevant_rank(self) -> np.ndarray:
        """Rank of the first relevant document, 0 where none was retrieved."""
        r = self.r
        out = np.zeros(r.n_queries, dtype=np.int64)
        uq, first = np.unique(r.query, return_index=True)  # entries are in rank order
        out[uq] = r.rank[first]
        return out

    def average_precision(self, k: int | None) -> np.ndarray:
        r = self.r
        # Entries are exactly the relevant retrieved documents in rank order,
        # so "relevant so far" is the entry's position within its query.
        _, rel_so_far = _flat_positions(np.bincount(r.query, minlength=r.n_queries))
        m = self._within(r.rank, k)
        # trec_eval: sum over relevant retrieved of rel_so_far / rank, in rank
        # order, then divide by the number of relevant judged documents.
        prec = rel_so_far[m] / r.rank[m]
        total = np.bincount(r.query[m], weights=prec, minlength=r.n_queries)
        return safe_div(total, r.num_rel)

    def dcg(self, k: int | None, gain: str) -> np.ndarray:
        r = self.r
        m = self._within(r.rank, k)
        return self._dcg(r.grade[m], r.rank[m], r.query[m], gain)

    def idcg(self, k: int | None, gain: str) -> np.ndarray:
        r = self.r
        m = self._within(r.ideal_rank, k)
        return self._dcg(r.ideal[m], r.ideal_rank[m], r.ideal_query[m], gain)

    def _dcg(self, grade: np.ndarray, rank: np.ndarray, query: np.ndarray, gain: str
             ) -> np.ndarray:
        if grade.size == 0:
            return np.zeros(self.r.n_queries)
        g = grade if gain == "linear" else np.exp2(grade) - 1.0
        contrib = g / _discounts(int(rank.max()))[rank - 1]
        return np.bincount(query, weights=contrib, minlength=self.r.n_queries)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` per query, 0 where ``den`` is 0 (trec_eval's convention)."""
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def average_precision(values: Sequence[float]) -> float:
    """sum_i(precision@i * v_i) / sum_i v_i; 0.0 when nothing is useful or there is nothing.

    The average precision of one judged list (context_precision's: ``values``
    are the judge's usefulness verdicts in rank order, possibly fractional),
    divided by the useful items found; ``RankingOps.average_precision`` is
    trec_eval's, over many queries, divided by the relevant documents judged.

    ragas adds 1e-10 to the denominator; the exact form differs from it by
    less than 1e-9 whenever the denominator is at least 0.1.
    """
    total = float(sum(values))
    if not values or total <= 0.0:
        return 0.0
    running, num = 0.0, 0.0
    for i, v in enumerate(values, start=1):
        running += v
        num += (running / i) * v
    return num / total
