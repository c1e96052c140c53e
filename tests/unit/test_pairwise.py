"""Pairwise judging (localeval.pairwise): both orders, inconsistent pairs counted, the
order-averaged preference's coverage, the judge's position and length bias, small-n edges,
the tiny GGUF's grammar and logit path, and ``localeval diff --pairwise``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from localeval.errors import DataError
from localeval.pairwise import PairJudgement, PairwiseVerdict, compare_pairwise, summarise
from localeval.testing import ScriptedJudge
from localeval.testing.scripted import ScriptedReply
from localeval.types import Sample

CTX = ["Kyoto was the capital of Japan from 794 to 1868."]


def versions(n: int, *, new_better: set[int] | None = None) -> tuple[list[Sample], list[Sample]]:
    """n base/new samples; the new answer is 'good' where i is in new_better, else 'bad'."""
    better = set(range(n)) if new_better is None else new_better
    base = [Sample(id=f"q{i}", question=f"question {i}?", contexts=CTX, answer=f"base {i}")
            for i in range(n)]
    new = [Sample(id=f"q{i}", question=f"question {i}?", contexts=CTX,
                  answer=f"{'good' if i in better else 'bad'} new answer {i}") for i in range(n)]
    return base, new


def unchecked(base, new, **kw):
    """``compare_pairwise`` without the pairwise judge check, so scripts count only the pairs."""
    return compare_pairwise(base, new, judge_check=False, **kw)


def truthful(request):
    """Prefers the answer containing 'good', else the base one; never looks at the letters."""
    a, b = request.inputs["answer_a"], request.inputs["answer_b"]
    good_a = "good" in a or ("bad" in b)
    return {"reason": "compared", "verdict": "A" if good_a else "B"}


def test_both_orders_asked_and_a_truthful_judge_is_consistent():
    base, new = versions(8, new_better={0, 1, 2, 3, 4, 5})
    judge = ScriptedJudge({"pairwise_preference": truthful})
    r = unchecked(base, new, judge=judge, verdicts="hard", n_resamples=999)
    calls = judge.calls("pairwise_preference")
    assert len(calls) == 16
    # order 1 shows base as A, order 2 new as A; the sample block holds no answer
    assert calls[0].inputs["answer_a"] == "base 0" and calls[1].inputs["answer_b"] == "base 0"
    assert "base 0" not in calls[0].messages[1]["content"].split("# Task")[0]
    assert r.counts["win"] == 6 and r.counts["loss"] == 2 and r.counts["inconsistent"] == 0
    assert r.hard.value == pytest.approx(0.75) and r.position_bias == 0
    assert [p.base_id for p in r.preferred_base()] == ["q6", "q7"]


def test_always_a_is_inconsistent_never_a_win():
    base, new = versions(6)
    judge = ScriptedJudge({"pairwise_preference": {"reason": "first is best", "verdict": "A"}})
    r = unchecked(base, new, judge=judge, verdicts="hard", n_resamples=999)
    assert r.counts["inconsistent"] == 6 and r.counts["win"] == r.counts["loss"] == 0
    assert r.position_bias == 1.0
    assert r.hard.value is None and "no consistent pairs" in (r.hard.reason or "")
    assert "no preference can be given" in r.sentence()
    assert any("every judged pair was inconsistent" in n for n in r.notes)
    assert any("followed the position in 100%" in n for n in r.bias_notes())
    json.dumps(r.to_dict(), allow_nan=False)  # NaN-free


def test_soft_verdicts_average_the_two_orders():
    """P(A) pulled up by 0.2 in both orders cancels: the pair's preference is its true 0.7.
    (Six pairs: the fewest with a 95% randomization interval.)"""
    def biased(request):
        new_is_a = request.inputs["answer_a"].startswith("good")
        p_new = 0.7 + (0.2 if new_is_a else -0.2)
        pa = p_new if new_is_a else 1 - p_new
        return ScriptedReply({"reason": "r", "verdict": "A" if pa >= 0.5 else "B"},
                             [{"A": pa, "B": 1 - pa, "tie": 0.0}])
    base, new = versions(6)
    r = unchecked(base, new, judge=ScriptedJudge({"pairwise_preference": biased}),
                         verdicts="soft", n_resamples=999)
    assert r.mode == "soft" and r.soft.value == pytest.approx(0.7)
    assert r.soft.low == pytest.approx(0.7) and r.soft.high == pytest.approx(0.7)
    one_order = [p.soft(orders=(1,)) for p in r.pairs]  # base as A only
    assert one_order == pytest.approx([0.5] * 6)  # 0.2 below the truth


def test_all_ties_one_pair_and_no_common_samples():
    base, new = versions(6)
    tie = ScriptedJudge({"pairwise_preference": {"reason": "same", "verdict": "tie"}})
    r = unchecked(base, new, judge=tie, verdicts="hard", n_resamples=999)
    assert r.counts["tie"] == 6 and r.hard.value == 0.5 and r.hard.ci == (0.5, 0.5)
    assert r.sentence().startswith("no practical difference: 0.50 [0.50, 0.50]")
    one = unchecked(base[:1], new[:1], judge=ScriptedJudge(
        {"pairwise_preference": truthful}), verdicts="hard", n_resamples=999)
    assert one.hard.value == 1.0 and one.hard.ci is None
    assert "no 95% interval from 1 consistent pair" in one.hard.reason
    json.dumps(one.to_dict(), allow_nan=False)
    other = [Sample(id=f"x{i}", question=f"other {i}?", answer="a") for i in range(3)]
    with pytest.raises(DataError, match="no question of"):
        unchecked(base, other, judge=tie)


def test_failed_call_is_unjudged_not_a_loss():
    from localeval.errors import JudgeCallError

    base, new = versions(3)
    script = [{"reason": "r", "verdict": "B"}, {"reason": "r", "verdict": "A"},
              JudgeCallError("truncated"), {"reason": "r", "verdict": "A"},
              {"reason": "r", "verdict": "B"}, {"reason": "r", "verdict": "A"}]
    r = unchecked(base, new, judge=ScriptedJudge({"pairwise_preference": script}),
                         verdicts="hard", n_resamples=999)
    assert r.counts == {"win": 2, "loss": 0, "tie": 0, "inconsistent": 0, "unjudged": 1,
                        "position_following": 0, "identical": 0}
    assert "truncated" in r.pairs[1].error and any("unjudged" in n for n in r.notes)


# -- the simulation -----------------------------------------------------------------------
RHO, BIAS, TIE, N_PAIRS, SETS = 0.3, 0.3, 0.1, 150, 500
# Unbiased pairs: q ~ U(0.25, 0.95), shift 0.05; position-driven pairs (RHO of them):
# q ~ U(0.35, 0.70), shift BIAS. An order's P(A) = (1 - TIE) * (q ± shift) for the
# answer shown first, so the unbiased judge's expected preference (the truth) is
TRUE_Q = (1 - RHO) * 0.60 + RHO * 0.525
TRUTH = (1 - TIE) * TRUE_Q + TIE / 2
# and the verdict follows the position when |q - 0.5| < shift: every driven pair and
# 0.1/0.7 of the others
TRUE_POSITION = RHO + (1 - RHO) * 0.1 / 0.7


def simulated_set(rng: np.random.Generator) -> tuple[list[PairJudgement], int]:
    driven = rng.random(N_PAIRS) < RHO
    q = np.where(driven, rng.uniform(0.35, 0.70, N_PAIRS), rng.uniform(0.25, 0.95, N_PAIRS))
    shift = np.where(driven, BIAS, 0.05)
    pairs = []
    for i in range(N_PAIRS):
        p1_new = (1 - TIE) * (q[i] - shift[i])  # order 1: new is B, A is pulled up
        p2_new = (1 - TIE) * (q[i] + shift[i])  # order 2: new is A
        probs1 = {"A": 1 - TIE - p1_new, "B": p1_new, "tie": TIE}
        probs2 = {"A": p2_new, "B": 1 - TIE - p2_new, "tie": TIE}
        pairs.append(PairJudgement(f"s{i}", f"s{i}", max(probs1, key=probs1.__getitem__),
                                   max(probs2, key=probs2.__getitem__), probs1, probs2,
                                   100, 100))
    return pairs, int(np.sum(np.abs(q - 0.5) < shift))


def test_simulation_coverage_position_bias_and_one_order_bias():
    """500 seeded sets of 150 pairs through the package's own arithmetic (``summarise``)."""
    rng = np.random.default_rng(20240)
    covered, one_covered, positions, one_order = 0, 0, [], []
    for k in range(SETS):
        pairs, following = simulated_set(rng)
        r = summarise(pairs, n_resamples=1000, seed=k)
        assert r.mode == "soft"
        covered += r.soft.contains(TRUTH)
        assert r.counts["position_following"] == following  # counted, not estimated
        positions.append(r.position_bias)
        first = [p.soft(orders=(1,)) for p in pairs]
        one = summarise([PairJudgement(p.base_id, p.new_id, p.first, p.first, p.first_probs,
                                       p.first_probs) for p in pairs], n_resamples=1000, seed=k)
        one_order.append(float(np.mean(first)))
        one_covered += one.soft.contains(TRUTH)
    coverage = covered / SETS
    print(f"coverage {coverage:.3f}; position bias {np.mean(positions):.3f} "
          f"(simulated {TRUE_POSITION:.3f}); one-order {np.mean(one_order):.3f} vs truth "
          f"{TRUTH:.3f}, covered {one_covered / SETS:.3f}")
    assert 0.93 <= coverage <= 0.97
    assert abs(float(np.mean(positions)) - TRUE_POSITION) < 0.05
    assert all(abs(p - TRUE_POSITION) < 0.15 for p in positions)
    # one order (base always shown as A): every pair's shift counts against NEW, a bias of
    # -(1 - TIE) * E[shift] = -0.9 * (0.3 * 0.3 + 0.7 * 0.05) = -0.1125
    assert float(np.mean(one_order)) - TRUTH == pytest.approx(-0.1125, abs=0.01)
    assert one_covered / SETS < 0.01


# -- length bias --------------------------------------------------------------------------
def test_length_bias_counts_consistent_and_inconsistent_pairs():
    longer_new = [PairJudgement(f"w{i}", f"w{i}", "B", "A", base_chars=10, new_chars=50)
                  for i in range(12)]  # consistent wins of the longer NEW answer
    mixed = [PairJudgement("m", "m", "A", "A", base_chars=10, new_chars=50)]  # base, then new
    r = summarise(longer_new + mixed, n_resamples=999)
    assert r.longer_wins == (1.0, 12) and r.longer_wins_inconsistent == (0.5, 2)
    assert any("longer answer won 100% of 12" in n for n in r.bias_notes())


# -- the tiny GGUF: grammar and logits ----------------------------------------------------
def test_grammar_and_logit_path_with_the_tiny_gguf(tiny_gguf, bias):
    from localeval.judge import LlamaJudge
    from localeval.metrics import Judging
    from localeval.pairwise.step import ask_order

    judge = LlamaJudge(tiny_gguf, n_threads=1, logit_bias=bias)
    try:
        door = Judging(judge, copy_check=False, verdicts="soft")
        base, new = versions(1)
        reply = ask_order(door, base[0].question, None, base[0], new[0], criterion=None)
    finally:
        judge.close()
    assert reply.error == "" and reply.verdict in ("A", "B", "tie")
    PairwiseVerdict.model_validate({"reason": reply.reason, "verdict": reply.verdict})
    assert reply.probs is not None and set(reply.probs) == {"A", "B", "tie"}
    assert sum(reply.probs.values()) == pytest.approx(1.0, abs=1e-6)


# -- the command line ---------------------------------------------------------------------
def test_diff_pairwise_on_the_command_line(tmp_path, capsys):
    from localeval.cli.app import main
    from localeval.judge import register_judge_backend, unregister_judge_backend

    base, new = versions(6, new_better={0, 1, 2, 3})
    for name, rows in (("base", base), ("new", new)):
        with open(tmp_path / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for s in rows:
                f.write(json.dumps({**s.to_dict(), "bleu": 0.5}) + "\n")
    judge = ScriptedJudge({"pairwise_preference": truthful})
    register_judge_backend("pairwise-test", lambda spec: spec == "scripted-pairwise",
                           lambda spec, **kw: judge)
    try:
        code = main(["diff", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"),
                     "--pairwise", "--judge", "scripted-pairwise", "--verdicts", "hard",
                     "--no-judge-check",
                     "--resamples", "999", "-o", str(tmp_path / "out")])
    finally:
        unregister_judge_backend("pairwise-test")
    out = capsys.readouterr().out
    assert code == 0
    assert "pairwise (hard verdicts, both orders): 4 NEW better / 2 BASE better" in out
    assert "BASE preferred on 2 pairs: q4, q5" in out
    doc = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))
    pw = doc["pairwise"]
    assert pw["counts"]["win"] == 4 and pw["preferred_base"] == ["q4", "q5"]
    assert pw["preference_new"]["value"] == pytest.approx(4 / 6)
    # six judged pairs: the exact randomization interval (the bootstrap from 100 pairs)
    assert pw["preference_new"]["method"].startswith("exact randomization (sign-flip) test")
    assert pw["verdict"] == "not shown" and pw["margin"] == 0.05
