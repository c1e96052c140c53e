"""What the four outputs of ``localeval diff`` say beside "not shown", ``--plan``, and that
every figure whose meaning did not change is the same as before.

``tests/data/verdicts/text_diff_before.json`` is the diff.json of the bundled example
against its degraded copy (``versions_util.degraded_copy``: eight answers replaced),
BLEU and ROUGE-L, written by localeval before paired 0/1 scores got the exact test and
verdicts their power; today's diff must hold every one of its numbers to 1e-12.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from versions_util import degraded_copy, run

from localeval.cli.app import example_path, main
from localeval.generate import render_testset_summary
from localeval.resultsets import ResultSet
from localeval.versions import diff_runs, terminal_table, write_diff

BEFORE = Path(__file__).parents[1] / "data" / "verdicts" / "text_diff_before.json"


def _numbers(x: object, path: str = "") -> dict[str, float]:
    if isinstance(x, dict):
        return {k: v for key, val in x.items() for k, v in _numbers(val, f"{path}.{key}").items()}
    if isinstance(x, list):
        return {k: v for i, val in enumerate(x) for k, v in _numbers(val, f"{path}[{i}]").items()}
    return {path: x} if isinstance(x, (int, float)) and not isinstance(x, bool) else {}


@pytest.mark.slow
def test_text_metric_figures_are_unchanged_on_the_bundled_example(tmp_path):
    v2 = degraded_copy(tmp_path / "v2.jsonl", keep_ids=True)
    run(example_path(), tmp_path / "v1", "bleu,rougeL")
    run(v2, tmp_path / "v2", "bleu,rougeL")
    assert main(["diff", str(tmp_path / "v1"), str(tmp_path / "v2"), "-o",
                 str(tmp_path / "d")]) == 0
    before = _numbers(json.loads(BEFORE.read_text()))
    after = _numbers(json.loads((tmp_path / "d" / "diff.json").read_text()))
    assert len(before) > 250 and set(before) <= set(after)  # only keys added, none lost
    moved = {k: (v, after[k]) for k, v in before.items() if abs(v - after[k]) > 1e-12}
    assert not moved, moved


def _sets(rng, n: int, binary: bool) -> tuple[ResultSet, ResultSet]:
    if binary:
        b, w = (rng.random(n) < 0.6).astype(float), (rng.random(n) < 0.6).astype(float)
    else:
        b = rng.uniform(0, 1, n)
        w = np.clip(b + rng.normal(0, 0.2, n), 0, 1)
    ids = [f"q{i}" for i in range(n)]
    return (ResultSet.from_scores({i: {"m": float(v)} for i, v in zip(ids, b)}),
            ResultSet.from_scores({i: {"m": float(v)} for i, v in zip(ids, w)}))


POWER = re.compile(r"could show a difference of \d\.\d{3} or more|could not show any "
                   r"difference: at least \d+ changed pairs")


@pytest.mark.parametrize("n", (2, 3, 5, 10, 20, 50, 200))
@pytest.mark.parametrize("binary", (True, False))
def test_not_shown_never_stands_without_what_could_be_shown(n, binary, tmp_path):
    """Seeded diffs with no true change: wherever a verdict is "not shown" (terminal, diff.md,
    diff.html, diff.json), what the comparison could have shown stands beside it."""
    from rich.console import Console

    rng = np.random.default_rng(n + 100 * binary)
    for k in range(3):
        d = diff_runs(*_sets(rng, n, binary), n_resamples=999, seed=k)
        out = tmp_path / f"d{k}"
        write_diff(d, out)
        console = Console(width=400, record=True, file=open("/dev/null", "w"))
        console.print(terminal_table(d))
        texts = {"terminal": console.export_text(), "md": (out / "diff.md").read_text(),
                 "html": (out / "diff.html").read_text()}
        js = json.loads((out / "diff.json").read_text())
        for e in js["metrics"][0]["estimates"]:
            assert e["verdict"] != "no difference"
            if e["verdict"] == "not shown":
                assert POWER.search(e["sentence"]), e["sentence"]
                assert "detectable" in e["power"] and "changed_pairs" in e["power"]
        for name, text in texts.items():
            assert "no difference" not in text, name
            for line in text.splitlines():
                if ": not shown: the interval" in line:
                    assert POWER.search(line) or name == "terminal", (name, line)
            assert text.count("not shown (could show") == text.count("not shown ("), name
        sentence = " ".join(texts["terminal"].split())
        if "not shown" in sentence:
            assert POWER.search(sentence), sentence


def test_plan_from_a_pilot(tmp_path, capsys):
    rows = {"v1": ([1.0] * 9 + [0.0], [0.8, 0.7, 0.9, 0.6, 0.8, 0.7, 0.9, 0.6, 0.5, 0.4]),
            "v2": ([1.0] * 4 + [0.0] * 6, [0.8, 0.6, 0.9, 0.5, 0.3, 0.7, 0.4, 0.6, 0.5, 0.2])}
    for name, (hit, graded) in rows.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.jsonl").write_text("".join(
            json.dumps({"id": f"q{i}", "question": f"Q{i}?",
                        "scores": {"hit_rate@3": h, "rougeL": g}}) + "\n"
            for i, (h, g) in enumerate(zip(hit, graded))))
    out = tmp_path / "d"
    assert main(["diff", str(tmp_path / "v1"), str(tmp_path / "v2"), "-o", str(out),
                 "--plan", "0.1"]) == 0
    said = capsys.readouterr().out
    assert "plan: questions that would show a change of 0.1 with 80% power" in said
    assert "hit_rate@3: about 408 questions (pilot: 10 pairs, 50.0% changed)" in said
    plan = json.loads((out / "diff.json").read_text())["plan"]
    rows_by = {r["metric"]: r for r in plan["metrics"]}
    assert rows_by["hit_rate@3"]["kind"] == "0/1" and rows_by["hit_rate@3"]["questions"] == 408
    assert rows_by["rougeL"]["kind"] == "graded" and rows_by["rougeL"]["questions"] > 10
    for bad in ("0", "-1", "x", "inf"):
        assert main(["diff", str(tmp_path / "v1"), str(tmp_path / "v2"), "--plan", bad]) == 2
        assert "--plan" in capsys.readouterr().err


def test_generate_s_summary_points_to_the_planner():
    md = render_testset_summary({"asked": 10, "kept": 8})
    assert "localeval diff --plan DELTA BASE NEW" in md
