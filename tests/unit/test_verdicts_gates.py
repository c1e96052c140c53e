"""The diff's gates: one-sided at the level they state, knowing when they could not fail.

The trial of a new user (hit rate 0.9 -> 0.4 on 10 questions: 0 better, 5 worse,
5 the same) fails the one-sided gate (p = 1/32), says what a family of gates
does (Holm), and never reads "no difference". Seeded simulations at n = 2 to
200, for 0/1 and graded scores, keep each gate's false alarms at 5% or below
(within Monte-Carlo error) where there is no difference.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from verdicts_sim import gate_rates

from localeval.cli.app import main
from localeval.testing import assert_non_inferior, assert_not_worse

SIZES = (2, 3, 5, 10, 20, 50, 200)
TRIALS = 300


def _tolerance(trials: int, rate: float = 0.05) -> float:
    return 3 * math.sqrt(rate * (1 - rate) / trials)


def _runs(tmp: Path, base: dict[str, list[float]], new: dict[str, list[float]]
          ) -> tuple[Path, Path]:
    out = []
    for name, cols in (("v1", base), ("v2", new)):
        d = tmp / name
        d.mkdir()
        n = len(next(iter(cols.values())))
        d.joinpath("results.jsonl").write_text("".join(
            json.dumps({"id": f"q{i}", "question": f"Question {i}?",
                        "scores": {k: v[i] for k, v in cols.items()}}) + "\n"
            for i in range(n)))
        out.append(d)
    return out[0], out[1]


#: hit_rate@3 0.9 -> 0.4 and ndcg@10 0.713 -> 0.313 on 10 questions (five pairs worse each)
TRIAL_BASE = {"hit_rate@3": [1.0] * 9 + [0.0],
              "ndcg@10": [1.0, 0.63, 1.0, 0.5, 1.0, 0.63, 1.0, 0.5, 0.87, 0.0]}
TRIAL_NEW = {"hit_rate@3": [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
             "ndcg@10": [1.0, 0.63, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}


@pytest.fixture
def trial(tmp_path):
    return _runs(tmp_path, TRIAL_BASE, TRIAL_NEW)


def test_the_trial_fails_the_one_sided_gate(trial, tmp_path, capsys):
    base, new = trial
    out = tmp_path / "d"
    code = main(["diff", str(base), str(new), "-o", str(out), "--fail-if-worse", "hit_rate@3"])
    cap = capsys.readouterr()
    assert code == 1
    line = next(ln for ln in cap.err.splitlines() if "gate failed" in ln)
    assert "hit_rate@3: new is worse by 0.500" in line
    assert "one-sided p = 0.031 < 0.05" in line and "one gate: no correction" in line
    assert "exact McNemar" in line
    for text in (cap.out, *(out.joinpath(f).read_text() for f in ("diff.md", "diff.html",
                                                                 "diff.json"))):
        assert "no difference" not in text
    js = json.loads(out.joinpath("diff.json").read_text())
    (gate,) = js["gates"]
    assert gate["metric"] == "hit_rate@3" and gate["sided"] == "one-sided"
    assert gate["p"] == pytest.approx(1 / 32) and gate["passed"] is False
    assert gate["could_fail"] is True and gate["correction"] == "one gate: no correction"
    hit = js["metrics"][0]["estimates"][0]
    assert hit["verdict"] == "not shown" and hit["p"] == pytest.approx(0.0625)
    assert hit["power"]["detectable"] is None and hit["power"]["changed_pairs"] == 5
    assert hit["power"]["questions_for_observed"] == 15
    assert ("at least 6 changed pairs, all worse, are needed (it has 5)" in hit["sentence"])


def test_a_family_of_gates_is_holm_corrected_and_says_so(trial, tmp_path, capsys):
    base, new = trial
    code = main(["diff", str(base), str(new), "-o", str(tmp_path / "d"),
                 "--fail-if-worse", "hit_rate@3,ndcg@10"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "gate " in ln]
    assert len(lines) == 2 and all("Holm over 2 gated metrics" in ln for ln in lines)
    # both one-sided p = 1/32; Holm over two: 1/16, not below 5%: passed, and said
    assert code == 0 and all(ln.startswith("localeval: gate passed:") for ln in lines)
    assert all("one-sided p = 0.031, Holm 0.062" in ln for ln in lines)


def test_a_gate_that_could_not_fail_says_so_and_can_be_made_to_fail(tmp_path, capsys):
    # four hits lost of ten: even four of four lost is p = 1/16 one-sided
    base, new = _runs(tmp_path, {"hit_rate@3": [1.0] * 10},
                      {"hit_rate@3": [0.0] * 4 + [1.0] * 6})
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "a"),
                 "--fail-if-worse", "hit_rate@3"]) == 0
    err = capsys.readouterr().err
    assert "gate passed: hit_rate@3: not shown worse" in err
    assert ("this gate could not have failed at this size: even with every changed pair worse "
            "its one-sided p would be 0.062, not below 0.05 (with 5 or more changed pairs, "
            "all worse, it could; it has 4)") in err
    js = json.loads((tmp_path / "a" / "diff.json").read_text())
    assert js["gates"][0]["underpowered"] is True and js["gates"][0]["could_fail"] is False
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "b"),
                 "--fail-if-worse", "hit_rate@3", "--fail-if-underpowered"]) == 1
    assert "gate failed: hit_rate@3: not shown worse" in capsys.readouterr().err
    with pytest.raises(AssertionError, match="could not have failed"):
        assert_not_worse(base, new, {"hit_rate@3": 0.0}, fail_if_underpowered=True)
    assert_not_worse(base, new, {"hit_rate@3": 0.0})


def test_non_inferiority_passes_only_on_evidence(tmp_path, capsys):
    # 200 questions, 2 hits lost and 2 gained: shown to lose less than 0.05
    b = [1.0] * 150 + [0.0] * 50
    w = [0.0, 0.0] + [1.0] * 148 + [1.0, 1.0] + [0.0] * 48
    base, new = _runs(tmp_path, {"hit_rate@3": b}, {"hit_rate@3": w})
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "a"),
                 "--require-not-worse", "hit_rate@3=0.05"]) == 0
    err = capsys.readouterr().err
    assert "gate passed: hit_rate@3: shown to lose less than the margin 0.05" in err
    assert "no correction: every required metric must be shown" in err
    assert_non_inferior(base, new, {"hit_rate@3": 0.05})
    # the same change on 10 questions shows nothing: the gate fails, and says it could not pass
    small_b, small_w = [1.0] * 8 + [0.0] * 2, [0.0] + [1.0] * 7 + [1.0, 0.0]
    (tmp_path / "s").mkdir()
    sb, sn = _runs(tmp_path / "s", {"hit_rate@3": small_b}, {"hit_rate@3": small_w})
    assert main(["diff", str(sb), str(sn), "-o", str(tmp_path / "b"),
                 "--require-not-worse", "hit_rate@3=0.05"]) == 1
    err = capsys.readouterr().err
    assert "gate failed: hit_rate@3: not shown to lose less than the margin 0.05" in err
    with pytest.raises(AssertionError, match="not shown to lose less"):
        assert_non_inferior(sb, sn, {"hit_rate@3": 0.05})
    assert main(["diff", str(sb), str(sn), "--require-not-worse", "hit_rate@3=x"]) == 2


@pytest.mark.parametrize("kind", ["binary", "graded"])
@pytest.mark.parametrize("n", [pytest.param(n, marks=pytest.mark.slow) if n == 20 else n
                               for n in SIZES])
def test_no_difference_rarely_fails_the_gate(n, kind):
    """No true difference: --fail-if-worse fails at most 5% of the time (3 standard
    errors of Monte-Carlo tolerance), at every size, 0/1 and graded."""
    trials = 100 if (n == 20 and kind == "graded") else TRIALS
    r = gate_rates(n, kind, 0.0, trials, seed=n * 7 + len(kind))
    assert r["fail_if_worse"] <= 0.05 + _tolerance(trials), r


@pytest.mark.parametrize("kind,margin", [("binary", 0.1), ("graded", 0.1)])
@pytest.mark.parametrize("n", (10, 50, 200))
def test_a_loss_at_the_margin_rarely_passes_non_inferiority(n, kind, margin):
    """True loss equal to the margin: --require-not-worse passes at most 5% of the time."""
    r = gate_rates(n, kind, margin, TRIALS, seed=n + 11, margin=margin)
    assert r["require_not_worse_passed"] <= 0.05 + _tolerance(TRIALS), r


def test_small_sizes_say_the_gate_could_not_fail():
    """Below five changed pairs the one-sided gate cannot fail: every trial says so."""
    for n in (2, 3):
        for kind in ("binary", "graded"):
            assert gate_rates(n, kind, 0.0, 50, seed=3)["could_not_fail"] == 1.0
    assert gate_rates(200, "binary", 0.0, 20, seed=3)["could_not_fail"] == 0.0
