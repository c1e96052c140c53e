"""Pairwise judging's edges: identical answers, soft verdicts without probabilities, the
criterion from a metrics TOML file, the judge cache, the known-answer pairwise judge check,
and the --fail-if-preferred-base gate with its localeval.testing twin."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from test_pairwise import truthful, unchecked, versions

from localeval.errors import ModelError, UsageError
from localeval.pairwise import compare_pairwise, criterion_from_file
from localeval.testing import OracleJudge, RandomJudge, ScriptedJudge, assert_not_preferred_base
from localeval.types import Sample

ALWAYS_A = {"pairwise_preference": {"reason": "first is best", "verdict": "A"}}


class NoProbs(ScriptedJudge):
    """A scripted judge that returns no verdict probabilities (an HTTP server without logprobs)."""

    def ask(self, request):
        return dataclasses.replace(super().ask(request), probs=None)


def write_versions(tmp: Path, base: list[Sample], new: list[Sample]) -> tuple[str, str]:
    for name, rows in (("base", base), ("new", new)):
        with open(tmp / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for s in rows:
                f.write(json.dumps({**s.to_dict(), "bleu": 0.5}) + "\n")
    return str(tmp / "base.jsonl"), str(tmp / "new.jsonl")


def run_diff(tmp: Path, judge, *extra: str, pairs: int = 6, new_better=None, rows=None):
    """``localeval diff BASE NEW --pairwise`` with ``judge`` registered as 'scripted-pw'."""
    from localeval.cli.app import main
    from localeval.judge import register_judge_backend, unregister_judge_backend

    base, new = rows or versions(pairs, new_better=new_better)
    b, n = write_versions(tmp, base, new)
    register_judge_backend("pairwise-edges", lambda spec: spec == "scripted-pw",
                           lambda spec, **kw: judge)
    try:
        return main(["diff", b, n, "--judge", "scripted-pw", "--resamples", "999",
                     "-o", str(tmp / "out"), *extra])
    finally:
        unregister_judge_backend("pairwise-edges")


# -- identical answers ----------------------------------------------------------------------
def test_identical_answers_are_ties_without_a_judge_call():
    base, new = versions(5)
    new[0] = dataclasses.replace(new[0], answer=base[0].answer)
    new[1] = dataclasses.replace(new[1], answer="  base\n 1 ")  # white space aside, the same
    new[2] = dataclasses.replace(new[2], answer=base[2].answer, contexts=["another context"])
    judge = ScriptedJudge(ALWAYS_A)
    r = unchecked(base, new, judge=judge, verdicts="hard", n_resamples=999)
    # pairs 0 and 1 are not asked; pair 2 has the same answer on other contexts: asked
    assert len(judge.calls("pairwise_preference")) == 2 * 3
    # identical answers are counted apart: not ties the judge gave
    assert r.counts["identical"] == 2 and r.counts["tie"] == 0
    assert r.counts["inconsistent"] == 3 and r.counts["position_following"] == 3
    # the bias figure counts the 3 pairs asked: 100%, not 3 of 5
    assert r.position_bias == 1.0
    # the preference is over the judged pairs: the 3 asked are inconsistent, none is left
    assert r.hard.value is None and r.hard.n == 0
    assert any("2 pairs have the same answer" in n and "3 pairs asked" in n for n in r.notes)
    assert r.sentence().endswith("; 2 identical answers not judged")
    d = r.to_dict()
    assert d["pairs"][0]["identical"] is True and d["pairs"][0]["new_preference"] == 0.5
    assert "identical" not in d["pairs"][2]


def test_every_pair_identical_is_nothing_to_judge_without_any_call():
    base, _ = versions(4)
    judge = ScriptedJudge(ALWAYS_A)
    r = unchecked(base, list(base), judge=judge, n_resamples=999)
    assert judge.calls("pairwise_preference") == [] and r.counts["identical"] == 4
    assert r.rate.value is None and r.position_bias is None
    assert r.sentence() == ("nothing to judge: every answer is the same in both versions "
                            "(4 identical answers not judged)")


# -- soft verdicts without probabilities ----------------------------------------------------
def test_soft_asked_for_without_probabilities_is_a_model_error():
    base, new = versions(4)
    judge = NoProbs({"pairwise_preference": truthful})
    with pytest.raises(ModelError, match="no verdict probabilities.*--verdicts hard"):
        compare_pairwise(base, new, judge=judge, verdicts="soft", n_resamples=999)
    # the check's first call already shows it: nothing more is asked
    assert len(judge.calls("pairwise_preference")) == 1
    with pytest.raises(ModelError, match="soft verdicts were asked for"):
        unchecked(base, new, judge=NoProbs({"pairwise_preference": truthful}),
                  verdicts="soft", n_resamples=999)


def test_default_verdicts_fall_back_to_hard_with_a_note():
    base, new = versions(6, new_better={0, 1, 2, 3})
    r = unchecked(base, new, judge=NoProbs({"pairwise_preference": truthful}),
                  n_resamples=999)
    assert r.mode == "hard" and r.rate.value == pytest.approx(4 / 6)
    assert any("no verdict probabilities" in n for n in r.notes)
    soft = unchecked(base, new, judge=ScriptedJudge({"pairwise_preference": truthful}),
                     n_resamples=999)
    assert soft.mode == "soft" and not any("probabilities" in n for n in soft.notes)


def test_soft_without_probabilities_on_the_command_line_exits_3(tmp_path, capsys):
    code = run_diff(tmp_path, NoProbs({"pairwise_preference": truthful}), "--pairwise",
                    "--verdicts", "soft")
    err = capsys.readouterr().err
    assert code == 3 and "no verdict probabilities" in err and "Traceback" not in err
    code = run_diff(tmp_path, NoProbs({"pairwise_preference": truthful}), "--pairwise",
                    "--no-judge-check")
    assert code == 0
    doc = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))
    assert doc["pairwise"]["mode"] == "hard"


# -- the criterion from a metrics TOML file -------------------------------------------------
CRITERIA = '''
[polite]
type = "aspect_critic"
definition = "Which answer is more polite?"

[helpful]
type = "geval"
criteria = "Which answer helps the user act?"
evaluation_steps = ["Read the question.", "Compare what each answer lets the user do."]

[levels]
type = "rubrics_score"
rubrics = { 1 = "bad", 5 = "good" }
'''


def test_criterion_from_file(tmp_path):
    f = tmp_path / "criteria.toml"
    f.write_text(CRITERIA, encoding="utf-8")
    assert criterion_from_file(f, "polite") == ("Which answer is more polite?", "polite")
    text, name = criterion_from_file(f, "helpful")
    assert name == "helpful" and text == ("Which answer helps the user act?\n1. Read the "
                                          "question.\n2. Compare what each answer lets the "
                                          "user do.")
    with pytest.raises(UsageError, match=r"2 criteria \(polite, helpful\).*--criterion-name"):
        criterion_from_file(f)
    with pytest.raises(UsageError, match=r"\[levels\] is a rubric"):
        criterion_from_file(f, "levels")
    with pytest.raises(UsageError, match=r"no table \[nope\]; its tables: polite, helpful"):
        criterion_from_file(f, "nope")
    one = tmp_path / "one.toml"
    one.write_text('[polite]\ntype = "aspect_critic"\ndefinition = "Polite?"\n',
                   encoding="utf-8")
    assert criterion_from_file(one) == ("Polite?", "polite")
    bad = tmp_path / "bad.toml"
    bad.write_text('[x]\ntype = "aspect_critic"\ndefinitio = "typo"\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad\.toml: \[x\]: unknown parameter definitio"):
        criterion_from_file(bad)


def test_criteria_file_on_the_command_line(tmp_path, capsys):
    f = tmp_path / "criteria.toml"
    f.write_text(CRITERIA, encoding="utf-8")
    judge = ScriptedJudge({"pairwise_preference": truthful})
    code = run_diff(tmp_path, judge, "--pairwise", "--no-judge-check", "--criteria-file",
                    str(f), "--criterion-name", "helpful")
    assert code == 0
    asked = judge.calls("pairwise_preference")
    assert asked and all(c.inputs["criterion"].startswith("Which answer helps") for c in asked)
    assert "Which answer helps the user act?" in asked[0].messages[-1]["content"]
    pw = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert pw["criterion_source"] == f"{f} [helpful]"
    bad = tmp_path / "bad.toml"
    bad.write_text("[x\n", encoding="utf-8")
    capsys.readouterr()
    for extra, words in (
            (("--pairwise", "--criteria-file", str(bad)), "not valid TOML"),
            (("--pairwise", "--criteria-file", str(f)), "--criterion-name"),
            (("--pairwise", "--criterion-name", "polite"), "give the file"),
            (("--pairwise", "--criterion", "x", "--criteria-file", str(f)), "not both"),
            (("--criteria-file", str(f)), "add --pairwise")):
        assert run_diff(tmp_path, judge, *extra) == 2, extra
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (extra, err)


# -- the judge cache ------------------------------------------------------------------------
def test_a_second_run_asks_the_judge_nothing(tmp_path, capsys):
    judge = ScriptedJudge({"pairwise_preference": truthful})  # behind the cache: real calls

    def calls() -> int:
        return len(judge.calls("pairwise_preference"))

    cache = str(tmp_path / "judge-cache.sqlite")
    assert run_diff(tmp_path, judge, "--pairwise", "--cache", cache) == 0
    first = calls()
    assert first == 2 * 6 + 2 * 10  # the pairs and the pairwise judge check, both orders
    out1 = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert run_diff(tmp_path, judge, "--pairwise", "--cache", cache) == 0
    assert calls() == first  # every call came from the cache
    out2 = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert out2["counts"] == out1["counts"] and out2["judge_check"] == out1["judge_check"]
    assert run_diff(tmp_path, judge, "--pairwise", "--cache", cache, "--no-cache") == 0
    assert calls() == 2 * first  # --no-cache asks again


# -- the known-answer pairwise judge check --------------------------------------------------
def test_oracle_is_fit_and_random_or_positional_judges_are_unfit():
    from localeval.judge_check import pairwise_probes

    base, new = versions(4)
    oracle = compare_pairwise(base, new, judge=OracleJudge(), judge_check=len(pairwise_probes()),
                              n_resamples=999)
    assert oracle.judge_check.verdict == "fit" and oracle.judge_check.pairs == 20
    assert oracle.judge_check.pass_rate >= 0.85
    for seed in (0, 1, 2):
        r = compare_pairwise(base, new, judge=RandomJudge(seed), n_resamples=999)
        assert r.judge_check.verdict == "unfit" and r.judge_check.passed <= 3, seed
        assert r.judge_unfit and "not evidence: the pairwise judge check says unfit" in r.sentence()
    with pytest.raises(UsageError, match="at least 1 pair, not 0"):
        compare_pairwise(base, new, judge=OracleJudge(), judge_check=0)
    a = compare_pairwise(base, new, judge=ScriptedJudge(ALWAYS_A), n_resamples=999)
    assert a.judge_check.passed == 0 and a.judge_check.position == 10
    assert "10 followed the position" in a.judge_check.summary_line()


def test_the_check_is_printed_first_and_written_to_diff_json(tmp_path, capsys):
    assert run_diff(tmp_path, RandomJudge(0), "--pairwise") == 0
    out = capsys.readouterr().out
    tail = out[out.index("pairwise judge check"):]
    assert tail.startswith("pairwise judge check: UNFIT") and "pairwise (soft verdicts" in tail
    pw = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))["pairwise"]
    assert pw["judge_check"]["verdict"] == "unfit" and pw["judge_check"]["pairs"] == 10
    assert next(iter(pw)) == "judge_check"  # before the pairwise figures
    assert run_diff(tmp_path, RandomJudge(0), "--pairwise", "--fail-if-unfit-judge") == 1
    assert "gate failed: pairwise judge check: UNFIT" in capsys.readouterr().err
    assert run_diff(tmp_path, OracleJudge(), "--pairwise", "--fail-if-unfit-judge",
                    rows=_grounded(6)) == 0


def _grounded(n: int) -> tuple[list[Sample], list[Sample]]:
    """n pairs the oracle can tell apart: NEW's answer is the context, BASE's invents."""
    ctx = ["The Riverside library opens at 10 a.m. on Saturdays."]
    base = [Sample(id=f"q{i}", question="When does it open on Saturdays?", contexts=ctx,
                   answer=f"It opens at {i + 3} p.m. on Saturdays with free breakfast.")
            for i in range(n)]
    new = [dataclasses.replace(s, answer="It opens at 10 a.m. on Saturdays.") for s in base]
    return base, new


# -- the gate and its twin ------------------------------------------------------------------
def test_fail_if_preferred_base_on_the_command_line(tmp_path, capsys):
    truth = ScriptedJudge({"pairwise_preference": truthful})
    assert run_diff(tmp_path, truth, "--pairwise", "--no-judge-check",
                    "--fail-if-preferred-base", new_better=set(), pairs=8) == 1
    err = capsys.readouterr().err
    assert ("gate failed: pairwise: BASE is preferred: the preference for NEW 0.00 "
            "[0.00, 0.00] lies entirely below 0.45 (0.5 - margin 0.05; 8 judged pairs, soft "
            "verdicts)") in err
    assert run_diff(tmp_path, truth, "--pairwise", "--no-judge-check",
                    "--fail-if-preferred-base", new_better={0, 1, 2, 3}, pairs=8) == 0
    # another verdict mode into the same -o: replacing that diff needs --overwrite
    assert run_diff(tmp_path, ScriptedJudge(ALWAYS_A), "--pairwise", "--verdicts", "hard",
                    "--no-judge-check", "--fail-if-preferred-base", "--overwrite") == 1
    assert "pairwise: nothing could be judged (no consistent pairs)" in capsys.readouterr().err
    assert run_diff(tmp_path, truth, "--fail-if-preferred-base") == 2
    err = capsys.readouterr().err
    assert "--fail-if-preferred-base compares answers side by side: add --pairwise" in err


def test_assert_not_preferred_base_uses_the_same_words():
    base, new = versions(8, new_better=set())
    with pytest.raises(AssertionError, match=r"pairwise: BASE is preferred: the preference for "
                       r"NEW 0\.00 \[0\.00, 0\.00\] lies entirely below 0\.45"):
        assert_not_preferred_base(base, new, judge=ScriptedJudge(
            {"pairwise_preference": truthful}), judge_check=False, n_resamples=999)
    with pytest.raises(AssertionError, match="nothing could be judged"):
        assert_not_preferred_base(base, new, judge=ScriptedJudge(ALWAYS_A), verdicts="hard",
                                  judge_check=False, n_resamples=999)
    # one judged pair has no interval: the gate could not have failed; it says so and
    # passes, unless asked to fail then
    one = assert_not_preferred_base(base[:1], new[:1], judge=ScriptedJudge(
        {"pairwise_preference": truthful}), judge_check=False, n_resamples=999)
    assert one.rate.ci is None
    with pytest.raises(AssertionError, match="could not have failed at this size.*has no "
                       "interval"):
        assert_not_preferred_base(base[:1], new[:1], judge=ScriptedJudge(
            {"pairwise_preference": truthful}), judge_check=False, n_resamples=999,
            fail_if_underpowered=True)
    better = versions(8, new_better={0, 1, 2, 3, 4})
    r = assert_not_preferred_base(*better, judge=ScriptedJudge(
        {"pairwise_preference": truthful}), judge_check=False, n_resamples=999)
    assert r.rate.value == pytest.approx(5 / 8)
    with pytest.raises(AssertionError, match="pairwise judge check: UNFIT"):
        assert_not_preferred_base(*better, judge=RandomJudge(0), fail_if_unfit_judge=True,
                                  n_resamples=999)


# -- progress -------------------------------------------------------------------------------
def test_a_long_comparison_shows_its_progress_in_a_log(monkeypatch, capsys):
    """diff --pairwise and rank ask for minutes with a small judge: piped to a log they
    print plain progress lines (the judge check's, then the pairs'), as a run does."""
    import time

    import localeval.run.progress as progress

    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.01)

    class Slow(OracleJudge):
        def ask(self, request):
            time.sleep(0.02)
            return super().ask(request)

    base, new = _grounded(4)
    compare_pairwise(base, new, judge=Slow(), judge_check=2, n_resamples=99, progress=None)
    err = capsys.readouterr().err
    assert "localeval: pairwise judge check " in err and "/4 orders" in err
    assert "localeval: judging pairs " in err and "/4 pairs" in err and "calls " in err
    compare_pairwise(base, new, judge=Slow(), judge_check=2, n_resamples=99)  # default: none
    assert "localeval:" not in capsys.readouterr().err
