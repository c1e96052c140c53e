"""Finished runs keep their judge's fitness: ``localeval runs`` (table and ``--json``) and the
history page say "judge unfit" beside the judged numbers of runs whose judge failed its judge
check, and a history trend through such runs is "not evidence"; ROUGE and hit rate carry
nothing. History titles runs by their names (never "latest") and marks a set-up change only on
the charts of metrics both runs have."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import localeval
from localeval.cli.app import main
from localeval.history import build_history
from localeval.testing import ScriptedJudge, headless_dom, unfit_judge

JUDGED = ("faithfulness", "nv_answer_accuracy")
PLAIN = ("rougeL", "hit_rate")
SCRIPT = {"statements": {"statements": ["a claim"]},
          "faithfulness_verdicts": {"verdicts": [{"reason": "r", "verdict": 1}]}}


def _rows(answers: str, n: int = 4) -> list[dict]:
    """One test set (questions, references, relevant ids) answered by ``answers``."""
    return [{"id": f"r{i}", "question": f"Q{i}?", "answer": f"answer {i} {answers}",
             "contexts": [f"context {i}"], "reference": f"answer {i}",
             "retrieved_ids": [f"d{i}", "x"], "relevant_ids": [f"d{i}"]} for i in range(n)]


@pytest.fixture(scope="module")
def trial(tmp_path_factory) -> Path:
    """localeval-out/ with two named runs judged by a judge that fails its check, and
    ``latest`` pointing at the second."""
    root = tmp_path_factory.mktemp("trial") / "localeval-out"
    for folder, name, answers in (("qa-1111", "v1", "right"), ("qa-2222", "v2", "wrong")):
        with pytest.warns(UserWarning, match="UNFIT"):
            r = localeval.evaluate(_rows(answers), [*JUDGED, *PLAIN], judge=unfit_judge(),
                                   cache=False, judge_check=1, out_dir=root / folder, name=name,
                                   progress=False)
        assert r.summary["judge_check"]["verdict"] == "unfit"
    os.symlink("qa-2222", root / "latest")
    return root


def test_runs_table_says_judge_unfit_beside_judged_means_only(trial, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    capsys.readouterr()
    assert main(["runs", str(trial)]) == 0
    out = capsys.readouterr().out
    for key in JUDGED:  # both runs, beside the mean
        assert len(re.findall(rf"{key} \d\.\d{{3}} \(judge unfit\)", out)) == 2, key
    for key in PLAIN:
        assert len(re.findall(rf"{key} \d\.\d{{3}}", out)) == 2, key
        assert not re.search(rf"{key} \d\.\d{{3}} \(judge", out), key
    assert out.count("judge check: UNFIT") == 2  # the judge column
    assert "latest" not in out  # the link is not a third run


def test_runs_json_has_the_judge_fitness_and_a_caveat_per_metric(trial, capsys):
    capsys.readouterr()
    assert main(["runs", str(trial), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["name"] for r in runs] == ["v1", "v2"]
    for r in runs:
        fit = r["judge_fitness"]
        assert (fit["judge_check"], fit["failed"], fit["marker"]) == ("unfit", True,
                                                                       "judge unfit")
        assert fit["line"].startswith("judge check: UNFIT")
        assert {k: m["caveat"] for k, m in r["metrics"].items()} == {
            "faithfulness": "judge unfit", "nv_answer_accuracy": "judge unfit",
            "rougeL": None, "hit_rate": None}
        assert r["metrics"]["rougeL"]["mean"] is not None


def _figures(page: str) -> dict[str, str]:
    """Each trend's figure (chart, caption, marks) by its metric."""
    out = {}
    for part in page.split('<figure class="card trendfig">')[1:]:
        fig = part.split("</figure>", 1)[0]
        metric = re.search(r"<figcaption>(.*?)</figcaption>", fig)
        assert metric is not None
        out[metric.group(1)] = fig
    return out


def _row_metrics(page: str) -> list[str]:
    """The metric items of the runs table, as text."""
    return [re.sub(r"<[^>]+>", "", li) for ul in re.findall(r'<ul class="m">(.*?)</ul>', page)
            for li in re.findall(r"<li>(.*?)</li>", ul)]


def _check_page(page: str) -> None:
    figs = _figures(page)
    assert set(figs) == {*JUDGED, *PLAIN}
    for key in JUDGED:
        fig = figs[key]
        assert fig.count('class="pt unfit"') == 2 and 'class="pt"' not in fig, key
        assert len(re.findall(r"<title>[^<]*judge unfit: not evidence</title>", fig)) == 2
        assert re.search(r'<p class="notevidence">not evidence: the judge failed its judge '
                         r"check on runs v1, v2", fig), key
    for key in PLAIN:
        fig = figs[key]
        assert fig.count('class="pt"') == 2, key
        assert "unfit" not in fig and "not evidence" not in fig, key
    items = _row_metrics(page)
    assert len(items) == 8
    for item in items:
        judged = item.split(" ", 1)[0] in JUDGED
        assert item.endswith("(judge unfit)") == judged, item
    assert page.count("judge check: UNFIT") == 2  # the table's judge column


def test_history_page_marks_unfit_judged_points_rows_and_trends(trial, tmp_path, browser):
    page = tmp_path / "history.html"
    assert main(["history", str(trial), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    _check_page(html)
    # as a reader sees it: the page opens in a browser, scripts run, nothing is blocked
    dom, console = headless_dom(page.as_uri(), tmp_path / "profile")
    assert console == []
    _check_page(dom)


def test_a_run_reached_through_latest_is_titled_by_its_name_and_listed_once(trial, tmp_path):
    h = build_history([trial, trial / "latest"], tmp_path / "h.html")
    assert [r.label for r in h.runs] == ["v1", "v2"]
    (only,) = build_history([trial / "latest"], tmp_path / "h.html").runs
    assert only.label == "v2" and only.source == str(trial / "latest")
    # an unnamed run is titled by the folder the link points to
    unnamed = tmp_path / "out"
    localeval.evaluate(_rows("x"), ["rougeL"], cache=False, out_dir=unnamed / "qa-3333",
                       progress=False)
    os.symlink("qa-3333", unnamed / "latest")
    (run,) = build_history([unnamed / "latest"], tmp_path / "h.html").runs
    assert run.label == "qa-3333"
    page = tmp_path / "latest.html"
    assert main(["history", str(unnamed / "latest"), "-o", str(page)]) == 0
    assert "<strong>qa-3333</strong>" in page.read_text(encoding="utf-8")


def _judge(name: str) -> ScriptedJudge:
    j = ScriptedJudge(SCRIPT)
    j.name, j.fingerprint = name, f"{name}-fingerprint"
    return j


def test_a_setup_change_is_marked_only_on_charts_of_metrics_both_runs_have(tmp_path):
    root = tmp_path / "runs"
    kw = dict(cache=False, progress=False, judge_check=False)
    localeval.evaluate(_rows("one"), ["faithfulness", "rougeL"], judge=_judge("judge-a"),
                       out_dir=root / "1-p1", name="p1", **kw)
    localeval.evaluate(_rows("two"), ["rougeL"], out_dir=root / "2-p2", name="p2", **kw)
    localeval.evaluate(_rows("three"), ["faithfulness"], judge=_judge("judge-b"),
                       out_dir=root / "3-p3", name="p3", **kw)
    h = build_history([root], tmp_path / "h.html")
    (g,) = h.groups
    assert [r.label for r in g.runs] == ["p1", "p2", "p3"]
    trends = {t.metric: t for t in g.trends}
    # p1 -> p2 (no judge, no faithfulness) is no mark anywhere; p1 -> p3 is, on faithfulness
    assert trends["rougeL"].marks == []
    (mark,) = trends["faithfulness"].marks
    assert (mark.base, mark.index, mark.number, mark.unknown) == (0, 2, 1, False)
    assert mark.notes[0].startswith("the judge differs: 'p1' judge-a@judge-a-fing, "
                                    "'p3' judge-b@judge-b-fing")
    assert all(t.unfit == [] for t in g.trends)  # no judge check failed: nothing unfit
    page = tmp_path / "history.html"
    assert main(["history", str(root), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    figs = _figures(html)
    assert figs["faithfulness"].count('<g class="chg">') == 1
    assert "p1 → p3: the judge differs" in figs["faithfulness"]
    assert 'class="chg' not in figs["rougeL"]
    assert not any("not evidence" in f or "unfit" in f for f in figs.values())
    # the table says it beside p3 only
    assert html.count('class="chgnote"') == 1
    assert "set-up changed since the run before on the chart of faithfulness 1" in html
