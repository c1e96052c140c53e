"""The new user's trial, rebuilt end to end with a scripted judge that fails its judge check and
leaves rows unscored: v1 right answers, v2 with 5 of 12 answers swapped for hallucinated ones.

What the trial found and what must hold now: ``diff`` states the unfit judge and the
unscored pairs, its gate fails over them and ``--allow-unscored`` lets it pass (while
``--fail-if-unfit-judge`` still fails it); ``label-sheet`` draws only scored rows and
hides the judge's columns; ``estimate`` on few labels warns and does not call a judge that
does not track the labels worth labels.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import localeval
from localeval.cli.app import main
from localeval.testing import SWAPPED, SWAPPED_MARK, trial_versions, unfit_judge

MARK = SWAPPED_MARK


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("trial")
    out = {}
    for name, data in zip(("v1", "v2"), trial_versions(tmp)):
        r = localeval.evaluate(data, ["faithfulness", "bleu"], judge=unfit_judge(), cache=False,
                               judge_check=1, out_dir=tmp / name, progress=False)
        assert r.summary["judge_check"]["verdict"] != "fit"
        out[name] = tmp / name
    out["tmp"] = tmp
    return out


def test_diff_says_the_judge_is_unfit_and_counts_unscored_pairs(runs, capsys) -> None:
    out = runs["tmp"] / "diff"
    argv = ["diff", str(runs["v1"]), str(runs["v2"]), "-m", "faithfulness,bleu", "-o", str(out),
            "--fail-if-worse", "faithfulness=0.02"]
    assert main(argv) == 1  # 5 pairs unscored on new: a gate never passes on no evidence
    text = capsys.readouterr()
    assert "not evidence" in text.out + text.err
    d = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    faith = next(m for m in d["metrics"] if m["metric"] == "faithfulness")
    bleu = next(m for m in d["metrics"] if m["metric"] == "bleu")
    assert faith["counts"]["unscored"] == len(SWAPPED)
    assert "not evidence" in json.dumps(faith) and "not evidence" not in json.dumps(bleu)
    assert main(argv + ["--allow-unscored", "all"]) == 0
    assert main(argv + ["--allow-unscored", "all", "--fail-if-unfit-judge"]) == 1


def test_label_sheet_draws_scored_rows_blind(runs, capsys) -> None:
    sheet = runs["tmp"] / "sheet.csv"
    assert main(["label-sheet", str(runs["v2"]), "-m", "faithfulness", "-n", "7", "-o",
                 str(sheet)]) == 0
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 7 and not any(r["answer"].startswith(MARK) for r in rows)
    assert not any(c.startswith(("judge_", "working_")) for c in rows[0])
    assert "left out 5" in capsys.readouterr().err


def test_estimate_on_ten_labels_warns_and_gives_the_judge_no_worth(runs, capsys) -> None:
    """v1, every row scored: a sheet of 10 of the 12 rows, labels that the judge (which says
    1 everywhere) does not track."""
    sheet = runs["tmp"] / "sheet10.csv"
    assert main(["label-sheet", str(runs["v1"]), "-m", "faithfulness", "-n", "10", "-o",
                 str(sheet)]) == 0
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    filled = runs["tmp"] / "filled.csv"
    with open(filled, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for i, r in enumerate(rows):
            w.writerow({**r, "label_faithfulness": str(i % 2)})
    capsys.readouterr()
    out = runs["tmp"] / "est"
    assert main(["estimate", str(runs["v1"]), str(filled), "-o", str(out)]) == 0
    terminal = capsys.readouterr().out
    est = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    md = (out / "estimate.md").read_text(encoding="utf-8")
    m = est["metrics"][0]
    assert m["judge_tracks_labels"] is False and m["judge_worth_labels"] == 0
    assert "does not track the labels" in md and "does not track the labels" in terminal
    assert any("does not track the labels" in n for n in est["notes"]), est["notes"]
    assert any("not reliable at this size" in n for n in est["notes"]), est["notes"]
