"""tool_call_accuracy and tool_call_f1: ragas's arithmetic on small known cases, the degenerate
cases as documented, the metric specs, and a run over a file of conversations end to end.

The bulk of the agreement with ragas is in tests/golden/test_ragas_tool_goldens.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.errors import UsageError
from localeval.metrics import parse_metrics
from localeval.metrics.tools import ToolCallAccuracy, ToolCallF1, hashable
from localeval.types import Message, MultiTurnSample, Sample, ToolCall


def conv(made: list[ToolCall], expected: list[ToolCall] | None) -> MultiTurnSample:
    msgs = [Message("user", "q")]
    for c in made:  # one assistant turn per call, each answered
        msgs += [Message("assistant", "", [c]), Message("tool", "ok")]
    msgs.append(Message("assistant", "done"))
    return MultiTurnSample(id="s", messages=msgs, reference_tool_calls=expected)


A, B = ToolCall("a", {"x": 1, "y": "p"}), ToolCall("b", {"z": [1, 2]})


def acc(made: list[ToolCall], expected: list[ToolCall] | None, **kw: Any) -> float | None:
    return ToolCallAccuracy(**kw).score(conv(made, expected)).value


def f1(made: list[ToolCall], expected: list[ToolCall] | None) -> float | None:
    return ToolCallF1().score(conv(made, expected)).value


def test_degenerate_cases_as_ragas_decides_them() -> None:
    # the table in localeval/metrics/tools.py and docs/conversations-and-agents.md
    assert (acc([], []), f1([], [])) == (1.0, 0.0)
    assert (acc([], [A]), f1([], [A])) == (0.0, 0.0)
    assert (acc([A], []), f1([A], [])) == (0.0, 0.0)
    assert acc([ToolCall("n")], [ToolCall("n")]) == 1.0 and f1([ToolCall("n")], [ToolCall("n")]) == 1.0
    assert acc([ToolCall("n", {"k": 1})], [ToolCall("n")]) == 0.0
    assert f1([ToolCall("n", {"k": 1})], [ToolCall("n")]) == 0.0
    assert ToolCallF1().score(conv([], [])).details == {"tp": 0, "fp": 0, "fn": 0,
                                                        "precision": 0.0, "recall": 0.0}
    assert ToolCallAccuracy().score(conv([], [])).details["note"] == \
        "no tool call expected and none made"


def test_order_arguments_and_their_text() -> None:
    assert acc([A, B], [A, B]) == 1.0
    assert acc([B, A], [A, B]) == 0.0
    assert acc([B, A], [A, B], strict_order=False) == 1.0
    assert acc([ToolCall("a", {"x": 1, "y": "q"})], [A]) == 0.5  # one of two arguments
    assert acc([ToolCall("a", {"x": 1.0, "y": "p"})], [A]) == 0.5  # "1.0" is not "1"
    assert acc([ToolCall("a", {"x": "1", "y": "p"})], [A]) == 1.0  # "1" is "1"
    assert acc([A, ToolCall("c")], [A]) == 0.0  # names misaligned
    # a string distance scores each argument 1 - the normalised distance (rapidfuzz)
    near = ToolCall("a", {"x": 1, "y": "pq"})
    assert acc([near], [A], arg_comparison="levenshtein") == pytest.approx((1 + 0.5) / 2)
    details = ToolCallAccuracy().score(conv([B, A], [A, B])).details
    assert details["sequence_aligned"] is False
    assert details["pairs"] == [{"expected": "a", "made": "b", "args_score": 0.0},
                                {"expected": "b", "made": "a", "args_score": 0.0}]


def test_f1_is_over_sets_of_calls_and_rounded_as_ragas() -> None:
    assert f1([A, B], [A]) == pytest.approx(0.6667, abs=0)  # rounded to 4 decimals
    assert f1([A, A], [A]) == 1.0  # a call made twice counts once
    assert f1([ToolCall("a", {"y": "p", "x": True})], [A]) == 1.0  # True == 1 in ragas's hash
    assert f1([ToolCall("a", {"x": "1", "y": "p"})], [A]) == 0.0
    sc = ToolCallF1().score(conv([A, B, ToolCall("c")], [A, ToolCall("d")]))
    assert sc.details == {"tp": 1, "fp": 2, "fn": 1, "precision": 1 / 3, "recall": 0.5}
    assert sc.value == round(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5), 4)
    assert hashable({"a": [1, {"b": {2}}]}) == frozenset({("a", (1, frozenset({("b", frozenset({2}))})))})


def test_unscored_without_a_conversation_or_its_reference() -> None:
    sc = ToolCallAccuracy().score(Sample(id="1", question="q", answer="a"))
    assert sc.value is None and "not a conversation" in (sc.reason or "")
    sc = ToolCallF1().score(conv([A], None))
    assert sc.value is None and sc.reason == "missing reference_tool_calls"
    assert ToolCallF1().missing_fields(conv([A], None)) == ["reference_tool_calls"]


def test_specs() -> None:
    m = parse_metrics("tool_call_accuracy:strict_order=false,arg_comparison=jaro_winkler,"
                      "tool_call_f1")
    assert m == [ToolCallAccuracy(strict_order=False, arg_comparison="jaro_winkler"), ToolCallF1()]
    assert m[0].key == "tool_call_accuracy:strict_order=False;arg_comparison=jaro_winkler"
    with pytest.raises(UsageError, match="arg_comparison"):
        parse_metrics("tool_call_accuracy:arg_comparison=cosine")
    assert not ToolCallAccuracy.uses_judge and not ToolCallF1.uses_embedder


def test_evaluate_takes_sample_objects() -> None:
    from localeval.run import evaluate

    result = evaluate([conv([A], [A]), MultiTurnSample(id="t", messages=[Message("user", "q")],
                                                       reference_tool_calls=[B])],
                      ["tool_call_f1", "tool_call_accuracy"], judge=False, progress=False)
    assert result.summary["metrics"]["tool_call_f1"]["mean"] == 0.5
    assert [r["tool_call_accuracy"].value for r in result.scores] == [1.0, 0.0]


def test_run_end_to_end(tmp_path: Path) -> None:
    from localeval.cli.app import main

    rows = [
        {"id": "a", "user_input": [
            {"type": "human", "content": "Weather in Paris?"},
            {"type": "ai", "content": "", "tool_calls": [{"name": "weather",
                                                           "args": {"city": "Paris"}}]},
            {"type": "tool", "content": "18C"}, {"type": "ai", "content": "18C."}],
         "reference_tool_calls": [{"name": "weather", "args": {"city": "Paris"}}]},
        {"id": "b", "messages": [
            {"role": "user", "content": "東京の天気は？"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "weather", "arguments": "{\"city\": \"京都\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "晴れ"},
            {"role": "assistant", "content": "晴れです。"}],
         "reference_tool_calls": [{"name": "weather", "args": {"city": "東京"}}]},
        {"id": "c", "messages": [{"role": "user", "content": "hi"},
                                 {"role": "assistant", "content": "hello"}],
         "reference_tool_calls": []},
    ]
    data = tmp_path / "conv.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(data), "-o", str(out), "--no-cache", "--quiet"]) == 0  # defaults
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["scores"] for r in records] == [
        {"tool_call_accuracy": 1.0, "tool_call_f1": 1.0},
        {"tool_call_accuracy": 0.0, "tool_call_f1": 0.0},
        {"tool_call_accuracy": 1.0, "tool_call_f1": 0.0}]  # no call expected, none made
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["tool_call_accuracy"]["mean"] == pytest.approx(2 / 3)
    assert summary["metrics"]["tool_call_f1"]["mean"] == pytest.approx(1 / 3)
    assert summary["signature"]["dataset_rows"] == 3
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "東京の天気は？" in html and "京都" in html  # the conversation, shown as data
    # the same run again resumes in its folder; other conversations are refused there
    assert main(["run", str(data), "-o", str(out), "--no-cache", "--quiet"]) == 0
    rows[0]["user_input"][3]["content"] = "It is 18C."
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    assert main(["run", str(data), "-o", str(out), "--no-cache", "--quiet"]) == 2
    # a row without its reference calls is named, as a single-turn row without its field
    del rows[2]["reference_tool_calls"]
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    from localeval.errors import DataError
    from localeval.run import evaluate

    with pytest.raises(DataError, match="line 3, column 'reference_tool_calls': missing value "
                                        "required by metric tool_call_f1"):
        evaluate(data, "tool_call_f1")
