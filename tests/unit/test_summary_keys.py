"""summary.json's renamed keys: writers write today's name only; readers accept the old ones."""

from __future__ import annotations

import json

import localeval
from localeval.report import judge_fit_failure
from localeval.report.health import health_line
from localeval.results import current_summary, read_run
from localeval.testing import HashEmbedder, OracleJudge

CHECK = {"verdict": "unfit", "metrics": {"faithfulness": {"passed": 1, "pairs": 4}},
         "line": "judge check: UNFIT"}


def test_the_old_in_health_key_becomes_judge_check():
    old = {"metrics": {}, "judge_health": {"warnings": [], "self_test": CHECK}}
    new = current_summary(old)
    assert new["judge_check"] == CHECK and "self_test" not in new["judge_health"]
    assert "self_test" in old["judge_health"], "the summary read is not changed in place"


def test_the_old_top_level_key_becomes_judge_check():
    new = current_summary({"metrics": {}, "judge_self_test": CHECK})
    assert new == {"metrics": {}, "judge_check": CHECK}


def test_todays_key_wins_and_a_current_summary_is_unchanged():
    today = {"metrics": {}, "judge_check": {"verdict": "fit"}}
    assert current_summary(today) == today
    both = current_summary({**today, "judge_self_test": CHECK})
    assert both == today


def test_a_run_writes_only_judge_check(tmp_path):
    data = [{"id": "a", "question": "q?", "answer": "a.", "contexts": ["a."], "reference": "a."}]
    res = localeval.evaluate(data, ["faithfulness"], judge=OracleJudge(),
                             embedder=HashEmbedder(dim=64), cache=False, progress=False,
                             judge_check=1, out_dir=tmp_path / "run")
    written = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert written["judge_check"]["verdict"] == res.summary["judge_check"]["verdict"]
    assert "judge_self_test" not in written and "self_test" not in written["judge_health"]


def test_localeval_report_reads_an_old_run_under_the_new_key(tmp_path):
    run = tmp_path / "old"
    run.mkdir()
    summary = {"metrics": {"faithfulness": {"mean": 0.5, "ci95": [0.5, 0.5], "n": 1,
                                            "unscored": 0}},
               "n_samples": 1, "judge_health": {"warnings": [], "self_test": CHECK}}
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (run / "results.jsonl").write_text('{"id": "a", "scores": {}}\n', encoding="utf-8")
    read, _ = read_run(run)
    assert read["judge_check"] == CHECK
    assert judge_fit_failure(read) == "judge check: UNFIT"
    assert "judge check: UNFIT" in health_line(read)
