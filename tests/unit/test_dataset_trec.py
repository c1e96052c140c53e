"""TREC run / qrels loading: trec_eval's ordering, clear errors, and metrics
on loaded files equal to pytrec_eval on the same files."""

from __future__ import annotations

import random

import pytest
import pytrec_eval

from localeval.errors import DataError
from localeval.metrics import Judging, parse_metrics
from localeval.dataset.trec import load_qrels, load_trec_run, trec_samples


def _write(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_run_sorted_by_score_then_docid_descending(tmp_path):
    run = _write(tmp_path, "run.txt", "\n".join([
        "q1 Q0 a 1 1.0 sys",
        "q1 Q0 c 2 3.5 sys",
        "q1 Q0 b 3 1.0 sys",
        "q1 Q0 B 4 1.0 sys",
        "",  # blank lines are skipped
        "q2 Q0 x 1 -2 sys",
        "q2 Q0 y 9 1e-3 sys",
        "q1 Q0 a9 5 1.0 sys",
        "q1 Q0 a10 6 1.0 sys",
    ]))
    # The rank column is ignored, as trec_eval does; ties: docid descending.
    assert load_trec_run(run) == {"q1": ["c", "b", "a9", "a10", "a", "B"], "q2": ["y", "x"]}


def test_qrels_grades(tmp_path):
    qrels = _write(tmp_path, "qrels.txt", "q1 0 a 2\nq1 0 b 0\nq1 0 c -1\nq2 0 x 1\nq2 0 y 0.5\n")
    assert load_qrels(qrels) == {"q1": {"a": 2.0, "b": 0.0, "c": -1.0},
                                 "q2": {"x": 1.0, "y": 0.5}}


def test_trec_samples_and_complete(tmp_path):
    run = _write(tmp_path, "run", "q1 Q0 a 1 2 s\nq1 Q0 b 2 1 s\nq9 Q0 a 1 1 s\n")
    qrels = _write(tmp_path, "qrels", "q1 0 b 1\nq2 0 a 1\n")
    samples = trec_samples(run, qrels)
    assert [(s.id, s.retrieved_ids, s.relevant_ids) for s in samples] == [
        ("q1", ["a", "b"], {"b": 1.0}), ("q9", ["a"], {})]
    (mrr,) = parse_metrics("mrr")
    scores = mrr.score_batch(samples, None)
    assert scores[0].value == 0.5
    assert scores[1].value is None  # no judgements: trec_eval skips the query
    full = trec_samples(run, qrels, complete=True)
    assert [s.id for s in full] == ["q1", "q9", "q2"]
    assert mrr.score_batch(full, None)[2].value == 0.0  # trec_eval -c


@pytest.mark.parametrize("loader,text,line,message", [
    (load_trec_run, "q1 Q0 a 1 1.0 s\nq1 Q0 b 2 1.0\n", 2, "expected 6 columns"),
    (load_trec_run, "q1 Q0 a 1 1.0 s\n\nq1 Q0 b 2 high s\n", 3, "score 'high' is not a number"),
    (load_trec_run, "q1 Q0 a 1 1.0 s\nq1 Q0 a 2 0.5 s\n", 2, "listed twice"),
    (load_trec_run, "q1 Q0 a 1 nan s\n", 1, "NaN"),
    (load_qrels, "q1 0 a 1\nq1 0 b\n", 2, "expected 4 columns"),
    (load_qrels, "q1 0 a yes\n", 1, "relevance grade 'yes' is not a number"),
    (load_qrels, "q1 0 a 1\nq2 0 a 1\nq1 0 a 0\n", 3, "judged twice"),
])
def test_malformed_lines_name_file_and_line(tmp_path, loader, text, line, message):
    p = _write(tmp_path, "bad.txt", text)
    with pytest.raises(DataError) as e:
        loader(p)
    assert str(e.value).startswith(f"{p}, line {line}: ")
    assert message in str(e.value)
    assert e.value.exit_code == 2


def test_unreadable_files(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        load_trec_run(tmp_path / "missing.txt")
    empty = _write(tmp_path, "empty.txt", "\n\n")
    with pytest.raises(DataError, match="no lines"):
        load_qrels(empty)
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"q1 Q0 a 1 1 s\nq1 Q0 caf\xe9 2 0.5 s\n")
    with pytest.raises(DataError, match=r"line 2: not UTF-8"):
        load_trec_run(latin)


def test_metrics_on_files_equal_pytrec_eval_on_same_files(tmp_path):
    rng = random.Random(13)
    run_lines, qrel_lines = [], []
    for q in range(150):
        docs = [f"doc{i}" for i in range(rng.randint(1, 40))]
        for d in rng.sample(docs, rng.randint(1, len(docs))):
            qrel_lines.append(f"q{q} 0 {d} {rng.choice([0, 0, 1, 1, 2, 3])}")
        if q % 10 == 0:
            continue  # judged but not in the run
        for rank, d in enumerate(rng.sample(docs, rng.randint(1, len(docs))), start=1):
            # Coarse scores: many ties, which trec_eval breaks by docid.
            run_lines.append(f"q{q} Q0 {d} {rank} {rng.choice([0.5, 1, 1.5, 2, 3])} sys")
    run_lines.append("q999 Q0 doc1 1 1 sys")  # in the run, not in the qrels
    run = _write(tmp_path, "run.txt", "\n".join(run_lines) + "\n")
    qrels = _write(tmp_path, "qrels.txt", "\n".join(qrel_lines) + "\n")

    with open(run) as f:
        py_run = pytrec_eval.parse_run(f)
    with open(qrels) as f:
        py_qrels = pytrec_eval.parse_qrel(f)
    ref = pytrec_eval.RelevanceEvaluator(
        py_qrels, {"P.5", "recall.10", "map", "recip_rank", "ndcg_cut.10"}).evaluate(py_run)

    samples = trec_samples(run, qrels)
    assert {s.id for s in samples} - set(ref) == {"q999"}
    ctx = Judging()
    for spec, measure in {"precision@5": "P_5", "recall@10": "recall_10", "map": "map",
                          "mrr": "recip_rank", "ndcg@10": "ndcg_cut_10"}.items():
        (metric,) = parse_metrics(spec)
        for s, score in zip(samples, metric.score_batch(samples, ctx)):
            if s.id == "q999":
                assert score.value is None
            else:
                assert abs(score.value - ref[s.id][measure]) <= 1e-12, (spec, s.id)


@pytest.mark.parametrize("grade", ["inf", "1e308", "-5000"])
def test_qrels_grade_must_be_finite_and_bounded(tmp_path, grade):
    """A grade of inf or 1e308 once put Infinity into summary.json."""
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    qrels.write_text(f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(DataError, match=r"qrels.txt, line 2: relevance grade of 'd2'"):
        trec_samples(run, qrels)
