"""``localeval runs``: every run folder under some folders, one entry each, with what its
summary says; damaged, older and killed runs listed with the reason, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import localeval
from localeval.cli.app import main
from localeval.dataset import data_version, load_dataset
from localeval.testing.scripted import ScriptedJudge

OLD = Path(__file__).resolve().parents[1] / "data" / "predecessor"
SCRIPT = {"statements": {"statements": ["a claim"]},
          "faithfulness_verdicts": {"verdicts": [{"reason": "r", "verdict": 1}]}}


def _rows(version: int, n: int = 4) -> list[dict]:
    return [{"id": f"r{i}", "question": f"Q{i}?", "answer": f"answer {i} of v{version}",
             "contexts": [f"context {i}"], "reference": f"answer {i}"} for i in range(n)]


def _judge(name: str) -> ScriptedJudge:
    j = ScriptedJudge(SCRIPT)
    j.name, j.fingerprint = name, f"{name}-fingerprint"
    return j


@pytest.fixture
def tree(tmp_path, capsys) -> Path:
    """Runs of three dataset versions and two judges, and folders that are not whole runs."""
    root = tmp_path / "runs"
    kw = dict(cache=False, progress=False, judge_check=False)
    for folder, version, judge, name, tags in (
            ("a", 1, "judge-a", "v1", {"branch": "main"}),
            ("b/nested", 2, "judge-b", "v2", {"branch": "dev", "pr": "12"}),
            ("c", 2, "judge-a", None, {})):
        localeval.evaluate(_rows(version), ["faithfulness", "rougeL"], judge=_judge(judge),
                           out_dir=root / folder, name=name, tags=tags, **kw)
    data = root.parent / "v3.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(3, 5)), encoding="utf-8")
    assert main(["run", str(data), "-m", "rougeL", "-o", str(root / "gated"), "--no-cache",
                 "--quiet", "--fail-under", "rougeL=0.99", "--name", "gated"]) == 1
    old = root / "old"
    shutil.copytree(OLD / "runA", old)
    os.utime(old / "summary.json", (1_600_000_000, 1_600_000_000))  # 2020: listed first
    (root / "damaged").mkdir()
    (root / "damaged" / "summary.json").write_text("{not json")
    (root / "damaged" / "results.jsonl").write_text("")
    (root / "killed").mkdir()
    (root / "killed" / "results.jsonl").write_text('{"id": "r0", "scores": {}}\n')
    (root / "testset").mkdir()  # another command's summary.json: not a run
    (root / "testset" / "summary.json").write_text('{"kept": 3, "dropped": 1}')
    shutil.copytree(root / "a", root / ".hidden" / "a")  # hidden folders are not searched
    capsys.readouterr()
    return root


def _listed(capsys, *argv: str) -> list[dict]:
    assert main(["runs", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["runs"]


def test_runs_lists_every_run_with_its_version_judge_means_and_gates(tree, capsys):
    runs = _listed(capsys, str(tree))
    by = {Path(r["folder"]).relative_to(tree).as_posix(): r for r in runs}
    assert sorted(by) == ["a", "b/nested", "c", "damaged", "gated", "killed", "old"]
    assert runs[0]["folder"] == str(tree / "old") and runs[0]["dated_by"] == "file time"
    assert runs[0]["started"] == "2020-09-13T12:26:40Z"
    assert [r["started"] for r in runs] == sorted(r["started"] for r in runs)
    # three dataset versions: b and c share one; the rows and hashes are the data's own
    v1 = data_version(load_dataset(_rows(1)))
    assert by["a"]["dataset"] == {"hash": v1.content, "testset": v1.testset, "rows": 4}
    assert by["b/nested"]["dataset"] == by["c"]["dataset"] != by["a"]["dataset"]
    assert by["gated"]["dataset"]["rows"] == 5
    assert len({by[k]["dataset"]["hash"] for k in ("a", "c", "gated")}) == 3
    # all three have the same test set (questions and references), other answers
    assert len({by[k]["dataset"]["testset"] for k in ("a", "c")}) == 1
    # two judges
    assert by["a"]["judge"] == "judge-a@judge-a-fing" == by["c"]["judge"]
    assert by["b/nested"]["judge"] == "judge-b@judge-b-fing"
    assert by["gated"]["judge"] is None
    # names and tags
    assert (by["a"]["name"], by["a"]["tags"]) == ("v1", {"branch": "main"})
    assert by["b/nested"]["tags"] == {"branch": "dev", "pr": "12"} and by["c"]["name"] is None
    # means and unscored counts as the summaries have them
    summary = json.loads((tree / "a" / "summary.json").read_text())
    for key in ("faithfulness", "rougeL"):
        want = summary["metrics"][key]
        assert by["a"]["metrics"][key] == {"mean": want["mean"], "n": want["n"],
                                           "unscored": want["unscored"], "caveat": None}
    assert by["a"]["metrics"]["faithfulness"]["mean"] == 1.0
    # gates: recorded by the command line's run only
    assert by["gated"]["gates"]["passed"] is False and len(by["gated"]["gates"]["failed"]) == 1
    assert by["a"]["gates"] is None
    assert by["a"]["problem"] is None and by["a"]["notes"] == []


def test_damaged_older_and_killed_runs_are_listed_with_the_reason(tree, capsys):
    by = {Path(r["folder"]).name: r for r in _listed(capsys, str(tree))}
    assert by["damaged"]["problem"].startswith("summary.json cannot be read: not valid JSON")
    assert by["killed"]["problem"].startswith("no summary.json: the run stopped before it "
                                              "finished")
    old = by["old"]
    assert old["problem"] is None and old["metrics"]["rougeL"]["mean"] == pytest.approx(0.5609,
                                                                                      abs=1e-4)
    assert old["notes"] == ["written by an earlier localeval: no dataset hash or start time "
                            "recorded"]
    assert old["dataset"]["hash"] is None and old["localeval"] == "0.1.0"


def test_the_table_shows_the_runs_and_reads_no_markup_from_the_data(tree, capsys, monkeypatch):
    hostile = tree / "hostile"
    shutil.copytree(tree / "c", hostile)
    summary = json.loads((hostile / "summary.json").read_text())
    summary["run"].update(name="[bold red]boom[/]", tags={"x": "\x1b[31mred\u202e"})
    summary["metrics"] = {"[link=file:///etc]m[/link]": {"mean": None, "unscored": 0},
                          "faithfulness": summary["metrics"]["faithfulness"]}
    (hostile / "summary.json").write_text(json.dumps(summary))
    # a value of the wrong type is damage: the run is listed with the field named
    typed = tree / "typed"
    shutil.copytree(tree / "c", typed)
    summary["metrics"]["faithfulness"] = {"mean": "0.5", "unscored": True}
    (typed / "summary.json").write_text(json.dumps(summary))
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["runs", str(tree)]) == 0
    out = capsys.readouterr().out
    for text in ("v1 · branch=main", "v2 · branch=dev · pr=12", "judge-b@judge-b-fing",
                 "faithfulness 1.000", "failed (1)", "no summary.json", "not valid JSON",
                 "[bold red]boom[/] · x=\\x1b[31mred\\u202e", "[link=file:///etc]m[/link] –",
                 "summary.json cannot be read: field 'metrics.faithfulness.mean'"):
        assert text in out, text
    assert "\x1b" not in out and "\u202e" not in out


def test_runs_defaults_to_the_current_folder_and_says_when_there_are_none(tree, tmp_path,
                                                                          capsys, monkeypatch):
    monkeypatch.chdir(tree / "b")
    (only,) = _listed(capsys)
    assert only["folder"] == "nested" and only["name"] == "v2"
    (tmp_path / "empty").mkdir()
    assert main(["runs", str(tmp_path / "empty")]) == 0
    assert f"no localeval runs under {tmp_path / 'empty'}" in capsys.readouterr().out
    assert main(["runs", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert f"localeval: error: {tmp_path / 'missing'}: no such folder" in err
