"""tool_call_accuracy and tool_call_f1 against ragas 0.4's own scores.

tests/data/ragas_tool_goldens.json is written by scripts/ragas_tool_goldens.py,
which scores hand-written and seeded random conversations with ragas's
ToolCallAccuracy and ToolCallF1. Here the same rows go through localeval's
conversation reader, in ragas's JSON shape and converted to OpenAI's chat shape
(arguments as JSON text), and must give ragas's scores to 1e-9.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.dataset import load_dataset
from localeval.metrics.tools import ToolCallAccuracy, ToolCallF1
from localeval.types import MultiTurnSample

GOLDENS = json.loads((Path(__file__).parent.parent / "data" / "ragas_tool_goldens.json")
                     .read_text(encoding="utf-8"))
CASES = GOLDENS["cases"]
IDS = [c["name"] for c in CASES]


def _openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ragas messages as OpenAI chat messages: ids on the calls, tool messages naming them."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    n = 0
    for m in messages:
        if m["type"] == "human":
            out.append({"role": "user", "content": m["content"]})
        elif m["type"] == "tool":
            out.append({"role": "tool", "content": m["content"], "tool_call_id": pending.pop(0)})
        else:
            msg: dict[str, Any] = {"role": "assistant", "content": m["content"] or None}
            if m.get("tool_calls"):
                msg["tool_calls"] = []
                for c in m["tool_calls"]:
                    n += 1
                    pending.append(f"call_{n}")
                    msg["tool_calls"].append({"id": f"call_{n}", "type": "function", "function": {
                        "name": c["name"], "arguments": json.dumps(c["args"], ensure_ascii=False)}})
            out.append(msg)
    return out


def _sample(case: dict[str, Any], shape: str) -> MultiTurnSample:
    row = ({"user_input": case["user_input"]} if shape == "ragas"
           else {"messages": _openai(case["user_input"])})
    sample = load_dataset([{**row, "reference_tool_calls": case["reference_tool_calls"]}])[0]
    assert isinstance(sample, MultiTurnSample)
    return sample


def test_the_goldens_cover_what_the_issue_asks() -> None:
    names = " ".join(IDS)
    assert len(CASES) >= 40
    for kind in ("swapped", "missing", "extra", "nested", "int against", "true against"):
        assert kind in names
    assert {c.get("strict_order", True) for c in CASES} == {True, False}
    assert {c.get("arg_comparison", "exact") for c in CASES} >= {"exact", "levenshtein",
                                                                  "jaro", "jaro_winkler",
                                                                  "hamming"}
    # the cases are not all alike: both metrics take several values, not only 0 and 1
    assert len({c["tool_call_accuracy"] for c in CASES}) > 5
    assert len({c["tool_call_f1"] for c in CASES}) > 5


@pytest.mark.parametrize("shape", ["ragas", "openai"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_equals_ragas(case: dict[str, Any], shape: str) -> None:
    sample = _sample(case, shape)
    acc = ToolCallAccuracy(strict_order=case.get("strict_order", True),
                           arg_comparison=case.get("arg_comparison", "exact")).score(sample)
    f1 = ToolCallF1().score(sample)
    assert acc.value == pytest.approx(case["tool_call_accuracy"], abs=1e-9)
    assert f1.value == pytest.approx(case["tool_call_f1"], abs=1e-9)
