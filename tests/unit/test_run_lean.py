"""A run that keeps no samples (the command line's) writes the same files and holds no records."""

from __future__ import annotations

import json

import localeval
from localeval.results import ResultLines
from localeval.run.lean import ScoreColumns


def _data(tmp_path):
    p = tmp_path / "d.jsonl"
    rows = [{"id": f"q{i}", "question": f"question {i}", "retrieved_ids": ["a", "b", f"d{i}"],
             "relevant_ids": ["b"] if i % 3 else [f"d{i}"]} for i in range(40)]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_lean_run_keeps_no_samples_and_writes_the_same_results(tmp_path, monkeypatch):
    monkeypatch.setattr("localeval.run.runner.LEAN_CHUNK", 7)  # several chunks, one partial
    data = _data(tmp_path)
    full = localeval.evaluate(data, ["mrr", "ndcg@10"], judge=False, embedder=False,
                              cache=False, out_dir=tmp_path / "full", progress=False)
    lean = localeval.evaluate(data, ["mrr", "ndcg@10"], judge=False, embedder=False,
                              cache=False, out_dir=tmp_path / "lean", progress=False,
                              keep_samples=False)
    assert lean.samples == [] and lean.scores == []
    assert lean.summary["metrics"] == full.summary["metrics"]
    for name in ("results.jsonl", "results.csv"):
        assert (tmp_path / "lean" / name).read_text() == (tmp_path / "full" / name).read_text()
    assert "q39" in (tmp_path / "lean" / "report.html").read_text()


def test_score_columns_share_scores_without_working():
    cols = ScoreColumns(localeval.metrics.parse_metrics("mrr"))
    s1 = localeval.types.Score(0.5, details={"first_relevant_rank": 2})
    s2 = localeval.types.Score(0.5, details={"first_relevant_rank": 2})
    cols.append({"mrr": s1})
    cols.append({"mrr": s2})
    assert cols[0]["mrr"] is cols[1]["mrr"] and cols[0]["mrr"].details == {}
    assert cols[1]["mrr"].value == 0.5 and len(cols) == 2


def test_result_lines_reads_each_record_by_position(tmp_path):
    p = tmp_path / "results.jsonl"
    p.write_text('{"id": "a", "scores": {}}\n{"id": "b", "scores": {"m": 1.0}}\n')
    lines = ResultLines(p)
    assert len(lines) == 2 and lines[1]["scores"] == {"m": 1.0}
    assert [r["id"] for r in lines] == ["a", "b"] and lines[-1]["id"] == "b"
