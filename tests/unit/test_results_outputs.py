"""What people take away from a run: results.csv, and per-sample assertions in pytest."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from localeval.testing import assert_each, assert_scores
from localeval.testing.scripted import ScriptedJudge

ROWS = [
    {"id": "q1", "question": 'Where is "Tokyo", Japan?\nTwo lines.', "answer": "In Japan",
     "reference": "In Japan", "contexts": ["Tokyo is in Japan."]},
    {"id": "q2", "question": "東京はどこ？", "answer": "日本です", "reference": "日本です",
     "contexts": ["東京は日本にある。"]},
    {"id": "q3", "question": "Something else", "answer": "Something", "reference": "Other",
     "contexts": ["x"]},
]


def test_run_writes_results_csv_with_scores_and_unscored_reasons(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                    encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-m", "localeval.cli", "run", str(data), "-m",
                        "rougeL,faithfulness", "-o",
                        str(tmp_path / "out"), "--quiet", "--no-cache"],
                       capture_output=True, text=True, timeout=180, env=env,
                       cwd=tmp_path)  # no models/ here: faithfulness is unscored, with a reason
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "out" / "results.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == ["q1", "q2", "q3"]
    assert rows[0]["question"] == ROWS[0]["question"]  # quotes, comma and line break survive
    assert rows[1]["question"] == "東京はどこ？"
    assert float(rows[0]["rougeL"]) == pytest.approx(1.0)
    assert float(rows[2]["rougeL"]) == 0.0 and rows[0]["rougeL_reason"] == ""
    assert rows[2]["faithfulness"] == "" and "judge" in rows[2]["faithfulness_reason"]
    import pandas as pd
    df = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(df.columns) == ["id", "question", "rougeL", "faithfulness", "rougeL_reason",
                                "faithfulness_reason"]


def _judge():
    def verdicts(request):
        n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 2)
        bad = "Something" in request.messages[-1]["content"]
        return {"verdicts": [{"reason": "not in the context" if bad else "stated",
                              "verdict": 0 if bad else 1} for _ in range(n)]}
    return ScriptedJudge({"statements": {"statements": ["the claim"]},
                          "faithfulness_verdicts": verdicts})


def test_assert_each_names_the_samples_under_the_threshold_with_their_working():
    kw = dict(judge=_judge(), cache=False, embedder=False, judge_check=False)
    with pytest.raises(AssertionError) as e:
        assert_each(ROWS, {"faithfulness": 0.5}, **kw)
    msg = str(e.value)
    assert msg.startswith("localeval: gate failed: faithfulness at least 0.5 on every sample: "
                          "1 of 3 samples under it\n")
    # id and question, score, and the judge's working
    assert '  q3 "Something else": faithfulness 0.000 < 0.5; working:' in msg
    assert "not in the context" in msg
    assert "q1 " not in msg and "q2 " not in msg
    # the mean passes the same threshold: only the per-sample check catches q3
    assert_scores(ROWS, {"faithfulness": 0.5}, **kw)
    with pytest.raises(AssertionError, match=r'q3 "Something else"'):
        assert_scores(ROWS, {"faithfulness": 0.5}, per_sample=True, **kw)
    result = assert_each(ROWS, {"faithfulness": 0.0}, **kw)
    assert result["faithfulness"] == pytest.approx(2 / 3)


def test_assert_each_fails_unscored_samples_unless_allowed():
    kw = dict(judge=False, cache=False, embedder=False)
    with pytest.raises(AssertionError, match=r"0 of 3 samples under it; 3 of 3 samples unscored "
                                             r"\(no judge model.*: 3\), allowed: 0\n"
                                             r'  q1 "Where is \\"Tokyo\\", Japan\? Two lines.": '
                                             r"faithfulness unscored \(.*judge"):
        assert_each(ROWS, {"faithfulness": 0.0}, **kw)
    assert_each(ROWS, {"faithfulness": 0.0}, allow_unscored=True, **kw)
    assert_each(ROWS, {"faithfulness": 0.0}, allow_unscored="all", **kw)
    with pytest.raises(AssertionError, match="allowed: 2"):
        assert_each(ROWS, {"faithfulness": 0.0}, allow_unscored=2, **kw)


def test_signature_is_printed_on_one_line_at_any_terminal_width(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                    encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "40"}
    p = subprocess.run([sys.executable, "-m", "localeval.cli", "run", str(data), "-m",
                        "rougeL,faithfulness", "-o", str(tmp_path / "out"), "--no-cache"],
                       capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    sig = json.loads((tmp_path / "out" / "summary.json").read_text())["signature_line"]
    assert len(sig) > 40  # longer than the terminal: rich would have wrapped it
    assert sig in p.stdout.splitlines()


def test_save_from_python_writes_the_folder_a_cli_run_writes(tmp_path):
    import localeval

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                    encoding="utf-8")
    res = localeval.evaluate(str(data), ["rougeL", "bleu"], judge=False, cache=False,
                             progress=False)
    out = res.save(tmp_path / "saved")
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert names == ["report.html", "results.csv", "results.jsonl", "summary.json", "summary.md"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "rougeL" in html and "q2" in html
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["rougeL"]["mean"] == pytest.approx(res["rougeL"])


def test_report_command_rebuilds_the_page_with_the_datasets_text(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                    encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    run = [sys.executable, "-m", "localeval.cli"]
    out = tmp_path / "out"
    p = subprocess.run(run + ["run", str(data), "-m", "rougeL", "-o", str(out), "--quiet",
                              "--no-cache"], capture_output=True, text=True, timeout=180, env=env)
    assert p.returncode == 0, p.stderr
    (out / "report.html").unlink()
    p = subprocess.run(run + ["report", str(out)], capture_output=True, text=True, timeout=180,
                       env=env)
    assert p.returncode == 0, p.stderr
    bare = (out / "report.html").read_text(encoding="utf-8")
    assert "日本です" not in bare  # results.jsonl holds a hash of the answer, not its text
    p = subprocess.run(run + ["report", str(out), "--data", str(data)], capture_output=True,
                       text=True, timeout=180, env=env)
    assert p.returncode == 0, p.stderr
    full = (out / "report.html").read_text(encoding="utf-8")
    assert "日本です" in full and "rougeL" in full
