"""``localeval run ... --labels FILE``: corrected means beside the judge-only ones in every output,
and the judge's calibration on the labelled rows in report.html."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from labels_util import example_labels

from localeval.cli.app import example_path, main
from localeval.estimate import calibration

_labels = example_labels


def _run(tmp: Path, *extra: str) -> int:
    return main(["run", str(example_path()), "-m", "bleu,rougeL", "-o", str(tmp / "run"),
                 "--no-cache", *extra])


def test_corrected_means_in_summary_markdown_table_and_report(tmp_path: Path, capsys) -> None:
    assert _run(tmp_path, "--labels", str(_labels(tmp_path)), "--labels-random-draw") == 0
    out = tmp_path / "run"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    c = summary["corrected"]["metrics"]["rougeL"]
    assert c["labelled"] == 15 and c["rows"] == 40
    assert c["corrected"]["low"] < c["corrected"]["value"] < c["corrected"]["high"]
    assert summary["metrics"]["rougeL"]["mean"] == pytest.approx(c["judge_only"]["value"])
    assert c["calibration"]["brier"] is None  # rougeL is no soft verdict
    assert sum(b["n"] for b in c["calibration"]["bins"]) == 15
    assert "bleu" not in summary["corrected"]["metrics"]  # not labelled
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| rougeL (corrected by labels) |" in md and "15 / 40" in md
    assert "estimates the judge, not the truth" in md
    assert "independent pseudo-rows" in md and summary["corrected"]["interval"] in md
    term = capsys.readouterr().out
    assert "(corrected" in term and "15 / 40" in term  # the row, however narrow the terminal
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="corrected"' in html and "<svg class=\"reliability\"" in html
    assert html.count("<script") == 1  # the CSP-hashed one only


def test_bad_labels_exit_2_and_leave_the_run_as_written(tmp_path: Path, capsys) -> None:
    few = _labels(tmp_path, n=6)
    assert _run(tmp_path, "--labels", str(few), "--labels-random-draw") == 2
    err = capsys.readouterr().err
    assert "only 6 labelled rows" in err and "labels.csv" in err and "Traceback" not in err
    assert "the run is complete" in err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert "corrected" not in summary and summary["metrics"]["rougeL"]["mean"] is not None


def test_a_bad_label_cell_fails_before_the_run(tmp_path: Path, capsys) -> None:
    bad = _labels(tmp_path, cell=lambda i: "yes" if i == 4 else "1")
    assert _run(tmp_path, "--labels", str(bad)) == 2
    err = capsys.readouterr().err
    assert "row 5" in err and "label_rougeL" in err and "must be a number" in err
    assert not (tmp_path / "run").exists()


def test_calibration_bins_and_brier() -> None:
    cal = calibration([0.05, 0.15, 0.9, 0.95, 0.5], [0, 0, 1, 1, 1], soft=True)
    assert [b["n"] for b in cal["bins"]] == [2, 0, 1, 0, 2]
    assert cal["bins"][4]["mean_label"] == 1.0
    assert cal["brier"] == pytest.approx((0.05**2 + 0.15**2 + 0.1**2 + 0.05**2 + 0.25) / 5)


def test_report_draws_the_brier_score_for_soft_verdicts(tmp_path: Path) -> None:
    from localeval.report import write_html_report

    cal = calibration([0.1, 0.3, 0.7, 0.9] * 5, [0, 0, 1, 1] * 5, soft=True)
    est = {"mean": 0.5, "low": 0.4, "high": 0.6, "se": 0.05, "n": 20}
    summary = {"n_samples": 40, "metrics": {"faithfulness": {"mean": 0.55, "ci95": [0.5, 0.6],
                                                             "n": 40, "unscored": 0}},
               "corrected": {"labels": "l<b>.csv", "draw": "uniform:seed=1:n=20", "level": 0.95,
                             "judge_only_warning": "the judge-only mean estimates the judge",
                             "metrics": {"faithfulness": {
                                 "labelled": 20, "rows": 40, "judge_only": est,
                                 "labels_only": est, "corrected": est, "judge_bias": est,
                                 "judge_worth_labels": 3.0, "calibration": cal}}}}
    html = write_html_report(tmp_path, summary, [], []).read_text(encoding="utf-8")
    assert f"Brier {cal['brier']:.3f}" in html
    assert "l&lt;b&gt;.csv" in html and "l<b>.csv" not in html  # escaped: data, not markup

    class Tags(HTMLParser):
        circles = 0

        def handle_starttag(self, tag: str, attrs: list) -> None:
            assert "style" not in dict(attrs) and not any(k.startswith("on") for k, _ in attrs)
            self.circles += tag == "circle"
    t = Tags()
    t.feed(html)
    assert t.circles == 4  # the four non-empty bins of five
