"""``localeval label-sheet`` and ``localeval estimate`` end to end, and their refusals (exit 2)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from labels_util import soft_run

from localeval.cli.app import main

N = 60


def _run(tmp: Path) -> Path:
    """A localeval run folder with one judged metric over N rows (soft-verdict working)."""
    return soft_run(tmp, N)


def _sheet(tmp: Path, run: Path, *extra: str) -> Path:
    out = tmp / "sheet.csv"
    assert main(["label-sheet", str(run), "-n", "20", "--seed", "4", "-o", str(out), *extra]) == 0
    return out


def _fill(sheet: Path, dst: Path, value=lambda i, r: str(i % 2)) -> Path:
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    for i, r in enumerate(rows):
        r["label_faithfulness"] = value(i, r)
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return dst


@pytest.mark.parametrize("active", [False, True])
def test_sheet_then_estimate_writes_both_files(tmp_path: Path, active: bool, capsys) -> None:
    run = _run(tmp_path)
    sheet = _sheet(tmp_path, run, *(["--active"] if active else []))
    raw = sheet.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # BOM: spreadsheets read UTF-8 right
    assert (tmp_path / "sheet.draw.json").is_file()
    filled = _fill(sheet, tmp_path / "filled.csv")
    out = tmp_path / "est"
    assert main(["estimate", str(run), str(filled), "-o", str(out)]) == 0
    data = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    m = data["metrics"][0]
    assert m["corrected"]["low"] < m["corrected"]["value"] < m["corrected"]["high"]
    assert "estimates the judge, not the truth" in (out / "estimate.md").read_text()
    assert "wrote" in capsys.readouterr().err


def test_the_interval_is_named_and_the_reference_one_is_an_option(tmp_path: Path,
                                                                   capsys) -> None:
    from localeval.estimate.ppi import REFERENCE_METHOD, interval_method

    run = _run(tmp_path)
    filled = _fill(_sheet(tmp_path, run), tmp_path / "filled.csv")
    got = {}
    for name, extra in (("default", []), ("reference", ["--reference-interval"])):
        out = tmp_path / name
        assert main(["estimate", str(run), str(filled), "-o", str(out), *extra]) == 0
        got[name] = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
        method = interval_method() if name == "default" else REFERENCE_METHOD
        assert got[name]["interval"] == method
        assert got[name]["metrics"][0]["corrected"]["method"] == method
        assert f"Corrected interval: {method}" in (out / "estimate.md").read_text()
        assert "PPI++" in capsys.readouterr().out  # the table's title names it
    d, r = (got[k]["metrics"][0]["corrected"] for k in ("default", "reference"))
    assert d["value"] == pytest.approx(r["value"], abs=1e-12)
    assert d["low"] < r["low"] and d["high"] > r["high"]


def test_formula_cells_are_quoted(tmp_path: Path) -> None:
    run = _run(tmp_path)
    lines = (run / "results.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    for r in rows:
        r["question"] = "=HYPERLINK(\"http://x\")"
    (run / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    sheet = _sheet(tmp_path, run)
    assert "'=HYPERLINK" in sheet.read_text(encoding="utf-8-sig")


def _refused(capsys, argv: list[str], *words: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, err
    assert "Traceback" not in err


def test_bad_labels_are_refused_naming_file_row_and_column(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    sheet = _sheet(tmp_path, run)
    out = tmp_path / "est"
    text = _fill(sheet, tmp_path / "text.csv", lambda i, r: "yes" if i == 3 else "1")
    _refused(capsys, ["estimate", str(run), str(text), "-o", str(out)], "row 4",
             "label_faithfulness", "must be a number")
    big = _fill(sheet, tmp_path / "big.csv", lambda i, r: "3" if i == 2 else str(i % 2))
    _refused(capsys, ["estimate", str(run), str(big), "-o", str(out)], "row 3", "--scale")
    same = _fill(sheet, tmp_path / "same.csv", lambda i, r: "1")
    _refused(capsys, ["estimate", str(run), str(same), "-o", str(out)], "all 20 labels")
    assert not out.exists()  # nothing half written


def test_labels_that_do_not_match_their_draw_are_refused(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    sheet = _sheet(tmp_path, run)

    def other_seed(i: int, r: dict) -> str:
        r["draw"] = "uniform:seed=5:n=20"
        return str(i % 2)
    moved = _fill(sheet, tmp_path / "moved.csv", other_seed)
    _refused(capsys, ["estimate", str(run), str(moved)], "does not match", "column 'id'")

    def other_prob(i: int, r: dict) -> str:
        if i == 1:
            r["inclusion_probability"] = "0.5"
        return str(i % 2)
    edited = _fill(sheet, tmp_path / "edited.csv", other_prob)
    _refused(capsys, ["estimate", str(run), str(edited)], "row 2", "inclusion_probability")


def test_hand_picked_ids_and_unknown_ids(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    plain = tmp_path / "plain.csv"
    plain.write_text("id,label_faithfulness\n" + "".join(f"q{i},{i % 2}\n" for i in range(12)))
    _refused(capsys, ["estimate", str(run), str(plain)], "--random-draw")
    assert main(["estimate", str(run), str(plain), "--random-draw", "-o",
                 str(tmp_path / "ok")]) == 0
    capsys.readouterr()
    stray = tmp_path / "stray.csv"
    stray.write_text("id,label_faithfulness\n" + "".join(f"q{i},{i % 2}\n" for i in range(12))
                     + "nope,1\n")
    _refused(capsys, ["estimate", str(run), str(stray), "--random-draw"], "'nope'", "row 13")
    few = tmp_path / "few.csv"
    few.write_text("id,label_faithfulness\n" + "".join(f"q{i},{i % 2}\n" for i in range(6)))
    _refused(capsys, ["estimate", str(run), str(few), "--random-draw"], "only 6", "at least 10")
    other = tmp_path / "other.csv"
    other.write_text("id,label_answer_relevancy\n" + "".join(f"q{i},{i % 2}\n" for i in range(12)))
    _refused(capsys, ["estimate", str(run), str(other), "--random-draw"],
             "no metric 'answer_relevancy'")


def test_plan_prints_label_counts(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    filled = _fill(_sheet(tmp_path, run, "--active"), tmp_path / "filled.csv")
    assert main(["estimate", str(run), str(filled), "--plan", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "labels only" in out and "active draw" in out
