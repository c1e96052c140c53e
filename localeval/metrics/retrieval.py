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

The vectorised machinery they share (flat arrays over all queries, one
build per run) is in ``localeval.metrics.rankings``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np

from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.rankings import RankingOps, rankings_for, safe_div
from localeval.metrics.specs import register
from localeval.metrics.text_pairs import filled
from localeval.types import Sample, Score

__all__ = ["HitRate", "Mrr", "Precision", "Recall", "Map", "Dcg", "Ndcg", "NO_JUDGEMENTS"]

NO_JUDGEMENTS = "no relevant ids judged for this query"


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

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        return self.score_batch([sample], ctx)[0]

    def score_batch(self, samples: Sequence[Sample], ctx: Judging | None = None) -> list[Score]:
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
        r = rankings_for([(samples[i].retrieved_ids, samples[i].relevant_ids)
                          for i in todo], ctx)
        values, details = self.compute(RankingOps(r))
        dups = r.duplicates.tolist()
        for i, v, d, dup in zip(todo, values.tolist(), details, dups):
            if dup:
                d["duplicates_dropped"] = dup
            out[i] = Score(v, details=d)
        return filled(out)

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
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

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
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

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
        first = ops.first_relevant_rank()
        ok = first > 0 if self.k is None else (first > 0) & (first <= self.k)
        rr = safe_div(ok.astype(np.float64), np.where(ok, first, 0))
        return rr, _first_rank_details(first)


@register
@dataclass(frozen=True)
class Precision(_RetrievalMetric):
    """Relevant documents in the top k / k (trec_eval ``P_k``: divides by k even
    when fewer were retrieved). Without k: relevant retrieved / retrieved
    (``set_P``)."""

    name = "precision"
    description = "relevant ids in the top k / k"

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
        hits = ops.hits(self.k)
        den = ops.r.n_ret if self.k is None else np.full(hits.size, self.k)
        return safe_div(hits.astype(np.float64), den), [
            {"relevant_retrieved": h} for h in hits.tolist()]


@register
@dataclass(frozen=True)
class Recall(_RetrievalMetric):
    """Relevant documents in the top k / relevant judged documents (trec_eval
    ``recall_k``; without k: ``set_recall``). 0 when no grade is > 0."""

    name = "recall"
    description = "relevant ids in the top k / number of relevant ids"

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
        hits = ops.hits(self.k)
        return safe_div(hits.astype(np.float64), ops.r.num_rel), [
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

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
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

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
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

    def compute(self, ops: RankingOps) -> tuple[np.ndarray, list[dict[str, Any]]]:
        dcg = ops.dcg(self.k, self.gain)
        idcg = ops.idcg(self.k, self.gain)
        return safe_div(dcg, idcg), [{"dcg": d, "idcg": i}
                                      for d, i in zip(dcg.tolist(), idcg.tolist())]
