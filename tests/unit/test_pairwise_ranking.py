"""Ranking three or more versions (localeval.pairwise.ranking and .rank): Bradley-Terry
strengths against an independent scipy maximum-likelihood fit, the ranking of simulated
versions with known strengths, the bootstrap intervals' coverage over simulated sets, equal
versions said not to be told apart, separation, and ``localeval rank``."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import minimize

from localeval.errors import DataError, UsageError
from localeval.pairwise import (
    bradley_terry,
    fit_strengths,
    rank_lines,
    rank_versions,
    win_table,
)
from localeval.testing import ScriptedJudge
from localeval.testing.scripted import ScriptedReply
from localeval.types import Sample

NAMES = ["a", "b", "c"]


def simulate(strengths: list[float], questions: int, rng: np.random.Generator) -> np.ndarray:
    """Hard outcomes from the Bradley-Terry model: every two versions once per question."""
    s = np.asarray(strengths)
    outcomes = []
    for q in range(questions):
        for i, j in combinations(range(len(s)), 2):
            p = 1.0 / (1.0 + np.exp(-(s[i] - s[j])))
            outcomes.append((q, i, j, float(rng.random() < p)))
    return win_table(questions, len(s), outcomes)


def reference_mle(wins: np.ndarray) -> np.ndarray:
    """The plain maximum-likelihood fit, written apart from the package: scipy's BFGS on
    the negative log-likelihood, the last strength set so that they sum to 0."""
    k = wins.shape[0]

    def nll(x: np.ndarray) -> float:
        s = np.append(x, -x.sum())
        nll = 0.0
        for i in range(k):
            for j in range(k):
                if i != j and wins[i, j]:
                    nll -= wins[i, j] * np.log(1.0 / (1.0 + np.exp(s[j] - s[i])))
        return nll

    fit = minimize(nll, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-11})
    return np.append(fit.x, -fit.x.sum())


# -- the fit ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["hard", "ties and fractions", "four versions"])
def test_strengths_agree_with_a_scipy_maximum_likelihood_fit(case):
    rng = np.random.default_rng(7)
    if case == "hard":
        table = simulate([0.8, 0.0, -0.8], 80, rng)
    elif case == "four versions":
        table = simulate([1.2, 0.4, 0.0, -1.6], 50, rng)
    else:  # ties (a half each way) and soft verdicts' fractional wins
        outcomes = [(q, i, j, float(rng.choice([0.0, 0.5, 1.0, rng.random()])))
                    for q in range(40) for i, j in combinations(range(3), 2)]
        table = win_table(40, 3, outcomes)
    total = table.sum(axis=0)
    ours = fit_strengths(total)
    ref = reference_mle(total)
    assert np.abs(ours - ref).max() < 1e-6
    assert abs(ours.sum()) < 1e-9
    r = bradley_terry([f"v{i}" for i in range(len(ours))], table, n_resamples=200)
    assert [r.strengths[f"v{i}"].value for i in range(len(ours))] == pytest.approx(ref, abs=1e-6)


def test_batched_fit_equals_one_at_a_time():
    rng = np.random.default_rng(3)
    stack = np.stack([simulate([0.5, 0.0, -0.5], 20, rng).sum(axis=0) for _ in range(5)])
    together = fit_strengths(stack)
    for w, s in zip(stack, together):
        assert np.abs(fit_strengths(w) - s).max() < 1e-12


def test_known_strengths_are_ranked_right():
    rng = np.random.default_rng(11)
    table = simulate([0.2, 1.0, -0.9], 150, rng)  # b > a > c
    r = bradley_terry(NAMES, table, n_resamples=999, seed=1)
    assert r.order == ["b", "a", "c"]
    assert r.groups() == [["b"], ["a"], ["c"]] and all(g.apart for g in r.gaps)
    assert r.ranks() == {"b": 1, "a": 2, "c": 3}
    assert r.sentence() == "ranking by Bradley-Terry strength over 150 questions: b > a > c"
    assert r.gaps[0].sentence().startswith("b is ahead of a: strength difference +")
    for name, truth in zip(NAMES, [0.2, 1.0, -0.9]):
        est = r.strengths[name]
        assert est.n == 150 and est.method == "percentile bootstrap over questions"
        assert abs(est.value - (truth - 0.1)) < 0.3  # the truth is centred: mean 0.1
    json.dumps(r.to_dict(), allow_nan=False)


def test_equal_versions_cannot_be_told_apart():
    rng = np.random.default_rng(5)
    table = simulate([1.5, 0.0, 0.0], 100, rng)
    r = bradley_terry(NAMES, table, n_resamples=999)
    assert r.order[0] == "a" and r.gaps[0].apart
    assert not r.gaps[1].apart and r.gaps[1].difference.contains(0.0)
    assert r.gaps[1].verdict == "order not shown"
    assert r.groups() == [["a"], sorted(["b", "c"], key=r.order.index)]
    assert r.ranks()[r.order[1]] == r.ranks()[r.order[2]] == 2
    assert "cannot be told apart (order not shown)" in r.gaps[1].sentence()
    b, c = r.order[1:]
    assert f"a > {b}, {c} (order not shown); order not shown:" in r.sentence()


# -- the bootstrap's coverage -------------------------------------------------------------
TRUE = np.array([0.6, 0.0, -0.6])
SETS, QUESTIONS = 300, 60


def test_bootstrap_intervals_cover_the_true_differences():
    """300 seeded sets of 60 questions: each set's three difference intervals (every two
    versions) hold the true difference in about 95% of sets."""
    rng = np.random.default_rng(2024)
    covered = np.zeros(3)
    for k in range(SETS):
        r = bradley_terry(NAMES, simulate(list(TRUE), QUESTIONS, rng), n_resamples=999, seed=k)
        for x, (i, j) in enumerate(combinations(range(3), 2)):
            gap = next(g for g in r.differences if {g.upper, g.lower} == {NAMES[i], NAMES[j]})
            truth = TRUE[NAMES.index(gap.upper)] - TRUE[NAMES.index(gap.lower)]
            covered[x] += gap.difference.contains(truth)
    rates = covered / SETS
    print(f"coverage of a-b, a-c, b-c: {', '.join(f'{v:.3f}' for v in rates)}")
    assert all(0.91 <= v <= 0.985 for v in rates), rates
    assert 0.93 <= rates.mean() <= 0.97


# -- separation and nothing to count -------------------------------------------------------
def test_a_version_that_wins_everything_is_first_with_a_note():
    outcomes = [(q, 0, j, 1.0) for q in range(10) for j in (1, 2)]
    outcomes += [(q, 1, 2, float(q % 3 != 0)) for q in range(10)]
    r = bradley_terry(NAMES, win_table(10, 3, outcomes), n_resamples=500)
    assert r.order == ["a", "b", "c"]
    assert all(np.isfinite(r.strengths[n].value) for n in NAMES)
    assert any("no finite maximum-likelihood strength" in n for n in r.notes)
    assert r.notes[0].startswith("a > {b, c}: each won every comparison with those after it")
    json.dumps(r.to_dict(), allow_nan=False)


def test_one_question_and_no_comparison():
    one = bradley_terry(NAMES, win_table(1, 3, [(0, 0, 1, 1.0), (0, 1, 2, 0.5),
                                                 (0, 0, 2, 0.5)]), n_resamples=500)
    assert one.strengths["a"].ci is None and "one question" in one.strengths["a"].reason
    assert not any(g.apart for g in one.gaps)
    none = bradley_terry(NAMES, win_table(3, 3, [(q, 0, 1, 1.0) for q in range(3)]),
                         n_resamples=500)
    assert none.order[-1] == "c" and none.strengths["c"].value is None
    assert any("c: no comparison counts" in n for n in none.notes)
    json.dumps(none.to_dict(), allow_nan=False)
    with pytest.raises(UsageError, match="a share in"):
        win_table(1, 3, [(0, 1, 1, 0.5)])


# -- rank_versions through the judge door --------------------------------------------------
STRENGTH = {"v1": -1.0, "v2": 0.5, "v3": 0.5}


def versions(n: int = 12) -> list[list[Sample]]:
    return [[Sample(id=f"q{i}", question=f"question {i}?", contexts=["ctx"],
                    answer=f"[{name}] answer {i}") for i in range(n)] for name in STRENGTH]


def bt_judge(request):
    """P(A better) from the Bradley-Terry model of the two answers' versions, both orders."""
    a, b = request.inputs["answer_a"][1:3], request.inputs["answer_b"][1:3]
    pa = 1.0 / (1.0 + np.exp(-(STRENGTH[a] - STRENGTH[b])))
    return ScriptedReply({"reason": "r", "verdict": "A" if pa > 0.5 else "B"},
                         [{"A": pa, "B": 1 - pa, "tie": 0.0}])


def test_rank_versions_recovers_the_judges_strengths():
    judge = ScriptedJudge({"pairwise_preference": bt_judge})
    r = rank_versions(versions(), judge=judge, n_resamples=999, judge_check=False)
    assert len(judge.calls("pairwise_preference")) == 12 * 3 * 2  # 3 pairs, both orders
    assert r.mode == "soft" and r.names == ["v1", "v2", "v3"]
    for name, s in STRENGTH.items():  # order-averaged soft wins are the model's own
        assert r.ranking.strengths[name].value == pytest.approx(s, abs=1e-6)
    assert r.ranking.order[-1] == "v1" and r.ranking.groups()[0] == ["v2", "v3"]
    assert r.pairs[(0, 1)].counts["win"] == 12  # v2 (as NEW) beats v1 on every question
    lines = rank_lines(r)
    assert any("v2 and v3 cannot be told apart" in x for x in lines)
    doc = r.to_dict()
    assert doc["ranking"]["order"][-1] == "v1" and doc["pairs"][0]["base"] == "v1"
    json.dumps(doc, allow_nan=False)


def test_rank_versions_hard_verdicts_leave_inconsistent_pairs_out():
    always_a = ScriptedJudge({"pairwise_preference": {"reason": "first", "verdict": "A"}})
    r = rank_versions(versions(4), judge=always_a, verdicts="hard", n_resamples=500,
                      judge_check=False)
    assert r.mode == "hard" and r.position_bias == 1.0
    assert all(s.value is None for s in r.ranking.strengths.values())
    assert any("12 of 12 pairs asked count for nothing" in n for n in r.notes)
    json.dumps(r.to_dict(), allow_nan=False)


def test_rank_versions_runs_the_pairwise_judge_check_and_says_unfit():
    always_a = ScriptedJudge({"pairwise_preference": {"reason": "first", "verdict": "A"}})
    r = rank_versions(versions(3), judge=always_a, verdicts="hard", n_resamples=500,
                      judge_check=2)
    assert len(always_a.calls("pairwise_preference")) == 2 * 2 + 3 * 3 * 2
    assert r.judge_check is not None and not r.judge_check.fit
    assert "(not evidence: the pairwise judge check says" in r.sentence()
    assert rank_lines(r)[0] == r.judge_check.summary_line()
    assert r.to_dict()["judge_check"]["pairs"] == 2


def test_identical_answers_are_ties_without_a_call():
    same = versions(4)
    same[2] = [Sample(id=s.id, question=s.question, contexts=s.contexts,
                      answer=s.answer.replace("[v1]", "[v1] ")) for s in same[0]]
    judge = ScriptedJudge({"pairwise_preference": bt_judge})
    r = rank_versions(same, judge=judge, names=["x", "y", "z"], n_resamples=500,
                      judge_check=False)
    assert len(judge.calls("pairwise_preference")) == 4 * 2 * 2  # x-z never asked
    assert r.pairs[(0, 2)].counts["identical"] == 4
    assert r.mode == "soft"  # a pair of versions asked nothing does not make it hard
    assert r.ranking.strengths["x"].value == pytest.approx(r.ranking.strengths["z"].value)


def test_rank_versions_bad_input():
    judge = ScriptedJudge({"pairwise_preference": bt_judge})
    vs = versions(3)
    with pytest.raises(UsageError, match="at least two versions, got 1"):
        rank_versions(vs[:1], judge=judge)
    other = [Sample(id=f"x{i}", question=f"other {i}?", answer="a") for i in range(3)]
    with pytest.raises(DataError, match="no question of"):
        rank_versions([vs[0], vs[1], other], judge=judge, judge_check=False)
    apart = [vs[0], vs[1][:1], vs[2][1:]]  # each shares questions with v1, not with both
    with pytest.raises(DataError, match="no question is common to all 3 versions"):
        rank_versions(apart, judge=judge, judge_check=False)
    with pytest.raises(UsageError, match="2 names for 3 versions"):
        rank_versions(vs, judge=judge, names=["a", "b"])
    with pytest.raises(UsageError, match="repeated: 'a'"):
        rank_versions(vs, judge=judge, names=["a", "a", "b"])


# -- the command line ---------------------------------------------------------------------
@pytest.fixture
def files(tmp_path):
    """Three versions' files: two exports with a score, and v3 a file of answers alone
    (what ``localeval answer`` writes), which is read as a data set."""
    paths = []
    for name, rows in zip(STRENGTH, versions(10)):
        path = tmp_path / f"{name}.jsonl"
        score = {} if name == "v3" else {"bleu": 0.5}
        path.write_text("".join(json.dumps({**s.to_dict(), **score}) + "\n" for s in rows),
                        encoding="utf-8")
        paths.append(str(path))
    return paths


@pytest.fixture
def scripted_backend():
    from localeval.judge import register_judge_backend, unregister_judge_backend

    judge = ScriptedJudge({"pairwise_preference": bt_judge})
    register_judge_backend("rank-test", lambda spec: spec == "scripted-rank",
                           lambda spec, **kw: judge)
    yield judge
    unregister_judge_backend("rank-test")


def test_rank_on_the_command_line(tmp_path, files, scripted_backend, capsys):
    from localeval.cli.app import main

    code = main(["rank", *files, "--judge", "scripted-rank", "--resamples", "999",
                 "--no-judge-check", "--no-cache", "-o", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "v2, v3 (order not shown) > v1" in captured.out
    assert "v2 and v3 cannot be told apart" in captured.out
    assert f"wrote {tmp_path / 'out' / 'rank.json'}" in captured.err
    doc = json.loads((tmp_path / "out" / "rank.json").read_text(encoding="utf-8"))
    assert doc["versions"] == ["v1", "v2", "v3"] and doc["mode"] == "soft"
    assert doc["ranking"]["groups"] == [["v2", "v3"], ["v1"]]
    v1 = next(v for v in doc["ranking"]["versions"] if v["name"] == "v1")
    assert v1["rank"] == 3 and v1["strength"]["value"] == pytest.approx(-1.0, abs=1e-6)
    assert doc["ranking"]["bootstrap"] == {"resamples": 999, "seed": 0, "unit": "question"}


@pytest.mark.parametrize("extra, message", [
    (["ONE"], "rank needs at least two versions, got 1"),
    (["ALL", "--data", "x.jsonl"], "--data given 1 times for 3 versions"),
    (["ALL", "--no-judge"], "rank needs --judge"),
    (["ALL", "--resamples", "5"], "--resamples must be at least 100"),
    (["ALL", "--criterion-name", "x"], "--criterion-name picks a table of --criteria-file"),
    (["OTHER"], "no question of"),
])
def test_rank_bad_input_is_one_message(tmp_path, files, scripted_backend, capsys, extra,
                                       message):
    from localeval.cli.app import main

    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "z", "question": "unrelated?", "answer": "x",
                                "bleu": 0.5}) + "\n",
                     encoding="utf-8")
    which = {"ONE": files[:1], "ALL": files, "OTHER": [*files[:2], str(other)]}[extra[0]]
    judge = [] if "--no-judge" in extra else ["--judge", "scripted-rank"]
    rest = [x for x in extra[1:] if x != "--no-judge"]
    code = main(["rank", *which, *judge, "--no-judge-check", "--no-cache", *rest,
                 "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len([x for x in err.splitlines() if x.startswith("localeval: error:")]) == 1
