"""Judged metrics of conversations: agent goal accuracy (with and without a reference)
and topic adherence, their arithmetic pinned with ScriptedJudge (ragas 0.4's steps and
formulas), degenerate conversations decided without the judge, soft verdicts, and the
policy for a conversation longer than the judge's context (an honest unscored)."""

from __future__ import annotations

import math

import pytest

from localeval.errors import JudgeCallError
from localeval.metrics import DECIDED, Judging, parse_metrics, score_one
from localeval.metrics.agents import NO_ASSISTANT_TURN, NO_USER_TURN, transcript
from localeval.metrics.topics import EPS, topic_score
from localeval.testing import ScriptedJudge
from localeval.testing.scripted import ScriptedReply
from localeval.types import Message, MultiTurnSample, Sample, ToolCall

BOOKING = MultiTurnSample(
    id="booking", reference="A table for two is booked for 7 pm.",
    reference_topics=["restaurant bookings"],
    messages=[Message("user", "Book a table for two at 7 pm."),
              Message("assistant", "", [ToolCall("book", {"people": 2, "time": "19:00"})]),
              Message("tool", "Booked: Roma, 19:00, 2 people."),
              Message("assistant", "Your table for two at Roma is booked for 7 pm."),
              Message("user", "And who wins the election?"),
              Message("assistant", "Sorry, I can't help with politics.")])
OUTCOME = {"user_goal": "Book a table for two at 7 pm.",
           "end_state": "A table for two is booked at Roma for 7 pm."}


def score(metric: str, sample: Sample, script: dict, **settings) -> tuple:
    judge = ScriptedJudge(script)
    ctx = Judging(judge=judge, **settings)
    return score_one(parse_metrics(metric)[0], sample, ctx), judge


# -- agent goal accuracy ---------------------------------------------------------------------
@pytest.mark.parametrize("verdict", [0, 1])
def test_goal_accuracy_with_reference_compares_the_end_state_with_the_reference(verdict):
    sc, judge = score("agent_goal_accuracy", BOOKING, {
        "agent_goal_outcome": OUTCOME,
        "agent_goal_compare": {"reason": "r", "verdict": verdict}})
    assert sc.value == float(verdict)
    assert judge.steps() == ["agent_goal_outcome", "agent_goal_compare"]
    compare = judge.calls("agent_goal_compare")[0]
    # ragas: the desired outcome is the reference, the arrived one the inferred end state
    assert compare.inputs == {"desired": BOOKING.reference, "arrived": OUTCOME["end_state"]}
    assert judge.calls("agent_goal_outcome")[0].inputs == {"conversation": transcript(BOOKING)}
    assert sc.details["end_state"] == OUTCOME["end_state"] and sc.details["verdict"] == verdict


def test_goal_accuracy_without_reference_compares_the_end_state_with_the_inferred_goal():
    sc, judge = score("agent_goal_accuracy_without_reference", BOOKING, {
        "agent_goal_outcome": OUTCOME, "agent_goal_compare": {"reason": "r", "verdict": 1}})
    assert sc.value == 1.0
    assert judge.calls("agent_goal_compare")[0].inputs == {
        "desired": OUTCOME["user_goal"], "arrived": OUTCOME["end_state"]}
    assert sc.details["desired_outcome"] == OUTCOME["user_goal"]


def test_soft_verdicts_score_the_probability_of_reaching_the_goal():
    reply = ScriptedReply({"reason": "r", "verdict": 1}, probs=[{"0": 0.3, "1": 0.7}])
    sc, judge = score("agent_goal_accuracy", BOOKING, {
        "agent_goal_outcome": OUTCOME, "agent_goal_compare": reply}, verdicts="soft")
    assert sc.value == pytest.approx(0.7) and sc.details["p_verdict_1"] == 0.7
    assert judge.calls("agent_goal_compare")[0].prob_field == "verdict"
    assert judge.calls("agent_goal_outcome")[0].prob_field is None
    hard, _ = score("agent_goal_accuracy", BOOKING, {
        "agent_goal_outcome": OUTCOME, "agent_goal_compare": reply})
    assert hard.value == 1.0 and "p_verdict_1" not in hard.details


def test_reasons_none_asks_for_a_verdict_only():
    sc, judge = score("agent_goal_accuracy", BOOKING, {
        "agent_goal_outcome": OUTCOME, "agent_goal_compare": {"verdict": 1}}, reasons="none")
    assert sc.value == 1.0 and "reason" not in sc.details
    assert "reason" not in judge.calls("agent_goal_compare")[0].schema.model_fields


SILENT = MultiTurnSample(id="silent", reference="A table is booked.",
                         messages=[Message("user", "Book a table."), Message("assistant", " ")])
NO_REQUEST = MultiTurnSample(id="no-request", reference="A table is booked.",
                             messages=[Message("user", ""), Message("assistant", "Booked.")])


@pytest.mark.parametrize("metric", ["agent_goal_accuracy", "agent_goal_accuracy_without_reference",
                                    "topic_adherence"])
def test_an_assistant_that_did_nothing_scores_0_without_the_judge(metric):
    sample = MultiTurnSample(**{**SILENT.to_dict(), "messages": SILENT.messages,
                                "reference_topics": ["restaurants"]})
    sc, judge = score(metric, sample, {})
    assert sc.value == 0.0 and sc.details[DECIDED] == NO_ASSISTANT_TURN
    assert judge.requests == []


def test_a_tool_call_alone_is_an_action_the_judge_reads():
    acted = MultiTurnSample(id="a", reference="A table is booked.", messages=[
        Message("user", "Book a table."), Message("assistant", "", [ToolCall("book", {})])])
    sc, judge = score("agent_goal_accuracy", acted, {
        "agent_goal_outcome": OUTCOME, "agent_goal_compare": {"reason": "r", "verdict": 0}})
    assert sc.value == 0.0 and DECIDED not in sc.details and len(judge.requests) == 2


def test_undefined_goals_are_unscored_without_the_judge():
    # no user request: nothing to infer a goal from (without a reference)
    sc, judge = score("agent_goal_accuracy_without_reference", NO_REQUEST, {})
    assert sc.value is None and sc.reason == NO_USER_TURN and judge.requests == []
    # with a reference the reference states the goal: the judge runs
    sc, judge = score("agent_goal_accuracy", NO_REQUEST, {
        "agent_goal_outcome": OUTCOME, "agent_goal_compare": {"reason": "r", "verdict": 1}})
    assert sc.value == 1.0
    blank_ref = MultiTurnSample(id="b", reference="  ", messages=BOOKING.messages)
    sc, judge = score("agent_goal_accuracy", blank_ref, {})
    assert sc.value is None and sc.reason == "the reference is empty" and judge.requests == []


def test_missing_fields_and_single_turn_samples_are_unscored():
    no_ref = MultiTurnSample(id="n", messages=BOOKING.messages)
    sc, _ = score("agent_goal_accuracy", no_ref, {})
    assert sc.value is None and sc.reason == "missing reference"
    single = Sample(id="s", question="q", answer="a", reference="r")
    sc, _ = score("agent_goal_accuracy", single, {})
    assert sc.value is None and sc.reason == "missing messages"


# -- topic adherence -------------------------------------------------------------------------
def verdict(v: int) -> dict:
    return {"reason": "r", "verdict": v}


@pytest.mark.parametrize("answered,on_topic", [
    ([1, 0], [1, 0]), ([1, 1], [1, 0]), ([0, 1], [1, 0]), ([1, 1, 0], [1, 0, 1]),
    ([0, 0], [0, 0]), ([1, 1], [1, 1])])
def test_topic_adherence_is_ragas_precision_recall_and_f1(answered, on_topic):
    topics = [f"topic {i}" for i in range(len(answered))]
    tp = sum(a and c for a, c in zip(answered, on_topic))
    fp = sum(a and not c for a, c in zip(answered, on_topic))
    fn = sum(c and not a for a, c in zip(answered, on_topic))
    # ragas 0.4's _compute_score, written out
    p, r = tp / (tp + fp + EPS), tp / (tp + fn + EPS)
    want = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r + EPS)}
    for mode, value in want.items():
        spec = "topic_adherence" + ("" if mode == "f1" else f":mode={mode}")
        sc, judge = score(spec, BOOKING, {
            "topic_extraction": {"topics": topics},
            "topic_refused": [verdict(a) for a in answered],
            "topic_classification": {"verdicts": [verdict(c) for c in on_topic]}})
        assert sc.value == pytest.approx(value, abs=1e-12), (mode, sc)
        assert judge.steps() == (["topic_extraction"] + ["topic_refused"] * len(topics)
                                 + ["topic_classification"])
        assert [r.inputs["topic"] for r in judge.calls("topic_refused")] == topics
        cls = judge.calls("topic_classification")[0]
        assert cls.inputs == {"statements": topics, "reference_topics": ["restaurant bookings"]}
        assert [t["answered"] for t in sc.details["topics"]] == answered


def test_topic_score_matches_ragas_on_its_edge_cases():
    assert topic_score([], [], "f1") == 0.0  # no topics at all: 0 / eps
    assert topic_score([1.0], [1.0], "precision") == pytest.approx(1.0, abs=1e-9)
    assert topic_score([1.0], [1.0], "precision") < 1.0  # ragas's eps stays in
    assert math.isclose(topic_score([0.5], [1.0], "recall"), 0.5 / (1.0 + EPS))


def test_topic_adherence_soft_uses_expected_counts():
    sc, _ = score("topic_adherence", BOOKING, {
        "topic_extraction": {"topics": ["a", "b"]},
        "topic_refused": [ScriptedReply(verdict(1), [{"0": 0.2, "1": 0.8}]),
                          ScriptedReply(verdict(0), [{"0": 0.9, "1": 0.1}])],
        "topic_classification": ScriptedReply(
            {"verdicts": [verdict(1), verdict(0)]}, [{"0": 0.0, "1": 1.0}, {"0": 0.7, "1": 0.3}])},
        verdicts="soft")
    assert sc.value == pytest.approx(topic_score([0.8, 0.1], [1.0, 0.3], "f1"))
    assert sc.details["topics"][0]["p_answered"] == 0.8


def test_topic_adherence_repeated_and_blank_topics_and_nothing_extracted():
    sc, judge = score("topic_adherence", BOOKING, {
        "topic_extraction": {"topics": ["a", " a ", "", "b"]},
        "topic_refused": [verdict(1), verdict(1)],
        "topic_classification": {"verdicts": [verdict(1), verdict(1)]}})
    assert [t["topic"] for t in sc.details["topics"]] == ["a", "b"] and sc.value > 0.99
    assert list(sc.details["topics"][0]) == ["topic", "answered_reason", "answered",
                                             "on_topic_reason", "on_topic"]
    sc, judge = score("topic_adherence", BOOKING, {"topic_extraction": {"topics": []}})
    assert sc.value is None and "extracted nothing" in sc.reason
    assert sc.details["extracted_nothing"] == "conversation"


def test_topic_adherence_needs_reference_topics_and_a_user_request():
    no_topics = MultiTurnSample(id="t", reference_topics=[" "], messages=BOOKING.messages)
    sc, judge = score("topic_adherence", no_topics, {})
    assert sc.value is None and "reference_topics" in sc.reason and judge.requests == []
    silent_user = MultiTurnSample(id="u", reference_topics=["x"], messages=NO_REQUEST.messages)
    sc, judge = score("topic_adherence", silent_user, {})
    assert sc.reason == NO_USER_TURN and judge.requests == []
    with pytest.raises(Exception, match="mode"):
        parse_metrics("topic_adherence:mode=accuracy")


# -- conversation completeness (deepeval) -----------------------------------------------------
def test_conversation_completeness_is_the_share_of_intentions_satisfied():
    sc, judge = score("conversation_completeness", BOOKING, {
        "conversation_intentions": {"intentions": ["Book a table.", " ", "Who wins?",
                                                   "Book a table."]},
        "conversation_completeness": {"verdicts": [verdict(1), verdict(0)]}})
    assert sc.value == 0.5
    assert judge.steps() == ["conversation_intentions", "conversation_completeness"]
    req = judge.calls("conversation_completeness")[0]
    # blank and repeated intentions dropped; the conversation shown with them
    assert req.inputs == {"conversation": transcript(BOOKING),
                          "statements": ["Book a table.", "Who wins?"]}
    assert [r["intention"] for r in sc.details["intentions"]] == ["Book a table.", "Who wins?"]
    soft, _ = score("conversation_completeness", BOOKING, {
        "conversation_intentions": {"intentions": ["a", "b"]},
        "conversation_completeness": ScriptedReply(
            {"verdicts": [verdict(1), verdict(0)]}, [{"0": 0.1, "1": 0.9}, {"0": 0.6, "1": 0.4}])},
        verdicts="soft")
    assert soft.value == pytest.approx(0.65)


def test_conversation_completeness_degenerate_cases():
    sc, judge = score("conversation_completeness", SILENT, {})
    assert sc.value == 0.0 and judge.requests == []
    sc, judge = score("conversation_completeness", NO_REQUEST, {})
    assert sc.value is None and sc.reason == NO_USER_TURN and judge.requests == []
    sc, _ = score("conversation_completeness", BOOKING,
                  {"conversation_intentions": {"intentions": []}})
    assert sc.value is None and sc.details["extracted_nothing"] == "conversation"


# -- turn relevancy (deepeval) ------------------------------------------------------------------
def test_turn_relevancy_judges_each_assistant_text_in_its_window():
    sc, judge = score("turn_relevancy:window=3", BOOKING, {
        "turn_relevancy": [verdict(1), verdict(0)]})
    # the assistant wrote text in messages 4 and 6 (message 2 is a tool call only)
    assert sc.value == 0.5 and [t["turn"] for t in sc.details["turns"]] == [4, 6]
    windows = [r.inputs["conversation"] for r in judge.calls("turn_relevancy")]
    rows = transcript(BOOKING)
    assert windows == [rows[1:4], rows[3:6]]
    sc, judge = score("turn_relevancy", BOOKING, {"turn_relevancy": [
        ScriptedReply(verdict(1), [{"0": 0.2, "1": 0.8}]),
        ScriptedReply(verdict(1), [{"0": 0.4, "1": 0.6}])]}, verdicts="soft")
    assert sc.value == pytest.approx(0.7) and sc.details["window"] == 10
    assert [r.inputs["conversation"] for r in judge.calls("turn_relevancy")] == [
        rows[:4], rows]


def test_turn_relevancy_degenerate_cases_and_its_window_bounds_long_conversations():
    calls_only = MultiTurnSample(id="c", messages=[
        Message("user", "Book it."), Message("assistant", "", [ToolCall("book", {})])])
    sc, judge = score("turn_relevancy", calls_only, {})
    assert sc.value is None and "tool calls only" in sc.reason and judge.requests == []
    sc, judge = score("turn_relevancy", SILENT, {})
    assert sc.value == 0.0 and judge.requests == []
    with pytest.raises(Exception, match="window"):
        parse_metrics("turn_relevancy:window=0")
    turns = [Message("user" if i % 2 == 0 else "assistant", f"turn {i}") for i in range(400)]
    long = MultiTurnSample(id="long", messages=turns)
    sc, judge = score("turn_relevancy:window=4", long, {"turn_relevancy": lambda r: verdict(1)})
    assert sc.value == 1.0 and len(judge.requests) == 200
    assert max(len(r.inputs["conversation"]) for r in judge.requests) == 4


# -- knowledge retention (deepeval) -------------------------------------------------------------
def test_knowledge_retention_judges_each_reply_against_the_facts_stated_before_it():
    sc, judge = score("knowledge_retention", BOOKING, {
        "knowledge_facts": [{"facts": ["Two people.", "At 7 pm."]}, {"facts": ["", "Two people."]}],
        "knowledge_retention": [verdict(1), verdict(0)]})
    assert sc.value == 0.5
    facts_calls = judge.calls("knowledge_facts")
    rows = transcript(BOOKING)
    # each user message with the conversation up to it
    assert [r.inputs["conversation"] for r in facts_calls] == [rows[:1], rows[:5]]
    kept = judge.calls("knowledge_retention")
    # the assistant's texts (messages 4 and 6), each with the facts stated before it, once
    assert [(r.inputs["conversation"], r.inputs["statements"]) for r in kept] == [
        (rows[:4], ["Two people.", "At 7 pm."]), (rows, ["Two people.", "At 7 pm."])]
    assert [t["turn"] for t in sc.details["turns"]] == [4, 6]
    assert sc.details["facts"] == ["Two people.", "At 7 pm.", "Two people."]
    soft, _ = score("knowledge_retention", BOOKING, {
        "knowledge_facts": {"facts": ["Two people."]},
        "knowledge_retention": [ScriptedReply(verdict(1), [{"0": 0.1, "1": 0.9}]),
                                ScriptedReply(verdict(0), [{"0": 0.7, "1": 0.3}])]},
        verdicts="soft")
    assert soft.value == pytest.approx(0.6)


def test_knowledge_retention_with_nothing_to_retain_is_unscored():
    sc, judge = score("knowledge_retention", BOOKING, {"knowledge_facts": {"facts": []}})
    assert sc.value is None and "nothing to retain" in sc.reason
    assert judge.steps() == ["knowledge_facts", "knowledge_facts"]
    sc, judge = score("knowledge_retention", SILENT, {})
    assert sc.value == 0.0 and judge.requests == []


# -- long conversations ----------------------------------------------------------------------
def test_a_conversation_longer_than_the_judge_context_is_unscored_with_the_reason():
    """The policy: never cut. The judge refuses a prompt over its context with a
    JudgeCallError, and the sample is unscored with that reason."""
    turns = [Message("user" if i % 2 == 0 else "assistant", f"turn {i} " * 20) for i in range(2000)]
    long = MultiTurnSample(id="long", reference="done", reference_topics=["x"], messages=turns)
    limit = 4000  # characters, as a judge with a small context counts tokens

    def small_context(request, reply=OUTCOME):
        size = sum(len(m["content"]) for m in request.messages)
        if size > limit:
            raise JudgeCallError(f"prompt is {size} tokens, longer than the judge context of "
                                 f"{limit} tokens")
        return reply

    for metric in ("agent_goal_accuracy", "topic_adherence", "conversation_completeness",
                   "knowledge_retention"):
        sc, judge = score(metric, long, {
            "agent_goal_outcome": small_context, "topic_extraction": small_context,
            "conversation_intentions": small_context,
            # the first user turns fit, with the conversation up to them; later ones do not
            "knowledge_facts": lambda r: small_context(r, {"facts": ["a fact"]})})
        assert sc.value is None and "longer than the judge context" in sc.reason
        # the whole conversation was sent, not a cut one
        sent = judge.requests[-1].messages[1]["content"]
        assert "turn 0 " in sent
        assert "turn 1999 " in sent or metric == "knowledge_retention"


# -- the bundled example -----------------------------------------------------------------------
def test_the_bundled_conversations_are_scored_by_default_and_known_outcomes_come_out():
    from pathlib import Path

    import localeval
    from localeval.testing import OracleJudge

    data = Path(localeval.__file__).parent / "data" / "conversations_example.jsonl"
    judge = OracleJudge()
    res = localeval.evaluate(data, judge=judge, cache=False, judge_check=False,
                             progress=False, embedder=False)
    assert set(res.summary["metrics"]) == {"tool_call_accuracy", "tool_call_f1",
                                           "agent_goal_accuracy", "topic_adherence"}
    goal = {r["id"]: r["scores"]["agent_goal_accuracy"] for r in res.records()}
    assert goal == {"booking-en": 1.0, "booking-full-en": 0.0, "refund-en": 1.0,
                    "weather-en": 1.0, "booking-ja": 1.0, "refund-ja": 0.0, "weather-ja": 1.0,
                    "booking-wrong-ja": 0.0}
    topics = {r["id"]: r["scores"]["topic_adherence"] for r in res.records()}
    # weather-en answers an off-topic question it should refuse: precision 1/2, F1 2/3
    assert topics["weather-en"] == pytest.approx(2 / 3, abs=1e-6)
    assert topics["refund-en"] == pytest.approx(1.0, abs=1e-6)
    # each conversation's prompts are in its users' language
    outcome = {r.sample.id: r.messages[-1]["content"] for r in judge.calls("agent_goal_outcome")}
    assert "in Japanese" in outcome["booking-ja"] and "in English" in outcome["booking-en"]
