"""Answer-side judge metrics: hand-computed reference values, edge cases, soft verdicts."""

from __future__ import annotations

import numpy as np
import pytest

from localeval.errors import JudgeCallError
from localeval.metrics import Judging, NoEmbedder, get_metric, parse_metrics
from localeval.metrics.answer import (
    AnswerCorrectness,
    AnswerRelevancy,
    AnswerSimilarity,
    Faithfulness,
    NoiseSensitivity,
    embed_text,
    fbeta,
)
from localeval.testing import HashEmbedder
from localeval.testing.metric_util import TableEmbedder, noise_source_and_statements, run, unit, verdicts
from localeval.testing.scripted import ScriptedJudge, ScriptedReply
from localeval.types import Sample

SAMPLE = Sample(
    id="s1",
    question="Who directed Oppenheimer and who played the lead?",
    answer="Christopher Nolan directed Oppenheimer. Cillian Murphy played Oppenheimer. "
           "It was released in 2022.",
    contexts=["Oppenheimer is a 2023 film written and directed by Christopher Nolan.",
              "Cillian Murphy stars as J. Robert Oppenheimer."],
    reference="Christopher Nolan directed Oppenheimer; Cillian Murphy played the title role.",
)
THREE = {"statements": ["Nolan directed Oppenheimer.", "Murphy played Oppenheimer.",
                        "Oppenheimer was released in 2022."]}


# -- faithfulness --------------------------------------------------------------
def test_faithfulness_reference_value():
    score, judge, _ = run(Faithfulness(), SAMPLE,
                          {"statements": THREE, "faithfulness_verdicts": verdicts(1, 0, 1)})
    assert score.value == pytest.approx(0.6667, abs=1e-4)
    assert judge.steps() == ["statements", "faithfulness_verdicts"]
    d = score.details
    assert d["statements"] == THREE["statements"]
    assert [v["verdict"] for v in d["verdicts"]] == [1, 0, 1]
    assert d["verdicts"][1] == {"statement": "Murphy played Oppenheimer.", "reason": "reason 1",
                                "verdict": 0}


def test_faithfulness_no_statements_from_a_non_empty_answer_is_a_judge_failure():
    score, judge, _ = run(Faithfulness(), SAMPLE, {"statements": {"statements": ["  "]}})
    assert score.value is None
    assert score.reason == "judge extracted nothing from a non-empty answer"
    assert score.details["extracted_nothing"] == "answer"
    assert judge.steps() == ["statements"]  # no verdict call


def test_faithfulness_without_contexts_is_zero_without_any_call():
    s = Sample(id="x", question="q", answer="a", contexts=[])
    score, judge, _ = run(Faithfulness(), s, {"statements": THREE})
    assert score.value == 0.0 and judge.steps() == []


def test_faithfulness_verdict_schema_is_sized_to_the_statements():
    # Two verdicts for three statements cannot come out of a grammar built for
    # exactly three; the scripted judge rejects it like a schema violation.
    with pytest.raises(JudgeCallError, match="does not match"):
        run(Faithfulness(), SAMPLE, {"statements": THREE, "faithfulness_verdicts": verdicts(1, 0)})
    judge = ScriptedJudge({"statements": THREE, "faithfulness_verdicts": verdicts(1, 1, 1)})
    run(Faithfulness(), SAMPLE, judge)
    schema = judge.calls("faithfulness_verdicts")[0].schema.model_json_schema()
    assert schema["properties"]["verdicts"]["minItems"] == 3
    assert schema["properties"]["verdicts"]["maxItems"] == 3


def test_faithfulness_judge_error_propagates():
    with pytest.raises(JudgeCallError, match="truncated"):
        run(Faithfulness(), SAMPLE, {"statements": JudgeCallError("output truncated")})


def test_faithfulness_soft_verdicts_use_p1():
    probs = [{"0": 0.1, "1": 0.9}, {"0": 0.8, "1": 0.2}, {"0": 0.3, "1": 0.7}]
    script = {"statements": THREE,
              "faithfulness_verdicts": ScriptedReply(verdicts(1, 0, 1), probs=probs)}
    score, judge, _ = run(Faithfulness(), SAMPLE, script, verdicts="soft")
    assert score.value == pytest.approx((0.9 + 0.2 + 0.7) / 3)
    assert judge.calls("faithfulness_verdicts")[0].prob_field == "verdict"
    assert score.details["verdicts"][0]["p_verdict_1"] == pytest.approx(0.9)
    # hard mode asks for no probabilities and ignores any
    score, judge, _ = run(Faithfulness(), SAMPLE, script)
    assert score.value == pytest.approx(2 / 3)
    assert judge.calls("faithfulness_verdicts")[0].prob_field is None


# -- answer_relevancy ------------------------------------------------------------
def _questions(*pairs):
    return {"questions": [{"question": q, "noncommittal": n} for q, n in pairs]}


REL_EMB = TableEmbedder({SAMPLE.question: [1, 0, 0], "g1": [1, 0, 0], "g2": [0, 1, 0],
                         "g3": unit(0.6, 0.8, 0), "g4": [0, 0, 1]})


def test_answer_relevancy_reference_value_with_noncommittal():
    script = {"answer_relevancy": _questions(("g1", 1), ("g2", 0), ("g3", 0))}
    score, judge, _ = run(AnswerRelevancy(), SAMPLE, script, embedder=REL_EMB)
    assert score.value == pytest.approx(0.5333, abs=1e-4)
    assert [g["cosine"] for g in score.details["generated"]] == pytest.approx([1.0, 0.0, 0.6])
    # ONE call asking for exactly n=3 questions, made from the answer alone
    (req,) = judge.calls()
    props = req.schema.model_json_schema()["properties"]["questions"]
    assert props["minItems"] == props["maxItems"] == 3
    user = req.messages[1]["content"]
    assert "Write 3 different questions" in user
    assert SAMPLE.answer in user and SAMPLE.question not in user


def test_answer_relevancy_all_noncommittal_is_zero():
    script = {"answer_relevancy": _questions(("g1", 1), ("g2", 1), ("g3", 1))}
    score, _, _ = run(AnswerRelevancy(), SAMPLE, script, embedder=REL_EMB)
    assert score.value == 0.0 and score.details["all_noncommittal"] is True


def test_answer_relevancy_negative_cosine_not_clipped_and_strictness():
    emb = TableEmbedder({SAMPLE.question: [1, 0, 0], "neg": [-1, 0, 0], "g1": [1, 0, 0]})
    script = {"answer_relevancy": _questions(("neg", 0), ("g1", 0))}
    score, judge, _ = run(AnswerRelevancy(strictness=2), SAMPLE, script, embedder=emb)
    assert score.value == pytest.approx(0.0)
    assert judge.calls()[0].messages[1]["content"].count("Write 2 different questions") == 1


def test_answer_relevancy_empty_generations_unscored():
    script = {"answer_relevancy": _questions(("", 0), (" ", 0), ("", 1))}
    score, _, _ = run(AnswerRelevancy(), SAMPLE, script, embedder=REL_EMB)
    assert score.value is None and "empty" in score.reason


def test_answer_relevancy_declarations():
    m = AnswerRelevancy()
    assert m.texts_to_embed(SAMPLE) == [SAMPLE.question]
    assert m.uses_judge and m.uses_embedder
    with pytest.raises(ValueError):
        AnswerRelevancy(strictness=0)
    script = {"answer_relevancy": _questions(("g1", 0), ("g2", 0), ("g3", 0))}
    with pytest.raises(NoEmbedder):
        run(m, SAMPLE, script)


# -- answer_similarity -------------------------------------------------------------
def test_answer_similarity_cosine_threshold_and_alias():
    emb = TableEmbedder({SAMPLE.answer: [1, 0, 0], SAMPLE.reference: unit(0.6, 0.8, 0)})
    assert run(AnswerSimilarity(), SAMPLE, {}, embedder=emb)[0].value == pytest.approx(0.6)
    assert run(AnswerSimilarity(threshold=0.5), SAMPLE, {}, embedder=emb)[0].value == 1.0
    assert run(AnswerSimilarity(threshold=0.7), SAMPLE, {}, embedder=emb)[0].value == 0.0
    assert get_metric("semantic_similarity") is AnswerSimilarity
    assert AnswerSimilarity().texts_to_embed(SAMPLE) == [SAMPLE.answer, SAMPLE.reference]
    with pytest.raises(ValueError):
        AnswerSimilarity(threshold=0)


def test_answer_similarity_identical_texts_with_hash_embedder():
    s = Sample(id="same", answer="Paris is the capital.", reference="Paris is the capital.")
    score, _, _ = run(AnswerSimilarity(), s, {}, embedder=HashEmbedder())
    assert score.value == pytest.approx(1.0)
    other = Sample(id="diff", answer="Paris is the capital.", reference="Bananas are yellow.")
    assert run(AnswerSimilarity(), other, {}, embedder=HashEmbedder())[0].value < 0.9


def test_answer_similarity_of_an_empty_answer_is_zero_without_embedding():
    # ragas embeds "" as " ", whose cosine with a reference can be high (here 1.0):
    # an empty answer is decided before, as 0.0
    s = Sample(id="e", answer="", reference="ref")
    emb = TableEmbedder({" ": [0, 1, 0], "ref": [0, 1, 0]})
    score, judge, _ = run(AnswerSimilarity(), s, {}, embedder=emb)
    assert score.value == 0.0 and emb.calls == [] and judge.requests == []
    assert embed_text("") == " "  # still the text embedded for an empty question


# -- answer_correctness ------------------------------------------------------------
SUN = Sample(
    id="sun",
    question="What powers the sun and what is its primary function?",
    answer="The sun is powered by nuclear fission. Its primary function is to provide light "
           "to the solar system.",
    reference="The sun is powered by nuclear fusion, where hydrogen atoms fuse to form helium. "
              "This fusion process releases a tremendous amount of energy.",
)
SUN_EMB = TableEmbedder({SUN.answer: [1, 0, 0], SUN.reference: unit(0.6, 0.8, 0)})


def _statements_by_target(answer, reference):
    def f(req):
        text = req.messages[1]["content"]
        return {"statements": answer if "Break the Answer" in text else reference}
    return f


def _classified(answer, reference):
    """answer_correctness output: one verdict per answer statement (1 TP, 0 FP) and per
    reference statement (1 covered, 0 FN), in order."""
    return {"answer": [{"reason": "because", "verdict": v} for v in answer],
            "reference": [{"reason": "because", "verdict": v} for v in reference]}


SUN_SCRIPT = {
    "statements": _statements_by_target(
        ["The sun is powered by nuclear fission.", "The sun provides light to the solar system."],
        ["The sun is powered by nuclear fusion.", "Fusion releases a lot of energy.",
         "Hydrogen fuses into helium."]),
    # TP: provides light; FP: fission; FN: fusion, energy (hydrogen is covered)
    "answer_correctness": _classified([0, 1], [0, 0, 1]),
}


def test_answer_correctness_reference_value():
    # TP=1 FP=1 FN=2: F1 = 1 / (1 + 0.5*3) = 0.4 (a ragas write-up miscomputes it as 0.5
    # and prints 0.525); 0.75*0.4 + 0.25*0.6 = 0.45.
    score, judge, _ = run(AnswerCorrectness(), SUN, SUN_SCRIPT, embedder=SUN_EMB)
    assert score.details["factuality"] == pytest.approx(0.4)
    assert score.details["similarity"] == pytest.approx(0.6)
    assert score.value == pytest.approx(0.45)
    assert judge.steps() == ["statements", "statements", "answer_correctness"]
    assert len(score.details["FN"]) == 2 and score.details["TP"][0]["reason"] == "because"
    user = judge.calls("answer_correctness")[0].messages[1]["content"]
    assert "1. The sun is powered by nuclear fission." in user
    assert "3. Hydrogen fuses into helium." in user


def test_answer_correctness_weights_and_beta():
    score, _, _ = run(AnswerCorrectness(weights=(0.5, 0.5)), SUN, SUN_SCRIPT, embedder=SUN_EMB)
    assert score.value == pytest.approx(0.5)
    # beta=2 weights recall: p=0.5, r=1/3 -> 5*(1/6)/(2+1/3) = 0.357142...
    score, _, _ = run(AnswerCorrectness(beta=2.0), SUN, SUN_SCRIPT, embedder=SUN_EMB)
    assert score.details["factuality"] == pytest.approx(5 * (1 / 6) / (2 + 1 / 3))


def test_answer_correctness_skips_embedder_when_similarity_weight_is_zero():
    m = AnswerCorrectness(weights=(1, 0))
    assert m.uses_embedder is False and m.texts_to_embed(SUN) == []
    assert AnswerCorrectness().uses_embedder is True
    assert AnswerCorrectness().texts_to_embed(SUN) == [SUN.answer, SUN.reference]
    score, _, _ = run(m, SUN, SUN_SCRIPT, embedder=None)  # no embedder needed
    assert score.value == pytest.approx(0.4) and "similarity" not in score.details


@pytest.mark.parametrize("weights", [(-0.1, 1.0), (0.0, 0.0), (1.0,), (0.5, float("nan"))])
def test_answer_correctness_rejects_bad_weights(weights):
    with pytest.raises(ValueError):
        AnswerCorrectness(weights=weights)


def test_answer_correctness_weights_from_spec_string():
    (m,) = parse_metrics("answer_correctness:weights=0.5,0.5")
    assert m.weights == (0.5, 0.5)


def test_answer_correctness_nothing_extracted_from_both_texts_is_unscored_not_one():
    # two non-empty texts without statements: the judge failed; that is not agreement
    script = {"statements": {"statements": []}}
    emb = TableEmbedder({SUN.answer: [1, 0, 0], SUN.reference: [1, 0, 0]})
    score, judge, _ = run(AnswerCorrectness(), SUN, script, embedder=emb)
    assert score.value is None
    assert score.reason == "judge extracted nothing from a non-empty answer"
    assert "answer_correctness" not in judge.steps() and emb.calls == []


@pytest.mark.parametrize("answer, reference, side", [([], ["A fact."], "answer"),
                                                     (["A fact."], [], "reference")])
def test_answer_correctness_one_side_without_statements_is_unscored(answer, reference, side):
    script = {"statements": _statements_by_target(answer, reference)}
    score, judge, _ = run(AnswerCorrectness(weights=(1, 0)), SUN, script)
    assert score.value is None and score.details["extracted_nothing"] == side
    assert score.reason == f"judge extracted nothing from a non-empty {side}"
    assert "answer_correctness" not in judge.steps()


def test_answer_correctness_classifies_each_statement_once_by_position():
    score, judge, _ = run(AnswerCorrectness(weights=(1, 0)), SUN, SUN_SCRIPT)
    d = score.details
    a_st, g_st = d["answer_statements"], d["reference_statements"]
    tp, fp, fn = ([i["statement"] for i in d[k]] for k in ("TP", "FP", "FN"))
    # TP and FP partition the answer statements, FN is a subset of the reference's:
    # every listed statement is an input statement, none in two classes
    assert sorted(tp + fp) == sorted(a_st) and not set(tp) & set(fp)
    assert set(fn) <= set(g_st) and len(fn) == len(set(fn))
    assert fn == ["The sun is powered by nuclear fusion.", "Fusion releases a lot of energy."]
    # the grammar sizes both verdict lists exactly
    props = judge.calls("answer_correctness")[0].schema.model_json_schema()["properties"]
    assert (props["answer"]["minItems"], props["answer"]["maxItems"]) == (2, 2)
    assert (props["reference"]["minItems"], props["reference"]["maxItems"]) == (3, 3)
    # a reply with a verdict too many or too few is a schema violation, not a count
    for bad in (_classified([1, 1, 1], [0, 0, 1]), _classified([1, 0], [0, 1])):
        with pytest.raises(JudgeCallError, match="does not match"):
            run(AnswerCorrectness(weights=(1, 0)), SUN, {**SUN_SCRIPT, "answer_correctness": bad})


def test_duplicate_statements_are_merged_before_verdicts():
    dup = {"statements": ["Nolan directed Oppenheimer.", "  nolan directed  OPPENHEIMER ",
                          "Murphy played Oppenheimer.", "Nolan directed Oppenheimer", "."]}
    score, judge, _ = run(Faithfulness(), SAMPLE, {"statements": dup,
                                                   "faithfulness_verdicts": verdicts(1, 0)})
    assert score.details["statements"] == ["Nolan directed Oppenheimer.",
                                           "Murphy played Oppenheimer."]
    assert score.details["duplicates_merged"] == 2
    assert score.value == pytest.approx(0.5)
    req = judge.calls("faithfulness_verdicts")[0]
    assert req.schema.model_json_schema()["properties"]["verdicts"]["maxItems"] == 2
    # answer_correctness counts the merges of both sides
    script = {"statements": _statements_by_target(["X is 1.", "x is 1"], ["Y is 2.", "Y is 2."]),
              "answer_correctness": _classified([0], [0])}
    score, _, _ = run(AnswerCorrectness(weights=(1, 0)), SUN, script)
    assert score.details["duplicates_merged"] == 2
    assert score.details["answer_statements"] == ["X is 1."]


def test_statement_budget_follows_the_source():
    from localeval.metrics.output_bounds import STATEMENT_MARGIN, STATEMENTS_PER_SENTENCE

    judge = ScriptedJudge({"statements": THREE, "faithfulness_verdicts": verdicts(1, 1, 1)})
    run(Faithfulness(), SAMPLE, judge)
    props = judge.calls("statements")[0].schema.model_json_schema()["properties"]["statements"]
    longest = len("Christopher Nolan directed Oppenheimer.")  # SAMPLE.answer: 3 sentences
    assert props["maxItems"] == 3 * STATEMENTS_PER_SENTENCE
    assert props["items"]["maxLength"] == longest + STATEMENT_MARGIN
    # a reason is bounded by the statements it is about
    reason = judge.calls("faithfulness_verdicts")[0].schema.model_json_schema()
    bound = next(iter(reason["$defs"].values()))["properties"]["reason"]["maxLength"]
    assert bound < 160 and bound > max(len(x) for x in THREE["statements"])


@pytest.mark.parametrize("lang, evasive", [("en", "I'm not sure"), ("ja", "分かりません"),
                                           ("zh", "我不确定")])
def test_answer_relevancy_prompt_shows_a_noncommittal_example(lang, evasive):
    from localeval.prompts import render

    user = render("answer_relevancy", SAMPLE, lang=lang, n=3)[0][1]["content"]
    assert '"noncommittal": 1' in user and '"noncommittal": 0' in user
    assert evasive in user
    bare = render("answer_relevancy", SAMPLE, lang=lang, n=3, examples=False)[0][1]["content"]
    assert '"noncommittal": 1' not in bare and "noncommittal is 1 if the Answer" in bare


def test_fbeta_edges():
    assert fbeta(1, 1, 2) == pytest.approx(0.4)
    assert fbeta(0, 0, 0) == 0.0
    assert fbeta(0, 3, 0) == 0.0
    assert fbeta(2, 0, 0) == 1.0


def test_answer_correctness_chinese_seed_004():
    """The Chinese answer-correctness article's case: ground truth 爱因斯坦于1879年出生在德国, low-correctness answer says Spain."""
    s = Sample(id="zh", question="爱因斯坦出生在哪里？", answer="爱因斯坦于1879年出生在西班牙。",
               reference="爱因斯坦于1879年出生在德国。")
    script = {
        "statements": _statements_by_target(["爱因斯坦出生于1879年。", "爱因斯坦出生于西班牙。"],
                                            ["爱因斯坦出生于1879年。", "爱因斯坦出生于德国。"]),
        "answer_correctness": _classified([1, 0], [1, 0]),
    }
    emb = TableEmbedder({s.answer: [1, 0, 0], s.reference: unit(0.9, 0.1, 0)})
    score, judge, _ = run(AnswerCorrectness(), s, script, embedder=emb)
    assert score.details["factuality"] == pytest.approx(0.5)
    cos = float(np.dot(unit(1, 0, 0), unit(0.9, 0.1, 0)))
    assert score.value == pytest.approx(0.75 * 0.5 + 0.25 * cos)
    for req in judge.requests:
        user = req.messages[1]["content"]
        assert "in Chinese" in user
        assert "Einstein" not in user  # English few-shot not used
    assert "爱因斯坦出生于西班牙。" in judge.calls("answer_correctness")[0].messages[1]["content"]


# -- noise_sensitivity ---------------------------------------------------------------
G = ["G1 fact.", "G2 fact."]
A = ["A1 claim.", "A2 claim.", "A3 claim."]
NOISE = Sample(id="n", question="q", answer="A1. A2. A3.", reference="G1. G2.",
               contexts=["context one", "context two"])
# verdicts[source][statement] -- the checked case:
#   context 1 supports G1, G2 (relevant) and A1; context 2 supports A2 only (irrelevant);
#   the reference supports A3 only, so A1 and A2 are incorrect.
SUPPORT = {1: {"G1 fact.": 1, "G2 fact.": 1, "A1 claim.": 1},
           2: {"A2 claim.": 1},
           "reference": {"A3 claim.": 1}}


def _noise_script():
    def stmts(req):
        text = req.messages[1]["content"]
        return {"statements": A if "Break the Answer" in text else G}

    def judge_source(req):
        source, names = noise_source_and_statements(req)
        return verdicts(*[SUPPORT[source].get(n, 0) for n in names])

    return {"statements": stmts, "noise_verdicts": judge_source}


def _ragas_noise(r2g, r2a, g2a, mode):
    """ragas 0.4 NoiseSensitivity._compute_score, shapes as there: [G,K], [A,K], [1,A]."""
    r2g, r2a = np.array(r2g, bool), np.array(r2a, bool)
    g2a = np.array([g2a], bool)
    incorrect = ~g2a
    relevant_retrieved = np.max(r2g, axis=0, keepdims=True)
    relevant_faithful = np.max(relevant_retrieved & r2a, axis=1)
    if mode == "irrelevant":
        irrelevant_retrieved = ~np.max(r2g, axis=0, keepdims=True)
        irrelevant_faithful = np.max(irrelevant_retrieved & r2a, axis=1)
        irrelevant_faithful &= ~relevant_faithful
        return float(np.mean(irrelevant_faithful & incorrect))
    return float(np.mean(relevant_faithful & incorrect))


@pytest.mark.parametrize("mode", ["relevant", "irrelevant"])
def test_noise_sensitivity_checked_case(mode):
    score, judge, _ = run(NoiseSensitivity(mode=mode), NOISE, _noise_script())
    r2g = [[SUPPORT[k].get(g, 0) for k in (1, 2)] for g in G]
    r2a = [[SUPPORT[k].get(a, 0) for k in (1, 2)] for a in A]
    g2a = [SUPPORT["reference"].get(a, 0) for a in A]
    expected = _ragas_noise(r2g, r2a, g2a, mode)
    assert expected == pytest.approx(1 / 3)
    assert score.value == pytest.approx(expected)
    # 2 statement extractions + 2K per-context verdicts + 1 vs the reference
    assert judge.steps().count("statements") == 2
    assert judge.steps().count("noise_verdicts") == 2 * 2 + 1
    assert score.details["relevant_contexts"] == [1]
    assert score.details["counted_statements"] == (["A1 claim."] if mode == "relevant"
                                                   else ["A2 claim."])
    assert NoiseSensitivity.lower_is_better


def test_noise_sensitivity_unscored_cases():
    script = {"statements": {"statements": []}}
    score, _, _ = run(NoiseSensitivity(), NOISE, script)
    assert score.value is None and "answer" in score.reason
    s = Sample(id="n0", question="q", answer="a", reference="r", contexts=[])
    score, _, _ = run(NoiseSensitivity(), s, {"statements": {"statements": ["x"]}})
    assert score.value is None and "contexts" in score.reason
    with pytest.raises(ValueError):
        NoiseSensitivity(mode="both")  # type: ignore[arg-type]
    assert parse_metrics("noise_sensitivity:mode=irrelevant")[0].key == \
        "noise_sensitivity:mode=irrelevant"


# -- shared statement extraction -------------------------------------------------------
def test_answer_statements_extracted_once_for_three_metrics():
    judge = ScriptedJudge({**_noise_script(), "faithfulness_verdicts": verdicts(1, 1, 0),
                           "answer_correctness": _classified([0, 0, 0], [0, 0])})
    ctx = Judging(judge=judge, embedder=HashEmbedder())
    ctx.begin_sample()
    for m in (Faithfulness(), AnswerCorrectness(), NoiseSensitivity()):
        assert m.score(NOISE, ctx).scored
    extractions = judge.calls("statements")
    assert len(extractions) == 2  # once for the answer, once for the reference
    assert sum("Break the Answer" in r.messages[1]["content"] for r in extractions) == 1
    # a new sample forgets the memo
    ctx.begin_sample()
    Faithfulness().score(NOISE, ctx)
    assert len(judge.calls("statements")) == 3
