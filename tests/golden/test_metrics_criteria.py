"""User-defined criteria (AspectCritic, RubricsScore, InstanceRubrics, GEval) and
FactualCorrectness on a scripted judge: ragas's arithmetic and edge cases, soft
scores, keys and signature entries, the TOML metrics file."""

from __future__ import annotations

import math

import pytest

from localeval.errors import JudgeCallError, UsageError
from localeval.metrics import (AspectCritic, FactualCorrectness, GEval, InstanceRubrics,
                               RubricsScore, load_metrics_file, parse_metrics)
from localeval.metrics.criteria import majority_probability
from localeval.metrics.factual import factual_score
from localeval.testing import ScriptedJudge
from localeval.testing.metric_util import run, verdicts
from localeval.testing.scripted import ScriptedReply
from localeval.types import Sample

S = Sample(id="s", question="How many days of leave do I get?",
           answer="You get 25 days of paid leave. Please ask HR if unsure.",
           contexts=["Employees get 25 days of paid leave."],
           reference="Employees get 25 days of paid leave a year.")
JA = Sample(id="j", question="有給休暇は何日ですか。", answer="年間20日です。",
            reference="正社員には年間20日の有給休暇があります。", row=7,
            metadata={"rubrics": {"1": "誤り", "2": "一部正しい", "3": "正しい"}})
POLITE = AspectCritic(name="polite", definition="Is the answer polite?")


def critic(*votes):
    return {"aspect_critic": [{"reason": f"r{i}", "verdict": v} for i, v in enumerate(votes)]}


# -- AspectCritic ----------------------------------------------------------------------
@pytest.mark.parametrize("verdict", [0, 1])
def test_aspect_critic_single_vote(verdict):
    score, judge, ctx = run(POLITE, S, critic(verdict))
    assert score.value == verdict and score.details["reason"] == "r0"
    req = judge.requests[0]
    assert req.step == "aspect_critic" and req.temperature == 0.0
    assert req.messages[1]["content"].rstrip().endswith("Criterion: Is the answer polite?")
    assert ctx.prompt_versions["aspect_critic:polite"]  # the definition's signature entry


@pytest.mark.parametrize("votes, expected", [((1, 0, 1), 1.0), ((0, 0, 1), 0.0),
                                             ((1, 1, 1), 1.0), ((0, 1, 0), 0.0)])
def test_aspect_critic_majority_of_votes(votes, expected):
    m = AspectCritic(name="polite", definition="Is the answer polite?", strictness=3)
    score, judge, _ = run(m, S, critic(*votes))
    assert score.value == expected
    assert [r.seed for r in judge.requests] == [0, 1, 2]  # distinct seeds, sampled votes
    assert all(r.temperature == 0.7 for r in judge.requests)


def test_aspect_critic_even_strictness_is_made_odd_as_ragas():
    m = AspectCritic(name="polite", definition="d", strictness=2)
    assert m.strictness == 3 and m.key == "polite"  # the user's name is the key
    assert AspectCritic(name="polite", definition="d", strictness=4).strictness == 5


def test_aspect_critic_tie_after_a_failed_vote_goes_to_the_first_vote():
    # Counter.most_common keeps insertion order on ties (ragas's rule)
    m = AspectCritic(name="polite", definition="d", strictness=3)
    script = {"aspect_critic": [{"reason": "a", "verdict": 0}, JudgeCallError("truncated"),
                                {"reason": "b", "verdict": 1}]}
    score, _, _ = run(m, S, script)
    assert score.value == 0.0 and score.details["failed_votes"] == ["truncated"]
    script = {"aspect_critic": [JudgeCallError("x")] * 3}
    with pytest.raises(JudgeCallError):
        run(m, S, script)


def test_aspect_critic_soft_is_p_yes_and_majority_probability():
    reply = ScriptedReply({"reason": "r", "verdict": 1}, probs=[{"0": 0.3, "1": 0.7}])
    score, judge, _ = run(POLITE, S, {"aspect_critic": reply}, verdicts="soft")
    assert score.value == pytest.approx(0.7) and judge.requests[0].prob_field == "verdict"
    m3 = AspectCritic(name="polite", definition="d", strictness=3)
    score, judge, _ = run(m3, S, {"aspect_critic": reply}, verdicts="soft")
    assert len(judge.requests) == 1  # one call: the votes' distribution is P(yes)
    assert score.value == pytest.approx(0.7 ** 3 + 3 * 0.7 ** 2 * 0.3)
    assert majority_probability(0.5, 5) == pytest.approx(0.5)


def test_aspect_critic_validation():
    for bad in (dict(name="", definition="d"), dict(name="p", definition=" "),
                dict(name="a,b", definition="d"), dict(name="p", definition="d", strictness=0)):
        with pytest.raises(ValueError):
            AspectCritic(**bad)


def test_signature_entry_changes_with_the_definition():
    _, _, a = run(POLITE, S, critic(1))
    _, _, b = run(AspectCritic(name="polite", definition="Is it rude?"), S, critic(1))
    _, _, c = run(AspectCritic(name="polite", definition="Is the answer polite?", strictness=3),
                  S, critic(1, 1, 1))
    entries = {x.prompt_versions["aspect_critic:polite"] for x in (a, b, c)}
    assert len(entries) == 3  # the wording and the strictness are both part of it
    assert a.prompt_versions["aspect_critic"] == b.prompt_versions["aspect_critic"]


# -- RubricsScore / InstanceRubrics ------------------------------------------------------
RUBRIC = {1: "Wrong.", 2: "Partly right.", 3: "Right but thin.", 4: "Right.", 5: "Complete."}


@pytest.mark.parametrize("level, expected", [(1, 0.0), (3, 0.5), (5, 1.0)])
def test_rubrics_score_scales_the_level(level, expected):
    m = RubricsScore(name="complete", rubrics=RUBRIC)
    score, judge, ctx = run(m, S, {"rubric_score": {"reason": "ok", "score": level}})
    assert score.value == expected and score.details["rating"] == level
    text = judge.requests[0].messages[1]["content"]
    assert text.rstrip().endswith("5: Complete.") and "3: Right but thin." in text
    assert "rubric_score:complete" in ctx.prompt_versions


def test_rubrics_score_grammar_allows_only_the_levels():
    m = RubricsScore(name="complete", rubrics={"score1_description": "bad",
                                                "score3_description": "good"})
    assert m.rubrics == ((1, "bad"), (3, "good"))
    with pytest.raises(JudgeCallError):  # 2 is not a level of this rubric
        run(m, S, {"rubric_score": {"reason": "ok", "score": 2}})


def test_rubrics_score_soft_is_the_expected_level_and_sums_to_one():
    m = RubricsScore(name="complete", rubrics=RUBRIC)
    probs = [{"1": 0.0, "2": 0.0, "3": 0.2, "4": 0.6, "5": 0.2}]
    reply = ScriptedReply({"reason": "ok", "score": 4}, probs=probs)
    score, judge, _ = run(m, S, {"rubric_score": reply}, verdicts="soft")
    assert judge.requests[0].prob_field == "score"
    assert score.details["expected_rating"] == pytest.approx(4.0)
    assert score.value == pytest.approx(0.75)
    assert math.fsum(score.details["distribution"].values()) == pytest.approx(1.0)
    # unnormalised probabilities are renormalised over the levels
    reply = ScriptedReply({"reason": "ok", "score": 4}, probs=[{"4": 0.3, "5": 0.1}])
    score, _, _ = run(m, S, {"rubric_score": reply}, verdicts="soft")
    assert score.value == pytest.approx((4 * 0.75 + 5 * 0.25 - 1) / 4)


def test_rubric_validation():
    with pytest.raises(ValueError, match="levels"):
        RubricsScore(name="r", rubrics={1: "only one"})
    with pytest.raises(ValueError, match="description"):
        RubricsScore(name="r", rubrics={1: "a", 2: ""})


def test_instance_rubrics_reads_the_sample_column():
    m = InstanceRubrics()
    score, judge, _ = run(m, JA, {"rubric_score": {"reason": "正しい", "score": 3}})
    assert score.value == 1.0
    assert "3: 正しい" in judge.requests[0].messages[1]["content"]
    no_col = Sample(id="n", answer="a", row=3)
    score, judge, _ = run(m, no_col, {})
    assert score.value is None and "row 3" in score.reason and "'rubrics'" in score.reason
    bad = Sample(id="b", answer="a", row=4, metadata={"rubrics": "not json"})
    score, _, _ = run(m, bad, {})
    assert score.value is None and "row 4: column 'rubrics'" in score.reason


# -- GEval ---------------------------------------------------------------------------------
def test_geval_with_given_steps_on_a_1_to_10_scale():
    m = GEval(name="helpful", criteria="Is the answer helpful?",
              evaluation_steps=["Check it answers.", "Check it is actionable."], scale=(1, 10))
    score, judge, ctx = run(m, S, {"geval": {"reason": "ok", "score": 7}})
    assert score.value == pytest.approx(6 / 9) and score.details["rating"] == 7
    assert judge.steps() == ["geval"] and score.details["steps_generated"] is False
    assert "2. Check it is actionable." in judge.requests[0].messages[1]["content"]
    assert m.key == "helpful" and "geval:helpful" in ctx.prompt_versions


def test_geval_generates_steps_once_per_criterion():
    m = GEval(name="clear", criteria="Is the answer clear and specific about numbers?")
    # numbering is the template's, repeats are merged (a small judge writes both)
    judge = ScriptedJudge({"geval_steps": {"steps": ["1. Find the numbers.", "Step 2: Judge clarity.",
                                                     "Find the numbers."]},
                           "geval": {"reason": "ok", "score": 4}})
    for _ in range(3):
        score, _, _ = run(m, S, judge)
    assert judge.steps().count("geval_steps") == 1 and judge.steps().count("geval") == 3
    assert score.details["evaluation_steps"] == ["Find the numbers.", "Judge clarity."]
    assert score.value == pytest.approx(0.75)
    steps_req = judge.calls("geval_steps")[0]
    assert steps_req.sample.question is None  # written from the criterion alone


def test_geval_soft_expectation_and_requires():
    m = GEval(name="g", criteria="c", evaluation_steps=["s"], fields=("question", "reference"))
    assert m.requires == ("question", "reference")
    assert m.missing_fields(Sample(id="x", question="q")) == ["reference"]
    probs = [{"1": 0.1, "2": 0.1, "3": 0.2, "4": 0.3, "5": 0.3}]
    reply = ScriptedReply({"reason": "r", "score": 4}, probs=probs)
    score, _, _ = run(m, S, {"geval": reply}, verdicts="soft")
    exp = 0.1 + 0.2 + 0.6 + 1.2 + 1.5
    assert score.details["expected_rating"] == pytest.approx(exp)
    assert score.value == pytest.approx((exp - 1) / 4)
    with pytest.raises(ValueError):
        GEval(name="g", criteria="c", scale=(5, 5))
    with pytest.raises(ValueError):
        GEval(name="g", criteria="c", fields=("answer", "nonsense"))


# -- FactualCorrectness (ragas's arithmetic) -----------------------------------------------
def fc_script(a_claims, a_vs_ref, r_claims=None, r_vs_ans=None):
    """Claims of the answer (then the reference), verdicts against the reference (then the answer)."""
    script = {"claims": [{"statements": a_claims}]
              + ([{"statements": r_claims}] if r_claims is not None else [])}
    script["claim_verdicts"] = [verdicts(*v) for v in (a_vs_ref, r_vs_ans) if v]
    return script


def ragas_reference(tp, fp, fn, mode, beta):
    """ragas's own formula, written out: precision/recall with 1e-8, fbeta, np.round(., 2)."""
    import numpy as np
    if mode == "precision":
        s = tp / (tp + fp + 1e-8)
    elif mode == "recall":
        s = tp / (tp + fn + 1e-8)
    else:
        p = tp / (tp + fp) if tp + fp else 0
        r = tp / (tp + fn) if tp + fn else 0
        s = 0.0 if p == 0 and r == 0 else (1 + beta ** 2) * p * r / (beta ** 2 * p + r)
    return float(np.round(s, 2))


@pytest.mark.parametrize("mode", ["precision", "recall", "f1"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_factual_correctness_matches_ragas(mode, beta):
    a = ["A1", "A2", "A3", "A4"]
    r = ["R1", "R2", "R3"]
    m = FactualCorrectness(mode=mode, beta=beta)
    script = fc_script(a, (1, 1, 1, 0), None if mode == "precision" else r,
                       None if mode == "precision" else (1, 0, 0))
    score, judge, _ = run(m, S, script)
    tp, fp, fn = 3, 1, (0 if mode == "precision" else 2)
    assert score.value == ragas_reference(tp, fp, fn, mode, beta)
    assert (score.details["TP"], score.details["FP"], score.details["FN"]) == (tp, fp, fn)
    # the reference is decomposed only when the mode needs FN (as ragas)
    assert judge.steps().count("claims") == (1 if mode == "precision" else 2)


def test_factual_correctness_edge_cases():
    # no claims from a non-empty answer: a judge failure, unscored in every mode (ragas: 0)
    for mode in ("precision", "recall", "f1"):
        score, judge, _ = run(FactualCorrectness(mode=mode), S,
                              fc_script([], None, ["R1"], (1,)))
        assert score.value is None and score.details["extracted_nothing"] == "answer"
    # no claims from a non-empty reference: unscored where the mode reads them
    # (ragas counts FN = 0, a perfect recall)
    for mode in ("recall", "f1"):
        score, _, _ = run(FactualCorrectness(mode=mode), S, fc_script(["A1", "A2"], (1, 0), []))
        assert score.value is None
        assert score.reason == "judge extracted nothing from a non-empty reference"
    score, _, _ = run(FactualCorrectness(mode="precision"), S,
                      fc_script(["A1", "A2"], (1, 0), []))
    assert score.value == 0.5
    assert ragas_reference(1, 1, 0, "f1", 1.0) == 0.67
    assert factual_score(0, 0, 0, "f1") == 0.0
    with pytest.raises(ValueError):
        FactualCorrectness(beta=0)
    with pytest.raises(ValueError):
        FactualCorrectness(atomicity="medium")


def test_factual_correctness_high_high_shares_statements_with_faithfulness():
    from localeval.metrics import Judging
    judge = ScriptedJudge({"statements": {"statements": ["A1", "A2"]},
                           "faithfulness_verdicts": verdicts(1, 1),
                           "claim_verdicts": [verdicts(1, 0), verdicts(1, 1)]})
    ctx = Judging(judge=judge)
    ctx.begin_sample()
    faith = parse_metrics("faithfulness")[0].score(S, ctx)
    fc = FactualCorrectness(atomicity="high", coverage="high").score(S, ctx)
    assert faith.value == 1.0 and fc.value == ragas_reference(1, 1, 0, "f1", 1.0)
    answer_extractions = [r for r in judge.calls("statements")
                          if "Break the Answer" in r.messages[1]["content"]]
    assert len(answer_extractions) == 1 and "claims" not in judge.steps()


def test_factual_correctness_soft_counts_probabilities():
    probs = [{"0": 0.2, "1": 0.8}, {"0": 0.6, "1": 0.4}]
    script = {"claims": {"statements": ["A1", "A2"]},
              "claim_verdicts": ScriptedReply(verdicts(1, 0), probs=probs)}
    score, _, _ = run(FactualCorrectness(mode="precision"), S, script, verdicts="soft")
    assert score.details["TP"] == pytest.approx(1.2) and score.details["FP"] == pytest.approx(0.8)
    assert score.value == pytest.approx(0.6)


def test_claims_prompt_follows_the_level():
    for atom, cov, marker in (("low", "low", "Keep only the main facts"),
                              ("high", "low", "one fact per claim"),
                              ("low", "high", "Cover every fact")):
        m = FactualCorrectness(mode="precision", atomicity=atom, coverage=cov)
        _, judge, _ = run(m, S, fc_script(["A1"], (1,)))
        assert marker in judge.calls("claims")[0].messages[1]["content"]


# -- keys, spec strings and the TOML file ----------------------------------------------------
TOML = '''
[polite]
type = "aspect_critic"
definition = "Is the answer polite?"
strictness = 3

[complete]
type = "rubrics_score"
rubrics = { 1 = "Misses the point.", 3 = "Answers in part.", 5 = "Answers fully." }

[helpful]
type = "geval"
criteria = "Is the answer helpful?"
evaluation_steps = ["Check it answers the question."]
scale = [1, 10]

[per_sample]
type = "instance_rubrics"
column = "rubric"
'''


def test_metrics_file_defines_metrics_used_by_name(tmp_path):
    f = tmp_path / "criteria.toml"
    f.write_text(TOML, encoding="utf-8")
    defined = load_metrics_file(f)
    assert list(defined) == ["polite", "complete", "helpful", "per_sample"]
    ms = parse_metrics("faithfulness,polite,helpful:threshold=0.6,exact_match", defined)
    assert [m.key for m in ms] == ["faithfulness", "polite", "helpful:threshold=0.6",
                                   "exact_match"]
    assert ms[1] is defined["polite"]
    with pytest.raises(UsageError, match="only 'threshold'"):
        parse_metrics("polite:strictness=5", defined)


@pytest.mark.parametrize("text, message", [
    ("[x]\ntype = 'nope'\n", "[x]: 'type' must be one of"),
    ("[x]\ndefinition = 'd'\n", "(missing)"),
    ("[x]\ntype = 'aspect_critic'\n", "[x]: AspectCritic 'x' needs a definition"),
    ("[x]\ntype = 'aspect_critic'\ndefinition = 'd'\ncolour = 1\n", "unknown parameter colour"),
    ("[faithfulness]\ntype = 'aspect_critic'\ndefinition = 'd'\n", "built-in metric"),
    ("[x\n", "not valid TOML"),
    ("", "defines no metric"),
])
def test_metrics_file_errors_name_the_file_and_table(tmp_path, text, message):
    f = tmp_path / "m.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as e:
        load_metrics_file(f)
    assert message in str(e.value) and str(f) in str(e.value)


# -- the ragas layer -----------------------------------------------------------------------
def test_ragas_class_names_build_the_same_metrics():
    from localeval.ragas import (AspectCritic as RagasCritic, ChrfScore, DistanceMeasure,
                                 InstanceRubrics as RagasInstance, NonLLMStringSimilarity,
                                 RubricsScore as RagasRubrics)
    judge = ScriptedJudge({"aspect_critic": {"reason": "r", "verdict": 1},
                           "rubric_score": {"reason": "r", "score": 2}})
    critic = RagasCritic(name="polite", definition="Is it polite?", strictness=2, llm=judge,
                         max_retries=3)
    assert critic.name == "polite" and critic.metric.strictness == 3
    assert critic.score(user_input="q", response="Thank you!").value == 1.0
    inst = RagasInstance(llm=judge)
    got = inst.score(user_input="q", response="a", rubrics={"score1_description": "bad",
                                                            "score2_description": "ok",
                                                            "score3_description": "good"})
    assert got.value == 0.5 and got.details["rating"] == 2
    assert RagasRubrics(rubrics={1: "a", 5: "b"}).name == "domain_specific_rubrics"
    sim = NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO_WINKLER)
    assert sim.metric.distance == "jaro_winkler"
    assert ChrfScore(kwargs={"word_order": 2}).name == "chrf:word_order=2"
    with pytest.raises(TypeError):
        RagasCritic(name="p", definition="d", colour="red")
