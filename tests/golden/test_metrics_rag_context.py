"""Context-side judge metrics: reference values, per-context layout, edge cases."""

from __future__ import annotations

import pytest

from localeval.errors import JudgeCallError
from localeval.metrics.rag_context import (
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    ContextRelevancy,
    ContextUtilization,
)
from localeval.metrics.rankings import average_precision
from localeval.testing.metric_util import run
from localeval.testing.scripted import ScriptedReply
from localeval.types import Sample

CTXS = ["Canberra is the capital of Australia.", "Australia borders no country by land.",
        "Sydney has an opera house.", "Canberra has about 460,000 inhabitants."]
SAMPLE = Sample(id="c", question="What is the capital of Australia?", answer="Canberra.",
                contexts=CTXS, reference="The capital of Australia is Canberra.")


def _useful(*values):
    return [{"reason": f"r{i}", "verdict": v} for i, v in enumerate(values)]


@pytest.mark.parametrize("cls", [ContextPrecision, ContextUtilization])
def test_average_precision_reference_values(cls):
    score, judge, _ = run(cls(), SAMPLE, {cls.name: _useful(0, 1, 0, 1)})
    assert score.value == pytest.approx(0.5, abs=1e-6)
    assert [v["verdict"] for v in score.details["verdicts"]] == [0, 1, 0, 1]
    # one call per context, in rank order, each naming its context by number
    reqs = judge.calls(cls.name)
    assert len(reqs) == 4
    for k, req in enumerate(reqs, start=1):
        user = req.messages[1]["content"]
        task = user[user.index("# Task"):]
        assert f"context [{k}]" in task
        for c in CTXS:  # contexts appear once, in the sample block, never repeated
            assert user.count(c) == 1 and c not in task
    target = "Reference" if cls is ContextPrecision else "Answer"
    assert f"arriving at the {target}" in reqs[0].messages[1]["content"]


def test_average_precision_no_useful_context_or_none():
    s3 = Sample(id="z", question="q", contexts=["a", "b", "c"], reference="r")
    assert run(ContextPrecision(), s3, {"context_precision": _useful(0, 0, 0)})[0].value == 0.0
    s0 = Sample(id="z0", question="q", contexts=[], reference="r")
    score, judge, _ = run(ContextPrecision(), s0, {})
    assert score.value == 0.0 and judge.requests == []


def test_average_precision_function():
    assert average_precision([1, 1, 1]) == pytest.approx(1.0)
    assert average_precision([1, 0, 0]) == pytest.approx(1.0)
    assert average_precision([0, 0, 1]) == pytest.approx(1 / 3)
    assert average_precision([]) == 0.0


def test_context_precision_soft_verdicts():
    probs = [[{"0": 0.5, "1": 0.5}], [{"0": 0.0, "1": 1.0}]]
    s = Sample(id="p", question="q", contexts=["a", "b"], reference="r")
    script = {"context_precision": [ScriptedReply({"reason": "r", "verdict": v}, probs=p)
                                    for v, p in zip((1, 1), probs)]}
    score, judge, _ = run(ContextPrecision(), s, script, verdicts="soft")
    # v = [0.5, 1.0]: (0.5/1*0.5 + 1.5/2*1.0) / 1.5
    assert score.value == pytest.approx((0.25 + 0.75) / 1.5)
    assert all(r.prob_field == "verdict" for r in judge.requests)
    assert score.details["verdicts"][0]["p_verdict_1"] == pytest.approx(0.5)


def test_context_precision_judge_error_propagates():
    with pytest.raises(JudgeCallError):
        run(ContextPrecision(), SAMPLE,
            {"context_precision": [{"reason": "r", "verdict": 1}, JudgeCallError("boom")]})


# -- context_recall ------------------------------------------------------------
# The reference is split into sentences by localeval; the judge gives one verdict per
# numbered sentence and writes no sentence text of its own.
RECALL = Sample(id="r", question="What is the capital of Australia?", contexts=CTXS,
                reference="The capital of Australia is Canberra. It has about 460,000 "
                          "inhabitants. It is home to the national parliament.")


def _classified(*values):
    return {"verdicts": [{"reason": "r", "verdict": v} for v in values]}


def test_context_recall_reference_value_and_unscored():
    score, judge, _ = run(ContextRecall(), RECALL, {"context_recall": _classified(1, 0, 1)})
    assert score.value == pytest.approx(0.6667, abs=1e-4)
    assert len(judge.requests) == 1
    rows = score.details["classifications"]
    assert [r["statement"] for r in rows] == ["The capital of Australia is Canberra.",
                                              "It has about 460,000 inhabitants.",
                                              "It is home to the national parliament."]
    assert [r["verdict"] for r in rows] == [1, 0, 1]
    # exactly one verdict per sentence, no statement field the judge could invent
    (req,) = judge.requests
    props = req.schema.model_json_schema()
    assert props["properties"]["verdicts"]["minItems"] == 3
    assert props["properties"]["verdicts"]["maxItems"] == 3
    verdict = props["$defs"][props["properties"]["verdicts"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert list(verdict["properties"]) == ["reason", "verdict"]
    task = req.messages[1]["content"].split("# Task", 1)[1]
    assert "\n2. It has about 460,000 inhabitants.\n" in task
    with pytest.raises(JudgeCallError, match="does not match"):
        run(ContextRecall(), RECALL, {"context_recall": _classified(1, 0)})
    blank = Sample(id="b", question="q", contexts=CTXS, reference="  ")
    score, judge, _ = run(ContextRecall(), blank, {})
    assert score.value is None and score.reason == "the reference is empty"
    assert judge.requests == []


def test_context_recall_soft():
    probs = [{"1": 0.75, "0": 0.25}, {"1": 0.25, "0": 0.75}]
    two = Sample(id="r2", question="q", contexts=CTXS,
                 reference="Canberra is the capital. Sydney is the largest city.")
    script = {"context_recall": ScriptedReply(_classified(1, 0), probs=probs)}
    score, judge, _ = run(ContextRecall(), two, script, verdicts="soft")
    assert score.value == pytest.approx(0.5)
    assert judge.requests[0].prob_field == "verdict"
    assert score.details["classifications"][0]["p_verdict_1"] == pytest.approx(0.75)


# -- context_entity_recall --------------------------------------------------------
def _entities_script(ref, ctx):
    def f(req):
        text = req.messages[1]["content"]
        return {"entities": ref if "entities in the Reference" in text else ctx}
    return {"entities": f}


def test_context_entity_recall_reference_value():
    score, judge, _ = run(ContextEntityRecall(), SAMPLE, _entities_script(
        ["capital of Australia", "Australia", "Canberra"],
        ["Australia", "Canberra", "Sydney", "460,000"]))
    assert score.value == pytest.approx(0.6667, abs=1e-4)
    assert score.details["common"] == ["Australia", "Canberra"]
    assert score.details["dropped"] == 0
    assert len(judge.requests) == 2


def test_context_entity_recall_counts_reference_duplicates_and_empty():
    score, _, _ = run(ContextEntityRecall(), SAMPLE,
                      _entities_script(["Canberra", "Canberra", "Australia"], ["Canberra"]))
    assert score.value == pytest.approx(1 / 3)  # ragas: |{Canberra}| / len([C, C, A])
    # a non-empty reference without entities: the judge failed, unscored, contexts not asked
    score, judge, _ = run(ContextEntityRecall(), SAMPLE, _entities_script([], ["Canberra"]))
    assert score.value is None and len(judge.requests) == 1
    assert score.reason == "judge extracted nothing from a non-empty reference"
    # contexts without entities (an unrelated passage) recall nothing
    score, judge, _ = run(ContextEntityRecall(), SAMPLE, _entities_script(["Canberra"], []))
    assert score.value == 0.0 and len(judge.requests) == 2


def test_context_entity_recall_drops_entities_not_in_their_source():
    # Made-up entities, and parts of words, are not in the text they were taken from.
    score, judge, _ = run(ContextEntityRecall(), SAMPLE, _entities_script(
        ["Canberra", "Melbourne", "Canber", "capital"],
        ["canberra", "Canberra", "Perth", "60,000", "４６０,０００"]))
    d = score.details
    assert d["reference_entities"] == ["Canberra", "capital"]
    assert d["dropped_reference_entities"] == ["Melbourne", "Canber"]
    # normalised occurrence: case and full-width forms are the same text
    assert d["context_entities"] == ["canberra", "Canberra", "４６０,０００"]
    assert d["dropped_context_entities"] == ["Perth", "60,000"]
    assert d["dropped"] == 4
    assert score.value == pytest.approx(0.5)  # Canberra of {Canberra, capital}
    # the list and its strings are bounded by the source: no more entities than the
    # reference's 6 words, none longer than the floor of 32 characters (< its 37)
    schema = judge.requests[0].schema.model_json_schema()["properties"]["entities"]
    assert schema["maxItems"] == 6 and schema["items"]["maxLength"] == 32
    # nothing left of the reference: extracted nothing real, unscored, contexts not asked
    score, judge, _ = run(ContextEntityRecall(), SAMPLE, _entities_script(["Perth"], ["x"]))
    assert score.value is None and len(judge.requests) == 1
    assert score.details["extracted_nothing"] == "reference"
    assert score.details["dropped_reference_entities"] == ["Perth"]


def test_context_entity_recall_japanese_entities_match_inside_words():
    s = Sample(id="ja", question="q", reference="正社員には入社半年後に10日の年次有給休暇が付与されます。",
               contexts=["入社から6か月後に年次有給休暇が10日付与される。"])
    score, _, _ = run(ContextEntityRecall(), s, _entities_script(
        ["10日", "年次有給休暇", "エッフェル塔"], ["年次有給休暇", "10日", "6か月"]))
    assert score.details["reference_entities"] == ["10日", "年次有給休暇"]
    assert score.details["dropped_reference_entities"] == ["エッフェル塔"]
    assert score.value == pytest.approx(1.0)


# -- context_relevancy (legacy) ------------------------------------------------------
EINSTEIN_JA = (
    "アルベルト・アインシュタイン（1879 年 3 月 14 日 - 1955 年 4 月 18 日）は、ドイツ生まれの理論物理学者で、"
    "広く認められた史上最も偉大で影響力のある科学者の一人です。相対性理論の開発で最もよく知られていますが、"
    "量子力学にも重要な貢献をしました。彼の質量とエネルギーの等価性の公式 E = mc^2 は『世界で最も有名な方程式』"
    "と呼ばれています。彼は 1921 年に物理学でノーベル賞を受賞しました。")


def test_context_relevancy_seed_000_japanese():
    s = Sample(id="ja", question="アルベルト・アインシュタインについて教えてください。",
               contexts=[EINSTEIN_JA])
    # the ragas 0.1 write-up's judge picked the first and the last sentence: by number here
    score, judge, _ = run(ContextRelevancy(), s, {"context_relevancy": {"sentences": [1, 4]}})
    assert score.details["context_sentences"] == 4
    assert score.value == pytest.approx(0.5)  # 2 / 4, as in that write-up
    assert score.details["selected"] == [1, 4]
    assert score.details["sentences"][1] == "彼は 1921 年に物理学でノーベル賞を受賞しました。"
    assert all(x in EINSTEIN_JA for x in score.details["sentences"])
    user = judge.requests[0].messages[1]["content"]
    assert "アインシュタインは1879年3月14日に生まれた。" in user  # Japanese few-shot
    assert "\n4. 彼は 1921 年に物理学でノーベル賞を受賞しました。" in user
    # the grammar offers the numbers 1..4 only
    items = judge.requests[0].schema.model_json_schema()["properties"]["sentences"]
    assert items["items"]["enum"] == [1, 2, 3, 4] and items["maxItems"] == 4


def test_context_relevancy_insufficient_repeats_and_empty():
    s = Sample(id="e", question="q", contexts=["One. Two."])
    score, _, _ = run(ContextRelevancy(), s, {"context_relevancy": {"sentences": []}})
    assert score.value == 0.0 and score.details["insufficient"]
    score, _, _ = run(ContextRelevancy(), s, {"context_relevancy": {"sentences": [2, 1]}})
    assert score.value == 1.0 and score.details["sentences"] == ["One.", "Two."]
    # a repeated number counts once
    score, _, _ = run(ContextRelevancy(), s, {"context_relevancy": {"sentences": [2, 2]}})
    assert score.value == 0.5 and score.details["repeated_selections"] == 1
    # a sentence that is not there cannot be selected
    with pytest.raises(JudgeCallError, match="does not match"):
        run(ContextRelevancy(), s, {"context_relevancy": {"sentences": [3]}})
    empty = Sample(id="e0", question="q", contexts=["  ", ""])
    score, judge, _ = run(ContextRelevancy(), empty, {})
    assert score.value == 0.0 and judge.requests == []
