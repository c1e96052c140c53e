"""Ranked-retrieval metrics with trec_eval's conventions, vectorised over queries.

Each sample is one query: ``retrieved_ids`` is the system's ranking (best
first) and ``relevant_ids`` the judged documents with graded relevance.
Numbers equal pytrec_eval / trec_eval (``P_k``, ``recall_k``, ``map``,
``map_cut_k``, ``recip_rank``, ``success_k``, ``ndcg``, ``ndcg_cut_k``) on
the same run and qrels. The conventions that matter:

- a grade > 0 is relevant for the binary measures; 0 and negative grades are
  judged non-relevant (trec_eval's default ``relevance_level`` 1 on integer
  grades; fractional grades such as 0.5 count as relevant here);
- a query whose ``relevant_ids`` is empty is unscored: trec_eval skips queries
  that have no qrels. A query with judgements but no grade > 0 is scored
  (zeros), as trec_eval does;
- precision@k divides by k even when fewer than k documents were retrieved;
  recall, MAP divide by the number of relevant judged documents, retrieved
  or not;
- nDCG uses the grades as gains (``linear``, trec_eval) or ``2^g - 1``
  (``exponential``), negative grades count 0, discount ``log2(rank + 1)``,
  and the ideal DCG ranks all judged grades, cut at the same k;
- a document id repeated in a ranking counts at its first rank only (later
  copies are dropped; trec_eval refuses duplicate documents).

``score_batch`` turns the whole dataset (the runner hands it every sample)
into flat numpy arrays in one pass of C-level set operations per query, then
computes the measure for all queries together. The pass is shared by the
retrieval metrics of one run through a cache scoped to the run's Context.
"""

from __future__ import annotations

import math
import operator
import threading
import weakref
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal, Sequence

import numpy as np

from localeval.metrics.base import Context, Metric, register
from localeval.types import Sample, Score

__all__ = [
    "HitRate",
    "Mrr",
    "Precision",
    "Recall",
    "Map",
    "Dcg",
    "Ndcg",
    "Rankings",
    "prepare_rankings",
]

NO_JUDGEMENTS = "no relevant ids judged for this query"


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
    times. The cache is scoped to the run's ``Context`` (dropped when the
    context is garbage-collected) and is used only if the queries are the
    very same list and dict objects, with the same lengths, as when it was
    built; without a context nothing is cached.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[weakref.ref, list, list[int], Rankings]] = {}

    def get(self, pairs: list[tuple[Any, Any]], ctx: Context | None) -> Rankings:
        if ctx is None:
            return prepare_rankings(pairs)
        key = id(ctx)
        lengths = [n for ret, rel in pairs for n in (len(ret), len(rel))]
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit[0]() is ctx and hit[2] == lengths and len(hit[1]) == len(
                pairs) and all(a is c and b is d for (a, b), (c, d) in zip(pairs, hit[1])):
            return hit[3]
        rankings = prepare_rankings(pairs)
        try:
            ref = weakref.ref(ctx, lambda _r, k=key: self._drop(k))
        except TypeError:  # context type without weak references: do not cache
            return rankings
        with self._lock:
            self._entries[key] = (ref, list(pairs), lengths, rankings)
        return rankings

    def _drop(self, key: int) -> None:
        with self._lock:
            self._entries.pop(key, None)


_run_cache = _RunCache()


def _discounts(max_rank: int) -> np.ndarray:
    # log2 from C's libm (math.log2), as trec_eval uses, so DCG sums are the
    # same doubles; numpy's vectorised log2 may differ in the last bit.
    return np.array([math.log2(r + 1) for r in range(1, max_rank + 1)], dtype=np.float64)


class _Ops:
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
        return _safe_div(total, r.num_rel)

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


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


@dataclass(frozen=True)
class _RetrievalMetric(Metric):
    """Shared plumbing: validation, unscored queries, vectorised batch."""

    requires = ("retrieved_ids", "relevant_ids")
    at_field = "k"

    k: int | None = None

    def __post_init__(self) -> None:
        if self.k is not None:
            try:
                k = operator.index(self.k)
            except TypeError:
                k = 0
            if isinstance(self.k, bool) or k < 1:
                raise ValueError(f"k must be a positive integer, got {self.k!r}")
            object.__setattr__(self, "k", int(k))

    def score(self, sample: Sample, ctx: Context | None = None) -> Score:
        return self.score_batch([sample], ctx)[0]

    def score_batch(self, samples: Sequence[Sample], ctx: Context | None = None) -> list[Score]:
        out: list[Score | None] = [None] * len(samples)
        todo: list[int] = []
        for i, s in enumerate(samples):
            if s.retrieved_ids is None or s.relevant_ids is None:
                miss = [f for f in self.requires if getattr(s, f, None) is None]
                out[i] = Score.unscored(f"missing field: {', '.join(miss)}")
            elif not s.relevant_ids:
                out[i] = Score.unscored(NO_JUDGEMENTS)
            else:
                todo.append(i)
        r = _run_cache.get([(samples[i].retrieved_ids, samples[i].relevant_ids)
                            for i in todo], ctx)
        values, details = self.compute(_Ops(r))
        dups = r.duplicates.tolist()
        for i, v, d, dup in zip(todo, values.tolist(), details, dups):
            if dup:
                d["duplicates_dropped"] = dup
            out[i] = Score(v, details=d)
        return out  # type: ignore[return-value]

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        raise NotImplementedError


def _first_rank_details(first: np.ndarray) -> list[dict[str, Any]]:
    return [{"first_relevant_rank": f or None} for f in first.tolist()]


@register
@dataclass(frozen=True)
class HitRate(_RetrievalMetric):
    """1 if a relevant document is in the top k (all retrieved without k), else 0
    (trec_eval ``success_k``)."""

    name = "hit_rate"
    description = "1 if any relevant id is in the top k, else 0"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        first = ops.first_relevant_rank()
        hit = (first > 0) if self.k is None else (first > 0) & (first <= self.k)
        return hit.astype(np.float64), _first_rank_details(first)


@register
@dataclass(frozen=True)
class Mrr(_RetrievalMetric):
    """Reciprocal rank of the first relevant document, 0 if none (within the top
    k when k is given); trec_eval ``recip_rank`` (on the run cut at k)."""

    name = "mrr"
    description = "1 / rank of the first relevant id (0 if none in the top k)"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        first = ops.first_relevant_rank()
        ok = first > 0 if self.k is None else (first > 0) & (first <= self.k)
        rr = _safe_div(ok.astype(np.float64), np.where(ok, first, 0))
        return rr, _first_rank_details(first)


@register
@dataclass(frozen=True)
class Precision(_RetrievalMetric):
    """Relevant documents in the top k / k (trec_eval ``P_k``: divides by k even
    when fewer were retrieved). Without k: relevant retrieved / retrieved
    (``set_P``)."""

    name = "precision"
    description = "relevant ids in the top k / k"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        hits = ops.hits(self.k)
        den = ops.r.n_ret if self.k is None else np.full(hits.size, self.k)
        return _safe_div(hits.astype(np.float64), den), [
            {"relevant_retrieved": h} for h in hits.tolist()]


@register
@dataclass(frozen=True)
class Recall(_RetrievalMetric):
    """Relevant documents in the top k / relevant judged documents (trec_eval
    ``recall_k``; without k: ``set_recall``). 0 when no grade is > 0."""

    name = "recall"
    description = "relevant ids in the top k / number of relevant ids"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        hits = ops.hits(self.k)
        return _safe_div(hits.astype(np.float64), ops.r.num_rel), [
            {"relevant_retrieved": h, "num_relevant": n}
            for h, n in zip(hits.tolist(), ops.r.num_rel.tolist())]


@register
@dataclass(frozen=True)
class Map(_RetrievalMetric):
    """Average precision: the sum of precision@rank over the relevant retrieved
    documents (within the top k) / relevant judged documents. trec_eval ``map``
    and ``map_cut_k``; the run score is its mean (MAP)."""

    name = "map"
    description = "average precision (mean over queries: MAP)"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        ap = ops.average_precision(self.k)
        hits = ops.hits(self.k)
        return ap, [{"relevant_retrieved": h, "num_relevant": n}
                    for h, n in zip(hits.tolist(), ops.r.num_rel.tolist())]


Gain = Literal["linear", "exponential"]


def _check_gain(gain: str) -> None:
    if gain not in ("linear", "exponential"):
        raise ValueError("gain must be linear or exponential")


@dataclass(frozen=True)
class _GradedMetric(_RetrievalMetric):
    """A retrieval metric over graded relevance, with a gain function."""

    gain: Gain = "linear"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_gain(self.gain)


@register
@dataclass(frozen=True)
class Dcg(_GradedMetric):
    """Discounted cumulative gain of the top k: sum of gain(grade) / log2(rank + 1).
    Unnormalised, so not comparable across queries; prefer ndcg."""

    name = "dcg"
    description = "discounted cumulative gain of the top k (graded)"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        dcg = ops.dcg(self.k, self.gain)
        return dcg, [{"relevant_retrieved": h} for h in ops.hits(self.k).tolist()]


@register
@dataclass(frozen=True)
class Ndcg(_GradedMetric):
    """DCG@k / ideal DCG@k, the ideal ranking made of all judged grades (trec_eval
    ``ndcg_cut_k``, and ``ndcg`` without k, with linear gain). 0 when no grade
    is > 0."""

    name = "ndcg"
    description = "normalised discounted cumulative gain of the top k (graded)"

    def compute(self, ops: _Ops) -> tuple[np.ndarray, list[dict[str, Any]]]:
        dcg = ops.dcg(self.k, self.gain)
        idcg = ops.idcg(self.k, self.gain)
        return _safe_div(dcg, idcg), [{"dcg": d, "idcg": i}
                                      for d, i in zip(dcg.tolist(), idcg.tolist())]
