"""Context-side judge metrics: reference values, per-context layout, edge cases."""

from __future__ import annotations

import pytest

from localeval.testing.metric_util import run
from localeval.errors import JudgeCallError
from localeval.metrics.rag_context import ContextEntityRecall, ContextPrecision, ContextRecall, ContextRelevancy, ContextUtilization
from localeval.metrics.steps import average_precision
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
def _classified(*values):
    return {"classifications": [{"statement": f"sentence {i}", "reason": "r", "verdict": v}
                                for i, v in enumerate(values)]}


def test_context_recall_reference_value_and_unscored():
    score, judge, _ = run(ContextRecall(), SAMPLE, {"context_recall": _classified(1, 0, 1)})
    assert score.value == pytest.approx(0.6667, abs=1e-4)
    assert len(judge.requests) == 1
    assert score.details["classifications"][1]["statement"] == "sentence 1"
    score, _, _ = run(ContextRecall(), SAMPLE, {"context_recall": {"classifications": []}})
    assert score.value is None and "no reference sentences" in score.reason


def test_context_recall_soft():
    probs = [{"1": 0.75, "0": 0.25}, {"1": 0.25, "0": 0.75}]
    script = {"context_recall": ScriptedReply(_classified(1, 0), probs=probs)}
    score, _, _ = run(ContextRecall(), SAMPLE, script, verdicts="soft")
    assert score.value == pytest.approx(0.5)


# -- context_entity_recall --------------------------------------------------------
def _entities_script(ref, ctx):
    def f(req):
        text = req.messages[1]["content"]
        return {"entities": ref if "entities in the Reference" in text else ctx}
    return {"entities": f}


def test_context_entity_recall_reference_value():
    score, judge, _ = run(ContextEntityRecall(), SAMPLE,
                          _entities_script(["A", "B", "C"], ["B", "C", "D", "E"]))
    assert score.value == pytest.approx(0.6667, abs=1e-4)
    assert score.details["common"] == ["B", "C"]
    assert len(judge.requests) == 2


def test_context_entity_recall_counts_reference_duplicates_and_empty():
    score, _, _ = run(ContextEntityRecall(), SAMPLE, _entities_script(["A", "A", "B"], ["A"]))
    assert score.value == pytest.approx(1 / 3)  # ragas: |{A}| / len([A, A, B])
    score, judge, _ = run(ContextEntityRecall(), SAMPLE, _entities_script([], ["A"]))
    assert score.value == 0.0 and len(judge.requests) == 1  # contexts not asked


# -- context_relevancy (legacy) ------------------------------------------------------
EINSTEIN_JA = (
    "アルベルト・アインシュタイン（1879 年 3 月 14 日 - 1955 年 4 月 18 日）は、ドイツ生まれの理論物理学者で、"
    "広く認められた史上最も偉大で影響力のある科学者の一人です。相対性理論の開発で最もよく知られていますが、"
    "量子力学にも重要な貢献をしました。彼の質量とエネルギーの等価性の公式 E = mc^2 は『世界で最も有名な方程式』"
    "と呼ばれています。彼は 1921 年に物理学でノーベル賞を受賞しました。")


def test_context_relevancy_seed_000_japanese():
    s = Sample(id="ja", question="アルベルト・アインシュタインについて教えてください。",
               contexts=[EINSTEIN_JA])
    picked = ["アルベルト・アインシュタインは 1879 年 3 月 14 日に生まれ、ドイツ生まれの理論物理学者で、"
              "史上最も偉大で影響力のある科学者の一人とされています。",
              "彼は 1921 年に物理学でノーベル賞を受賞しました。"]
    score, judge, _ = run(ContextRelevancy(), s, {"context_relevancy": {"sentences": picked}})
    assert score.details["context_sentences"] == 4
    assert score.value == pytest.approx(0.5)  # 2 / 4, as in seed 000
    user = judge.requests[0].messages[1]["content"]
    assert "アインシュタインは1879年3月14日に生まれた。" in user  # Japanese few-shot


def test_context_relevancy_insufficient_cap_and_empty():
    s = Sample(id="e", question="q", contexts=["One. Two."])
    for out in ([], ["Insufficient Information"]):
        score, _, _ = run(ContextRelevancy(), s, {"context_relevancy": {"sentences": out}})
        assert score.value == 0.0 and score.details["insufficient"]
    score, _, _ = run(ContextRelevancy(), s,
                      {"context_relevancy": {"sentences": ["One.", "Two.", "Three."]}})
    assert score.value == 1.0  # capped
    empty = Sample(id="e0", question="q", contexts=["  ", ""])
    score, judge, _ = run(ContextRelevancy(), empty, {})
    assert score.value == 0.0 and judge.requests == []
