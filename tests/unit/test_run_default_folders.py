"""``localeval run`` without ``-o``: one folder per run under ``localeval-out/``, chosen so
that the same command resumes and other data never meets another run's folder, and
``localeval-out/latest`` pointing at the last run that finished (``run.run_folders``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from run_util import ROWS
from run_util import write_rows as _data

import localeval
from localeval.cli.app import main
from localeval.dataset import data_version, load_dataset
from localeval.run import RunFolders
from localeval.run.run_folders import folder_label
from localeval.testing.scripted import ScriptedJudge


def _run(capsys, data: Path, *extra: str, metrics: str = "rougeL,bleu"):
    code = main(["run", str(data), "-m", metrics, "--no-cache", *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _runs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def test_runs_of_other_data_accumulate_and_latest_follows(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    qa = _data(tmp_path / "qa.jsonl")
    code, out = _run(capsys, qa)
    assert code == 0, out
    root = tmp_path / "localeval-out"
    (first,) = _runs(root)
    assert first.startswith("qa-") and len(first) == len("qa-") + 8
    assert f"writing to localeval-out/{first}" in out
    assert f"wrote localeval-out/{first}/results.jsonl" in out
    assert os.readlink(root / "latest") == first  # relative: the folder may move
    kept = (root / first / "results.jsonl").read_bytes()

    # the same file edited (a new dataset version): a second folder, the first kept
    _data(qa, [{**r, "answer": r["answer"] + "!"} for r in ROWS])
    code, out = _run(capsys, qa)
    assert code == 0, out
    second = next(n for n in _runs(root) if n != first)
    assert len(_runs(root)) == 2 and (root / first / "results.jsonl").read_bytes() == kept
    assert os.readlink(root / "latest") == second
    assert json.loads((root / "latest" / "summary.json").read_text())["signature"][
        "dataset_hash"] == data_version(load_dataset(str(qa))).content

    # other metrics or settings: a folder of their own, never a refusal
    assert _run(capsys, qa, metrics="rougeL")[0] == 0
    assert _run(capsys, qa, "--seed", "3")[0] == 0
    assert len(_runs(root)) == 4
    # 'localeval runs' lists each run once: latest is a link, not a fifth run
    assert main(["runs", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed["runs"] if isinstance(listed, dict) else listed) == 4


def test_the_same_command_resumes_in_its_folder_and_a_trial_grows(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    qa = _data(tmp_path / "qa.jsonl")
    assert _run(capsys, qa, "--limit", "2")[0] == 0  # a trial of two rows
    (folder,) = _runs(tmp_path / "localeval-out")
    assert _run(capsys, qa)[0] == 0  # all rows: the same run, grown
    assert _run(capsys, qa)[0] == 0  # and again: resumed, not refused
    assert _runs(tmp_path / "localeval-out") == [folder]
    summary = json.loads((tmp_path / "localeval-out" / folder / "summary.json").read_text())
    assert summary["n_samples"] == 5
    # --name is the folder's label, and a name of its own
    assert _run(capsys, qa, "--name", "v2 (main)")[0] == 0
    assert any(n.startswith("v2-main-") for n in _runs(tmp_path / "localeval-out"))


def test_an_explicit_out_is_used_as_given(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    qa = _data(tmp_path / "qa.jsonl")
    assert _run(capsys, qa, "-o", "mine")[0] == 0
    assert (tmp_path / "mine" / "summary.json").is_file()
    assert not (tmp_path / "localeval-out").exists()


def test_a_run_that_stops_does_not_become_latest(tmp_path):
    qa = _data(tmp_path / "qa.jsonl")
    script = {"statements": {"statements": ["a claim"]},
              "faithfulness_verdicts": {"verdicts": [{"reason": "r", "verdict": 1}]}}
    kw = dict(cache=False, progress=False, judge_check=False)
    root = tmp_path / "runs"
    folders = RunFolders(root)
    localeval.evaluate(str(qa), ["faithfulness"], judge=ScriptedJudge(script),
                       out_dir=folders, **kw)
    done = folders.chosen
    assert done is not None and os.readlink(root / "latest") == done.name

    class Stops(ScriptedJudge):
        def ask(self, request):  # the judge stops the run at its first call
            raise KeyboardInterrupt

    other = _data(tmp_path / "other.jsonl", ROWS[:3])
    again = RunFolders(root)
    with pytest.raises(KeyboardInterrupt):
        localeval.evaluate(str(other), ["faithfulness"], judge=Stops(script),
                           out_dir=again, **kw)
    assert again.chosen is not None and again.chosen != done
    assert os.readlink(root / "latest") == done.name, "latest is the last finished run"


def test_latest_falls_back_to_a_file_where_no_link_can_be_made(tmp_path):
    root = tmp_path / "runs"
    (root / "latest").mkdir(parents=True)  # the user's own folder named latest: left alone
    (root / "latest" / "keep.txt").write_text("mine")
    qa = _data(tmp_path / "qa.jsonl")
    folders = RunFolders(root)
    localeval.evaluate(str(qa), ["rougeL"], judge=False, embedder=False, cache=False,
                       progress=False, out_dir=folders)
    assert (root / "latest" / "keep.txt").read_text() == "mine"
    assert folders.chosen is not None
    assert (root / "LATEST").read_text() == folders.chosen.name + "\n"


@pytest.mark.parametrize("name, source, label", [
    (None, "data/qa.jsonl", "qa"),
    (None, "<DataFrame>", "run"),
    ("../../etc/passwd", "x.csv", "etc-passwd"),
    ("v2 (main)", "x.csv", "v2-main"),
    ("日本語", "x.csv", "run"),
    ("a" * 100, "x.csv", "a" * 40),
    (None, "...", "run"),
])
def test_folder_labels_are_safe_on_any_file_system(name, source, label):
    assert folder_label(name, source) == label


def test_an_edited_criterion_is_another_run(tmp_path):
    """A metrics-file metric whose definition changed: refused in the folder its earlier
    definition's run holds (naming the metric), and a folder of its own by default."""
    from localeval.errors import UsageError
    from localeval.metrics import AspectCritic, GEval

    qa = _data(tmp_path / "qa.jsonl")
    kw = dict(judge=ScriptedJudge(auto=True), cache=False, progress=False, judge_check=False)

    def run(definition: str, out, steps=("Read the answer.", "Is it helpful?")):
        metrics = [AspectCritic(name="helpful", definition=definition),
                   GEval(name="clear", criteria="clarity", evaluation_steps=steps)]
        return localeval.evaluate(str(qa), metrics, out_dir=out, **kw)

    run("Does the answer help?", tmp_path / "out")
    run("Does the answer help?", tmp_path / "out")  # the same definition: resumes
    kept = (tmp_path / "out" / "results.jsonl").read_bytes()
    with pytest.raises(UsageError, match=r"metric 'helpful' defined otherwise \(\w{12} there"):
        run("Does the answer help the user act?", tmp_path / "out")
    with pytest.raises(UsageError, match=r"metric 'clear' defined otherwise"):
        run("Does the answer help?", tmp_path / "out", steps=("Is it short?",))
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == kept

    a, b = RunFolders(tmp_path / "runs"), RunFolders(tmp_path / "runs")
    run("Does the answer help?", a)
    run("Does the answer help the user act?", b)
    assert a.chosen != b.chosen and a.chosen.exists() and b.chosen.exists()


def test_another_reasons_mode_is_another_run(tmp_path):
    """Verdicts without reasons differ from verdicts with them: refused in the folder of
    a run with full reasons, and a folder of its own by default."""
    from localeval.errors import UsageError

    qa = _data(tmp_path / "qa.jsonl")
    kw = dict(judge=ScriptedJudge(auto=True), cache=False, progress=False, judge_check=False)
    localeval.evaluate(str(qa), ["faithfulness"], out_dir=tmp_path / "out", **kw)
    with pytest.raises(UsageError, match="reason mode full there, none here"):
        localeval.evaluate(str(qa), ["faithfulness"], out_dir=tmp_path / "out",
                           reasons="none", **kw)
    a, b = RunFolders(tmp_path / "runs"), RunFolders(tmp_path / "runs")
    localeval.evaluate(str(qa), ["faithfulness"], out_dir=a, **kw)
    localeval.evaluate(str(qa), ["faithfulness"], out_dir=b, reasons="none", **kw)
    assert a.chosen != b.chosen
