"""Aligning two result sets: by id, then by content; refusing (exit 2) rather than guessing.

The case this guards: a localeval run compared with a RAGAS export whose
rows are in another order must give the statistics of the aligned rows, not
of rows paired by position.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import localeval
from localeval.agreement import compare
from localeval.resultsets import align, load_result_set
from localeval.errors import DataError
from localeval.results import content_hash


N = 12
ROWS = [{"id": f"q{i:02d}", "question": f"What is fact number {i}?",
         "contexts": [f"Fact {i} is {i * 7}.", "Unrelated text."],
         "answer": f"Fact {i} is {i * 7}" + " or so" * (i % 4) + ".",
         "reference": f"Fact {i} is {i * 7}."} for i in range(N)]


def _run(tmp_path, rows=ROWS, name="run"):
    out = tmp_path / name
    localeval.evaluate(rows, ["rougeL", "bleu"], judge=False, embedder=False, cache=False,
                       out_dir=out, progress=False)
    return out


def _ragas_export(rows, seed=0) -> "pd.DataFrame":
    """What ragas' ``to_pandas()`` holds for the same samples: inputs and its own scores."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "user_input": [r["question"] for r in rows],
        "retrieved_contexts": [r["contexts"] for r in rows],
        "response": [r["answer"] for r in rows],
        "reference": [r["reference"] for r in rows],
        "rougeL": rng.random(len(rows)),
        "bleu": rng.random(len(rows)),
    })


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "localeval.cli", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_results_lines_record_question_and_content_hashes(tmp_path):
    run = _run(tmp_path)
    first = json.loads((run / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["question"] == ROWS[0]["question"]
    assert first["contexts_hash"] == content_hash(ROWS[0]["contexts"])
    assert first["answer_hash"] == content_hash([ROWS[0]["answer"]])
    # the hash ignores what a CSV round trip changes (line ends, width, case), not the text
    assert content_hash(["A\r\nb"]) == content_hash(["a\nB"])
    assert content_hash(["ａ１"]) == content_hash(["a1"])
    assert content_hash(["a", "b"]) != content_hash(["b", "a"]) != content_hash(["a b"])


def test_shuffled_ragas_export_gives_the_aligned_statistics(tmp_path):
    run = _run(tmp_path)
    df = _ragas_export(ROWS)
    df.to_csv(tmp_path / "ordered.csv")  # pandas' default: an index column, lists as repr
    df.sample(frac=1.0, random_state=3).to_csv(tmp_path / "shuffled.csv")
    a = load_result_set(run)
    ordered = compare(a, load_result_set(tmp_path / "ordered.csv"), n_boot=300)
    shuffled = compare(a, load_result_set(tmp_path / "shuffled.csv"), n_boot=300)
    assert shuffled.alignment.rule == "content" and len(shuffled.alignment.pairs) == N
    assert shuffled.alignment.checked == ("question", "contexts_hash", "answer_hash")
    for m in ("rougeL", "bleu"):
        assert shuffled[m].stats["pearson"].value == pytest.approx(
            ordered[m].stats["pearson"].value, abs=1e-12)
        assert shuffled[m].stats["mad"].value == pytest.approx(
            ordered[m].stats["mad"].value, abs=1e-12)
    # pairing the shuffled rows by position gives other numbers: the check is not blind
    by_pos = compare(a, load_result_set(tmp_path / "shuffled.csv"), n_boot=300,
                     align_by="position")
    assert by_pos["rougeL"].stats["mad"].value != pytest.approx(
        ordered["rougeL"].stats["mad"].value, abs=1e-6)
    # a JSON export (lists as JSON) aligns the same
    df.iloc[::-1].to_json(tmp_path / "rev.json", orient="records")
    rev = compare(a, load_result_set(tmp_path / "rev.json"), n_boot=300)
    assert rev["bleu"].stats["mad"].value == pytest.approx(ordered["bleu"].stats["mad"].value)


def test_same_question_with_another_answer_is_not_paired(tmp_path):
    """Two data sets with the same questions but other answers are different samples."""
    run = _run(tmp_path)
    other = [dict(r, answer=r["answer"] + " Changed.") if i == 4 else r
             for i, r in enumerate(ROWS)]
    _ragas_export(other).sample(frac=1.0, random_state=1).to_csv(tmp_path / "x.csv",
                                                                  index=False)
    with pytest.raises(DataError, match=r"id 'q04', question 'What is fact number 4\?'.*"
                                        r"same question, contexts, answer"):
        compare(load_result_set(run), load_result_set(tmp_path / "x.csv"), n_boot=50)


def test_same_ids_holding_other_samples_are_refused_or_realigned(tmp_path):
    run = _run(tmp_path)
    # the export carries the same ids, but its rows were renumbered after a shuffle
    df = _ragas_export(ROWS).sample(frac=1.0, random_state=2).reset_index(drop=True)
    df.insert(0, "id", [f"q{i:02d}" for i in range(N)])
    df.to_csv(tmp_path / "renumbered.csv", index=False)
    c = compare(load_result_set(run), load_result_set(tmp_path / "renumbered.csv"), n_boot=50)
    assert c.alignment.rule == "content" and "the same ids hold different samples" in \
        c.alignment.note
    with pytest.raises(DataError, match=r"id 'q00' holds different samples: question differs"):
        align(load_result_set(run), load_result_set(tmp_path / "renumbered.csv"), how="id")


def test_cli_refuses_unalignable_rows_with_exit_2(tmp_path):
    run = _run(tmp_path)
    other = [dict(r, question=r["question"].replace("fact", "rule")) if i >= 5 else r
             for i, r in enumerate(ROWS)]
    _ragas_export(other).to_csv(tmp_path / "other.csv")
    p = _cli("compare", str(run), str(tmp_path / "other.csv"), "--n-boot", "50")
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "row 6 (id 'q05', question 'What is fact number 5?')" in err
    assert "7 of 12 unmatched" in err and "--align position" in err
    # asked for explicitly, position pairing works (and says so)
    p = _cli("compare", str(run), str(tmp_path / "other.csv"), "--n-boot", "50",
             "--align", "position", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["alignment"]["rule"] == "position"


def test_old_run_without_content_aligns_by_id_or_with_the_dataset(tmp_path):
    """Run folders written before results.jsonl recorded content still read."""
    run = _run(tmp_path)
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    for rec in lines:
        for k in ("question", "contexts_hash", "answer_hash"):
            rec.pop(k)
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    df = _ragas_export(ROWS)
    with_ids = df.assign(id=[r["id"] for r in ROWS])
    with_ids.to_csv(tmp_path / "ids.csv", index=False)
    assert compare(load_result_set(run), load_result_set(tmp_path / "ids.csv"),
                   n_boot=50).alignment.rule == "id"
    df.iloc[::-1].to_csv(tmp_path / "noids.csv", index=False)
    p = _cli("compare", str(run), str(tmp_path / "noids.csv"), "--n-boot", "50")
    assert p.returncode == 2 and "no question text or content hashes in" in p.stderr
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    p = _cli("compare", str(run), str(tmp_path / "noids.csv"), "--n-boot", "50",
             "--dataset", str(data), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["alignment"]["rule"] == "content" and d["alignment"]["matched"] == N


@pytest.mark.slow
def test_validate_aligns_labels_by_content_and_refuses_when_it_cannot(tmp_path):
    run = _run(tmp_path)
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"question": [r["question"] for r in ROWS][::-1],
                  "label": ["positive" if i % 2 else "negative" for i in range(N)]}
                 ).to_csv(labels, index=False)
    p = _cli("validate", str(run), str(labels), "--n-boot", "50", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["alignment"]["rule"] == "content"
    labels.write_text("label\n" + "positive\n" * N)  # no id, no question: nothing to align on
    p = _cli("validate", str(run), str(labels), "--n-boot", "50")
    assert p.returncode == 2 and "--align position" in p.stderr
    p = _cli("validate", str(run), str(labels), "--n-boot", "50", "--align", "position")
    assert p.returncode == 0, p.stderr
