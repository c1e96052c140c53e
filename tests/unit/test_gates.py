"""Quality gates: never a pass on no evidence.

A mean is taken over the scored samples, so a mean gate fails when its metric
has unscored samples unless the user allows them; the per-sample gate lists
every sample under it; the judge gate fails a judge that did not pass its
judge check; a gate naming a metric the run does not compute is refused before
any judging. The command line and ``localeval.testing`` give the same verdicts.
"""

from __future__ import annotations

import json
import math

import pytest

import localeval
from localeval.cli.app import main
from localeval.config import reset
from localeval.errors import JudgeCallError, UsageError
from localeval.metrics import parse_metrics
from localeval.report import check_gates, parse_allow_unscored, parse_gates, resolve_gate_keys, unscored_policy
from localeval.report.gates import parse_allowance
from localeval.testing import OracleJudge, RandomJudge, assert_each, assert_scores
from localeval.testing.scripted import ScriptedJudge

SUMMARY = {"metrics": {"mrr": {"mean": 0.4, "n": 10, "unscored": 0},
                       "noise_sensitivity": {"mean": 0.3, "n": 10, "unscored": 0,
                                             "lower_is_better": True},
                       "faithfulness": {"mean": 0.9, "n": 6, "unscored": 2,
                                        "unscored_reasons": {"reply did not parse": 1,
                                                             "no contexts": 1}},
                       "answer_relevancy": {"mean": None, "n": 0, "unscored": 8,
                                            "unscored_reasons": {"no judge model": 8}}}}


def test_gates_pass_and_fail_both_ways():
    assert check_gates(SUMMARY, parse_gates(["mrr=0.4", "noise_sensitivity=0.3"])) == []
    assert check_gates(SUMMARY, parse_gates(["mrr=0.5"])) == ["mrr 0.4000 is below 0.5"]
    assert check_gates(SUMMARY, {"noise_sensitivity": 0.2}) == ["noise_sensitivity 0.3000 is above 0.2"]


@pytest.mark.parametrize("item", ["mrr=nan", "mrr=inf", "mrr=-inf", "mrr", "=0.5"])
def test_parse_refuses_bad_and_non_finite_thresholds(item):
    with pytest.raises(UsageError, match="bad --fail-under"):
        parse_gates([item])


def test_check_refuses_a_nan_threshold_given_from_python():
    # assert_scores passes a dict straight to check_gates: nan < x is always False
    with pytest.raises(UsageError, match="not a finite number"):
        check_gates(SUMMARY, {"mrr": math.nan})


def test_a_mean_gate_fails_on_unscored_samples_naming_how_many_and_why():
    assert check_gates(SUMMARY, {"faithfulness": 0.85}) == [
        "faithfulness 0.9000 meets 0.85 on the scored samples, but 2 of 8 samples unscored "
        "(reply did not parse: 1, no contexts: 1); allowed: 0"]
    # a mean under the threshold says the gaps too
    assert check_gates(SUMMARY, {"faithfulness": 0.95}) == [
        "faithfulness 0.9000 is below 0.95; 2 of 8 samples unscored "
        "(reply did not parse: 1, no contexts: 1)"]
    assert check_gates(SUMMARY, {"answer_relevancy": 0.1}, "all") == [
        "answer_relevancy unscored: 8 of 8 samples unscored (no judge model: 8)"]


@pytest.mark.parametrize("allow,passes", [
    (0, False), (1, False), (2, True), ("2", True), (0.2, False), (0.25, True), ("25%", True),
    ("all", True), (True, True), (False, False), (1.0, True), ({"faithfulness": 2}, True),
    ({"mrr": 5}, False)])
def test_allow_unscored_counts_shares_and_per_metric(allow, passes):
    assert (check_gates(SUMMARY, {"faithfulness": 0.85}, allow) == []) is passes


def test_allowance_parsing():
    assert str(parse_allowance("3")) == "3" and str(parse_allowance("10%")) == "10%"
    assert str(parse_allowance("0.1")) == "10%" and str(parse_allowance("ALL")) == "all"
    assert str(parse_allowance("1.0")) == "all"  # a point makes a share: 1.0 is every sample
    for bad in ("-1", "1.5", "150%", "some", "", "nan"):
        with pytest.raises(UsageError, match="bad --allow-unscored"):
            parse_allowance(bad)
    policy = parse_allow_unscored(["1", "faithfulness=10%", "answer_correctness:weights=0.5,0.5=2"])
    assert str(policy.of("mrr")) == "1" and str(policy.of("faithfulness")) == "10%"
    assert str(policy.of("answer_correctness:weights=0.5,0.5")) == "2"
    with pytest.raises(UsageError):
        unscored_policy(-1)
    with pytest.raises(UsageError):
        unscored_policy(object())


def test_gate_names_resolve_to_the_run_s_metrics():
    chosen = parse_metrics("answer_correctness:weights=0.5,0.5,faithfulness,ndcg@10,ndcg@5")
    # the README's `-m "answer_correctness:weights=0.5,0.5" --fail-under answer_correctness=0.7`
    assert resolve_gate_keys(["answer_correctness", "faithfulness"], chosen) == {
        "answer_correctness": "answer_correctness:weights=0.5,0.5", "faithfulness": "faithfulness"}
    with pytest.raises(UsageError, match="several metrics.*ndcg@10, ndcg@5"):
        resolve_gate_keys(["ndcg"], chosen)
    with pytest.raises(UsageError, match="--fail-under-each names 'mrr', which this run does "
                                         "not compute; computed: answer_correctness"):
        resolve_gate_keys(["mrr"], chosen, "--fail-under-each")


# -- the command line, with a scripted judge -------------------------------------------------

ROWS = [{"id": f"r{i}", "question": f"Question number {i}?", "answer": "A faithful answer.",
         "contexts": ["ctx"], "reference": "A faithful answer."} for i in range(1, 5)]
ROWS += [{"id": "bad", "question": "Which answer is unfaithful?",
          "answer": "An unfaithful answer.", "contexts": ["ctx"], "reference": "A faithful answer."},
         {"id": "gap", "question": "BROKEN question the judge cannot read", "answer": "x",
          "contexts": ["ctx"], "reference": "A faithful answer."}]


def gate_judge() -> ScriptedJudge:
    """Faithful unless the answer says 'unfaithful'; a reply that does not parse for 'BROKEN'
    (tests/unit/test_testing_rows.py uses it in a user's suite too)."""
    def statements(request):
        if "BROKEN" in request.messages[-1]["content"]:
            raise JudgeCallError("reply did not parse")
        return {"statements": ["the claim"]}

    def verdicts(request):
        bad = "unfaithful" in request.messages[-1]["content"]
        return {"verdicts": [{"reason": "not in the context" if bad else "stated",
                              "verdict": 0 if bad else 1}]}
    return ScriptedJudge({"statements": statements, "faithfulness_verdicts": verdicts})


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no models/ here
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    reset()
    yield p
    reset()


def _run(data, capsys, *extra, judge=None):
    judge = judge or gate_judge()
    localeval.configure(judge=judge)
    # --overwrite: the tests run other judges into one folder (refused without it)
    code = main(["run", str(data), "-m", "faithfulness,rougeL", "-o", str(data.parent / "out"),
                 "--no-cache", "--quiet", "--overwrite", *extra])
    out, err = capsys.readouterr()
    return code, out, err, judge


def test_cli_mean_gate_fails_on_unscored_samples_unless_allowed(data, capsys):
    code, out, err, _ = _run(data, capsys, "--fail-under", "faithfulness=0.7")
    assert code == 1 and out == ""  # --quiet: no table, but the gate line
    assert ("localeval: gate failed: faithfulness 0.8000 meets 0.7 on the scored samples, but "
            "1 of 6 samples unscored (reply did not parse: 1); allowed: 0") in err
    for allow in (["1"], ["all"], ["1.0"], ["20%"], ["faithfulness=1"], ["0", "faithfulness=1"]):
        args = [a for v in allow for a in ("--allow-unscored", v)]
        assert _run(data, capsys, "--fail-under", "faithfulness=0.7", *args)[0] == 0, allow
    code, _, err, _ = _run(data, capsys, "--fail-under", "faithfulness=0.7",
                           "--allow-unscored", "0.1")
    assert code == 1 and "allowed: 10%" in err
    # a mean below its threshold still fails when gaps are allowed
    code, _, err, _ = _run(data, capsys, "--fail-under", "faithfulness=0.9",
                           "--allow-unscored", "all")
    assert code == 1 and "faithfulness 0.8000 is below 0.9; 1 of 6 samples unscored" in err


def test_cli_per_sample_gate_lists_id_question_and_working(data, capsys):
    code, out, err, _ = _run(data, capsys, "--fail-under-each", "faithfulness=0.5")
    assert code == 1 and out == ""
    lines = err.splitlines()
    head = [ln for ln in lines if ln.startswith("localeval: gate failed:")]
    assert head == ["localeval: gate failed: faithfulness at least 0.5 on every sample: 1 of 6 "
                    "samples under it; 1 of 6 samples unscored (reply did not parse: 1), "
                    "allowed: 0"]
    assert any(ln.startswith('  bad "Which answer is unfaithful?": faithfulness 0.000 < 0.5; '
                             "working: ") and "not in the context" in ln for ln in lines)
    assert '  gap "BROKEN question the judge cannot read": faithfulness unscored ' \
           "(reply did not parse)" in lines
    assert not any(ln.startswith("  r") for ln in lines)
    code, _, err, _ = _run(data, capsys, "--fail-under-each", "faithfulness=0.5",
                           "--allow-unscored", "1")
    assert code == 1 and "gap" not in err.replace("(not listed)", "") and "bad" in err
    assert _run(data, capsys, "--fail-under-each", "faithfulness=0",
                "--allow-unscored", "all")[0] == 0


@pytest.mark.parametrize("option", ["--fail-under", "--fail-under-each", "--allow-unscored"])
def test_cli_gate_on_a_metric_the_run_does_not_compute_is_refused_before_any_judging(
        data, capsys, option):
    code, _, err, judge = _run(data, capsys, option, "answer_relevancy=0.5")
    assert code == 2
    assert f"{option} names 'answer_relevancy', which this run does not compute; " \
           "computed: faithfulness, rougeL" in err
    assert judge.requests == [] and not (data.parent / "out").exists()


def test_cli_unfit_judge_gate(data, capsys):
    code, _, err, _ = _run(data, capsys, "--fail-if-unfit-judge", judge=RandomJudge(1))
    assert code == 1
    assert "localeval: gate failed: judge check: UNFIT" in err
    assert _run(data, capsys, "--fail-if-unfit-judge", judge=OracleJudge())[0] == 0
    # without the flag the same unfit judge only warns
    assert _run(data, capsys, judge=RandomJudge(1))[0] == 0
    code, _, err, judge = _run(data, capsys, "--fail-if-unfit-judge", "--no-judge-check")
    assert code == 2 and "needs the judge check" in err and judge.requests == []


def test_cli_unfit_judge_gate_fails_when_there_is_no_judge_to_test(data, capsys):
    code = main(["run", str(data), "-m", "faithfulness", "-o", str(data.parent / "o"),
                 "--quiet", "--no-cache", "--fail-if-unfit-judge"])
    err = capsys.readouterr().err
    assert code == 1
    assert "gate failed: judge check: skipped (no judge model); --fail-if-unfit-judge " \
           "needs a judge that passed the judge check" in err


# -- the same gates from Python --------------------------------------------------------------


def test_assert_scores_fails_on_unscored_samples_unless_allowed(data):
    kw = dict(judge=gate_judge(), cache=False, judge_check=False)
    with pytest.raises(AssertionError, match=r"localeval: gate failed: faithfulness 0.8000 meets "
                                             r"0.7 .* 1 of 6 samples unscored \(reply did not "
                                             r"parse: 1\); allowed: 0"):
        assert_scores(data, {"faithfulness": 0.7}, **kw)
    assert assert_scores(data, {"faithfulness": 0.7}, allow_unscored=1, **kw)["faithfulness"] == 0.8
    assert_scores(data, {"faithfulness": 0.7}, allow_unscored="all", **kw)
    assert_scores(data, {"faithfulness": 0.7}, allow_unscored={"faithfulness": 0.2}, **kw)
    with pytest.raises(AssertionError, match="1 of 6 samples under it"):
        assert_each(data, {"faithfulness": 0.5}, allow_unscored=True, **kw)


def test_assert_scores_twin_of_the_unfit_judge_gate(data, monkeypatch):
    # the conftest switches the judge check off by configuration; the gate switches it on
    kw = dict(cache=False, allow_unscored="all")
    with pytest.raises(AssertionError, match="gate failed: judge check: UNFIT"):
        assert_scores(data, {"faithfulness": 0.0}, judge=RandomJudge(1), fail_if_unfit_judge=True,
                      **kw)
    assert_scores(data, {"faithfulness": 0.0}, judge=RandomJudge(1), **kw)
    assert_scores(data, {"faithfulness": 0.0}, judge=OracleJudge(), fail_if_unfit_judge=True, **kw)
    with pytest.raises(UsageError, match="needs the judge check"):
        assert_scores(data, {"faithfulness": 0.0}, judge=OracleJudge(), fail_if_unfit_judge=True,
                      judge_check=False, **kw)
