"""``localeval history``: one page over every run kept, grouped by dataset version, each
metric's trend with the judge's changes marked, damaged runs listed, exports added, and
nothing from the data run as markup or script."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

import localeval
from localeval.cli.app import main
from localeval.dataset import data_version, load_dataset
from localeval.history import build_history, history_html
from localeval.testing import ScriptedJudge, headless_dom

OLD = Path(__file__).resolve().parents[1] / "data" / "predecessor"
SCRIPT = {"statements": {"statements": ["a claim"]},
          "faithfulness_verdicts": {"verdicts": [{"reason": "r", "verdict": 1}]}}
HOSTILE = '<script>alert("x")</script>\u202e\'"'


def _rows(test: int, answers: str, n: int = 4) -> list[dict]:
    """Rows of test set ``test`` (its questions and references) answered by ``answers``."""
    return [{"id": f"r{i}", "question": f"Q{i} of test {test}?",
             "answer": f"answer {i} {answers}", "contexts": [f"context {i}"],
             "reference": f"answer {i}"} for i in range(n)]


def _judge(name: str) -> ScriptedJudge:
    j = ScriptedJudge(SCRIPT)
    j.name, j.fingerprint = name, f"{name}-fingerprint"
    return j


@pytest.fixture
def tree(tmp_path) -> Path:
    """Three test sets, two judges, a damaged summary, an earlier localeval's run."""
    root = tmp_path / "runs"
    kw = dict(cache=False, progress=False, judge_check=False)
    for folder, test, answers, judge, name in (
            ("1-p1", 1, "first", "judge-a", "p1"), ("2-p2", 1, "second", "judge-a", "p2"),
            ("3-p3", 1, "second", "judge-b", "p3"), ("4-q1", 2, "first", "judge-a", "q1"),
            ("5-q2", 2, "better", "judge-a", "q2")):
        localeval.evaluate(_rows(test, answers), ["faithfulness", "rougeL"],
                           judge=_judge(judge), out_dir=root / folder, name=name,
                           tags={"branch": "main"}, **kw)
    localeval.evaluate(_rows(3, "x", 5), ["rougeL"], out_dir=root / "6-r1", name="r1",
                       cache=False, progress=False)
    shutil.copytree(OLD / "runA", root / "old")
    (root / "damaged").mkdir()
    (root / "damaged" / "summary.json").write_text("{not json")
    (root / "damaged" / "results.jsonl").write_text("")
    return root


def _history(root: Path, tmp_path: Path, *extra: str) -> str:
    page = tmp_path / "out" / "history.html"
    assert main(["history", str(root), "-o", str(page), *extra]) == 0
    return page.read_text(encoding="utf-8")


def test_runs_are_grouped_by_test_set_and_a_judge_change_is_marked(tree, tmp_path):
    h = build_history([tree], tmp_path / "h.html")
    titles = [g.title for g in h.groups]
    ts = {t: data_version(load_dataset(_rows(t, "first", 5 if t == 3 else 4))).testset
          for t in (1, 2, 3)}
    # newest activity first; the runs without a version last
    assert titles == [f"Test set {ts[3][:12]}", f"Test set {ts[2][:12]}",
                      f"Test set {ts[1][:12]}", "No dataset version recorded"]
    by = {g.version: g for g in h.groups}
    assert [r.label for r in by[ts[1]].runs] == ["p1", "p2", "p3"]
    assert [r.label for r in by[ts[2]].runs] == ["q1", "q2"]
    assert sorted(r.label for r in by[None].runs) == ["damaged", "old"]
    trends = {t.metric: t for t in by[ts[1]].trends}
    # judge-a -> judge-b between p2 and p3: marked for the judged metric only
    (mark,) = trends["faithfulness"].marks
    assert (mark.index, mark.number, mark.unknown) == (2, 1, False)
    assert mark.notes[0].startswith("the judge differs: 'p2' judge-a@judge-a-fing")
    assert "may be the judge's, not the pipeline's" in mark.notes[-1]
    assert trends["rougeL"].marks == []
    assert all(t.marks == [] for t in by[ts[2]].trends)
    # consecutive runs on one version can be diffed; nothing across versions
    assert sorted(by[ts[1]].diffs) == [1, 2] and sorted(by[ts[2]].diffs) == [1]
    assert by[None].diffs == {}


def test_the_page_draws_each_trend_marks_changes_and_links_reports_and_diffs(tree, tmp_path):
    page = _history(tree, tmp_path, "--diffs")
    # one chart per metric of each version, and of the runs without one (the earlier run's two)
    assert page.count('<svg class="trend"') == 2 + 2 + 1 + 2
    assert page.count('<g class="chg">') == 1
    assert "the judge differs: &#x27;p2&#x27; judge-a@judge-a-fing" in page \
        or "the judge differs: &#39;p2&#39; judge-a@judge-a-fing" in page
    # relative links to each run's report, and to the diffs written beside the page
    for folder in ("1-p1", "3-p3", "6-r1"):  # the page is in out/, beside runs/
        assert f'href="../runs/{folder}/report.html"' in page, folder
    diffs = re.findall(r'href="(history-diffs/[0-9a-f]{16}/diff\.html)"', page)
    assert len(diffs) == 3
    for d in diffs:
        assert (tmp_path / "out" / d).is_file()
    # a page written later without --diffs still links to them
    assert len(re.findall(r'history-diffs/[0-9a-f]{16}/diff\.html', _history(tree, tmp_path))) \
        == 3
    assert "http://" not in page and "https://" not in page


def test_a_damaged_summary_and_an_earlier_run_are_listed_with_the_reason(tree, tmp_path):
    page = _history(tree, tmp_path)
    assert "summary.json cannot be read: not valid JSON" in page
    assert "written by an earlier localeval: no dataset hash or start time recorded" in page
    assert "No dataset version recorded" in page


def test_hostile_names_and_tags_stay_text(tree, tmp_path):
    bad = tree / "7-hostile"
    shutil.copytree(tree / "5-q2", bad)
    summary = json.loads((bad / "summary.json").read_text())
    summary["run"].update(name=HOSTILE, tags={HOSTILE: HOSTILE})
    summary["metrics"][HOSTILE] = summary["metrics"]["rougeL"]
    (bad / "summary.json").write_text(json.dumps(summary))
    page = _history(tree, tmp_path)
    assert "<script>alert" not in page and "\u202e" not in page
    assert "&lt;script&gt;alert(" in page and "\\u202e" in page
    assert page.count("<script>") == 1  # our own
    assert re.search(r"<svg[^>]*aria-label=\"&lt;script&gt;", page)


def _ragas_export(path: Path, rows: list[dict], scores: list[float]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user_input", "retrieved_contexts", "response", "reference", "faithfulness"])
        for r, s in zip(rows, scores):
            w.writerow([r["question"], repr(r["contexts"]), r["answer"], r["reference"], s])
    return path


def test_an_added_ragas_export_joins_its_test_set_and_says_what_it_lacks(tree, tmp_path):
    export = _ragas_export(tmp_path / "ragas.csv", _rows(2, "ragas"), [1.0, 0.5, 0.0, 1.0])
    later = (tree / "5-q2" / "summary.json").stat().st_mtime + 60
    os.utime(export, (later, later))  # dated by its file's time: after the runs
    h = build_history([tree], tmp_path / "h.html", added=[("ragas-v1", export)])
    g = next(g for g in h.groups if any(r.label == "ragas-v1" for r in g.runs))
    assert [r.label for r in g.runs][:2] == ["q1", "q2"]  # the ragas rows' test set
    run = next(r for r in g.runs if r.label == "ragas-v1")
    assert run.kind == "ragas" and run.metrics["faithfulness"].mean == pytest.approx(0.625)
    assert run.signature == {} and run.notes[0].startswith("not a localeval run: no signature")
    # the faithfulness trend cannot tell whether the judge changed: marked as unknown
    (mark,) = next(t for t in g.trends if t.metric == "faithfulness").marks
    assert mark.unknown and "records no signature" in mark.notes[0]
    page = history_html(h)
    assert "ragas-v1" in page and '<g class="chg unknown">' in page
    # the command line spelling, and a bad one
    assert "ragas-v1" in _history(tree, tmp_path, "--add", f"ragas-v1={export}")
    assert main(["history", str(tree), "-o", str(tmp_path / "x.html"), "--add", "nope"]) == 2


def test_the_table_of_a_long_history_is_cut_with_a_note(tree, tmp_path):
    page = _history(tree, tmp_path, "--max-rows", "1")
    assert "The table lists the newest 1 of these 3 runs" in page


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.html: dict = {}

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        if tag == "html":
            self.html = dict(attrs)


def test_the_page_opens_in_headless_chromium_without_console_errors(browser, tree, tmp_path):
    bad = tree / "7-hostile"
    shutil.copytree(tree / "5-q2", bad)
    summary = json.loads((bad / "summary.json").read_text())
    summary["run"].update(name=HOSTILE, tags={"x": HOSTILE})
    (bad / "summary.json").write_text(json.dumps(summary))
    _history(tree, tmp_path)
    dom, console = headless_dom((tmp_path / "out" / "history.html").as_uri(),
                                tmp_path / "profile")
    assert console == []  # a blocked style or script, or an error, would be here
    p = _Tags()
    p.feed(dom)
    assert p.html.get("data-report-ready") == "0"  # our script ran to its end
    assert p.scripts == 1 and "alert(" not in dom.replace("&lt;script&gt;alert(", "")
