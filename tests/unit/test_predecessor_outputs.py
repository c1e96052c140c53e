"""Outputs of the previous release still read, and its figures still hold where no fix applies.

``tests/data/predecessor/`` holds what the release before the one interval
shape wrote on the bundled example (text metrics, no judge): three runs
(``runA`` with ``--labels``), ``estimate.json``, ``diff.json`` (runA against
runB, whose answers differ on every third row), ``comparison.json`` (runA
against runC, the same data) and ``validation.json`` (runA against human
labels of 15 rows), with the labels files; see the README there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from localeval.stats import read_interval

OLD = Path(__file__).resolve().parents[1] / "data" / "predecessor"


def _load(name: str) -> Any:
    return json.loads((OLD / name).read_text(encoding="utf-8"))


def _old_intervals() -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, entry) for every interval entry of the stored files."""
    for m in _load("estimate.json")["metrics"]:
        for k in ("judge_only", "labels_only", "corrected", "judge_bias"):
            yield f"estimate {m['metric']} {k}", m[k]
    for m in _load("diff.json")["metrics"]:
        for e in m["estimates"]:
            yield f"diff {m['metric']} {e['kind']}", e
    for name, m in _load("comparison.json")["metrics"].items():
        for k, st in m["stats"].items():
            yield f"compare {name} {k}", st
    for k, st in _load("validation.json")["human_agreement"]["rougeL"]["stats"].items():
        yield f"validate rougeL {k}", st


def test_every_old_interval_reads_with_its_numbers() -> None:
    seen = 0
    for where, e in _old_intervals():
        iv = read_interval(e)
        point = next(e[k] for k in ("mean", "diff", "value") if k in e)
        lo, hi = (e["low"], e["high"]) if "low" in e else (e.get("ci95") or (None, None))
        assert (iv.value, iv.low, iv.high) == (point, lo, hi), where
        assert iv.method or iv.reason, where  # how it was computed, or why it was not
        seen += 1
    assert seen >= 20


def test_an_old_run_with_labels_renders(tmp_path: Path) -> None:
    from localeval.cli.app import main

    run = tmp_path / "runA"
    shutil.copytree(OLD / "runA", run)
    assert main(["report", str(run)]) == 0
    old = _load("runA/summary.json")["corrected"]["metrics"]["rougeL"]["corrected"]
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "rougeL (corrected by labels)" in md
    assert f"[{old['low']:.3f}, {old['high']:.3f}]" in md
    html = (run / "report.html").read_text(encoding="utf-8")
    assert f"{old['mean']:.3f}" in html


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None
                                         and abs(a - b) <= 1e-12)


def test_estimate_figures_are_unchanged(tmp_path: Path) -> None:
    """No fix applies to this estimate (a uniform draw stated, every interval inside
    [0, 1]): every figure equals the previous release's to 1e-12."""
    from localeval.estimate import estimate, estimate_dict

    shutil.copytree(OLD / "runA", tmp_path / "runA")
    now = estimate_dict(estimate(tmp_path / "runA", OLD / "labels.csv", random_draw=True))
    old = _load("estimate.json")
    for m_old, m_new in zip(old["metrics"], now["metrics"]):
        for k in ("judge_only", "labels_only", "corrected", "judge_bias"):
            a, b = read_interval(m_old[k]), read_interval(m_new[k])
            assert all(_close(getattr(a, f), getattr(b, f)) for f in ("value", "low", "high",
                                                                      "se")), k
        assert m_new["judge_worth_labels"] == pytest.approx(m_old["judge_worth_labels"],
                                                            abs=1e-12)


def test_diff_points_are_unchanged_and_intervals_follow_the_few_pairs_rule(tmp_path: Path
                                                                            ) -> None:
    """30 pairs: the interval is now the sign-flip one (a fix: the bootstrap covered too
    little at this size); the points and which metrics are compared are the same."""
    from localeval.versions import diff_runs

    for r in ("runA", "runB"):
        shutil.copytree(OLD / r, tmp_path / r)
    now = diff_runs(tmp_path / "runA", tmp_path / "runB").to_dict()
    old = _load("diff.json")
    assert [m["metric"] for m in now["metrics"]] == [m["metric"] for m in old["metrics"]]
    for m_old, m_new in zip(old["metrics"], now["metrics"]):
        a, b = read_interval(m_old["estimates"][0]), read_interval(m_new["estimates"][0])
        assert _close(a.value, b.value) and a.n == b.n == 30
        assert "sign-flip" in b.method and b.ci is not None
        assert {k: m_new["counts"][k] for k in m_old["counts"]} == m_old["counts"]


def test_an_old_corrected_section_reads_in_todays_shape() -> None:
    """``results.read_run`` brings the old ``{"mean", "low", "high", "interval"}`` intervals of
    ``run --labels`` to today's one shape, keeping lambda; the report reads only that."""
    from localeval.results import read_run

    summary, _ = read_run(OLD / "runA")
    old = _load("runA/summary.json")["corrected"]["metrics"]["rougeL"]
    now = summary["corrected"]["metrics"]["rougeL"]
    for k in ("judge_only", "labels_only", "corrected", "judge_bias"):
        assert now[k]["value"] == old[k]["mean"] and now[k]["low"] == old[k]["low"]
        assert now[k]["method"] == old[k]["interval"] and "mean" not in now[k]
    assert now["corrected"]["lambda"] == old["corrected"]["lambda"]


def test_compare_figures_are_unchanged(tmp_path: Path) -> None:
    """30 paired samples: the bootstrap path, where no fix applies: every statistic and
    interval equals the previous release's to 1e-12."""
    from localeval.agreement import compare
    from localeval.resultsets import load_result_set

    for r in ("runA", "runC"):
        shutil.copytree(OLD / r, tmp_path / r)
    now = compare(load_result_set(tmp_path / "runA"), load_result_set(tmp_path / "runC")
                  ).to_dict()
    old = _load("comparison.json")
    assert list(now["metrics"]) == list(old["metrics"])
    for name, m in old["metrics"].items():
        for k, st in m["stats"].items():
            a, b = read_interval(st), read_interval(now["metrics"][name]["stats"][k])
            assert _close(a.value, b.value) and _close(a.low, b.low) \
                and _close(a.high, b.high), (name, k)


def test_validate_points_are_unchanged_and_small_samples_get_their_intervals(tmp_path: Path
                                                                             ) -> None:
    """15 labelled rows: every statistic's value is the previous release's; the intervals
    follow the few-samples rules (a fix), and each says how it was computed."""
    from localeval.agreement import load_labels, validate
    from localeval.resultsets import load_result_set

    shutil.copytree(OLD / "runA", tmp_path / "runA")
    rs = load_result_set(tmp_path / "runA")
    now = validate(rs, load_labels(OLD / "human.csv", run_metrics=rs.metrics)).to_dict()
    old = _load("validation.json")["human_agreement"]["rougeL"]["stats"]
    got = now["human_agreement"]["rougeL"]["stats"]
    assert set(got) == set(old)
    for k, st in old.items():
        a, b = read_interval(st), read_interval(got[k])
        assert _close(a.value, b.value), k
        assert b.n == 15 and (b.method or b.reason), k


@pytest.mark.slow
def test_labelled_set_figures_are_unchanged(tmp_path: Path) -> None:
    """WikiEval, ARES and JHARS (read from beside the checkout, never copied), ROUGE-L as
    the judge: every estimate and validate figure equals the previous release's to 1e-12
    (40 labels, 100-450 rows: no fix applies at these sizes)."""
    from labelled_figures import LABELLED, figures

    if not LABELLED.is_dir():
        pytest.skip(f"the labelled sets are not beside this checkout ({LABELLED})")
    old = _load("labelled_figures.json")
    now = figures(tmp_path)
    for name, o in old.items():
        for k in ("judge_only", "labels_only", "corrected", "judge_bias"):
            a, b = read_interval(o["estimate"][k]), read_interval(now[name]["estimate"][k])
            assert all(_close(getattr(a, f), getattr(b, f))
                       for f in ("value", "low", "high", "se")), (name, k)
        for k, st in o["validate"].items():
            a, b = read_interval(st), read_interval(now[name]["validate"][k])
            assert _close(a.value, b.value) and _close(a.low, b.low) \
                and _close(a.high, b.high), (name, k)
