"""``localeval explain`` under the one output policy (docs/failure-behaviour.md, "Rules for
every verb"): it writes into the run folder it reads, by design, so the table of
tests/unit/test_floor_outputs.py (an output elsewhere) does not fit it. Here: a run folder
on a read-only file system, a file in the way of what it writes, a full disk (a small
tmpfs), its output onto its own input; each is exit 2 with one message naming the file,
nothing half written, and the run's results.jsonl and summary.json never written over.

The judge is a scripted one registered as a judge backend, which gives reasons when asked.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_floor_outputs import _fill, _refused, _tmpfs

import localeval
from localeval.cli.app import main
from localeval.testing import ScriptedJudge

JUDGE = "floor-explain"
ROWS: list[dict[str, Any]] = [{"id": f"r{i}", "question": f"What is item {i}?", "answer": f"Item {i} is blue. It is "
         "round.", "contexts": [f"Item {i} is blue."], "reference": f"Item {i} is blue."}
        for i in range(4)]
#: What explain must never write over.
RUN_FILES = ("results.jsonl", "summary.json")


@pytest.fixture(scope="module", autouse=True)
def judge():
    from localeval.judge import register_judge_backend, unregister_judge_backend

    scripted = ScriptedJudge(auto=True)  # a reason wherever the schema asks for one
    register_judge_backend(JUDGE, lambda spec: spec == JUDGE, lambda spec, **kw: scripted)
    yield scripted
    unregister_judge_backend(JUDGE)


def _data(folder: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(folder: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    """A finished faithfulness run without reasons, in ``folder``."""
    localeval.evaluate(rows, ["faithfulness"], judge=ScriptedJudge(auto=True), cache=False,
                       judge_check=False, reasons="none", progress=False, out_dir=folder)
    return folder


def _explain(run: Path, data: Path, *extra: str) -> list[str]:
    return ["explain", str(run), "--data", str(data), "--judge", JUDGE, "--no-cache",
            "--quiet", "--ids", "r1", *extra]


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def test_explain_writes_its_own_files_and_never_the_runs(tmp_path, capsys):
    run = _run(tmp_path / "run")
    before = _digests(run)
    assert main(_explain(run, _data(tmp_path))) == 0, capsys.readouterr().err
    after = _digests(run)
    assert {n: after[n] for n in RUN_FILES} == {n: before[n] for n in RUN_FILES}
    assert set(after) - set(before) == {"explain.jsonl"}
    line = json.loads((run / "explain.jsonl").read_text(encoding="utf-8"))
    assert line["id"] == "r1" and line["metrics"]["faithfulness"]["details"]
    assert after["report.html"] != before["report.html"]  # the page now shows the reasons
    assert not list(run.glob("*.tmp"))


@pytest.mark.parametrize("name", RUN_FILES)
def test_explain_refuses_data_that_is_a_file_of_the_run(name, tmp_path, capsys):
    """The data given as the run's own results.jsonl or summary.json: refused before any
    judging, nothing written."""
    run = _run(tmp_path / "run")
    before = _digests(run)
    _refused(capsys, _explain(run, run / name))
    assert _digests(run) == before


def test_explain_refuses_to_write_over_its_own_input(tmp_path, capsys):
    """The dataset kept in the run folder as explain.jsonl: explain would write over it."""
    run = _run(tmp_path / "run")
    data = run / "explain.jsonl"
    shutil.copy(_data(tmp_path), data)
    before = _digests(run)
    _refused(capsys, _explain(run, data), str(data), "input")
    assert _digests(run) == before


@pytest.mark.parametrize("name", ["explain.jsonl", "report.html"])
def test_a_folder_in_the_way_is_exit_2_naming_it(name, tmp_path, capsys):
    run = _run(tmp_path / "run")
    if name == "report.html":
        (run / name).unlink()
    (run / name).mkdir()
    before = _digests(run)
    _refused(capsys, _explain(run, _data(tmp_path)), str(run / name))
    assert {n: _digests(run)[n] for n in RUN_FILES} == {n: before[n] for n in RUN_FILES}
    assert (run / name).is_dir() and not list(run.glob("*.tmp"))


@pytest.fixture
def mounted(tmp_path):
    """A small tmpfs, unmounted afterwards (skip where mounting is not permitted)."""
    where = tmp_path / "disk"
    where.mkdir()
    _tmpfs(where)
    yield where
    subprocess.run(["umount", str(where)], check=False)


def _copy_run(run: Path, where: Path, names: tuple[str, ...]) -> Path:
    copy = where / "run"
    copy.mkdir()
    for name in names:
        (copy / name).write_bytes((run / name).read_bytes())
    return copy


def test_a_read_only_run_folder_is_exit_2_naming_the_file(tmp_path, mounted, capsys):
    """As root a chmod'ed folder is still writable; a read-only file system is not."""
    run = _copy_run(_run(tmp_path / "run"), mounted, RUN_FILES)
    done = subprocess.run(["mount", "-o", "remount,ro", str(mounted)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"remount read-only is not permitted: {done.stderr.decode().strip()}")
    before = _digests(run)
    err = _refused(capsys, _explain(run, _data(tmp_path)), "read-only file system")
    assert str(run / "explain.jsonl") in err or str(run / "report.html") in err
    assert _digests(run) == before


def test_a_full_disk_is_exit_2_naming_the_file(tmp_path, mounted, capsys):
    run = _copy_run(_run(tmp_path / "run"), mounted, RUN_FILES)
    _fill(mounted)
    before = _digests(run)
    _refused(capsys, _explain(run, _data(tmp_path)), str(run / "explain.jsonl"),
             "no space left")
    assert _digests(run) == before  # nothing half written, the run's files as they were
    assert not list(mounted.rglob("*.tmp"))


def test_a_control_character_in_an_id_reaches_the_terminal_escaped(tmp_path, capsys):
    rows = [dict(r, id="r1\x1b[31m\u202e") if i == 1 else r for i, r in enumerate(ROWS)]
    run = _run(tmp_path / "run", rows)
    argv = _explain(run, _data(tmp_path, rows))
    argv[argv.index("r1")] = "r1\x1b[31m\u202e"
    code = main(argv)
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "\x1b" not in cap.out + cap.err and "\u202e" not in cap.out + cap.err
    assert "r1\\x1b[31m\\u202e" in cap.out  # the id, its escapes shown
    line = json.loads((run / "explain.jsonl").read_text(encoding="utf-8"))
    assert line["id"] == "r1\x1b[31m\u202e"  # the file keeps the id as it is


def test_a_lone_surrogate_in_a_judged_sample_is_written_as_its_escape(tmp_path, capsys):
    """explain.jsonl stays valid UTF-8 and reads back to the same text."""
    rows = [dict(r, answer=r["answer"] + " \udc80") if i == 1 else r
            for i, r in enumerate(ROWS)]
    run = _run(tmp_path / "run", rows)
    assert main(_explain(run, _data(tmp_path, rows))) == 0, capsys.readouterr().err
    line = json.loads((run / "explain.jsonl").read_bytes().decode("utf-8"))  # strict UTF-8
    assert line["id"] == "r1"
