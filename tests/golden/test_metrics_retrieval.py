"""Retrieval metrics: hand-checked golden values, trec_eval conventions, and
agreement with pytrec_eval on random runs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import pytrec_eval

from localeval.errors import UsageError
from localeval.metrics import Judging, parse_metrics
from localeval.metrics.retrieval import NO_JUDGEMENTS, Dcg, HitRate, Map, Mrr, Ndcg, Precision, Recall
from localeval.types import Sample


def _one(spec: str):
    (m,) = parse_metrics(spec)
    return m


def _values(spec: str, samples, ctx=None) -> list[float | None]:
    return [s.value for s in _one(spec).score_batch(samples, ctx)]


def _graded(grades: list[float]) -> Sample:
    """A query whose ranking has the given grades at ranks 1..n."""
    ids = [f"d{i}" for i in range(len(grades))]
    return Sample(id="q", retrieved_ids=ids, relevant_ids=dict(zip(ids, grades)))


# -- hand-checked golden values---------------------------------------------------
def test_mrr_seed_example():
    # First relevant document at ranks 1, 3 and 2 -> MRR 0.611.
    samples = [
        Sample(id="q1", retrieved_ids=["a", "b", "c"], relevant_ids={"a": 1, "b": 1, "c": 1}),
        Sample(id="q2", retrieved_ids=["x", "y", "a", "b"], relevant_ids={"a": 1, "b": 1}),
        Sample(id="q3", retrieved_ids=["x", "a", "b", "c"], relevant_ids={"a": 1, "b": 1, "c": 1}),
    ]
    scores = Mrr().score_batch(samples, None)
    assert [s.details["first_relevant_rank"] for s in scores] == [1, 3, 2]
    assert [s.value for s in scores] == pytest.approx([1.0, 1 / 3, 0.5])
    assert round(float(np.mean([s.value for s in scores])), 3) == 0.611


@pytest.mark.parametrize("k,expected", [(1, 3.0), (2, 4.2619), (3, 5.7619), (4, 5.7619),
                                        (5, 6.1487)])
def test_dcg_seed_table(k, expected):
    score = Dcg(k=k).score(_graded([3, 2, 3, 0, 1]))
    assert score.value == pytest.approx(expected, abs=5e-5)


def test_ndcg_exponential_seed_value():
    # The Japanese RAG-metrics article's numpy code: (2**rel - 1) / log2(i + 1), IDCG from the sorted grades.
    value = _one("ndcg@3:gain=exponential").score(_graded([3, 2, 3, 0, 1])).value
    assert value == pytest.approx(0.9594535145926796, rel=1e-12)
    assert round(value, 5) == 0.95945


def test_ndcg_linear_and_ideal_uses_all_judged():
    # IDCG ranks every judged grade, including documents never retrieved.
    s = Sample(id="q", retrieved_ids=["a", "b"], relevant_ids={"a": 1, "b": 0, "z": 3})
    score = Ndcg().score(s)
    assert score.details["idcg"] == pytest.approx(3 + 1 / math.log2(3))
    assert score.value == pytest.approx(1 / (3 + 1 / math.log2(3)))


def test_exponential_gain_matches_seed_formula_on_random_grades():
    rng = np.random.default_rng(3)

    def seed_ndcg(scores, k):  # a reference implementation's functions, verbatim arithmetic
        def dcg(s):
            s = np.asarray(s, dtype=float)[:k]
            return np.sum((2 ** s - 1) / np.log2(np.arange(2, s.size + 2)))
        ideal = dcg(np.sort(scores)[::-1])
        return dcg(scores) / ideal if ideal > 0 else 0

    for _ in range(50):
        grades = rng.integers(0, 4, rng.integers(1, 12)).tolist()
        k = int(rng.integers(1, 8))
        got = Ndcg(k=k, gain="exponential").score(_graded(grades)).value
        assert got == pytest.approx(seed_ndcg(grades, k), rel=1e-12, abs=1e-15)


# -- parameters ------------------------------------------------------------------
def test_parse_specs():
    ndcg10, ndcg3, p5 = parse_metrics("ndcg@10,ndcg@3:gain=exponential,precision@5")
    assert isinstance(ndcg10, Ndcg) and ndcg10.k == 10 and ndcg10.gain == "linear"
    assert isinstance(ndcg3, Ndcg) and ndcg3.k == 3 and ndcg3.gain == "exponential"
    assert isinstance(p5, Precision) and p5.k == 5
    assert [m.key for m in (ndcg10, ndcg3, p5)] == ["ndcg@10", "ndcg@3:gain=exponential",
                                                     "precision@5"]
    assert _one("ndcg@5:gain=exponential").key == "ndcg@5:gain=exponential"
    assert [m.key for m in parse_metrics("hit_rate@3,mrr,map@10,recall@20,dcg@5")] == [
        "hit_rate@3", "mrr", "map@10", "recall@20", "dcg@5"]
    for cls in (HitRate, Mrr, Precision, Recall, Map, Dcg, Ndcg):
        assert cls.requires == ("retrieved_ids", "relevant_ids")


@pytest.mark.parametrize("spec", ["ndcg@0", "ndcg@x", "precision@-1", "ndcg:gain=cubic",
                                  "mrr:k=1.5"])
def test_bad_specs_are_usage_errors(spec):
    with pytest.raises(UsageError):
        parse_metrics(spec)


# -- conventions -----------------------------------------------------------------
def test_query_without_judgements_is_unscored():
    s = Sample(id="q", retrieved_ids=["a"], relevant_ids={})
    for spec in ("hit_rate", "mrr", "precision@5", "recall@5", "map", "dcg@3", "ndcg@3"):
        score = _one(spec).score(s)
        assert score.value is None and score.reason == NO_JUDGEMENTS


def test_missing_field_is_unscored():
    score = Ndcg(k=3).score_batch([Sample(id="q", retrieved_ids=["a"])], None)[0]
    assert score.value is None and "relevant_ids" in score.reason


def test_judged_but_nothing_relevant_scores_zero():
    # trec_eval evaluates such a query (num_rel = 0): every measure is 0.
    s = Sample(id="q", retrieved_ids=["a", "b"], relevant_ids={"a": 0, "b": -1})
    for spec in ("hit_rate", "mrr", "precision@2", "recall@2", "map", "ndcg@2"):
        assert _one(spec).score(s).value == 0.0


def test_precision_divides_by_k_and_set_precision():
    s = Sample(id="q", retrieved_ids=["a", "b"], relevant_ids={"a": 1, "c": 2})
    assert Precision(k=10).score(s).value == pytest.approx(0.1)
    assert Precision().score(s).value == pytest.approx(0.5)  # set_P: over retrieved
    assert Recall(k=1).score(s).value == pytest.approx(0.5)
    assert Map().score(s).value == pytest.approx(0.5)  # 1/1 over 2 relevant
    assert HitRate(k=1).score(s).value == 1.0


def test_duplicate_ids_count_once_at_first_rank():
    s = Sample(id="q", retrieved_ids=["x", "x", "a"], relevant_ids={"a": 1})
    score = Mrr().score(s)
    assert score.value == 0.5 and score.details["duplicates_dropped"] == 1
    assert Precision(k=2).score(s).value == 0.5


def test_fractional_grades_are_relevant():
    s = Sample(id="q", retrieved_ids=["a", "b"], relevant_ids={"b": 0.5})
    assert Mrr().score(s).value == 0.5
    assert Ndcg().score(s).value == pytest.approx(1 / math.log2(3))  # (0.5/log2 3) / 0.5


def test_mrr_and_hit_rate_cutoff():
    s = Sample(id="q", retrieved_ids=["a", "b", "c"], relevant_ids={"c": 1})
    assert Mrr(k=2).score(s).value == 0.0
    assert Mrr(k=3).score(s).value == pytest.approx(1 / 3)
    assert HitRate(k=2).score(s).value == 0.0 and HitRate().score(s).value == 1.0


# -- agreement with pytrec_eval ---------------------------------------------------
_PYTREC = {
    "precision@1": "P_1", "precision@5": "P_5", "precision@10": "P_10",
    "precision": "set_P", "recall@5": "recall_5", "recall@10": "recall_10",
    "recall": "set_recall", "map": "map", "map@5": "map_cut_5", "map@10": "map_cut_10",
    "mrr": "recip_rank", "hit_rate@1": "success_1", "hit_rate@5": "success_5",
    "ndcg": "ndcg", "ndcg@3": "ndcg_cut_3", "ndcg@10": "ndcg_cut_10",
}


def _random_queries(n: int, seed: int) -> list[Sample]:
    rng = random.Random(seed)
    samples = []
    for q in range(n):
        pool = [f"d{i}" for i in range(rng.randint(1, 60))]
        judged = rng.sample(pool, rng.randint(1, len(pool)))
        # Many ties between grades, zero and negative grades, and sometimes
        # relevant documents that are never retrieved.
        grades = {d: rng.choice([-1, 0, 0, 1, 1, 1, 2, 2, 3]) for d in judged}
        if rng.random() < 0.2:
            grades[f"unretrieved{q}"] = rng.choice([1, 3])
        kind = rng.random()
        if kind < 0.1:
            ranking: list[str] = []  # nothing retrieved
        elif kind < 0.2:
            ranking = [d for d in pool if grades.get(d, 0) <= 0]  # no relevant retrieved
        else:
            ranking = rng.sample(pool, rng.randint(1, len(pool)))
        samples.append(Sample(id=f"q{q}", retrieved_ids=ranking,
                              relevant_ids={d: float(g) for d, g in grades.items()}))
    return samples


def _pytrec(samples: list[Sample], measures: set[str], cut: int | None = None):
    qrels = {s.id: {d: int(g) for d, g in s.relevant_ids.items()} for s in samples}
    # Our input is a ranked list: give pytrec_eval strictly descending scores
    # in that order, so its sort (score desc, docid desc) keeps our ranking.
    run = {s.id: {d: float(len(s.retrieved_ids) - i)
                  for i, d in enumerate(s.retrieved_ids[:cut])} for s in samples}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def test_identical_to_pytrec_eval_on_random_runs():
    samples = _random_queries(400, seed=7)
    ref = _pytrec(samples, {"P.1,5,10", "set_P", "recall.5,10", "set_recall", "map",
                            "map_cut.5,10", "recip_rank", "success.1,5", "ndcg",
                            "ndcg_cut.3,10"})
    ctx = Judging()  # shares one preparation between the metrics, like a run
    for spec, measure in _PYTREC.items():
        got = _one(spec).score_batch(samples, ctx)
        for sample, score in zip(samples, got):
            expected = ref[sample.id][measure]
            assert abs(score.value - expected) <= 1e-12, (spec, sample.id, score.value, expected)


def test_mrr_at_k_equals_recip_rank_of_cut_run():
    samples = _random_queries(200, seed=11)
    for k in (1, 3, 10):
        ref = _pytrec(samples, {"recip_rank"}, cut=k)
        got = Mrr(k=k).score_batch(samples, None)
        assert [s.value for s in got] == [ref[x.id]["recip_rank"] for x in samples]


def test_linear_dcg_matches_definition():
    samples = _random_queries(100, seed=5)
    for k in (1, 4, None):
        got = Dcg(k=k).score_batch(samples, None)
        for s, score in zip(samples, got):
            grades = [max(s.relevant_ids.get(d, 0.0), 0.0) for d in s.retrieved_ids[:k]]
            expected = sum(g / math.log2(i + 2) for i, g in enumerate(grades))
            assert score.value == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_run_cache_never_serves_other_data():
    ctx = Judging()
    a = _random_queries(30, seed=1)
    b = _random_queries(30, seed=2)
    ndcg = Ndcg(k=5)
    first = _values("ndcg@5", a, ctx)
    assert _values("ndcg@5", b, ctx) == _values("ndcg@5", b, None)
    # The same list objects mutated in length are rebuilt, not served stale.
    a[0].retrieved_ids.append("zzz")
    a[0].relevant_ids["zzz"] = 3.0
    assert [s.value for s in ndcg.score_batch(a, ctx)] == _values("ndcg@5", a, None)
    assert first[1:] == _values("ndcg@5", a, None)[1:]
