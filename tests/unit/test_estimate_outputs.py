"""``localeval estimate``'s outputs and messages: output faults as one message (exit 2, no
``.tmp``), Markdown that holds no live HTML, a census, a judge that scored nothing, ``--scale``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from labels_util import fill_disk, refused, soft_run

from localeval.cli.app import main

N = 40


def _run(tmp: Path, metric: str = "faithfulness", scored: bool = True) -> Path:
    return soft_run(tmp, N, metric=metric, unscored=() if scored else tuple(range(N)),
                    details=False)


def _labels(tmp: Path, n: int = 15, metric: str = "faithfulness",
            name: str = "labels.csv") -> Path:
    p = tmp / name
    p.write_text(f"id,label_{metric}\n" + "".join(f"q{i},{i % 2}\n" for i in range(n)),
                 encoding="utf-8")
    return p


_refused = refused


def _no_tmp(d: Path) -> None:
    assert not list(d.rglob("*.tmp")), list(d.rglob("*"))


# -- output faults -------------------------------------------------------------------------------
def test_o_under_a_file_or_a_file_is_one_message(tmp_path: Path, capsys) -> None:
    run, lab = _run(tmp_path), _labels(tmp_path)
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    _refused(capsys, ["estimate", str(run), str(lab), "--random-draw", "-o",
                      str(blocker / "out")], str(blocker))
    _refused(capsys, ["estimate", str(run), str(lab), "--random-draw", "-o", str(blocker)],
             str(blocker), "is a file")
    _no_tmp(tmp_path)


def test_an_existing_folder_as_o_takes_the_files(tmp_path: Path, capsys) -> None:
    run, lab = _run(tmp_path), _labels(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["estimate", str(run), str(lab), "--random-draw", "-o", str(out)]) == 0
    assert (out / "estimate.json").is_file() and (out / "estimate.md").is_file()


def test_estimate_is_never_written_over_its_labels(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    lab = out / "estimate.json"
    lab.write_text(json.dumps([{"id": f"q{i}", "label_faithfulness": i % 2} for i in range(15)]))
    before = lab.read_bytes()
    _refused(capsys, ["estimate", str(run), str(lab), "--random-draw", "-o", str(out)],
             str(lab), "input")
    assert lab.read_bytes() == before


@pytest.mark.parametrize("fails", ["write", "rename"])
def test_a_full_disk_is_one_message_naming_the_file(tmp_path: Path, capsys, monkeypatch,
                                                     fails: str) -> None:
    run, lab = _run(tmp_path), _labels(tmp_path)
    out = tmp_path / "out"
    fill_disk(monkeypatch, fails)
    err = _refused(capsys, ["estimate", str(run), str(lab), "--random-draw", "-o", str(out)],
                   str(out / "estimate.json"), "no space left")
    assert "cannot write" in err
    _no_tmp(tmp_path)


# -- hostile text --------------------------------------------------------------------------------
def _html(md: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(md)


def test_file_and_metric_names_are_not_live_html(tmp_path: Path, capsys) -> None:
    metric = "<b>x</b>"
    run = _run(tmp_path, metric=metric)
    lab = _labels(tmp_path, metric=metric, name="a`<img src=x onerror=alert(1)>`.csv")
    out = tmp_path / "out"
    assert main(["estimate", str(run), str(lab), "--random-draw", "-o", str(out)]) == 0
    md = (out / "estimate.md").read_text(encoding="utf-8")
    html = _html(md)
    assert "<img" not in html and "<b>" not in html, html
    assert "onerror=alert(1)" in html  # shown as text, not dropped
    assert json.loads((out / "estimate.json").read_text())["metrics"][0]["metric"] == metric


# -- what is refused and what is not -------------------------------------------------------------
def test_every_row_labelled_is_a_census_not_a_hand_picked_subset(tmp_path: Path,
                                                                  capsys) -> None:
    run = _run(tmp_path)
    lab = _labels(tmp_path, n=N)
    out = tmp_path / "out"
    assert main(["estimate", str(run), str(lab), "-o", str(out)]) == 0
    data = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    m = data["metrics"][0]
    assert m["labelled"] == m["rows"] == N
    assert m["corrected"]["value"] == pytest.approx(np.mean([i % 2 for i in range(N)]))
    assert any("census" in n for n in data["notes"])
    # one row short is a subset again
    _refused(capsys, ["estimate", str(run), str(_labels(tmp_path, n=N - 1, name="s.csv"))],
             "--random-draw")


def test_a_judge_that_scored_no_labelled_row_is_said_so(tmp_path: Path, capsys) -> None:
    run, lab = _run(tmp_path, scored=False), _labels(tmp_path)
    err = _refused(capsys, ["estimate", str(run), str(lab), "--random-draw"],
                   "the judge scored none of the 15 labelled rows", "faithfulness")
    assert "only 0" not in err


@pytest.mark.parametrize("scale", ["0-inf", "-inf-1", "nan-1", "1-nan", "5-1", "1-1", "1_0-5"])
def test_scale_must_be_two_finite_numbers_lo_below_hi(tmp_path: Path, capsys,
                                                       scale: str) -> None:
    run, lab = _run(tmp_path), _labels(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(["estimate", str(run), str(lab), "--random-draw", f"--scale={scale}"])
    assert e.value.code == 2
    assert "--scale" in capsys.readouterr().err


def test_a_negative_scale_still_reads(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    lab = tmp_path / "l.csv"
    lab.write_text("id,label_faithfulness\n" + "".join(f"q{i},{(i % 3) - 1}\n"
                                                        for i in range(15)))
    assert main(["estimate", str(run), str(lab), "--random-draw", "--scale=-1-1", "-o",
                 str(tmp_path / "o")]) == 0
