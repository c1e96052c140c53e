"""Judge output schemas: bounded for grammars, literal verdicts, exact sizing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from localeval.metrics.schemas import (
    ALL_SCHEMAS,
    MAX_STATEMENTS,
    REASON_CHARS,
    ContextVerdict,
    Rating012,
    Rating024,
    Statements,
    Verdicts,
    correctness_schema,
    entities_schema,
    selection_schema,
    sized,
    statements_schema,
    verdicts_schema,
)


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


def _verdict(reason="r", verdict=1):
    return {"reason": reason, "verdict": verdict}


def test_correctness_schema_sizes_both_verdict_lists_exactly():
    c = correctness_schema(2, 3)
    assert correctness_schema(2, 3) is c
    props = c.model_json_schema()["properties"]
    assert list(props) == ["answer", "reference"]
    assert (props["answer"]["minItems"], props["answer"]["maxItems"]) == (2, 2)
    assert (props["reference"]["minItems"], props["reference"]["maxItems"]) == (3, 3)
    ok = c.model_validate({"answer": [_verdict()] * 2, "reference": [_verdict(verdict=0)] * 3})
    assert [v.verdict for v in ok.reference] == [0, 0, 0]
    for bad in ({"answer": [_verdict()] * 3, "reference": [_verdict()] * 3},
                {"answer": [_verdict()] * 2, "reference": [_verdict()] * 2},
                {"answer": [_verdict()] * 2, "reference": [_verdict()] * 3, "TP": []}):
        with pytest.raises(ValidationError):
            c.model_validate(bad)
    with pytest.raises(ValueError):
        correctness_schema(0, 1)
    with pytest.raises(ValueError):
        correctness_schema(1, MAX_STATEMENTS + 1)


def test_reasons_can_be_bounded_below_the_ceiling():
    c = correctness_schema(1, 1, 50)
    with pytest.raises(ValidationError):
        c.model_validate({"answer": [_verdict("x" * 51)], "reference": [_verdict()]})
    v = verdicts_schema(2, 40)
    assert issubclass(v, Verdicts)
    with pytest.raises(ValidationError):
        v.model_validate({"verdicts": [_verdict("x" * 41), _verdict()]})
    assert verdicts_schema(3, REASON_CHARS) is sized(Verdicts, 3)
    js = v.model_json_schema()
    item = next(iter(js["$defs"].values()))
    assert list(item["properties"]) == ["reason", "verdict"]  # reason still first
    with pytest.raises(ValueError):
        verdicts_schema(2, REASON_CHARS + 1)


def test_statement_and_entity_schemas_bound_count_and_length():
    st = statements_schema(3, 20)
    assert issubclass(st, Statements) and statements_schema(3, 20) is st
    arr = st.model_json_schema()["properties"]["statements"]
    assert arr["maxItems"] == 3 and arr["items"]["maxLength"] == 20 and "minItems" not in arr
    st.model_validate({"statements": []})
    with pytest.raises(ValidationError):
        st.model_validate({"statements": ["a", "b", "c", "d"]})
    with pytest.raises(ValidationError):
        st.model_validate({"statements": ["x" * 21]})
    en = entities_schema(2, 8)
    with pytest.raises(ValidationError):
        en.model_validate({"entities": ["123456789"]})
    for bad in ((0, 10), (10, 0), (MAX_STATEMENTS + 1, 10), (1, 10_000)):
        with pytest.raises(ValueError):
            statements_schema(*bad)


def test_selection_schema_allows_only_the_numbers_shown():
    sel = selection_schema(3)
    arr = sel.model_json_schema()["properties"]["sentences"]
    assert arr["items"]["enum"] == [1, 2, 3] and arr["maxItems"] == 3
    assert sel.model_validate({"sentences": [3, 1]}).sentences == [3, 1]
    assert sel.model_validate({"sentences": []}).sentences == []
    for bad in ([0], [4], ["1"], [1, 2, 3, 1]):
        with pytest.raises(ValidationError):
            sel.model_validate({"sentences": bad})
    # one sentence: still an enum (not "const"), the same form for every reader
    assert selection_schema(1).model_json_schema()["properties"]["sentences"]["items"] == {
        "type": "integer", "enum": [1]}
    assert selection_schema(200).model_validate({"sentences": [200]}).sentences == [200]
    with pytest.raises(ValueError):
        selection_schema(0)
