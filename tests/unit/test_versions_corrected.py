"""``localeval diff BASE NEW --labels-base F --labels-new F``: the difference corrected by labels.

Two runs of the same 200 rows whose judge prefers base (a judge habit) while the
labels say new is better: the judge-only row says "worse", the corrected row
(PPI++ over the labels' differences) says "better", in every output.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from localeval.cli.app import main

N, n = 200, 60


def _truth() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return (rng.random(N) < 0.45).astype(float), (rng.random(N) < 0.8).astype(float)


def _run(tmp: Path, name: str, truth: np.ndarray, shift: float) -> Path:
    """A run whose judge scores follow ``truth`` closely, moved by ``shift`` (its bias)."""
    rng = np.random.default_rng(len(name))
    d = tmp / name
    d.mkdir()
    score = np.clip(0.3 + 0.4 * truth + shift + rng.normal(0, 0.05, N), 0, 1)
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i in range(N):
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                "scores": {"faithfulness": round(float(score[i]), 4)},
                                "errors": {}}) + "\n")
    return d


def _labels(tmp: Path, run: Path, truth: np.ndarray, name: str, *extra: str) -> Path:
    sheet = tmp / f"{name}.csv"
    assert main(["label-sheet", str(run), "-n", str(n), "--seed", "9", "-o", str(sheet),
                 *extra]) == 0
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["label_faithfulness"] = str(int(truth[int(r["id"][1:])]))
    with open(sheet, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return sheet


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    tb, tn = _truth()
    base, new = _run(tmp_path, "base", tb, 0.25), _run(tmp_path, "new", tn, -0.25)
    return {"base": base, "new": new, "lb": _labels(tmp_path, base, tb, "lb"),
            "ln": _labels(tmp_path, new, tn, "ln"), "tmp": tmp_path}


def test_corrected_difference_sits_beside_the_judge_one(world: dict, capsys) -> None:
    out = world["tmp"] / "diff"
    assert main(["diff", str(world["base"]), str(world["new"]), "--labels-base",
                 str(world["lb"]), "--labels-new", str(world["ln"]), "-o", str(out)]) == 0
    data = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    judge, corr = data["metrics"][0]["estimates"]
    assert judge["kind"] == "judge" and judge["verdict"] == "worse"
    assert corr["kind"] == "corrected" and corr["verdict"] == "better"
    assert corr["n"] == n and corr["labels_only"]["n"] == n
    tb, tn = _truth()
    assert corr["low"] <= float((tn - tb).mean()) <= corr["high"]
    # the judge's paired differences narrow the labels-only interval
    lab = corr["labels_only"]
    assert corr["high"] - corr["low"] < lab["high"] - lab["low"]
    assert corr["sentence"].startswith("new is better on faithfulness (corrected, 60 labels) by")
    assert data["labels"]["draw_base"] == "uniform:seed=9:n=60"
    assert "independent pseudo-rows" in corr["method"]
    md = (out / "diff.md").read_text(encoding="utf-8")
    assert "| faithfulness (corrected by labels) | 60 | — | — |" in md
    assert corr["sentence"].replace("[", "\\[").replace("]", "\\]") in md
    html = (out / "diff.html").read_text(encoding="utf-8")
    assert "corrected by labels" in html and "(corrected, 60 labels)" in html
    term = capsys.readouterr().out
    assert "corrected by" in term and "new is better on faithfulness (corrected" in term


def test_without_labels_nothing_changes(world: dict) -> None:
    out = world["tmp"] / "plain"
    assert main(["diff", str(world["base"]), str(world["new"]), "-o", str(out)]) == 0
    data = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    assert [e["kind"] for e in data["metrics"][0]["estimates"]] == ["judge"]
    assert "labels" not in data


def _refused(capsys, argv: list[str], out: Path, *words: str) -> None:
    assert main([*argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, err
    assert "Traceback" not in err
    assert not out.exists()  # nothing half written


def test_bad_labels_are_refused_before_anything_is_written(world: dict, capsys) -> None:
    tmp, base, new = world["tmp"], str(world["base"]), str(world["new"])
    out = tmp / "never"
    _refused(capsys, ["diff", base, new, "--labels-new", str(world["ln"])], out,
             "--labels-base and --labels-new")
    rows = world["ln"].read_text(encoding="utf-8").splitlines()
    head, first = rows[0].split(","), rows[1].split(",")
    first[head.index("label_faithfulness")] = "yes"
    bad = tmp / "bad.csv"
    bad.write_text("\n".join([rows[0], ",".join(first), *rows[2:]]) + "\n", encoding="utf-8")
    _refused(capsys, ["diff", base, new, "--labels-base", str(world["lb"]), "--labels-new",
                      str(bad)], out, "bad.csv", "row 1", "label_faithfulness", "must be a number")
    plain = tmp / "plain.csv"
    plain.write_text("id,label_faithfulness\n" + "".join(f"q{i},{i % 2}\n" for i in range(8)))
    _refused(capsys, ["diff", base, new, "--labels-base", str(plain), "--labels-new",
                      str(plain)], out, "--random-draw")
    _refused(capsys, ["diff", base, new, "--labels-base", str(plain), "--labels-new",
                      str(plain), "--random-draw"], out, "only 8 labelled rows", "at least 10")
    tb, tn = _truth()
    active = _labels(tmp, world["new"], tn, "active", "--active")
    _refused(capsys, ["diff", base, new, "--labels-base", str(world["lb"]), "--labels-new",
                      str(active)], out, "active draw", "column 'draw'")


def test_the_reference_interval_is_an_option(world: dict) -> None:
    """``--reference-interval``: ppi-python's plain PPI++ interval, inside the default one."""
    got = {}
    for name, extra in (("default", []), ("reference", ["--reference-interval"])):
        out = world["tmp"] / name
        assert main(["diff", str(world["base"]), str(world["new"]), "--labels-base",
                     str(world["lb"]), "--labels-new", str(world["ln"]), "-o", str(out),
                     *extra]) == 0
        data = json.loads((out / "diff.json").read_text(encoding="utf-8"))
        got[name] = data["metrics"][0]["estimates"][1]
    ref, default = got["reference"], got["default"]
    assert "reference" in ref["method"] and "pseudo-rows" not in ref["method"]
    assert ref["value"] == pytest.approx(default["value"], abs=1e-12)
    assert default["low"] < ref["low"] and ref["high"] < default["high"]
    md = (world["tmp"] / "reference" / "diff.md").read_text(encoding="utf-8")
    assert "interval: PPI++ (reference" in md


def test_a_judge_whose_differences_track_the_labels_is_worth_labels_and_one_that_does_not_is_not(
        tmp_path: Path) -> None:
    """The corrected difference reports the judge's worth in labels only when the judge's
    per-row differences correlate positively with the labels' differences."""
    tb, tn = _truth()
    base, new = _run(tmp_path, "base", tb, 0.0), _run(tmp_path, "new", tn, 0.0)
    lb, ln = _labels(tmp_path, base, tb, "lb"), _labels(tmp_path, new, tn, "ln")
    out = tmp_path / "good"
    assert main(["diff", str(base), str(new), "--labels-base", str(lb), "--labels-new", str(ln),
                 "-o", str(out)]) == 0
    corr = json.loads((out / "diff.json").read_text(encoding="utf-8"))["metrics"][0][
        "estimates"][1]
    assert corr["judge_tracks_labels"] is True and corr["judge_worth_labels"] > 0
    # labels turned upside down: the judge's differences now run against them
    flipped = tmp_path / "flipped"
    flipped.mkdir()
    lb2, ln2 = (_labels(flipped, r, 1 - t, name) for r, t, name in
                ((base, tb, "lb"), (new, tn, "ln")))
    out2 = tmp_path / "bad"
    assert main(["diff", str(base), str(new), "--labels-base", str(lb2), "--labels-new",
                 str(ln2), "-o", str(out2)]) == 0
    corr2 = json.loads((out2 / "diff.json").read_text(encoding="utf-8"))["metrics"][0][
        "estimates"][1]
    assert corr2["judge_tracks_labels"] is False and corr2["judge_worth_labels"] == 0
    assert corr2["judge_label_correlation"] < 0
