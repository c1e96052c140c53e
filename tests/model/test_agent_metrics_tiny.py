"""The conversation metrics through real llama.cpp: the tiny random-weight GGUF.

What must hold for any judge: every step's grammar (the goal/end-state object, the
comparison verdict, the topic list, the per-topic and per-classification verdicts)
gives a reply that parses, so each metric scores a value in [0, 1]; soft verdicts come
back as probabilities; and a conversation longer than the judge's context is unscored
with the judge's reason, never cut to fit.
"""

from __future__ import annotations

import pytest

from localeval.judge import LlamaJudge
from localeval.metrics import Judging, parse_metrics, score_one
from localeval.types import Message, MultiTurnSample, ToolCall

METRICS = ["agent_goal_accuracy", "agent_goal_accuracy_without_reference", "topic_adherence",
           "conversation_completeness", "knowledge_retention", "turn_relevancy"]

EN = MultiTurnSample(
    id="en", reference="A table for two is booked for 7 pm.", reference_topics=["restaurants"],
    messages=[Message("user", "Book a table for two at 7 pm."),
              Message("assistant", "", [ToolCall("book", {"people": 2, "time": "19:00"})]),
              Message("tool", "Booked: Roma, 19:00."),
              Message("assistant", "Your table at Roma is booked for 7 pm.")])
JA = MultiTurnSample(
    id="ja", reference="明日19時に2名で予約されている。", reference_topics=["レストランの予約"],
    messages=[Message("user", "明日19時に2名で予約して"),
              Message("assistant", "", [ToolCall("book_table", {"people": 2, "time": "19:00"})]),
              Message("tool", "予約番号 A12"), Message("assistant", "予約しました（予約番号 A12）。")])


@pytest.fixture(scope="module")
def judge(tiny_gguf, bias):
    j = LlamaJudge(tiny_gguf, n_threads=1, n_ctx=2048, logit_bias=bias)
    yield j
    j.close()


@pytest.mark.parametrize("verdicts", ["hard", "soft"])
@pytest.mark.parametrize("sample", [EN, JA], ids=["en", "ja"])
def test_every_step_parses_through_the_grammar(judge, sample, verdicts):
    # the copy check is a separate concern: a random model may echo the example
    ctx = Judging(judge=judge, verdicts=verdicts, copy_check=False)
    for metric in parse_metrics(",".join(METRICS)):
        ctx.begin_sample()
        sc = score_one(metric, sample, ctx)
        if sc.value is None:  # only an empty list may leave the random model unscored
            assert metric.name in ("topic_adherence", "conversation_completeness",
                                   "knowledge_retention")
            assert "extracted nothing" in sc.reason or "nothing to retain" in sc.reason, sc
            continue
        assert 0.0 <= sc.value <= 1.0, (metric.key, sc)
        if metric.name.startswith("agent_goal"):
            assert set(sc.details) >= {"user_goal", "end_state", "verdict"}
            assert sc.details["verdict"] in (0, 1)
            if verdicts == "soft":
                assert 0.0 <= sc.details["p_verdict_1"] <= 1.0
                assert sc.value == pytest.approx(sc.details["p_verdict_1"], abs=1e-6)
            else:
                assert sc.value in (0.0, 1.0)
    assert ctx.usage.calls >= 4


def test_a_conversation_over_the_context_is_unscored_not_cut(tiny_gguf, bias):
    small = LlamaJudge(tiny_gguf, n_threads=1, n_ctx=512, logit_bias=bias)
    try:
        turns = [Message("user" if i % 2 == 0 else "assistant", f"Turn {i}: the weather is mild.")
                 for i in range(2000)]
        long = MultiTurnSample(id="long", reference="done", reference_topics=["weather"],
                               messages=turns)
        # turn_relevancy judges each turn in its window, which fits: tested in unit tests
        for metric in parse_metrics(",".join(METRICS[:-1])):
            ctx = Judging(judge=small)
            sc = score_one(metric, long, ctx)
            assert sc.value is None, metric.key
            assert sc.reason.startswith("prompt is ") and sc.reason.endswith(
                "longer than the judge context of 512 tokens"), sc.reason
            assert ctx.usage.generated_tokens == 0
    finally:
        small.close()
