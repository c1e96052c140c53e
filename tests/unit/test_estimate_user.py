"""Label sheets and corrected estimates in a new user's hands: a blind sheet, a census from
``label-sheet -n N``, plain warnings below the documented minimums, no label worth claimed
for a judge that does not track the labels, and ``--plan`` for soft ratings in plain words."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from labels_util import refused, soft_run

from localeval.cli.app import main


def _rows(sheet: Path) -> list[dict[str, str]]:
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


def _fill(sheet: Path, dst: Path, value: Callable[[int, dict[str, str]], str],
          column: str = "label_faithfulness") -> Path:
    rows = _rows(sheet)
    for i, r in enumerate(rows):
        r[column] = value(i, r)
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return dst


def _judge(run: Path) -> dict[str, float]:
    out = {}
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out[r["id"]] = r["scores"]["faithfulness"]
    return out


def _estimate(tmp: Path, run: Path, labels: Path, capsys: Any, *extra: str
              ) -> tuple[dict[str, Any], str, str]:
    out = tmp / ("est-" + labels.stem)
    capsys.readouterr()
    assert main(["estimate", str(run), str(labels), "-o", str(out), *extra]) == 0
    term = " ".join(capsys.readouterr().out.split())
    data = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    return data, (out / "estimate.md").read_text(encoding="utf-8"), term


# -- 1. a blind sheet ----------------------------------------------------------------------------
def test_the_sheet_is_blind_by_default_and_shows_the_judge_on_request(tmp_path: Path,
                                                                      capsys) -> None:
    run = soft_run(tmp_path, 40)
    blind, shown = tmp_path / "blind.csv", tmp_path / "shown.csv"
    assert main(["label-sheet", str(run), "-n", "20", "--seed", "3", "-o", str(blind)]) == 0
    assert main(["label-sheet", str(run), "-n", "20", "--seed", "3", "-o", str(shown),
                 "--show-judge"]) == 0
    head = list(_rows(blind)[0])
    assert not [c for c in head if c.startswith(("judge_", "working_"))], head
    assert "label_faithfulness" in head
    assert {"judge_faithfulness", "working_faithfulness"} <= set(_rows(shown)[0])
    # the judge's scores are kept beside the sheet, not in it
    side = _rows(tmp_path / "blind.judge.csv")
    judge = _judge(run)
    assert [r["id"] for r in side] == [r["id"] for r in _rows(blind)]
    assert all(float(r["judge_faithfulness"]) == pytest.approx(judge[r["id"]]) for r in side)
    assert not (tmp_path / "shown.judge.csv").exists()
    draw = json.loads((tmp_path / "blind.draw.json").read_text(encoding="utf-8"))
    assert draw["judge_scores"] == "blind.judge.csv"
    # a filled blind sheet reads back exactly as a filled sheet that shows the judge
    label = lambda i, r: str(int(judge[r["id"]] > 0.5) if i % 4 else 1 - (judge[r["id"]] > 0.5))  # noqa: E731
    a, _, _ = _estimate(tmp_path, run, _fill(blind, tmp_path / "blind-filled.csv", label), capsys)
    b, _, _ = _estimate(tmp_path, run, _fill(shown, tmp_path / "shown-filled.csv", label), capsys)
    assert a["metrics"] == b["metrics"] and a["draw"] == b["draw"]
    # the companion file is checked like the sheet: never over an input
    data = tmp_path / "x.judge.csv"
    data.write_text("id,question\nq0,question 0?\n", encoding="utf-8")
    refused(capsys, ["label-sheet", str(run), "-n", "5", "--dataset", str(data), "-o",
                     str(tmp_path / "x.csv")], "judge", "input")


def test_help_says_the_sheet_is_blind(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["label-sheet", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--show-judge" in out and "anchor" in out


# -- 2. a census through label-sheet --------------------------------------------------------------
def test_label_sheet_n_equal_to_the_rows_is_a_census_end_to_end(tmp_path: Path,
                                                                 capsys) -> None:
    run = soft_run(tmp_path, 30, unscored=(4,))
    sheet = tmp_path / "all.csv"
    assert main(["label-sheet", str(run), "-n", "29", "-o", str(sheet)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "census" in said
    assert len(_rows(sheet)) == 29
    labels = [i % 3 == 0 for i in range(29)]
    filled = _fill(sheet, tmp_path / "all-filled.csv", lambda i, r: str(int(labels[i])))
    data, md, term = _estimate(tmp_path, run, filled, capsys)
    m = data["metrics"][0]
    assert m["labelled"] == m["rows"] == 29
    assert m["corrected"]["value"] == pytest.approx(np.mean(labels))
    assert "census" in data["draw"] and any("census" in n for n in data["notes"])
    assert "census" in md and "census" in term


def test_n_bounds_say_why(tmp_path: Path, capsys) -> None:
    run = soft_run(tmp_path, 12, unscored=(0,))
    err = refused(capsys, ["label-sheet", str(run), "-n", "12", "-o", str(tmp_path / "s.csv")],
                  "between 1 and 11", "11 rows the judge scored")
    assert "census" in err and "no draw is needed" not in err
    refused(capsys, ["label-sheet", str(run), "-n", "0", "-o", str(tmp_path / "s.csv")],
            "between 1 and 11", "nothing to label")


def test_a_small_sheet_says_how_many_labels_an_estimate_needs(tmp_path: Path, capsys) -> None:
    run = soft_run(tmp_path, 40)
    assert main(["label-sheet", str(run), "-n", "8", "-o", str(tmp_path / "s.csv")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "at least 10" in err and "30" in err


# -- 3. plain warnings below the documented minimums ----------------------------------------------
def test_fewer_than_30_labels_and_a_small_class_are_warned_everywhere(tmp_path: Path,
                                                                      capsys) -> None:
    from localeval.estimate import run_corrections

    run = soft_run(tmp_path, 80)
    sheet = tmp_path / "s.csv"
    assert main(["label-sheet", str(run), "-n", "20", "--seed", "1", "-o", str(sheet)]) == 0
    filled = _fill(sheet, tmp_path / "few.csv", lambda i, r: "0" if i < 3 else "1")
    data, md, term = _estimate(tmp_path, run, filled, capsys)
    for text in (" ".join(data["notes"]), md, term):
        assert "fewer than 30 labels" in text, text
        assert "only 3 of the 20 labels are 0" in text and "fewer than 5" in text, text
    section = run_corrections(run, filled)
    notes = " ".join(section["notes"])
    assert "fewer than 30 labels" in notes and "fewer than 5" in notes
    # 40 labels with both classes well filled: no such warning
    sheet2 = tmp_path / "s2.csv"
    assert main(["label-sheet", str(run), "-n", "40", "--seed", "1", "-o", str(sheet2)]) == 0
    ok = _fill(sheet2, tmp_path / "ok.csv", lambda i, r: str(i % 2))
    data, md, term = _estimate(tmp_path, run, ok, capsys)
    assert not [n for n in data["notes"] if "fewer than" in n], data["notes"]


# -- 4. no worth claimed for a judge that does not track the labels ------------------------------
@pytest.mark.parametrize("active", [False, True])
def test_a_judge_that_does_not_track_the_labels_is_worth_none(tmp_path: Path, capsys,
                                                               active: bool) -> None:
    from localeval.estimate import run_corrections

    run = soft_run(tmp_path, 200)
    judge = _judge(run)
    sheet = tmp_path / "s.csv"
    assert main(["label-sheet", str(run), "-n", "60", "--seed", "2", "-o", str(sheet),
                 *(["--active"] if active else [])]) == 0
    # the labels run against the judge: a high score, a 0 label (with some noise)
    filled = _fill(sheet, tmp_path / "against.csv",
                   lambda i, r: str(int(judge[r["id"]] < 0.5) if i % 7 else 1))
    data, md, term = _estimate(tmp_path, run, filled, capsys)
    m = data["metrics"][0]
    assert m["judge_tracks_labels"] is False and m["judge_label_correlation"] < 0
    assert m["judge_worth_labels"] == 0
    assert "does not track the labels" in term and "~" not in term.split("judge worth")[-1][:40]
    assert "does not track the labels" in md and "worth about" not in md
    section = run_corrections(run, filled)
    sm = section["metrics"]["faithfulness"]
    assert sm["judge_worth_labels"] == 0
    assert any("does not track the labels" in n for n in section["notes"])


def test_a_judge_that_tracks_the_labels_keeps_its_worth(tmp_path: Path, capsys) -> None:
    run = soft_run(tmp_path, 200)
    judge = _judge(run)
    sheet = tmp_path / "s.csv"
    assert main(["label-sheet", str(run), "-n", "60", "--seed", "2", "-o", str(sheet)]) == 0
    filled = _fill(sheet, tmp_path / "with.csv",
                   lambda i, r: str(int(judge[r["id"]] > 0.5) if i % 7 else 0))
    data, md, term = _estimate(tmp_path, run, filled, capsys)
    m = data["metrics"][0]
    assert m["judge_tracks_labels"] is True and m["judge_label_correlation"] > 0.5
    assert m["judge_worth_labels"] > 0 and "worth about" in md


# -- 5. --plan with soft ratings, in words that do not contradict each other ---------------------
def _rating_run(tmp: Path, n: int = 120, *, distribution: bool = True) -> Path:
    """A run of a 1-5 rubric metric scored with soft verdicts: the rating's distribution in
    the working (what ``metrics.rubrics.rate`` writes), the expected rating as the score."""
    rng = np.random.default_rng(5)
    d = tmp / "rating-run"
    d.mkdir()
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            sure = rng.random() < 0.6
            top = int(rng.integers(1, 6))
            p = np.full(5, 0.01 if sure else 0.2)
            p[top - 1] = 0.96 if sure else 0.2
            p /= p.sum()
            exp = float((np.arange(1, 6) * p).sum())
            det: dict[str, Any] = {"rating": top, "reason": "r", "scale": [1, 5]}
            if distribution:
                det["distribution"] = {str(v): round(float(q), 6) for v, q in
                                       zip(range(1, 6), p)}
                det["expected_rating"] = round(exp, 6)
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                "scores": {"rubrics_score": (exp - 1) / 4},
                                "details": {"rubrics_score": det}}) + "\n")
    return d


def test_a_soft_rating_records_uncertainty() -> None:
    from localeval.estimate.draw import SOFT_VERDICTS, row_uncertainty

    sure = {"rating": 4, "scale": [1, 5], "distribution": {"1": 0, "2": 0, "3": 0, "4": 1,
                                                            "5": 0}}
    torn = {"rating": 1, "scale": [1, 5], "distribution": {"1": 0.5, "2": 0, "3": 0, "4": 0,
                                                            "5": 0.5}}
    assert row_uncertainty(sure) == (0.0, SOFT_VERDICTS)
    assert row_uncertainty(torn) == (pytest.approx(1.0), SOFT_VERDICTS)
    # an aspect critic's soft verdict (p_yes)
    u, basis = row_uncertainty({"verdict": 1, "p_yes": 0.5, "strictness": 1})
    assert u == pytest.approx(1.0) and basis == SOFT_VERDICTS


def test_plan_for_a_soft_rating_run_plans_an_active_draw_in_plain_words(tmp_path: Path,
                                                                        capsys) -> None:
    run = _rating_run(tmp_path)
    sheet = tmp_path / "s.csv"
    assert main(["label-sheet", str(run), "-n", "30", "--active", "--seed", "1", "-o",
                 str(sheet)]) == 0
    assert "soft verdicts" in capsys.readouterr().out
    rng = np.random.default_rng(1)
    filled = _fill(sheet, tmp_path / "f.csv", lambda i, r: str(int(rng.integers(1, 6))),
                   column="label_rubrics_score")
    capsys.readouterr()
    assert main(["estimate", str(run), str(filled), "--scale", "1-5", "--plan", "0.02"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "records no uncertainty" not in out
    assert "active draw" in out
    assert "not reachable with these rows" not in out
    assert "uniform draw of these 120 rows" in out


def test_plan_words_when_only_the_active_draw_reaches_the_target() -> None:
    """A mostly sure soft judge on 150 rows, a pilot of 30: a uniform draw cannot reach
    +/-0.08, an active one can; the line says why, instead of reading as a contradiction."""
    from types import SimpleNamespace

    from localeval.estimate.plan import plan_labels, plan_lines

    rng = np.random.default_rng(2)
    N = 150
    p = rng.beta(0.2, 0.2, N)
    idx = rng.choice(N, 30, replace=False)
    y = (rng.random(30) < p[idx]).astype(float)
    u = list(4 * p * (1 - p))
    got = plan_labels(p, y, idx, 0.08, uncertainty=u)
    assert got["with_judge"] is None and got["active"] is not None
    m = SimpleNamespace(metric="m", arrays={"judge": p, "labels": y, "labelled": idx,
                                            "uncertainty": u})
    line = " ".join(plan_lines(SimpleNamespace(metrics=[m], level=0.95), 0.08)[0].split())
    assert "not reachable with these rows" not in line
    assert "not reachable with a uniform draw of these 150 rows" in line
    assert f"an active draw reaches it with {got['active']} because" in line
    assert "calibration" in line


def test_an_active_sheet_of_an_earlier_version_still_reads(tmp_path: Path, capsys) -> None:
    """Earlier versions found no uncertainty in a soft rating, so an active sheet of such a
    run was drawn uniformly; it is still that draw."""
    from localeval.estimate.draw import draw_rows
    from localeval.estimate.sheet import sheet_rows, write_sheet

    run = _rating_run(tmp_path)
    ids = [f"q{i}" for i in range(120)]
    d = draw_rows(ids, 30, 4, mode="active", uncertainty=[None] * 120, basis="uniform")
    header, rows = sheet_rows(d, ["rubrics_score"], {}, {}, {})
    sheet = tmp_path / "old.csv"
    write_sheet(sheet, header, rows, d, str(run))
    filled = _fill(sheet, tmp_path / "old-filled.csv", lambda i, r: str(1 + i % 5),
                   column="label_rubrics_score")
    data, _, _ = _estimate(tmp_path, run, filled, capsys, "--scale", "1-5")
    assert data["draw"].startswith("active:seed=4:n=30")
