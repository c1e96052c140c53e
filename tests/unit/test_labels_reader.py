"""The one labels reader (``agreement.read_label_table``): strict cells, ``;`` sheets, exact ids
and custom metric names, read the same by ``localeval estimate`` and ``localeval validate``."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest

from localeval.cli.app import main


def _run(tmp: Path, n: int = 60, metric: str = "faithfulness", ids=None) -> Path:
    rng = np.random.default_rng(0)
    d = tmp / "run"
    d.mkdir()
    ids = ids or [f"q{i}" for i in range(n)]
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i, sid in enumerate(ids):
            p = float(rng.uniform(0.05, 0.95))
            f.write(json.dumps({"id": sid, "question": f"question {i}?",
                                "scores": {metric: round(p, 4)}, "errors": {},
                                "details": {metric: {"verdicts": [{"p_verdict_1": p}]}}})
                    + "\n")
    return d


def _sheet(tmp: Path, run: Path, n: int = 20, *extra: str) -> Path:
    out = tmp / "sheet.csv"
    assert main(["label-sheet", str(run), "-n", str(n), "--seed", "4", "-o", str(out),
                 *extra]) == 0
    return out


def _rows(sheet: Path) -> list[dict]:
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


def _fill(sheet: Path, dst: Path, value=lambda i, r: str(i % 2), column="label_faithfulness",
          delimiter: str = ",") -> Path:
    rows = _rows(sheet)
    for i, r in enumerate(rows):
        r[column] = value(i, r)
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=delimiter)
        w.writeheader()
        w.writerows(rows)
    return dst


def _refused(capsys, argv: list[str], *words: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, err
    assert "Traceback" not in err and err.count("localeval: error:") == 1, err
    return err


# -- strict cells --------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", ["0_1", "1_0", "0x1", "1,0", "½", "0.5.1", "1e", "one"])
def test_a_label_cell_is_parsed_strictly(tmp_path: Path, capsys, cell: str) -> None:
    run = _run(tmp_path)
    bad = _fill(_sheet(tmp_path, run), tmp_path / "bad.csv",
                lambda i, r: cell if i == 3 else str(i % 2))
    _refused(capsys, ["estimate", str(run), str(bad), "-o", str(tmp_path / "est")], "row 4",
             "label_faithfulness", "must be a number")


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
def test_nan_and_inf_label_cells_are_refused_naming_row_and_column(tmp_path: Path, capsys,
                                                                   cell: str) -> None:
    run = _run(tmp_path)
    bad = _fill(_sheet(tmp_path, run), tmp_path / "bad.csv",
                lambda i, r: cell if i == 5 else str(i % 2))
    _refused(capsys, ["estimate", str(run), str(bad), "-o", str(tmp_path / "est")], "row 6",
             "label_faithfulness", "not a finite number")


def test_numbers_the_docs_promise_still_read(tmp_path: Path) -> None:
    from localeval.estimate import read_labels

    lab = tmp_path / "l.csv"
    cells = ["0", "1", " 1 ", "1.0", "+1", "0.", ".5", "5e-1", "1E0", ""]
    lab.write_text("id,label_faithfulness\n" + "".join(f"q{i},{c}\n" for i, c in
                                                         enumerate(cells)), encoding="utf-8")
    got = read_labels(lab).values["faithfulness"]
    assert got == {"q0": 0, "q1": 1, "q2": 1, "q3": 1, "q4": 1, "q5": 0, "q6": 0.5, "q7": 0.5,
                   "q8": 1}


def test_validate_reads_human_scores_as_strictly(tmp_path: Path, capsys) -> None:
    res = tmp_path / "r.csv"
    res.write_text("id,faithfulness\n" + "".join(f"q{i},0.{i}\n" for i in range(6)))
    for cell, says in (("0_1", "must be a number"), ("nan", "not a finite number")):
        lab = tmp_path / f"l{cell}.csv"
        lab.write_text("id,human_faithfulness\n" + "".join(
            f"q{i},{cell if i == 2 else '0.5'}\n" for i in range(6)))
        _refused(capsys, ["validate", str(res), str(lab)], str(lab), "row 3",
                 "human_faithfulness", says)


# -- a sheet saved with ';' ----------------------------------------------------------------------
def test_a_sheet_saved_with_semicolons_reads_as_the_same_labels(tmp_path: Path) -> None:
    from localeval.estimate import estimate

    run = _run(tmp_path)
    sheet = _sheet(tmp_path, run, 20, "--active")
    comma = _fill(sheet, tmp_path / "comma.csv")

    def decimal_comma(i: int, r: dict) -> str:  # a spreadsheet where ',' is the decimal mark
        r["inclusion_probability"] = r["inclusion_probability"].replace(".", ",")
        return str(i % 2)
    semi = _fill(sheet, tmp_path / "semi.csv", decimal_comma, delimiter=";")
    assert ";" in semi.read_text().splitlines()[0]
    a, b = (estimate(run, p).metrics[0].to_dict() for p in (comma, semi))
    assert a == b


def test_a_one_column_header_says_what_may_be_wrong(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path)
    odd = tmp_path / "odd.csv"
    odd.write_text("ident|label_faithfulness\nq1|1\n")
    _refused(capsys, ["estimate", str(run), str(odd), "--random-draw"], "id column",
             "separator")


# -- ids and metric names round-trip -------------------------------------------------------------
TRICKY = ["'=1", "'+x", "'-2", "'@a", "'", "''", "'a", "''=1", "=1", "+x", "-1", "@SUM(A1)",
          "\tx", "\rx", "a'", "x,y", 'q"uote', "new\nline", " lead", "é漢字", "'\t", "=", "-"]


def test_every_tricky_id_round_trips_through_a_sheet(tmp_path: Path) -> None:
    from localeval.estimate import read_labels

    ids = TRICKY + [f"plain{i}" for i in range(3)]
    run = _run(tmp_path, ids=ids)
    sheet = _sheet(tmp_path, run, len(ids) - 1)
    drawn = json.loads((tmp_path / "sheet.draw.json").read_text(encoding="utf-8"))["drawn"]
    filled = _fill(sheet, tmp_path / "filled.csv")
    assert sorted(read_labels(filled).rows) == sorted(drawn)
    assert len(set(drawn) & set(TRICKY)) >= len(TRICKY) - 1


def test_many_random_cells_round_trip(tmp_path: Path) -> None:
    from localeval.results import spreadsheet_cell as sheet_cell
    from localeval.results import unquote_cell as sheet_text

    rng = random.Random(7)
    alphabet = "'=+-@\t\r\n,;\" a1é"
    cells = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
             for _ in range(3000)]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows([[sheet_cell(c)] for c in cells])
    back = [r[0] if r else "" for r in csv.reader(io.StringIO(buf.getvalue(), newline=""))]
    assert [sheet_text(c) for c in back] == cells
    for c in cells:  # nothing a spreadsheet would run is written bare
        assert not sheet_cell(c).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_a_custom_metric_name_survives_sheet_and_estimate(tmp_path: Path) -> None:
    run = _run(tmp_path, metric="Politeness Check")
    sheet = _sheet(tmp_path, run)
    assert "label_Politeness Check" in _rows(sheet)[0]
    filled = _fill(sheet, tmp_path / "filled.csv", column="label_Politeness Check")
    out = tmp_path / "est"
    assert main(["estimate", str(run), str(filled), "-o", str(out)]) == 0
    data = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    assert [m["metric"] for m in data["metrics"]] == ["Politeness Check"]
    assert main(["estimate", str(run), str(filled), "-m", "Politeness Check", "-o",
                 str(out), "--overwrite"]) == 0  # other settings: replaced only when asked


def test_validate_matches_a_custom_metric_by_its_name(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path, n=12, metric="Politeness Check")
    lab = tmp_path / "l.csv"
    lab.write_text("id,human_Politeness Check\n" + "".join(f"q{i},{i % 2}\n" for i in range(12)))
    assert main(["validate", str(run), str(lab)]) == 0
    assert "Politeness Check" in capsys.readouterr().out
