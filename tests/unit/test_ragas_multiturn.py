"""A ragas script with MultiTurnSample and the tool-call metrics runs through localeval.ragas
with its imports changed only (the script is ragas's documentation example)."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from localeval.errors import DataError

SCRIPT = '''
from localeval.ragas import evaluate, EvaluationDataset, MultiTurnSample  # was: from ragas ...
from localeval.ragas.messages import HumanMessage, AIMessage, ToolMessage, ToolCall  # was: ragas.messages
from localeval.ragas.metrics import ToolCallAccuracy, ToolCallF1  # was: from ragas.metrics ...

sample = [
    HumanMessage(content="What's the weather like in New York right now?"),
    AIMessage(content="The current temperature in New York is 75°F and it's partly cloudy.",
              tool_calls=[ToolCall(name="weather_check", args={"location": "New York"})]),
    HumanMessage(content="Can you translate that to Celsius?"),
    AIMessage(content="Let me convert that to Celsius for you.",
              tool_calls=[ToolCall(name="temperature_conversion",
                                   args={"temperature_fahrenheit": 75})]),
    ToolMessage(content="75°F is approximately 23.9°C."),
    AIMessage(content="75°F is approximately 23.9°C."),
]
sample = MultiTurnSample(
    user_input=sample,
    reference_tool_calls=[
        ToolCall(name="weather_check", args={"location": "New York"}),
        ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75}),
    ],
)
scorer = ToolCallAccuracy()
accuracy = await_(scorer.multi_turn_ascore(sample))
f1 = ToolCallF1().multi_turn_score(sample)
result = evaluate(EvaluationDataset(samples=[sample]), metrics=[ToolCallAccuracy(), ToolCallF1()],
                  show_progress=False)
'''


def test_the_ragas_example_runs_with_the_imports_changed() -> None:
    scope: dict[str, object] = {"await_": asyncio.run}
    exec(compile(SCRIPT, "ragas_script.py", "exec"), scope)
    assert scope["accuracy"] == 1.0 and scope["f1"] == 1.0
    assert dict(scope["result"]) == {"tool_call_accuracy": 1.0,  # type: ignore[call-overload]
                                     "tool_call_f1": 1.0}
    frame = scope["result"].to_pandas()  # type: ignore[attr-defined]
    assert frame.loc[0, "user_input"][1]["tool_calls"] == [
        {"name": "weather_check", "args": {"location": "New York"}}]
    assert frame.loc[0, "tool_call_f1"] == 1.0


def test_the_objects_are_ragas_shaped() -> None:
    from localeval.ragas import AIMessage, EvaluationDataset, HumanMessage, MultiTurnSample, ToolCall

    call = ToolCall(name="f", args={"a": 1})
    ai = AIMessage(content="x", tool_calls=[call])
    assert ai.tool_calls[0].args == {"a": 1} and call.name == "f"
    assert dict(ai) == {"content": "x", "type": "ai", "tool_calls": [{"name": "f", "args": {"a": 1}}]}
    sample = MultiTurnSample(user_input=[HumanMessage(content="q"), ai], reference_topics=["t"])
    assert sample.reference_tool_calls is None and sample.reference_topics == ["t"]
    assert sample.pretty_repr() == "Human: q\nAI: x\nTools:\n  f: {'a': 1}"
    # ragas's EvaluationDataset.to_list() rows (JSON) come back as conversations
    rows = json.loads(json.dumps(EvaluationDataset(samples=[sample]).to_list()))
    again = EvaluationDataset.from_list(rows)
    assert isinstance(again[0], MultiTurnSample) and again.to_list() == rows
    with pytest.raises(TypeError, match="unexpected keyword argument 'user_inputs'"):
        MultiTurnSample(user_inputs=[])


def test_options_and_the_collections_call() -> None:
    from localeval.ragas import AspectCritic, NonLLMStringSimilarity, ToolCallAccuracy, ToolCallF1
    from localeval.ragas.criteria import DistanceMeasure
    from localeval.ragas.messages import AIMessage, HumanMessage, ToolCall

    turns = [HumanMessage(content="q"),
             AIMessage(content="", tool_calls=[ToolCall(name="w", args={"city": "Pariss"})])]
    ref = [ToolCall(name="w", args={"city": "Paris"})]
    assert ToolCallAccuracy().score(user_input=turns, reference_tool_calls=ref).value == 0.0
    near = ToolCallAccuracy(arg_comparison_metric=NonLLMStringSimilarity(
        distance_measure=DistanceMeasure.LEVENSHTEIN))
    assert near.metric.key == "tool_call_accuracy:arg_comparison=levenshtein"
    res = asyncio.run(near.ascore(user_input=turns, reference_tool_calls=ref))
    assert res.value == pytest.approx(1 - 1 / 6)
    assert ToolCallAccuracy(strict_order=False).metric.key == "tool_call_accuracy:strict_order=False"
    with pytest.raises(TypeError, match="use ExactMatch\\(\\) or NonLLMStringSimilarity"):
        ToolCallAccuracy(arg_comparison_metric=AspectCritic(name="x", definition="y"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'reference_tool_call'"):
        ToolCallF1().score(user_input=turns, reference_tool_call=ref)
    # a sample without its reference calls is unscored: NaN as ragas's float
    assert math.isnan(ToolCallF1().multi_turn_score({"user_input": turns}))


def test_a_bad_conversation_is_one_clear_error() -> None:
    from localeval.ragas import HumanMessage, ToolCallF1, ToolMessage

    with pytest.raises(DataError, match="turn 2 \\(tool\\): a tool message without a preceding "
                                        "tool call"):
        ToolCallF1().score(user_input=[HumanMessage(content="q"), ToolMessage(content="r")],
                           reference_tool_calls=[])
