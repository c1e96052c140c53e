"""Conversations in: ragas's MultiTurnSample JSON and OpenAI chat messages, and every bad input.

Each bad input is one DataError (exit 2) naming the file, the line, the column,
the turn and the field; never a traceback.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from localeval.dataset import data_version, load_dataset
from localeval.errors import DataError
from localeval.types import Message, MultiTurnSample, Sample, ToolCall

RAGAS_ROW = {
    "id": "r1",
    "user_input": [
        {"type": "human", "content": "Weather in Paris?"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "weather",
                                                       "args": {"city": "Paris", "days": 2}}]},
        {"type": "tool", "content": "18C, sunny"},
        {"type": "ai", "content": "18C and sunny."},
    ],
    "reference": "It is 18C and sunny.",
    "reference_tool_calls": [{"name": "weather", "args": {"city": "Paris", "days": 2}}],
    "reference_topics": ["weather"],
    "rubrics": {"score1": "bad"},
}
OPENAI_ROW = {
    "id": "o1",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Book a table"},
                                     {"type": "text", "text": "for two"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "book", "arguments": '{"people": 2, "at": {"h": 19}}'}},
            {"id": "c2", "type": "function", "function": {"name": "notify", "arguments": ""}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "booked"},
        {"role": "tool", "tool_call_id": "c2", "content": "sent"},
        {"role": "assistant", "content": "Done."},
    ],
    "reference_tool_calls": [{"id": "x", "type": "function",
                              "function": {"name": "book", "arguments": '{"people": 2}'}}],
}


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return p


def test_ragas_shape(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path, [RAGAS_ROW]))
    s = ds[0]
    assert isinstance(s, MultiTurnSample) and isinstance(s, Sample)
    assert s.id == "r1" and s.row == 1
    assert [m.role for m in s.messages] == ["user", "assistant", "tool", "assistant"]
    assert s.messages[1].tool_calls == [ToolCall("weather", {"city": "Paris", "days": 2})]
    assert s.tool_calls() == s.reference_tool_calls
    assert s.reference == "It is 18C and sunny." and s.reference_topics == ["weather"]
    assert s.metadata == {"rubrics": {"score1": "bad"}}  # ragas's rubrics kept as metadata
    assert s.question is None and s.answer is None
    assert ds.columns == {"messages", "reference", "reference_tool_calls", "reference_topics"}
    assert ds.column("messages") == "user_input"


def test_openai_shape(tmp_path: Path) -> None:
    s = load_dataset(_write(tmp_path, [OPENAI_ROW]))[0]
    assert isinstance(s, MultiTurnSample)
    assert s.messages[0] == Message("system", "Be brief.")
    assert s.messages[1].content == "Book a table\nfor two"
    assert s.messages[2].content == ""  # null beside tool calls
    assert s.tool_calls() == [ToolCall("book", {"people": 2, "at": {"h": 19}}, "c1"),
                              ToolCall("notify", {}, "c2")]
    assert s.messages[3].tool_call_id == "c1" and s.messages[4].tool_call_id == "c2"
    assert s.reference_tool_calls == [ToolCall("book", {"people": 2}, "x")]


def test_both_shapes_give_the_same_conversation_and_argument_types_are_kept() -> None:
    args = {"n": 1, "f": 1.0, "b": True, "z": None, "l": [1, "a"], "o": {"k": [2.5]}}
    ragas = {"user_input": [{"type": "human", "content": "q"},
                            {"type": "ai", "content": "", "tool_calls": [{"name": "t",
                                                                           "args": args}]}],
             "reference_tool_calls": [{"name": "t", "args": args}]}
    openai = {"messages": [{"role": "user", "content": "q"},
                           {"role": "assistant", "content": None, "tool_calls": [
                               {"id": "1", "type": "function", "function": {
                                   "name": "t", "arguments": json.dumps(args)}}]}],
              "reference_tool_calls": [{"name": "t", "args": args}]}
    a, b = load_dataset([ragas])[0], load_dataset([openai])[0]
    assert a.tool_calls()[0].args == b.tool_calls()[0].args == args
    assert type(b.tool_calls()[0].args["f"]) is float and type(b.tool_calls()[0].args["n"]) is int
    assert [m.role for m in a.messages] == [m.role for m in b.messages]


def test_a_dataframe_and_a_list_of_samples(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    other = {k: v for k, v in RAGAS_ROW.items() if k not in ("reference", "rubrics")}
    ds = load_dataset(pd.DataFrame([RAGAS_ROW, {**other, "id": "r2"}]))
    assert [s.id for s in ds] == ["r1", "r2"] and ds.unit == "row"
    assert ds[1].reference is None and ds[1].metadata == {"rubrics": None}  # NaN cells
    assert load_dataset(list(ds.samples)).samples == ds.samples


def test_column_map() -> None:
    row = {"conv": RAGAS_ROW["user_input"], "calls": RAGAS_ROW["reference_tool_calls"]}
    s = load_dataset([row], columns=["messages=conv", "reference_tool_calls=calls"])[0]
    assert s.tool_calls() == s.reference_tool_calls and len(s.messages) == 4
    with pytest.raises(DataError, match="--columns answer=conv: a conversation has no 'answer'"):
        load_dataset([RAGAS_ROW], columns=["answer=conv"])
    with pytest.raises(DataError, match="--columns reference_topics=topics: the data has no "
                                        "column 'topics'"):
        load_dataset([row], columns=["messages=conv", "reference_topics=topics"])


def test_numpy_cells_and_parquet(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    row = {"messages": np.array([{"role": "user", "content": "q"},
                                 {"role": "assistant", "content": None, "tool_calls": np.array([
                                     {"name": "t", "args": {"l": np.array([1, 2]),
                                                            "n": np.int64(3)}}])}]),
           "reference_tool_calls": np.array([{"name": "t", "args": {"l": [1, 2], "n": 3}}])}
    s = load_dataset(pd.DataFrame([row]))[0]
    assert s.tool_calls() == s.reference_tool_calls
    assert type(s.tool_calls()[0].args["l"]) is list
    assert isinstance(row["messages"][1]["tool_calls"][0]["args"]["l"], np.ndarray)  # untouched
    path = tmp_path / "c.parquet"
    pytest.importorskip("pyarrow")
    pd.DataFrame([RAGAS_ROW]).to_parquet(path)
    with pytest.raises(DataError, match="conversations are not read from Parquet"):
        load_dataset(path)
    datasets = pytest.importorskip("datasets")
    with pytest.raises(DataError, match="<Dataset>: conversations are not read from Parquet "
                                        "or a Hugging Face dataset"):
        load_dataset(datasets.Dataset.from_list([RAGAS_ROW]))


def test_single_turn_data_is_read_as_before(tmp_path: Path) -> None:
    rows = [{"question": "q", "answer": "a", "metadata_list": [1]},
            {"user_input": "q2", "response": "a2"}]
    ds = load_dataset(rows)
    assert all(type(s) is Sample for s in ds)
    assert ds.columns == {"question", "answer"}


def test_the_hash_covers_the_conversation() -> None:
    base = load_dataset([RAGAS_ROW])
    other = json.loads(json.dumps(RAGAS_ROW))
    other["user_input"][3]["content"] = "It rains."
    changed = load_dataset([other])
    assert data_version(base).content != data_version(changed).content
    assert data_version(base).testset == data_version(changed).testset  # same asks, references
    other["user_input"][0]["content"] = "Weather in Rome?"
    assert data_version(base).testset != data_version(load_dataset([other])).testset


def test_a_long_conversation_reads_quickly(tmp_path: Path) -> None:
    turns: list[dict[str, Any]] = []
    for i in range(500):
        turns += [{"role": "user", "content": f"question {i}"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": f"c{i}", "type": "function",
                       "function": {"name": "lookup", "arguments": json.dumps({"i": i})}}]},
                  {"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i}"},
                  {"role": "assistant", "content": f"answer {i}"}]
    assert len(turns) == 2000
    path = _write(tmp_path, [{"messages": turns, "reference_tool_calls": []}])
    start = time.perf_counter()
    s = load_dataset(path)[0]
    assert time.perf_counter() - start < 5
    assert len(s.messages) == 2000 and len(s.tool_calls()) == 500
    assert s.tool_calls()[499].args == {"i": 499}


def _error(tmp_path: Path, row: dict[str, Any]) -> str:
    path = _write(tmp_path, [RAGAS_ROW, row])
    with pytest.raises(DataError) as e:
        load_dataset(path)
    assert e.value.exit_code == 2
    msg = str(e.value)
    assert msg.startswith(f"{path}, line 2, column ")
    return msg


def _ragas(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"user_input": list(messages), **extra}


def _openai(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"messages": list(messages), **extra}


HUMAN = {"type": "human", "content": "hi"}
USER = {"role": "user", "content": "hi"}


@pytest.mark.parametrize("row, expected", [
    (_ragas(HUMAN, {"type": "tool", "content": "x"}),
     "column 'user_input': turn 2 (tool): a tool message without a preceding tool call "
     "(turn 1 is a user message)"),
    (_openai({"role": "tool", "content": "x", "tool_call_id": "c1"}),
     "turn 1 (tool): a tool message without a preceding tool call (it is the first message)"),
    (_ragas(HUMAN, {"type": "ai", "content": "ok"}, {"type": "tool", "content": "x"}),
     "turn 3 (tool): a tool message without a preceding tool call (turn 2 is a assistant"),
    (_openai(USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c9", "content": "x"}),
     "turn 3 (tool), field tool_call_id: 'c9' names no call of the assistant message at "
     "turn 2 (its calls: c1)"),
    (_openai(USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{city: 1}"}}]}),
     "column 'messages': turn 2 (assistant), field tool_calls[1].function.arguments: not JSON "
     "(Expecting property name enclosed in double quotes at column 2): '{city: 1}'"),
    (_openai(USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[1, 2]"}}]}),
     "tool_calls[1].function.arguments: expected a JSON object of arguments, got a list"),
    (_openai(USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": NaN}"}}]}),
     "tool_calls[1].function.arguments: "),
    (_ragas(HUMAN, {"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": "x=1"}]}),
     "turn 2 (assistant), field tool_calls[1].args: expected an object of arguments, got a "
     "string"),
    (_ragas(HUMAN, {"type": "ai", "content": "", "tool_calls": [{"args": {}}]}),
     "turn 2 (assistant), field tool_calls[1].name: the tool's name is missing"),
    (_openai({"role": "bot", "content": "hi"}),
     "column 'messages': turn 1, field role: unknown role 'bot'; roles: user, assistant, tool, "
     "system (ragas's types: human, ai, tool)"),
    (_ragas({"type": "robot", "content": "hi"}), "turn 1, field type: unknown role 'robot'"),
    (_openai({"content": "hi"}), "turn 1: the message has no role"),
    (_openai(USER, "hello"), "turn 2: expected a message object, got a string"),
    (_openai(), "column 'messages': empty conversation: the list of messages holds no message"),
    (_ragas(), "column 'user_input': empty conversation"),
    (_openai({"role": "user", "content": None}),
     "turn 1 (user), field content: missing; a user message needs its text"),
    (_openai({"role": "user", "content": [{"type": "image_url", "image_url": {}}]}),
     "turn 1 (user), field content: part 1 is 'image_url'; only text parts"),
    (_openai({"role": "user", "content": "q", "tool_calls": []}),
     "turn 1 (user), field tool_calls: only an assistant message calls tools"),
    (_openai(USER, {"role": "assistant", "content": "", "function_call": {"name": "f"}}),
     "turn 2 (assistant), field function_call: the older OpenAI function_call is not read"),
    (_openai(USER, reference_tool_calls={"name": "f"}),
     "column 'reference_tool_calls': tool_calls: expected a list of tool calls, got an object"),
    (_openai(USER, reference_tool_calls=[{"name": "f", "args": [1]}]),
     "column 'reference_tool_calls': tool_calls[1].args: expected an object of arguments"),
    (_openai(USER, reference_topics="weather"),
     "column 'reference_topics': expected a list of topics"),
    (_openai(USER, reference=3), "column 'reference': expected text, got a number"),
    (_openai(USER, id=[1]), "column 'id': id must be a string or integer, got a list"),
    (_openai(USER, id="r1"), "column 'id': duplicate id 'r1' (first seen at line 1)"),
    (_openai(USER, answer="a"), "column 'answer': a conversation row has no 'answer'"),
    ({"user_input": "a question", "response": "x"},
     "column 'user_input': this row is not a conversation (its messages are a string, not a "
     "list of messages), but the data's first row is"),
    ({**_openai(USER), "user_input": [HUMAN]},
     "column 'user_input': both 'messages' and 'user_input' given"),
])
def test_bad_input_is_one_clear_message(tmp_path: Path, row: dict[str, Any], expected: str
                                        ) -> None:
    assert expected in _error(tmp_path, row)


def test_bad_input_on_the_command_line_exits_2(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli.app import main

    path = _write(tmp_path, [_ragas(HUMAN, {"type": "tool", "content": "x"},
                                    reference_tool_calls=[])])
    assert main(["run", str(path), "-m", "tool_call_accuracy", "-o", str(tmp_path / "out"),
                 "--no-cache", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "line 1, column 'user_input': turn 2 (tool): a tool message without" in err
    assert "Traceback" not in err


def test_a_single_turn_metric_on_conversations_says_so(tmp_path: Path) -> None:
    from localeval.run import evaluate

    with pytest.raises(DataError, match="metric faithfulness scores single-turn samples"):
        evaluate(_write(tmp_path, [RAGAS_ROW]), "faithfulness", judge=False)
    with pytest.raises(DataError, match="missing column 'messages' required by metric "
                                        "tool_call_f1 \\(a conversation"):
        evaluate([{"question": "q", "answer": "a"}], "tool_call_f1", judge=False)
