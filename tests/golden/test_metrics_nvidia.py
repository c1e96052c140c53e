"""NV dual-judge metrics: reference values, symmetric fallback, shortcuts."""

from __future__ import annotations

import pytest

from localeval.testing.metric_util import run
from localeval.errors import JudgeCallError
from localeval.metrics.nvidia import NVAnswerAccuracy, NVContextRelevance, NVResponseGroundedness
from localeval.types import Sample

S = Sample(id="nv", question="When was Einstein born?", answer="He was born in 1879.",
           contexts=["Einstein was born on 14 March 1879 in Ulm."],
           reference="Albert Einstein was born in 1879.")


def _script(step, r1, r2):
    return {f"{step}_1": r1 if isinstance(r1, Exception) else {"rating": r1},
            f"{step}_2": r2 if isinstance(r2, Exception) else {"rating": r2}}


@pytest.mark.parametrize("r1,r2,expected", [(2, 2, 1.0), (1, 2, 0.75), (0, 1, 0.25), (0, 0, 0.0)])
def test_context_relevance_values(r1, r2, expected):
    score, judge, _ = run(NVContextRelevance(), S, _script("nv_context_relevance", r1, r2))
    assert score.value == pytest.approx(expected)
    assert judge.steps() == ["nv_context_relevance_1", "nv_context_relevance_2"]
    assert (score.details["rating_1"], score.details["rating_2"]) == (r1, r2)
    # two differently worded templates
    t1, t2 = (r.messages[1]["content"] for r in judge.requests)
    assert t1.split("# Task")[1] != t2.split("# Task")[1]


def test_answer_accuracy_values_and_swapped_roles():
    score, judge, _ = run(NVAnswerAccuracy(), S, _script("nv_answer_accuracy", 4, 2))
    assert score.value == pytest.approx(0.75)
    assert "roles are swapped" in judge.requests[1].messages[1]["content"]
    assert "roles are swapped" not in judge.requests[0].messages[1]["content"]


def test_answer_accuracy_rejects_off_scale_rating():
    with pytest.raises(JudgeCallError):  # both judges answer 3: not in {0, 2, 4}
        run(NVAnswerAccuracy(), S, _script("nv_answer_accuracy", 3, 3))


@pytest.mark.parametrize("first_fails", [True, False])
def test_symmetric_fallback(first_fails):
    err = JudgeCallError("output truncated")
    r1, r2 = (err, 1) if first_fails else (1, err)
    score, _, _ = run(NVResponseGroundedness(), S, _script("nv_response_groundedness", r1, r2))
    assert score.value == pytest.approx(0.5)
    failed = 1 if first_fails else 2
    assert score.details[f"rating_{failed}"] is None
    assert f"judge {failed} failed" in score.details["fallback"]


def test_both_judges_fail_propagates():
    with pytest.raises(JudgeCallError, match="first"):
        run(NVContextRelevance(), S, _script("nv_context_relevance", JudgeCallError("first"),
                                             JudgeCallError("second")))


def test_context_relevance_shortcuts():
    cases = [Sample(id="1", question=" ", contexts=["x"]),
             Sample(id="2", question="q", contexts=["", " "]),
             Sample(id="3", question="What is in Paris? The Eiffel Tower", contexts=["The Eiffel Tower"])]
    for s in cases:
        score, judge, _ = run(NVContextRelevance(), s, {})
        assert score.value == 0.0 and judge.requests == []
        assert "shortcut" in score.details or "decided_without_judge" in score.details


def test_groundedness_values_and_shortcuts():
    score, _, _ = run(NVResponseGroundedness(), S, _script("nv_response_groundedness", 2, 1))
    assert score.value == pytest.approx(0.75)
    empty = Sample(id="e", answer="", contexts=["c"])
    assert run(NVResponseGroundedness(), empty, {})[0].value == 0.0
    quoted = Sample(id="q", answer="born on 14 March 1879", contexts=S.contexts)
    score, judge, _ = run(NVResponseGroundedness(), quoted, {})
    assert score.value == 1.0 and judge.requests == []
