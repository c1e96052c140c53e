"""The tool-call checks through localeval: the dataset's new fields (and their errors, naming
row and column), ``localeval run`` on a file of conversations with tools, the report's
conversation view showing which argument of which call failed and why, ``localeval
metrics`` and ``diff``'s exact test for 0/1 scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.cli.app import main
from localeval.dataset import load_dataset
from localeval.errors import DataError
from localeval.metrics import parse_metrics

TOOLS = [{"type": "function", "function": {"name": "weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"]}}}]


def _call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"c{i}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def _row(rid: str, calls: list[dict[str, Any]] | None, answers: Any, **extra: Any
         ) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": f"{rid}: weather in Paris?"}]
    if calls:
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            _call(i, c["name"], c["args"]) for i, c in enumerate(calls)]})
        msgs.extend({"role": "tool", "tool_call_id": f"c{i}", "content": "sunny"}
                    for i in range(len(calls)))
    msgs.append({"role": "assistant", "content": "Sunny."})
    return {"id": rid, "messages": msgs, "possible_answers": answers, **extra}


PARIS = [{"weather": {"city": ["Paris", "paris, fr"], "days": [3, ""]}}]


def _write(path: Path, rows: list[dict[str, Any]], tools: Any = TOOLS) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if tools is not None:
        path.with_name(path.stem + ".tools.json").write_text(json.dumps(tools))
    return path


def _rows() -> list[dict[str, Any]]:
    return [
        _row("ok", [{"name": "weather", "args": {"city": "PARIS"}}], PARIS),
        _row("type", [{"name": "weather", "args": {"city": "Paris", "days": "3"}}], PARIS),
        _row("none", None, []),
        _row("called", [{"name": "weather", "args": {"city": "Paris"}}], []),
    ]


def test_the_new_fields_are_read_and_the_tools_file_beside_the_data_fills_them(tmp_path):
    own = [{"name": "other", "parameters": {}}]
    rows = _rows() + [_row("own", None, [], tools=own,
                           reference_trajectory=[[{"name": "weather", "args": {}}]])]
    data = load_dataset(_write(tmp_path / "conv.jsonl", rows))
    by = {s.id: s for s in data.samples}
    assert by["ok"].tools == TOOLS and by["own"].tools == own
    assert by["ok"].possible_answers == PARIS and by["none"].possible_answers == []
    assert by["own"].reference_trajectory == [[{"name": "weather", "args": {}}]]
    assert {"tools", "possible_answers", "reference_trajectory"} <= set(data.columns)
    assert by["ok"].to_dict()["tools"] == TOOLS
    # without the file, rows carry no tools
    assert load_dataset(_write(tmp_path / "bare.jsonl", _rows(), None)).samples[0].tools is None


@pytest.mark.parametrize("field,value,words", [
    ("possible_answers", [{"weather": {"city": "Paris"}}],
     "field possible_answers: answer 1: function 'weather', argument 'city': BFCL's shape "
     "gives a list of accepted values, got text"),
    ("possible_answers", [[], []], "gives 2 turn(s) of expected calls, but the conversation "
                                   "has 1 user message(s)"),
    ("possible_answers", [[], {"name": "f"}], "mixes lists and calls"),
    ("possible_answers", "weather", "field possible_answers: expected a list, got str"),
    ("tools", [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {
        "type": "str"}}}}], "field tools: tool 1 (f), property 'x': unknown type 'str'"),
    ("reference_trajectory", [{"name": "f"}], "step 1: expected a list of calls"),
    # arguments as JSON text are read by the data files' strict rule, not json.loads
    ("possible_answers", [{"function": {"name": "weather", "arguments": '{"city": NaN}'}}],
     "answer 1: arguments are not JSON (NaN is not a number JSON allows"),
    ("reference_trajectory", [[{"function": {"name": "weather", "arguments":
                                             '{"days": ' + "1" * 5000 + "}"}}]],
     "step 1, answer 1: arguments are not JSON (a number with thousands of digits"),
    ("possible_answers", [{"function": {"name": "weather", "arguments":
                                        '{"city": ' + "[" * 100000 + "]" * 100000 + "}"}}],
     "arguments are not JSON (nested too deeply"),
])
def test_a_bad_field_names_the_row_and_the_column(tmp_path, field, value, words):
    rows = _rows()
    rows[1][field] = value
    with pytest.raises(DataError) as e:
        load_dataset(_write(tmp_path / "bad.jsonl", rows, None))
    assert "line 2" in str(e.value) and f"column '{field}'" in str(e.value)
    assert words in str(e.value)


def test_a_bad_tools_file_names_the_file(tmp_path):
    path = _write(tmp_path / "conv.jsonl", _rows(), [{"description": "no name"}])
    with pytest.raises(DataError, match=r"conv\.tools\.json.*tool 1: the tool has no name"):
        load_dataset(path)


def test_a_tools_file_with_a_number_json_forbids_names_the_file(tmp_path):
    path = _write(tmp_path / "conv.jsonl", _rows(), None)
    path.with_name("conv.tools.json").write_text('[{"name": "f", "parameters": {"x": NaN}}]')
    with pytest.raises(DataError, match=r"conv\.tools\.json.*NaN is not a number JSON allows"):
        load_dataset(path)


def test_metrics_lists_the_checks(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for name in ("tool_call_ast", "tool_call_validity", "tool_trajectory"):
        assert name in out
    [m] = parse_metrics("tool_trajectory:mode=superset")
    assert m.key == "tool_trajectory:mode=superset"


def _results(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_run_scores_the_checks_and_the_report_says_which_argument_failed(tmp_path):
    path = _write(tmp_path / "conv.jsonl", _rows())
    out = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out)]) == 0  # chosen by the fields present
    res = _results(out)
    assert {k: r["scores"]["tool_call_ast"] for k, r in res.items()} == {
        "ok": 1.0, "type": 0.0, "none": 1.0, "called": 0.0}
    assert {k: r["scores"]["tool_call_validity"] for k, r in res.items()} == {
        "ok": 1.0, "type": 0.0, "none": 1.0, "called": 1.0}
    [f] = res["type"]["details"]["tool_call_ast"]["failures"]
    assert (f["turn"], f["call"], f["argument"], f["kind"]) == (2, 1, "days", "wrong_type")
    assert res["called"]["details"]["tool_call_ast"]["failures"][0]["kind"] == "should_not_call"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "argument <code>days</code>: days: expected integer, got string &#39;3&#39;" in page
    assert "Tools offered: <code>weather</code>" in page
    assert "called &#39;weather&#39;, but no function should be called" in page


def test_trajectory_and_turn_by_turn_checks_run(tmp_path):
    two = _row("turns", [{"name": "weather", "args": {"city": "Paris"}}],
               [PARIS, []])
    two["messages"] += [{"role": "user", "content": "thanks"},
                        {"role": "assistant", "content": None, "tool_calls": [
                            _call(9, "weather", {"city": "Rome"})]},
                        {"role": "tool", "tool_call_id": "c9", "content": "rain"}]
    path = _write(tmp_path / "turns.jsonl", [two])
    out = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out), "-m",
                 "tool_call_ast,tool_trajectory,tool_trajectory:mode=subset"]) == 0
    r = _results(out)["turns"]
    assert r["scores"]["tool_call_ast"] == 0.0  # turn 2 should have made no call
    [f] = r["details"]["tool_call_ast"]["failures"]
    assert (f["user_turn"], f["turn"], f["call"], f["kind"]) == (2, 6, 2, "should_not_call")
    assert r["scores"]["tool_trajectory"] == 0.0  # Rome is an extra step
    assert r["scores"]["tool_trajectory:mode=subset"] == 0.0  # Rome is not in the reference
    assert r["details"]["tool_trajectory"]["reference"] == "possible_answers"


def test_diff_uses_the_exact_test_for_the_0_1_checks(tmp_path):
    good = [_row(f"r{i}", [{"name": "weather", "args": {"city": "Paris"}}], PARIS)
            for i in range(12)]
    bad = [_row(f"r{i}", [{"name": "weather", "args": {"city": "Rome" if i < 8 else "Paris"}}],
                PARIS) for i in range(12)]
    base, new = tmp_path / "base", tmp_path / "new"
    assert main(["run", str(_write(tmp_path / "a.jsonl", good)), "-o", str(base),
                 "-m", "tool_call_ast"]) == 0
    assert main(["run", str(_write(tmp_path / "b.jsonl", bad)), "-o", str(new),
                 "-m", "tool_call_ast"]) == 0
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "d"), "--seed", "0"]) == 0
    d = json.loads((tmp_path / "d" / "diff.json").read_text())
    m = next(x for x in d["metrics"] if x["metric"] == "tool_call_ast")
    est = m["estimates"][0]
    assert est["value"] == pytest.approx(-8 / 12)
    assert "McNemar" in json.dumps(est)
