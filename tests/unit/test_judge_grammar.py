"""JSON schema -> GBNF: strict strings, mandatory bounds, token budgets, verdict values."""

from __future__ import annotations

import json
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from localeval.judge.grammar import STRICT_CHAR_RULE, allowed_values, check_bounds, max_tokens_for, schema_to_gbnf, stock_char_rule, stock_gbnf
from localeval.metrics.schemas import (
    ALL_SCHEMAS,
    Rating012,
    Statements,
    Verdicts,
    correctness_schema,
    entities_schema,
    selection_schema,
    statements_schema,
    verdicts_schema,
)


class Unbounded(BaseModel):
    text: str


class NoMaxItems(BaseModel):
    items: list[str] = Field(max_length=None)


class Inner(BaseModel):
    name: str


class Nested(BaseModel):
    things: list[Inner] = Field(max_length=3)


class FreeDict(BaseModel):
    extra: dict[str, int]


class Patterned(BaseModel):
    code: str = Field(max_length=5, pattern=r"^[a-z]+$")


class Ok(BaseModel):
    reason: str = Field(max_length=10)
    verdict: Literal[0, 1]
    tags: list[Literal["a", "b"]] = Field(max_length=2)
    note: str | None = Field(default=None, max_length=4)


@pytest.mark.parametrize("schema, path", [
    (Unbounded, "$.text"),
    (NoMaxItems, "$.items"),
    (Nested, "$.things[].name"),
    (FreeDict, "$.extra"),
    (Patterned, "$.code"),
])
def test_unbounded_or_unsupported_parts_are_refused_with_their_path(schema, path):
    with pytest.raises(ValueError) as e:
        schema_to_gbnf(schema)
    assert str(e.value).startswith(path + ":")


def test_every_metric_schema_is_bounded():
    for schema in ALL_SCHEMAS:
        check_bounds(schema)
        gbnf = schema_to_gbnf(schema)
        assert "root ::=" in gbnf


def test_strict_rule_replaces_the_stock_one():
    strict, stock = schema_to_gbnf(Ok), stock_gbnf(Ok)
    assert f"char ::= {STRICT_CHAR_RULE}" in strict
    assert stock_char_rule() not in strict
    assert f"char ::= {stock_char_rule()}" in stock
    # the stock rule is the buggy one: a negated class without the control range
    assert "\\x00-\\x1F" not in stock_char_rule()


def test_literals_become_enums_and_property_order_is_kept():
    gbnf = schema_to_gbnf(Rating012)
    assert '"0" | "1" | "2"' in gbnf
    g = schema_to_gbnf(Verdicts)
    # reason is generated before the verdict it justifies
    verdict_rule = next(line for line in g.splitlines() if line.startswith("Verdict ::="))
    assert verdict_rule.index("reason") < verdict_rule.index("verdict-kv")


def test_budget_follows_the_bounds():
    small = max_tokens_for(Rating012)
    assert 10 < small < 40
    per_char = max_tokens_for(Ok, tokens_per_char=1)
    triple = max_tokens_for(Ok, tokens_per_char=3)
    assert triple - per_char == 2 * (10 + 4)  # two extra tokens per string character
    # a list multiplies its item's budget
    class One(BaseModel):
        xs: list[Annotated[str, Field(max_length=5)]] = Field(max_length=1)

    class Ten(BaseModel):
        xs: list[Annotated[str, Field(max_length=5)]] = Field(max_length=10)

    assert max_tokens_for(Ten) > 9 * max_tokens_for(One) / 2


def test_budget_covers_the_longest_output_the_grammar_allows():
    longest = {"reason": "x" * 10, "verdict": 1, "tags": ["a", "b"], "note": "abcd"}
    text = json.dumps(longest, separators=(", ", ": "))
    assert max_tokens_for(Ok, tokens_per_char=1) >= len(text)


def test_allowed_values():
    assert allowed_values(Verdicts, "verdict") == [0, 1]
    assert allowed_values(Rating012, "rating") == [0, 1, 2]
    with pytest.raises(ValueError, match="no field"):
        allowed_values(Verdicts, "missing")
    with pytest.raises(ValueError, match="not a Literal"):
        allowed_values(Ok, "reason")
    with pytest.raises(ValueError, match="not a Literal"):
        allowed_values(Ok, "tags")  # a list of literals is not one verdict


# -- the per-call schemas of the metrics ---------------------------------------------
def _rule(gbnf: str, name: str) -> str:
    return next(line.split("::=", 1)[1] for line in gbnf.splitlines()
                if line.startswith(name + " ::="))


def test_per_call_schemas_compile_and_are_bounded():
    for schema in (statements_schema(4, 60), entities_schema(8, 30), verdicts_schema(3, 50),
                   correctness_schema(2, 3, 70), selection_schema(1), selection_schema(12)):
        check_bounds(schema)
        assert "root ::=" in schema_to_gbnf(schema)
        assert max_tokens_for(schema) < max_tokens_for(Statements)


def test_correctness_grammar_has_exactly_one_verdict_per_statement():
    gbnf = schema_to_gbnf(correctness_schema(2, 3, 20))
    answer, reference = _rule(gbnf, "answer"), _rule(gbnf, "reference")
    assert answer.count("answer-item") == 2 and reference.count("reference-item") == 3
    assert "?" not in answer and "?" not in reference  # no optional items: exact counts
    assert "statement" not in gbnf  # no statement text to write, only verdicts


def test_selection_grammar_offers_only_the_sentence_numbers():
    gbnf = schema_to_gbnf(selection_schema(12))
    items = [x.strip() for x in _rule(gbnf, "sentences-item").split("|")]
    assert items == [f'"{i}"' for i in range(1, 13)]
    assert _rule(gbnf, "sentences").count("sentences-item") == 12  # at most n numbers
    assert "char" not in gbnf  # no strings at all
    assert max_tokens_for(selection_schema(12)) < 100


def test_budgets_scale_with_the_bounds_and_cover_the_longest_output():
    small, large = max_tokens_for(statements_schema(2, 50)), max_tokens_for(statements_schema(8, 50))
    assert 3.5 < large / small < 4.5
    assert max_tokens_for(verdicts_schema(3, 40)) < max_tokens_for(verdicts_schema(3, 160))
    longest = {"answer": [{"reason": "x" * 20, "verdict": 1}] * 2,
               "reference": [{"reason": "x" * 20, "verdict": 0}] * 3}
    text = json.dumps(longest, separators=(", ", ": "))
    assert max_tokens_for(correctness_schema(2, 3, 20), tokens_per_char=1) >= len(text)
    sel = json.dumps({"sentences": list(range(1, 13))}, separators=(", ", ": "))
    assert max_tokens_for(selection_schema(12), tokens_per_char=1) >= len(sel)
