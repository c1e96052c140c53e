"""The zone of practical equivalence of a pairwise preference, and rank's "order not shown".

A near-random judge once printed "NEW is preferred: 0.50 [0.50, 0.50] over 8 pairs"
(order-averaged preference 0.500017, interval [0.500002, 0.500037]): five identical
answers counted as ties at 0.5 and a lean of a few 1e-5 on the other three. The
preference is now over the judged pairs, with the identical ones stated, and read
against 0.5 +/- the margin (default 0.05); the randomization interval below 100
judged pairs; the gate fails only beyond the margin and says when it could not fail.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from test_pairwise_edges import run_diff
from test_pairwise_ranking import NAMES, simulate

from localeval.errors import UsageError
from localeval.pairwise import (
    bradley_terry,
    check_margin,
    compare_pairwise,
    preferred_base_gate,
    rank_html,
    rank_lines,
    rank_versions,
    strength_margin,
)
from localeval.pairwise.equivalence import zone
from localeval.stats import Interval, bootstrap_ci
from localeval.testing import RandomJudge, ScriptedJudge, assert_not_preferred_base
from localeval.testing.scripted import ScriptedReply
from localeval.types import Sample

CTX = ["Kyoto was the capital of Japan from 794 to 1868."]
#: the lean of each changed answer's two orders (order 1: NEW shown as B; order 2: as A)
LEANS = {1: (4e-5, 4e-5), 3: (1e-5, 2e-5), 5: (8e-5, 8e-5)}


def leaning_versions(n: int, changed: set[int]) -> tuple[list[Sample], list[Sample]]:
    base = [Sample(id=f"q{i}", question=f"question {i}?", contexts=CTX, answer=f"answer {i}")
            for i in range(n)]
    new = [dataclasses.replace(s, answer=f"changed answer {i}") if i in changed else s
           for i, s in enumerate(base)]
    return base, new


def leaning_judge(leans: dict[int, tuple[float, float]]) -> ScriptedJudge:
    """Soft probabilities half and half, leaning towards NEW by ``leans[i]`` in each order."""
    def reply(request):
        a, b = request.inputs["answer_a"], request.inputs["answer_b"]
        new_is_a = a.startswith("changed")
        i = int((a if new_is_a else b).rsplit(" ", 1)[1])
        lean = leans[i][1 if new_is_a else 0]
        p_new = 0.5 + lean
        probs = ({"A": p_new, "B": 1 - p_new, "tie": 0.0} if new_is_a
                 else {"A": 1 - p_new, "B": p_new, "tie": 0.0})
        return ScriptedReply({"reason": "much the same", "verdict": "A" if new_is_a else "B"},
                             [probs])
    return ScriptedJudge({"pairwise_preference": reply})


# -- the case of the issue -------------------------------------------------------------------
def test_the_near_random_judge_of_five_identical_answers_is_no_preference():
    base, new = leaning_versions(8, set(LEANS))
    judge = leaning_judge(LEANS)
    r = compare_pairwise(base, new, judge=judge, judge_check=False)  # 9999 resamples, seed 0
    assert len(judge.calls("pairwise_preference")) == 2 * 3
    # the old rule, reproduced: every pair in, identical ones at 0.5, a bootstrap interval
    old = [p.soft() for p in r.pairs]
    low, high = bootstrap_ci(old, n_resamples=9999, seed=0)
    assert round(float(np.mean(old)), 6) == 0.500017
    assert (round(low, 6), round(high, 6)) == (0.500002, 0.500037)  # above 0.5: "preferred"
    # now: over the 3 judged pairs, too few for an interval: not shown, never a preference
    assert r.counts["identical"] == 5 and r.counts["tie"] == 0 and r.counts["win"] == 3
    assert r.rate.n == 3 and r.rate.value == pytest.approx(0.5 + 13.5e-5 / 3)
    assert r.rate.ci is None and r.verdict == "not shown"
    s = r.sentence()
    assert "preferred" not in s and s.startswith("preference not shown: 0.50 over 3 judged")
    assert s.endswith("; 5 identical answers not judged")
    d = r.to_dict()
    assert d["verdict"] == "not shown" and d["judged"] == 3 and d["identical_not_judged"] == 5
    gate = preferred_base_gate(r)
    assert gate["status"] == "could not fail" and "could not have failed" in gate["line"]


def test_the_same_judge_on_enough_changed_answers_says_no_practical_difference():
    changed = set(range(5, 20))  # 5 identical answers, 15 judged
    leans = {i: (k * 1e-5, (k + 1) * 1e-5) for k, i in enumerate(sorted(changed), 1)}
    base, new = leaning_versions(20, changed)
    r = compare_pairwise(base, new, judge=leaning_judge(leans), judge_check=False)
    assert r.rate.n == 15 and r.rate.method.startswith("exact randomization")
    # every judged pair leans to NEW: the interval lies above 0.5, and inside the margin
    assert 0.5 < r.rate.low < r.rate.high < 0.5 + 1e-3
    assert r.verdict == "no practical difference"
    assert r.sentence().startswith("no practical difference: 0.50 [0.50, 0.50] over 15 "
                                   "judged pairs")
    assert "the interval lies within 0.5 ± 0.05; 5 identical answers not judged" in r.sentence()
    assert preferred_base_gate(r)["status"] == "passed"
    # margin 0: the strict reading, where any lean shown is a preference
    strict = compare_pairwise(base, new, judge=leaning_judge(leans), judge_check=False,
                              margin=0)
    assert strict.verdict == "NEW preferred" and strict.rate.ci == r.rate.ci


def test_a_random_judge_shows_no_preference_and_at_size_no_practical_difference():
    def versions(n):
        base = [Sample(id=f"q{i}", question=f"question {i}?", contexts=CTX,
                       answer=f"base {i}") for i in range(n)]
        return base, [dataclasses.replace(s, answer=f"new answer {i}")
                      for i, s in enumerate(base)]

    few = compare_pairwise(*versions(40), judge=RandomJudge(0), judge_check=False)
    assert few.mode == "soft" and few.verdict == "not shown"
    assert few.rate.low < 0.5 - 0.05 or few.rate.high > 0.5 + 0.05
    many = compare_pairwise(*versions(600), judge=RandomJudge(0), judge_check=False)
    assert many.rate.method == "percentile bootstrap over pairs"
    assert 0.45 <= many.rate.low < many.rate.high <= 0.55
    assert many.verdict == "no practical difference"
    assert many.sentence().startswith("no practical difference: 0.50 [0.48, 0.53] over 600")


# -- the margin ------------------------------------------------------------------------------
@pytest.mark.parametrize("low, high, said", [
    (0.56, 0.70, "NEW preferred"), (0.55, 0.70, "not shown"), (0.30, 0.449, "BASE preferred"),
    (0.45, 0.55, "no practical difference"), (0.47, 0.551, "not shown"),
    (0.40, 0.60, "not shown")])
def test_the_zone_of_a_preference(low, high, said):
    assert zone(Interval((low + high) / 2, low, high, 10), 0.05) == said


def test_no_interval_and_no_value():
    assert zone(Interval(0.9, None, None, 3, reason="few"), 0.05) == "not shown"
    assert zone(Interval(None, None, None, 0, reason="none"), 0.05) == "no estimate"


@pytest.mark.parametrize("bad", [0.5, -0.01, float("nan"), float("inf"), "x", True, None])
def test_a_margin_outside_0_to_half_is_a_usage_error_before_any_work(bad):
    with pytest.raises(UsageError, match="margin must be a number from 0 to below 0.5"):
        check_margin(bad)
    judge = ScriptedJudge({})  # asked nothing: the margin fails first
    with pytest.raises(UsageError):
        compare_pairwise(*leaning_versions(3, {1}), judge=judge, margin=bad)
    with pytest.raises(UsageError):
        rank_versions([*leaning_versions(3, {1})], judge=judge, margin=bad)
    assert judge.requests == []


def test_strength_margin_is_the_log_odds_of_the_preference_margin():
    assert strength_margin(0.05) == pytest.approx(math.log(0.55 / 0.45))
    assert 1 / (1 + math.exp(-strength_margin(0.1))) == pytest.approx(0.6)
    assert strength_margin(0.0) == 0.0


# -- the gate -----------------------------------------------------------------------------
def truthful(request):
    a, b = request.inputs["answer_a"], request.inputs["answer_b"]
    return {"reason": "r", "verdict": "A" if "good" in a or "bad" in b else "B"}


def graded_versions(n: int, good: int) -> tuple[list[Sample], list[Sample]]:
    base = [Sample(id=f"q{i}", question=f"question {i}?", contexts=CTX, answer=f"base {i}")
            for i in range(n)]
    new = [dataclasses.replace(s, answer=f"{'good' if i < good else 'bad'} new {i}")
           for i, s in enumerate(base)]
    return base, new


def test_the_gate_fails_only_beyond_the_margin_and_the_twin_agrees():
    # 4 BASE-preferred pairs of 10 (hard): 0.40 [..] reaches above 0.45: not shown, passes
    base, new = graded_versions(10, 6)
    judge = ScriptedJudge({"pairwise_preference": truthful})
    r = assert_not_preferred_base(base, new, judge=judge, judge_check=False, verdicts="hard",
                                  n_resamples=999)
    assert r.verdict == "not shown" and preferred_base_gate(r)["status"] == "passed"
    # all 8 BASE-preferred: below 0.45, fails; the same words from the twin
    base, new = graded_versions(8, 0)
    with pytest.raises(AssertionError, match=r"lies entirely below 0\.45 \(0\.5 - margin "
                       r"0\.05; 8 judged pairs, hard verdicts\)"):
        assert_not_preferred_base(base, new, judge=judge, judge_check=False, verdicts="hard",
                                  n_resamples=999)
    # 7 identical answers and one BASE-preferred pair: could not fail; says so
    base, new = graded_versions(8, 0)
    new = [*base[:7], new[7]]
    r = assert_not_preferred_base(base, new, judge=judge, judge_check=False, n_resamples=999)
    gate = preferred_base_gate(r)
    assert gate["status"] == "could not fail" and "1 pair with verdict probabilities" in (
        gate["line"])
    with pytest.raises(AssertionError, match="could not have failed at this size"):
        assert_not_preferred_base(base, new, judge=judge, judge_check=False, n_resamples=999,
                                  fail_if_underpowered=True)
    # nothing changed: nothing to judge, and BASE cannot be preferred
    r = assert_not_preferred_base(base, list(base), judge=judge, judge_check=False)
    assert preferred_base_gate(r)["status"] == "nothing to judge"


def test_diff_pairwise_margin_and_the_gate_on_the_command_line(tmp_path, capsys):
    judge = ScriptedJudge({"pairwise_preference": truthful})
    # 3 pairs: the gate could not have failed: exit 0, the line says so, diff.json holds it
    assert run_diff(tmp_path, judge, "--pairwise", "--no-judge-check",
                    "--fail-if-preferred-base", new_better=set(), pairs=3) == 0
    out = capsys.readouterr().out
    assert "gate could not fail: pairwise: the gate could not have failed at this size" in out
    pw = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert pw["gate"]["status"] == "could not fail" and pw["margin"] == 0.05
    assert "one-sided, at the 2.5% level" in pw["gate"]["rule"]
    # the level and sidedness it uses, stated in the JSON and at the end of its line
    assert (pw["gate"]["level"], pw["gate"]["sided"]) == (0.025, "one-sided")
    assert pw["gate"]["line"].endswith("[gate: one-sided, 2.5%: the 95% interval lies below "
                                       "0.45; one gate: no correction]")
    md = (tmp_path / "out" / "diff.md").read_text(encoding="utf-8")
    assert "gate could not fail: pairwise: the gate could not have failed" in md
    # 6 of 12 NEW-preferred (hard): 0.50 [0.17, 0.83]: not shown at the default margin,
    # within 0.5 +/- 0.34
    assert run_diff(tmp_path, judge, "--pairwise", "--no-judge-check", "--verdicts", "hard",
                    "--overwrite", new_better=set(range(6)), pairs=12) == 0
    pw = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert pw["verdict"] == "not shown"
    assert run_diff(tmp_path, judge, "--pairwise", "--no-judge-check", "--verdicts", "hard",
                    "--pairwise-margin", "0.34", "--overwrite", new_better=set(range(6)),
                    pairs=12) == 0
    pw = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert pw["margin"] == 0.34 and pw["verdict"] == "no practical difference"
    assert "no practical difference: 0.50 [" in capsys.readouterr().out
    for extra, words in ((("--pairwise", "--pairwise-margin", "0.5"), "--pairwise-margin must"),
                         (("--pairwise-margin", "0.1"), "add --pairwise")):
        assert run_diff(tmp_path, judge, *extra) == 2
        assert words in capsys.readouterr().err


# -- rank: order not shown -------------------------------------------------------------------
def test_a_difference_above_0_but_inside_the_margin_is_order_not_shown():
    table = simulate([0.2, 0.0, -2.0], 1500, np.random.default_rng(0))
    r = bradley_terry(NAMES, table, n_resamples=300)
    a_b = r.gaps[0]
    assert (a_b.upper, a_b.lower) == ("a", "b")
    assert 0 < a_b.difference.low < strength_margin(0.05)  # shown above 0, not above 0.20
    assert a_b.verdict == "order not shown" and not a_b.apart
    assert a_b.sentence().startswith("a and b cannot be told apart (order not shown): strength "
                                     "difference +")
    assert a_b.sentence().endswith("does not clear the margin ±0.20")
    assert r.groups() == [["a", "b"], ["c"]] and r.ranks() == {"a": 1, "b": 1, "c": 3}
    assert r.sentence().startswith("ranking by Bradley-Terry strength over 1500 questions: "
                                   "a, b (order not shown) > c; order not shown:")
    strict = bradley_terry(NAMES, table, n_resamples=300, margin=0)
    assert strict.gaps[0].verdict == "ahead" and strict.sentence().endswith(": a > b > c")
    doc = r.to_dict()
    assert doc["margin"] == {"preference": 0.05, "strength": pytest.approx(0.2007, abs=1e-4)}
    assert doc["gaps"][0]["verdict"] == "order not shown" and doc["gaps"][0]["apart"] is False
    json.dumps(doc, allow_nan=False)


def test_equal_strengths_at_size_are_no_practical_difference():
    table = simulate([0.05, 0.0, -2.0], 3000, np.random.default_rng(0))
    r = bradley_terry(NAMES, table, n_resamples=300)
    assert r.gaps[0].verdict == "no practical difference"
    assert -0.2 < r.gaps[0].difference.low < r.gaps[0].difference.high < 0.2
    assert "cannot be told apart (order not shown): no practical difference:" in (
        r.gaps[0].sentence())
    assert r.gaps[1].verdict == "ahead"


def bt_judge(request):
    strength = {"v1": -1.0, "v2": 0.5, "v3": 0.5}
    a, b = request.inputs["answer_a"][1:3], request.inputs["answer_b"][1:3]
    pa = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    return ScriptedReply({"reason": "r", "verdict": "A" if pa > 0.5 else "B"},
                         [{"A": pa, "B": 1 - pa, "tie": 0.0}])


def rank_samples(n: int = 10) -> list[list[Sample]]:
    return [[Sample(id=f"q{i}", question=f"question {i}?", contexts=["ctx"],
                    answer=f"[{name}] answer {i}") for i in range(n)]
            for name in ("v1", "v2", "v3")]


def test_rank_says_order_not_shown_in_the_terminal_json_and_page():
    r = rank_versions(rank_samples(), judge=ScriptedJudge({"pairwise_preference": bt_judge}),
                      n_resamples=999, judge_check=False)
    lines = rank_lines(r)
    assert any("v2, v3 (order not shown) > v1" in x for x in lines)
    assert any("v2 and v3 cannot be told apart (order not shown): no practical difference"
               in x for x in lines)
    assert any(x.strip().startswith("v3 is ahead of v1: strength difference +1.50") for x in lines)
    doc = r.to_dict()
    assert [g["verdict"] for g in doc["ranking"]["gaps"]] == ["no practical difference", "ahead"]
    # every two versions' preference carries the margin's verdict
    pairs = {(p["base"], p["new"]): p for p in doc["pairs"]}
    assert pairs[("v2", "v3")]["verdict"] == "no practical difference"
    assert pairs[("v1", "v2")]["verdict"] == "NEW preferred"
    html = rank_html(r)
    assert "Versions sharing a rank: the order between them is not shown" in html
    assert "no practical difference" in html and "NEW preferred" in html


def test_rank_margin_on_the_command_line(tmp_path, capsys):
    from localeval.cli.app import main
    from localeval.judge import register_judge_backend, unregister_judge_backend

    paths = []
    for rows, name in zip(rank_samples(), ("v1", "v2", "v3")):
        p = tmp_path / f"{name}.jsonl"
        p.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in rows), encoding="utf-8")
        paths.append(str(p))
    judge = ScriptedJudge({"pairwise_preference": bt_judge})
    register_judge_backend("rank-margin", lambda spec: spec == "scripted-margin",
                           lambda spec, **kw: judge)
    try:
        # a margin of 0.4 (strength 1.70) swallows the difference of 1.50: one group
        code = main(["rank", *paths, "--judge", "scripted-margin", "--no-judge-check",
                     "--no-cache", "--resamples", "999", "--margin", "0.4",
                     "-o", str(tmp_path / "out")])
        out = capsys.readouterr().out
        assert code == 0 and "v2, v3, v1 (order not shown)" in out
        doc = json.loads((tmp_path / "out" / "rank.json").read_text(encoding="utf-8"))
        assert doc["ranking"]["margin"]["preference"] == 0.4
        code = main(["rank", *paths, "--judge", "scripted-margin", "--margin", "nope",
                     "-o", str(tmp_path / "out2")])
        assert code == 2 and "--margin must be a number" in capsys.readouterr().err
    finally:
        unregister_judge_backend("rank-margin")
