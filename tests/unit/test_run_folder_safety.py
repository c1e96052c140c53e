"""A run never replaces another run's folder by accident (``run.folder_rule``), while the
same command again still resumes; names and tags; the gates' outcome in summary.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from run_util import ROWS
from run_util import write_rows as _data

import localeval
from localeval.cli.app import main
from localeval.errors import UsageError
from localeval.testing.scripted import ScriptedJudge

OLD = Path(__file__).resolve().parents[1] / "data" / "predecessor"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _run(capsys, data: Path, out: Path, *extra: str, metrics: str = "rougeL,bleu"):
    code = main(["run", str(data), "-m", metrics, "-o", str(out), "--no-cache", "--quiet",
                 *extra])
    return code, capsys.readouterr().err


@pytest.fixture
def first(tmp_path, capsys):
    """A finished run of ROWS in tmp_path/out, and its files."""
    data, out = _data(tmp_path / "data.jsonl"), tmp_path / "out"
    code, err = _run(capsys, data, out, "--name", "v1")
    assert code == 0, err
    return data, out, _files(out)


def test_other_data_into_a_runs_folder_is_refused_and_keeps_the_run(first, tmp_path, capsys):
    data, out, before = first
    other = _data(tmp_path / "other.jsonl", ROWS[:3])
    code, err = _run(capsys, other, out)
    assert code == 2
    (line,) = [ln for ln in err.splitlines() if ln.startswith("localeval: error:")]
    assert f"{out} holds another run (started " in line and "named 'v1'" in line
    assert "(5 rows) there" in line and "(3 rows) here" in line
    assert "Nothing was written" in line and f"-o {out}/" in line and "--overwrite" in line
    assert _files(out) == before, "the first run's files are untouched"
    # deliberately replaced
    code, err = _run(capsys, other, out, "--overwrite")
    assert code == 0, err
    assert json.loads((out / "summary.json").read_text())["n_samples"] == 3


def test_the_same_command_again_resumes_and_a_trial_may_grow(first, capsys):
    data, out, before = first
    code, err = _run(capsys, data, out, "--name", "v1")
    assert code == 0, err
    after = _files(out)
    assert after["results.jsonl"] == before["results.jsonl"]
    # --limit then all rows of the same data: one run growing, over the same cache
    assert _run(capsys, data, out, "--limit", "2")[0] == 0
    assert _run(capsys, data, out)[0] == 0
    assert json.loads((out / "summary.json").read_text())["n_samples"] == 5


@pytest.mark.parametrize("extra, metrics, says", [
    ((), "rougeL", "metrics bleu, rougeL there, rougeL here"),
    (("--seed", "3"), "rougeL,bleu", "seed 0 there, 3 here"),
    (("--lang", "ja"), "rougeL,bleu", "language auto there, ja here"),
])
def test_other_settings_are_refused_naming_what_differs(first, capsys, extra, metrics, says):
    _, out, before = first
    code, err = _run(capsys, first[0], out, *extra, metrics=metrics)
    assert code == 2 and says in err, err
    assert _files(out) == before


def test_another_judge_is_refused_once_it_is_loaded(tmp_path):
    data, out = _data(tmp_path / "d.jsonl"), tmp_path / "out"
    script = {"statements": {"statements": ["a claim"]},
              "faithfulness_verdicts": {"verdicts": [{"reason": "r", "verdict": 1}]}}
    kw = dict(cache=False, progress=False, judge_check=False, out_dir=out)
    localeval.evaluate(str(data), ["faithfulness"], judge=ScriptedJudge(script), **kw)
    before = _files(out)
    again = ScriptedJudge(script)
    localeval.evaluate(str(data), ["faithfulness"], judge=again, **kw)  # same judge: resumes
    other = ScriptedJudge(script)
    other.name, other.fingerprint = "other", "0ther" * 4
    with pytest.raises(UsageError) as e:
        localeval.evaluate(str(data), ["faithfulness"], judge=other, **kw)
    msg = str(e.value)
    assert "judge scripted@scripted there, other@0ther0ther0t here" in msg
    assert "out_dir=" in msg and "overwrite=True" in msg and "--overwrite" not in msg
    assert other.requests == [], "refused before the first judge call"
    assert json.loads(_files(out)["summary.json"])["signature"]["judge"] == "scripted"
    assert _files(out)["results.jsonl"] == before["results.jsonl"]


@pytest.mark.parametrize("what, make, says", [
    ("damaged", lambda d: (d / "summary.json").write_text("{not json"), "not valid JSON"),
    ("not a run's", lambda d: (d / "summary.json").write_text('{"kept": 3}'),
     "no 'metrics' object"),
    ("an earlier localeval", lambda d: shutil.copy(OLD / "runA" / "summary.json", d),
     "dataset not recorded (an earlier localeval)"),
])
def test_a_folder_whose_summary_cannot_be_compared_is_refused(tmp_path, capsys, what, make,
                                                              says):
    data, out = _data(tmp_path / "d.jsonl"), tmp_path / "out"
    out.mkdir()
    make(out)
    before = _files(out)
    code, err = _run(capsys, data, out)
    assert code == 2 and says in err, (what, err)
    assert _files(out) == before
    assert _run(capsys, data, out, "--overwrite")[0] == 0


def test_a_killed_run_resumes_but_other_data_does_not_replace_it(first, tmp_path, capsys):
    data, out, before = first
    (out / "summary.json").unlink()  # killed: results.jsonl without a summary
    lines = before["results.jsonl"].splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(lines[:2]) + lines[2][:20])  # torn last line
    other = _data(tmp_path / "other.jsonl", [{**r, "answer": "changed"} for r in ROWS])
    code, err = _run(capsys, other, out)
    assert code == 2 and "sample 'r0' differs (line 1 of its results.jsonl)" in err, err
    code, err = _run(capsys, data, out, metrics="rougeL")
    assert code == 2 and "metrics bleu, rougeL there, rougeL here" in err, err
    code, err = _run(capsys, data, out)
    assert code == 0, err
    assert _files(out)["results.jsonl"] == before["results.jsonl"]


def test_name_and_tags_are_recorded_and_shown(tmp_path, capsys):
    data, out = _data(tmp_path / "d.jsonl"), tmp_path / "out"
    code, err = _run(capsys, data, out, "--name", "v2", "--tag", "branch=main", "--tag",
                     "pr=12", "--tag", "note=a=b")
    assert code == 0, err
    run = json.loads((out / "summary.json").read_text())["run"]
    assert run["name"] == "v2" and run["tags"] == {"branch": "main", "pr": "12", "note": "a=b"}
    assert "Run: v2 · branch=main · pr=12 · note=a=b" in (out / "summary.md").read_text()
    assert "v2 · branch=main · pr=12" in (out / "report.html").read_text()
    res = localeval.evaluate(str(data), ["rougeL"], judge=False, cache=False, progress=False,
                             name="py", tags={"pr": 12})
    assert res.summary["run"]["name"] == "py" and res.summary["run"]["tags"] == {"pr": "12"}


@pytest.mark.parametrize("args, says", [
    (["--tag", "main"], "--tag 'main': expected KEY=VALUE, e.g. --tag branch=main"),
    (["--tag", "=x"], "--tag '=x': expected KEY=VALUE"),
    (["--tag", "a=1", "--tag", "a=2"], "--tag 'a' given twice"),
    (["--name", "two\nlines"], "--name: the run's name 'two\\nlines' holds control"),
    (["--name", " "], "--name: the run's name is empty"),
    (["--tag", "k=" + "v" * 201], "is 201 characters long; at most 200"),
])
def test_bad_names_and_tags_are_usage_errors_before_any_work(tmp_path, capsys, args, says):
    data, out = _data(tmp_path / "d.jsonl"), tmp_path / "out"
    code, err = _run(capsys, data, out, *args)
    assert code == 2 and says in err, err
    assert "Traceback" not in err and not (out / "results.jsonl").exists()


@pytest.mark.parametrize("tags, says", [
    ({"a=b": "x"}, "tags: the tag key 'a=b' holds '='"),
    ({"k": True}, "tags: tag 'k''s value must be text, got bool"),
    (["branch=main"], "tags: expected a mapping"),
])
def test_bad_tags_from_python(tags, says):
    with pytest.raises(UsageError, match=says.replace("(", r"\(")):
        localeval.evaluate(ROWS, ["rougeL"], judge=False, cache=False, progress=False,
                           tags=tags)


def test_the_gates_outcome_is_added_to_summary_json(tmp_path, capsys):
    data = _data(tmp_path / "d.jsonl")
    code, err = _run(capsys, data, tmp_path / "pass", "--fail-under", "rougeL=0.1")
    assert code == 0, err
    gates = json.loads((tmp_path / "pass" / "summary.json").read_text())["gates"]
    assert gates == {"passed": True, "gates": ["--fail-under rougeL=0.1"], "failed": []}
    code, err = _run(capsys, data, tmp_path / "fail", "--fail-under", "rougeL=0.99",
                     "--allow-unscored", "1")
    assert code == 1 and "gate failed: rougeL" in err
    gates = json.loads((tmp_path / "fail" / "summary.json").read_text())["gates"]
    assert gates["passed"] is False and gates["failed"][0].startswith("rougeL ")
    assert gates["gates"] == ["--fail-under rougeL=0.99", "--allow-unscored 1"]
    assert not (tmp_path / "fail" / ".localeval.lock").exists()
    code, err = _run(capsys, data, tmp_path / "none")
    assert "gates" not in json.loads((tmp_path / "none" / "summary.json").read_text())
