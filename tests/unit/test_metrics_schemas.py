"""Judge output schemas: bounded for grammars, literal verdicts, exact sizing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from localeval.metrics.schemas import ALL_SCHEMAS, ContextVerdict, Rating012, Rating024, Statements, Verdicts, correctness_schema, sized


def _walk(node, defs, path="$"):
    if "$ref" in node:
        yield from _walk(defs[node["$ref"].rsplit("/", 1)[1]], defs, path)
        return
    yield path, node
    for k, v in node.get("properties", {}).items():
        yield from _walk(v, defs, f"{path}.{k}")
    if "items" in node:
        yield from _walk(node["items"], defs, f"{path}[]")


@pytest.mark.parametrize("schema", ALL_SCHEMAS, ids=lambda s: s.__name__)
def test_every_string_and_list_is_bounded(schema):
    js = schema.model_json_schema()
    nodes = list(_walk(js, js.get("$defs", {})))
    for path, node in nodes:
        if node.get("type") == "string":
            assert 0 < node["maxLength"] <= 1000, path
        if node.get("type") == "array":
            assert 0 < node["maxItems"] <= 64, path
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False, path
    assert any(n.get("type") in ("string", "array", "integer") for _, n in nodes)


def test_verdicts_and_ratings_are_literals():
    assert ContextVerdict.model_json_schema()["properties"]["verdict"]["enum"] == [0, 1]
    assert Rating012.model_json_schema()["properties"]["rating"]["enum"] == [0, 1, 2]
    assert Rating024.model_json_schema()["properties"]["rating"]["enum"] == [0, 2, 4]
    with pytest.raises(ValidationError):
        Rating024.model_validate({"rating": 3})
    with pytest.raises(ValidationError):
        ContextVerdict.model_validate({"reason": "r", "verdict": 2})
    with pytest.raises(ValidationError):  # reason before verdict is required, extra keys are not
        ContextVerdict.model_validate({"reason": "r", "verdict": 1, "extra": 0})


def test_reason_precedes_verdict_for_chain_of_thought():
    assert list(ContextVerdict.model_json_schema()["properties"]) == ["reason", "verdict"]


def test_sized_variants():
    v3 = sized(Verdicts, 3)
    assert sized(Verdicts, 3) is v3 and v3.__name__ == "Verdicts3"
    arr = v3.model_json_schema()["properties"]["verdicts"]
    assert arr["minItems"] == arr["maxItems"] == 3
    ok = {"verdicts": [{"reason": "r", "verdict": 1}] * 3}
    assert len(v3.model_validate(ok).verdicts) == 3
    with pytest.raises(ValidationError):
        v3.model_validate({"verdicts": ok["verdicts"][:2]})
    assert issubclass(v3, Verdicts)
    with pytest.raises(ValueError):
        sized(Statements, 0)
    with pytest.raises(ValueError):
        sized(Statements, 1000)
    with pytest.raises(TypeError):
        sized(ContextVerdict, 2)  # type: ignore[arg-type]


def test_string_bounds_are_validated():
    with pytest.raises(ValidationError):
        Statements.model_validate({"statements": ["x" * 10_000]})


def test_correctness_schema_bounds_lists_by_statement_counts():
    c = correctness_schema(2, 3)
    assert correctness_schema(2, 3) is c
    props = c.model_json_schema()["properties"]
    assert (props["TP"]["maxItems"], props["FP"]["maxItems"], props["FN"]["maxItems"]) == (2, 2, 3)
    item = {"statement": "s", "reason": "r"}
    with pytest.raises(ValidationError):
        c.model_validate({"TP": [item] * 3, "FP": [], "FN": []})
    with pytest.raises(ValueError):
        correctness_schema(0, 1)
