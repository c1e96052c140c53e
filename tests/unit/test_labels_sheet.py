"""``localeval label-sheet``: never over an input or over labels, output faults as one message
(exit 2, no ``.tmp``), the draw among scored rows, ``-n`` explained (``-n N``: a census), and
Ctrl-C's message."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from labels_util import fill_disk, refused, soft_run

from localeval.cli.app import main


def _run(tmp: Path, n: int = 30, unscored: tuple[int, ...] = ()) -> Path:
    return soft_run(tmp, n, unscored=unscored)


def _data(tmp: Path, n: int = 30) -> Path:
    p = tmp / "data.jsonl"
    p.write_text("".join(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                     "contexts": [f"context {i}"], "answer": f"answer {i}"})
                         + "\n" for i in range(n)), encoding="utf-8")
    return p


_refused = refused


def _no_tmp(*folders: Path) -> None:
    for d in folders:
        assert not [p for p in d.rglob("*.tmp")], list(d.rglob("*"))


# -- lost work -----------------------------------------------------------------------------------
def test_the_sheet_is_never_written_over_the_runs_results(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    before = (run / "results.jsonl").read_bytes()
    for out in (run / "results.jsonl", run / "." / ".." / run.name / "results.jsonl"):
        _refused(capsys, ["label-sheet", str(run), "-n", "5", "-o", str(out)], str(out),
                 "input")
    _refused(capsys, ["label-sheet", str(run / "results.jsonl"), "-n", "5", "-o",
                      str(run / "results.jsonl")], "results.jsonl", "input")
    assert (run / "results.jsonl").read_bytes() == before


def test_the_sheet_is_never_written_over_the_dataset(tmp_path: Path, capsys) -> None:
    run, data = _run(tmp_path), _data(tmp_path)
    before = data.read_bytes()
    _refused(capsys, ["label-sheet", str(run), "--dataset", str(data), "-n", "5", "-o",
                      str(data)], str(data), "input")
    link = tmp_path / "link.jsonl"
    os.symlink(data, link)  # the same file under another name
    _refused(capsys, ["label-sheet", str(run), "--dataset", str(link), "-n", "5", "-o",
                      str(data)], "input")
    # the sidecar (data.draw.json beside data.csv) is checked too
    side = tmp_path / "data.draw.json"
    side.write_text("{}")
    _refused(capsys, ["label-sheet", str(run), "--dataset", str(side), "-n", "5", "-o",
                      str(tmp_path / "data.csv")], "sidecar", "input")
    assert data.read_bytes() == before


def test_a_sheet_holding_labels_is_not_replaced_an_empty_one_is(tmp_path: Path,
                                                                 capsys) -> None:
    run = _run(tmp_path)
    sheet = tmp_path / "sheet.csv"
    assert main(["label-sheet", str(run), "-n", "5", "-o", str(sheet)]) == 0
    # an empty sheet (every label cell empty) is replaced
    assert main(["label-sheet", str(run), "-n", "6", "-o", str(sheet)]) == 0
    capsys.readouterr()
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6
    rows[4]["label_faithfulness"] = "1"
    with open(sheet, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=";")  # a spreadsheet's save
        w.writeheader()
        w.writerows(rows)
    filled = sheet.read_bytes()
    _refused(capsys, ["label-sheet", str(run), "-n", "5", "-o", str(sheet)], str(sheet),
             "already holds labels", "row 5", "label_faithfulness")
    assert sheet.read_bytes() == filled


def test_help_says_what_o_replaces(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["label-sheet", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "never written over an input" in out and "every label cell empty is replaced" in out


# -- output faults -------------------------------------------------------------------------------
def test_o_a_folder_or_a_path_under_a_file(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    folder = tmp_path / "here"
    folder.mkdir()
    _refused(capsys, ["label-sheet", str(run), "-n", "5", "-o", str(folder)], str(folder),
             "folder")
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    under = blocker / "sheet.csv"
    _refused(capsys, ["label-sheet", str(run), "-n", "5", "-o", str(under)], str(blocker))
    _no_tmp(tmp_path)


@pytest.mark.parametrize("fails", ["write", "rename"])
def test_a_full_disk_is_one_message_naming_the_file(tmp_path: Path, capsys, monkeypatch,
                                                     fails: str) -> None:
    run = _run(tmp_path)
    out = tmp_path / "out" / "sheet.csv"
    fill_disk(monkeypatch, fails)
    err = _refused(capsys, ["label-sheet", str(run), "-n", "5", "-o", str(out)], str(out),
                   "no space left")
    assert "cannot write" in err
    _no_tmp(tmp_path)
    assert not out.exists()


# -- what is drawn -------------------------------------------------------------------------------
def test_n_must_be_at_most_the_row_count_and_the_message_says_why(tmp_path: Path,
                                                                   capsys) -> None:
    run = _run(tmp_path, 12)
    _refused(capsys, ["label-sheet", str(run), "-n", "13", "-o", str(tmp_path / "s.csv")],
             "between 1 and 12", "12 rows", "more rows than there are", "every one",
             "census")
    assert main(["label-sheet", str(run), "-n", "12", "-o", str(tmp_path / "s.csv")]) == 0


def test_rows_the_judge_never_scored_are_not_drawn(tmp_path: Path, capsys) -> None:
    unscored = (0, 3, 7)
    run = _run(tmp_path, 12, unscored)
    sheet = tmp_path / "s.csv"
    assert main(["label-sheet", str(run), "-n", "8", "--seed", "1", "-o", str(sheet)]) == 0
    err = capsys.readouterr().err
    assert "left out 3 of 12 rows" in err
    side = json.loads((tmp_path / "s.draw.json").read_text(encoding="utf-8"))
    assert side["rows"] == 9 and not {f"q{i}" for i in unscored} & set(side["drawn"])
    _refused(capsys, ["label-sheet", str(run), "-n", "10", "-o", str(tmp_path / "t.csv")],
             "between 1 and 9", "the judge scored", "3 rows")


def test_a_sheet_drawn_among_scored_rows_estimates(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path, 40, (0, 3, 7))
    sheet = tmp_path / "s.csv"
    assert main(["label-sheet", str(run), "-n", "20", "-o", str(sheet)]) == 0
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    for i, r in enumerate(rows):
        r["label_faithfulness"] = str(i % 2)
    with open(sheet, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["estimate", str(run), str(sheet), "-o", str(tmp_path / "est")]) == 0


# -- Ctrl-C --------------------------------------------------------------------------------------
@pytest.mark.parametrize("command,module,func,argv", [
    ("estimate", "localeval.cli.estimate", "cmd_estimate", ["estimate", "r", "l"]),
    ("label-sheet", "localeval.cli.estimate", "cmd_label_sheet", ["label-sheet", "r", "-n", "3"]),
    ("diff", "localeval.cli.versions", "cmd_diff", ["diff", "a", "b"]),
])
def test_ctrl_c_speaks_of_resuming_only_for_run(monkeypatch, capsys, command, module, func,
                                                argv) -> None:
    import importlib

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(importlib.import_module(module), func, interrupted)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"localeval {command}" in err and "interrupted" in err
    assert "resume from" not in err and "results.jsonl" not in err


def test_ctrl_c_during_run_still_says_how_to_resume(monkeypatch, capsys) -> None:
    import localeval.cli.run as run_cli

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(run_cli, "cmd_run", interrupted)
    assert main(["run", "example", "-o", "somewhere"]) == 130
    err = capsys.readouterr().err
    assert "somewhere/results.jsonl" in err and "resume" in err
