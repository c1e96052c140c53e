"""A ragas script with the agent metrics (AgentGoalAccuracyWithReference / WithoutReference,
TopicAdherenceScore) runs through localeval.ragas with its imports changed only; the judge
is the rule-based OracleJudge (``llm=``), so the scores are known."""

from __future__ import annotations

import asyncio
import math

import pytest

from localeval.config import reset

SCRIPT = '''
from localeval.ragas import evaluate, EvaluationDataset, MultiTurnSample  # was: from ragas ...
from localeval.ragas.messages import HumanMessage, AIMessage, ToolMessage, ToolCall  # was: ragas.messages
from localeval.ragas.metrics import (  # was: from ragas.metrics import ...
    AgentGoalAccuracyWithReference, AgentGoalAccuracyWithoutReference, TopicAdherenceScore)

sample = MultiTurnSample(
    user_input=[
        HumanMessage(content="Who will win the election?"),
        AIMessage(content="Sorry, I can't help with politics."),
        HumanMessage(content="Book a table for two at an Italian restaurant for 7 pm on Friday."),
        AIMessage(content="", tool_calls=[ToolCall(name="restaurant_book",
                                                   args={"cuisine": "Italian", "people": 2})]),
        ToolMessage(content="Booked: Trattoria Roma, Friday 19:00, 2 people."),
        AIMessage(content="Your table for two is booked at Trattoria Roma, an Italian "
                          "restaurant, for 7 pm on Friday."),
    ],
    reference="A table for two is booked at an Italian restaurant for 7 pm on Friday.",
    reference_topics=["restaurant bookings", "Italian restaurant"],
)
scorer = AgentGoalAccuracyWithReference(llm=judge)
with_reference = await_(scorer.multi_turn_ascore(sample))
without_reference = AgentGoalAccuracyWithoutReference(llm=judge).multi_turn_score(sample)
precision = TopicAdherenceScore(llm=judge, mode="precision").multi_turn_score(sample)
result = evaluate(EvaluationDataset(samples=[sample]),
                  metrics=[AgentGoalAccuracyWithReference(), TopicAdherenceScore(mode="recall")],
                  llm=judge, show_progress=False)
'''


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch, tmp_path):
    # a cache of the test's own (LOCALEVAL_CACHE names a file: "off" would be one)
    monkeypatch.setenv("LOCALEVAL_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("LOCALEVAL_JUDGE_CHECK", "0")
    reset()
    yield
    reset()


def test_the_ragas_script_runs_with_the_imports_changed() -> None:
    from localeval.testing import OracleJudge

    scope: dict[str, object] = {"await_": asyncio.run, "judge": OracleJudge()}
    exec(compile(SCRIPT, "ragas_script.py", "exec"), scope)
    assert scope["with_reference"] == 1.0 and scope["without_reference"] == 1.0
    # the election refused and off topic; the booking answered and on topic
    assert scope["precision"] == pytest.approx(1.0, abs=1e-9)
    result = dict(scope["result"])  # type: ignore[call-overload]
    assert result["agent_goal_accuracy"] == 1.0
    assert result["topic_adherence:mode=recall"] == pytest.approx(1.0, abs=1e-9)


def test_the_collections_call_and_names() -> None:
    from localeval.ragas import AgentGoalAccuracyWithReference, TopicAdherenceScore
    from localeval.ragas.agents import AgentGoalAccuracy, TopicAdherence
    from localeval.ragas.messages import AIMessage, HumanMessage
    from localeval.testing import OracleJudge

    assert AgentGoalAccuracy is AgentGoalAccuracyWithReference
    assert TopicAdherence is TopicAdherenceScore
    turns = [HumanMessage(content="Cancel my order 5521."),
             AIMessage(content="Sorry, order 5521 has shipped and was not cancelled.")]
    scorer = AgentGoalAccuracyWithReference(llm=OracleJudge())
    res = asyncio.run(scorer.ascore(user_input=turns, reference="Order 5521 is cancelled."))
    assert res.value == 0.0 and res.details["verdict"] == 0
    missing = scorer.score(user_input=turns)
    assert missing.value is None and missing.reason == "missing reference"
    assert math.isnan(scorer.multi_turn_score({"user_input": turns}))
    assert TopicAdherenceScore(mode="precision").name == "topic_adherence:mode=precision"
    with pytest.raises(TypeError, match="unexpected keyword argument 'modes'"):
        TopicAdherenceScore(modes="f1")
