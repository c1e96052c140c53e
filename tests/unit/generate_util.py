"""Scripted judge replies the generate tests share: the support check's statements and
verdicts (every statement supported), and the synthesis steps' names."""

from __future__ import annotations

from typing import Any

STEPS = ("synth_single_hop_specific", "synth_multi_hop_specific", "synth_multi_hop_abstract")


def statements(request: Any) -> dict[str, Any]:
    return {"statements": ["A fact."]}


def supported(request: Any) -> dict[str, Any]:
    """Every statement supported, as many verdicts as the schema asks for."""
    n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 1)
    return {"verdicts": [{"reason": "r", "verdict": 1} for _ in range(n)]}
