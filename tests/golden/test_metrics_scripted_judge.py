"""The scripted judge that the metric tests rely on."""

from __future__ import annotations

import pytest

from localeval.errors import JudgeCallError
from localeval.judge import Judge, JudgeRequest
from localeval.metrics.schemas import ContextVerdict, Rating012, Verdicts, sized
from localeval.testing.scripted import ScriptedJudge
from localeval.testing.scripted import ScriptedReply, auto_output


def _req(step, schema=Rating012, prob_field=None, content="hello"):
    return JudgeRequest(step=step, messages=({"role": "system", "content": "sys"},
                                             {"role": "user", "content": content}),
                        schema=schema, prob_field=prob_field)


def test_protocol_and_fixed_output():
    j = ScriptedJudge({"a": {"rating": 2}})
    assert isinstance(j, Judge) and j.fingerprint == "scripted"
    r = j.ask(_req("a"))
    assert r.output.rating == 2 and r.probs is None and r.usage.calls == 1
    assert j.steps() == ["a"] and j.calls("a")[0].step == "a"


def test_list_consumed_in_order_then_exhausted():
    j = ScriptedJudge({"a": [{"rating": 0}, {"rating": 1}]})
    assert [j.ask(_req("a")).output.rating for _ in range(2)] == [0, 1]
    with pytest.raises(IndexError, match="exhausted"):
        j.ask(_req("a"))


def test_callable_exception_and_missing_step():
    j = ScriptedJudge({"a": lambda req: {"rating": len(req.messages)},
                       "b": JudgeCallError("truncated"),
                       "c": [JudgeCallError("first fails"), {"rating": 1}]})
    assert j.ask(_req("a")).output.rating == 2
    with pytest.raises(JudgeCallError, match="truncated"):
        j.ask(_req("b"))
    with pytest.raises(JudgeCallError):
        j.ask(_req("c"))
    assert j.ask(_req("c")).output.rating == 1
    with pytest.raises(KeyError):
        j.ask(_req("zzz"))


def test_invalid_output_is_a_judge_call_error():
    with pytest.raises(JudgeCallError, match="does not match"):
        ScriptedJudge({"a": {"rating": 7}}).ask(_req("a"))


def test_probabilities_one_hot_or_given():
    j = ScriptedJudge({"v": {"verdicts": [{"reason": "r", "verdict": 1},
                                          {"reason": "r", "verdict": 0}]},
                       "p": ScriptedReply({"reason": "r", "verdict": 1},
                                          probs=[{"0": 0.3, "1": 0.7}])})
    r = j.ask(_req("v", sized(Verdicts, 2), prob_field="verdict"))
    assert r.probs == [{"1": 1.0}, {"0": 1.0}]
    assert j.ask(_req("v", sized(Verdicts, 2))).probs is None  # not asked
    assert j.ask(_req("p", ContextVerdict, prob_field="verdict")).probs == [{"0": 0.3, "1": 0.7}]


def test_usage_counts_reused_prefix():
    j = ScriptedJudge({"a": {"rating": 1}})
    first = j.ask(_req("a", content="shared prefix + one")).usage
    second = j.ask(_req("a", content="shared prefix + two")).usage
    assert first.reused_tokens == 0
    assert second.reused_tokens == second.prompt_tokens - 3


def test_auto_mode():
    j = ScriptedJudge({"a": {"rating": 0}}, auto=True)
    assert j.ask(_req("a")).output.rating == 0
    assert j.ask(_req("other")).output.rating == 2
    out = j.ask(_req("v", sized(Verdicts, 4))).output
    assert len(out.verdicts) == 4
    assert auto_output(Verdicts) == {"verdicts": [{"reason": "reason", "verdict": 1}]}


def test_new_metric_schemas_in_scripts_and_auto_mode():
    from localeval.metrics.schemas import correctness_schema, selection_schema, statements_schema

    j = ScriptedJudge({"c": {"answer": [{"reason": "r", "verdict": 1}],
                             "reference": [{"reason": "r", "verdict": 0},
                                           {"reason": "r", "verdict": 1}]}}, auto=True)
    r = j.ask(_req("c", correctness_schema(1, 2), prob_field="verdict"))
    assert [v.verdict for v in r.output.reference] == [0, 1]
    assert r.probs == [{"1": 1.0}, {"0": 1.0}, {"1": 1.0}]  # answer's verdicts, then reference's
    with pytest.raises(JudgeCallError, match="does not match"):  # sized: 2 reference verdicts
        j.ask(_req("c", correctness_schema(1, 3)))
    auto = j.ask(_req("other", correctness_schema(2, 3))).output
    assert (len(auto.answer), len(auto.reference)) == (2, 3)
    assert j.ask(_req("sel", selection_schema(4))).output.sentences == [4]  # highest allowed
    assert j.ask(_req("sel1", selection_schema(1))).output.sentences == [1]
    st = j.ask(_req("st", statements_schema(2, 5))).output.statements
    assert len(st) == 1 and len(st[0]) <= 5
