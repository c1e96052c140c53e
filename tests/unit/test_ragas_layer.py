"""The ragas drop-in's shapes, without a judge: result mapping, datasets, class names,
constructor arguments and misspelt keywords (model-free metrics do the scoring)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from rouge_score import rouge_scorer

from localeval.errors import JudgeCallError
from localeval.ragas import EvaluationDataset, SingleTurnSample, evaluate
from localeval.ragas import metrics as rm
from localeval.testing import ScriptedJudge

ROWS = [
    {"user_input": "Where do cats sit?", "response": "The cats were sitting on the mats.",
     "reference": "The cat sat on the mat.", "retrieved_contexts": ["Cats sit on mats."]},
    {"user_input": "Greeting?", "response": "hello world", "reference": "goodbye world"},
]


def test_evaluation_result_is_a_mapping_of_means():
    result = evaluate(EvaluationDataset.from_list(ROWS), [rm.BleuScore(), rm.RougeScore()],
                      show_progress=False)
    keys = ["bleu", "rougeL:stem=True"]
    assert list(result.keys()) == keys and list(result) == keys and len(result) == 2
    assert dict(result) == {k: result[k] for k in keys}
    assert "bleu" in result and "faithfulness" not in result
    assert dict(result.items()) == dict(result) and result.get("nope") is None
    with pytest.raises(KeyError):
        result["faithfulness"]
    means = {k: sum(s[k].value for s in result.scores) / 2 for k in keys}
    assert dict(result) == pytest.approx(means)
    assert repr(result) == "{" + ", ".join(f"'{k}': {round(v, 4)}" for k, v in means.items()) + "}"


def test_to_pandas_carries_unscored_reasons():
    """A judge that fails on the second sample: NaN score, and the reason beside it."""

    def rate(request):
        if "goodbye" in str(request.messages):
            return JudgeCallError("output truncated at the token limit")
        return {"rating": 4}

    judge = ScriptedJudge({"nv_answer_accuracy_1": rate, "nv_answer_accuracy_2": rate})
    result = evaluate(ROWS, [rm.AnswerAccuracy(llm=judge)], show_progress=False)
    df = result.to_pandas()
    assert df["nv_answer_accuracy"].iloc[0] == 1.0 and math.isnan(df["nv_answer_accuracy"].iloc[1])
    assert pd.isna(df["nv_answer_accuracy_reason"].iloc[0])
    assert "truncated" in df["nv_answer_accuracy_reason"].iloc[1]
    assert result["nv_answer_accuracy"] == 1.0  # the mean skips the unscored sample


def test_evaluation_dataset_pandas_round_trip_and_indexing():
    df = pd.DataFrame(ROWS)
    ds = EvaluationDataset.from_pandas(df)
    assert len(ds) == 2 and isinstance(ds[0], SingleTurnSample)
    assert ds[0].response == ROWS[0]["response"] and ds[-1]["reference"] == "goodbye world"
    assert "retrieved_contexts" not in ds[1]  # the NaN cell of a missing column is absent
    assert isinstance(ds[1:], EvaluationDataset) and len(ds[1:]) == 1
    assert [s["user_input"] for s in ds] == [r["user_input"] for r in ROWS]
    back = ds.to_pandas()
    assert back.columns.tolist() == ["user_input", "response", "reference", "retrieved_contexts"]
    assert back["response"].tolist() == df["response"].tolist()
    assert EvaluationDataset.from_hf_dataset(ds.to_hf_dataset()).to_list()[0] == ds.to_list()[0]
    assert ds.features() == ["user_input", "response", "reference", "retrieved_contexts"]


@pytest.mark.parametrize("cls, key", [
    (rm.LLMContextRecall, "context_recall"),
    (rm.LLMContextPrecisionWithReference, "context_precision"),
    (rm.LLMContextPrecisionWithoutReference, "context_utilization"),
    (rm.ResponseRelevancy, "answer_relevancy"),
    (rm.Faithfulness, "faithfulness"),
    (rm.ContextEntityRecall, "context_entity_recall"),
    (rm.NoiseSensitivity, "noise_sensitivity"),
    (rm.AnswerCorrectness, "answer_correctness"),
    (rm.SemanticSimilarity, "answer_similarity"),
    (rm.ContextRelevance, "nv_context_relevance"),
    (rm.AnswerAccuracy, "nv_answer_accuracy"),
    (rm.ResponseGroundedness, "nv_response_groundedness"),
    (rm.BleuScore, "bleu"),
    (rm.RougeScore, "rougeL:stem=True"),
])
def test_ragas_class_names_map_to_localeval_metrics(cls, key):
    m = cls(max_retries=3)  # a ragas argument with no meaning offline is accepted
    assert m.name == key and type(m).__name__ == cls.__name__
    with pytest.raises(TypeError, match="unexpected keyword argument 'temprature'"):
        cls(temprature=0.5)


def test_ragas_constructor_arguments():
    assert rm.ResponseRelevancy(strictness=5).name == "answer_relevancy:strictness=5"
    assert rm.AnswerCorrectness(weights=[0.5, 0.5], beta=2.0).name == \
        "answer_correctness:weights=0.5,0.5;beta=2.0"
    assert rm.NoiseSensitivity(mode="irrelevant").name == rm.NoiseSensitivity(
        focus="irrelevant").name == "noise_sensitivity:mode=irrelevant"
    assert rm.noise_sensitivity_irrelevant.name == "noise_sensitivity:mode=irrelevant"
    assert rm.RougeScore(rouge_type="rouge1", mode="precision").name == \
        "rouge1:stem=True;measure=p" == rm.RougeScore(rouge_type="rouge1",
                                                      measure_type="precision").name
    assert rm.BleuScore(kwargs={"lowercase": True, "max_ngram_order": 2}).name == \
        "bleu:max_order=2;lowercase=True"
    with pytest.raises(TypeError, match="sacrebleu option 'force'"):
        rm.BleuScore(kwargs={"force": True})
    with pytest.raises(ValueError, match="rouge_type"):
        rm.RougeScore(rouge_type="rougeLsum")
    with pytest.raises(ValueError, match="is_cross_encoder"):
        rm.SemanticSimilarity(is_cross_encoder=True)
    with pytest.raises(TypeError, match="name=.*not supported"):
        rm.Faithfulness(name="my_faithfulness")


def test_rouge_score_equals_ragas_computation():
    """ragas's RougeScore: rouge-score with use_stemmer=True, reference first."""
    ref, resp = "The cat sat on the mat.", "The cats were sitting on the mats."
    for rouge_type in ("rouge1", "rougeL"):
        for mode in ("fmeasure", "precision", "recall"):
            want = getattr(rouge_scorer.RougeScorer([rouge_type], use_stemmer=True)
                           .score(ref, resp)[rouge_type], mode)
            got = rm.RougeScore(rouge_type=rouge_type, mode=mode).score(response=resp,
                                                                        reference=ref)
            assert got.value == pytest.approx(want, abs=1e-9), (rouge_type, mode)


def test_misspelt_keyword_raises_type_error_not_a_missing_answer():
    with pytest.raises(TypeError, match="'respnse'; did you mean 'response'"):
        rm.BleuScore().score(respnse="hello world", reference="hello world")
    with pytest.raises(TypeError, match="'respnse'"):
        rm.BleuScore().single_turn_score({"respnse": "x", "reference": "y"})
    ok = rm.BleuScore().score(response="hello world", reference="hello world")
    assert ok.value == pytest.approx(1.0)
    # a genuinely absent field is still an unscored sample with its reason, as before
    missing = rm.BleuScore().score(response="hello world")
    assert missing.value is None and "reference" in missing.reason


def test_column_map_is_honoured_with_ragas_names():
    rows = [{"my_answer": r["response"], "gold": r["reference"]} for r in ROWS]
    mapped = evaluate(rows, [rm.BleuScore()], column_map={"response": "my_answer",
                                                          "ground_truth": "gold"},
                      show_progress=False, raise_exceptions=False)
    plain = evaluate(ROWS, [rm.BleuScore()], show_progress=False)
    assert dict(mapped) == dict(plain)
