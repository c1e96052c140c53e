"""One argument against its accepted values, by declared type: the type rules of
``localeval.toolcheck.values`` pinned by hand tables (BFCL's AST checker's rules)."""

from __future__ import annotations

import pytest

from localeval.toolcheck import (
    Call,
    PossibleAnswer,
    check_calls,
    compare_value,
    normalise,
    read_functions,
    read_possible_answers,
)

INT, FLOAT, BOOL, STR = {"type": "integer"}, {"type": "float"}, {"type": "boolean"}, \
    {"type": "string"}

# (value, accepted values, schema, expected kind: None when accepted)
TYPE_TABLE = [
    # integers: an integer, never a float, a numeric string or a boolean
    (9, (9,), INT, None),
    (9.0, (9,), INT, "wrong_type"),
    ("9", (9,), INT, "wrong_type"),
    (True, (1,), INT, "wrong_type"),
    (8, (9,), INT, "wrong_value"),
    # floats: an integer is accepted (BFCL's Python auto-conversion), 1e1 equals 10.0
    (5, (5.0,), FLOAT, None),
    (1e1, (10.0,), FLOAT, None),
    (5.5, (5.0,), FLOAT, "wrong_value"),
    ("5.0", (5.0,), FLOAT, "wrong_type"),
    (5, (5.0,), {"type": "number"}, None),
    # booleans: only true/false
    (True, (True,), BOOL, None),
    (1, (True,), BOOL, "wrong_type"),
    ("true", (True,), BOOL, "wrong_type"),
    (False, (True,), BOOL, "wrong_value"),
    # strings: BFCL's normalisation (case, spaces, , . / - _ * ^, ' as ")
    ("New York", ("new york",), STR, None),
    ("NEW-YORK", ("New York",), STR, None),
    ("April 1, 2024", ("april 1 2024",), STR, None),
    ("it's", ('it"s',), STR, None),
    ("Boston", ("New York", "NYC"), STR, "wrong_value"),
    (3, ("3",), STR, "wrong_type"),
    # the optional "" is itself a string value, as BFCL compares it
    ("", ("celsius", ""), STR, None),
    # lists: item by item, in order; items of their declared type; strings normalised
    ([1, 2], ([1, 2],), {"type": "array", "items": INT}, None),
    ([2, 1], ([1, 2],), {"type": "array", "items": INT}, "wrong_value"),
    ([2, 1], ([1, 2],), {"type": "array", "items": INT, "x-unordered": True}, None),
    ([1, "2"], ([1, 2],), {"type": "array", "items": INT}, "wrong_type"),
    (["A b"], (["ab"],), {"type": "array", "items": STR}, None),
    ([1, 2], ([1, 2, 3],), {"type": "array"}, "wrong_value"),
    ([1.0, 2], ([1.0, 2.0],), {"type": "tuple", "items": FLOAT}, None),
    # nested objects: key by key, recursively, by the declared properties
    ({"a": {"b": 1}}, ({"a": {"b": 1}},), {"type": "object"}, None),
    ({"a": {"b": 2}}, ({"a": {"b": 1}},), {"type": "object"}, "wrong_value"),
    ({"a": {"b": 1.0}}, ({"a": {"b": 1}},), {"type": "object", "properties": {"a": {
        "type": "object", "properties": {"b": INT}}}}, "wrong_type"),
    ({"a": 1, "extra": 2}, ({"a": 1},), {"type": "dict"}, "wrong_value"),
    # "any" takes any value; the accepted values still decide
    (3, (3,), {"type": "any"}, None),
    # dates where declared: ISO dates compared as dates
    ("2024-04-01", ("2024-04-01",), {"type": "string", "format": "date"}, None),
    ("2024-04-01T10:00:00+00:00", ("2024-04-01T10:00:00Z",),
     {"type": "string", "format": "date-time"}, None),
    ("2024-04-02", ("2024-04-01",), {"type": "string", "format": "date"}, "wrong_value"),
    # no declared type: the accepted values' kind decides; numbers by value
    (9.0, (9,), None, None),
    ("9", (9,), None, "wrong_type"),
    (True, (1,), None, "wrong_type"),
    # BFCL's "variable": accepted values of another type than declared are compared exactly
    ("x", ("x",), INT, None),
    ("X", ("x",), INT, "wrong_value"),
]


@pytest.mark.parametrize("value,options,schema,kind", TYPE_TABLE)
def test_type_rules(value, options, schema, kind):
    got = compare_value(value, options, schema)
    assert (got[0] if got else None) == kind, got


def test_normalisation_is_bfcls():
    assert normalise("San Francisco, CA") == "sanfranciscoca"
    assert normalise("a/b-c_d*e^f.g h") == "abcdefgh"
    assert normalise("'x'") == '"x"'
    assert normalise("Ünïcode") == "ünïcode"  # other characters are kept


FN = read_functions([{"name": "area", "parameters": {"type": "dict", "properties": {
    "shape": {"type": "dict", "properties": {"kind": STR, "size": INT}},
    "points": {"type": "array", "items": {"type": "dict"}},
    "unit": STR}, "required": ["shape"]}}])


def test_bfcl_object_arguments_take_per_key_accepted_values_and_optional_keys():
    answers = read_possible_answers([{"area": {
        "shape": [{"kind": ["square", "box"], "size": [2], "color": ["red", ""]}],
        "unit": ["cm", ""]}}])
    ok = check_calls([Call("area", {"shape": {"kind": "Box", "size": 2}})], answers, FN)
    assert ok.ok
    bad = check_calls([Call("area", {"shape": {"kind": "box"}})], answers, FN)
    assert not bad.ok and "missing key 'size'" in bad.failures[0].reason
    extra = check_calls([Call("area", {"shape": {"kind": "box", "size": 2, "z": 1}})],
                        answers, FN)
    assert not extra.ok and "unexpected key 'z'" in extra.failures[0].reason


def test_bfcl_list_of_objects_is_compared_item_by_item_in_order():
    answers = read_possible_answers([{"area": {"shape": [{"kind": ["a"], "size": [1]}],
                                               "points": [[{"x": [1]}, {"x": [2]}]]}}])
    shape = {"kind": "a", "size": 1}
    assert check_calls([Call("area", {"shape": shape, "points": [{"x": 1}, {"x": 2}]})],
                       answers, FN).ok
    assert not check_calls([Call("area", {"shape": shape, "points": [{"x": 2}, {"x": 1}]})],
                           answers, FN).ok


def test_plain_answers_mean_exactly_those_values_and_an_empty_string_is_a_value():
    [a] = read_possible_answers([{"name": "area", "arguments": {"unit": ""}}])
    assert a == PossibleAnswer("area", {"unit": ("",)}) and not a.optional
    assert not check_calls([Call("area", {})], [a], None).ok  # "" is required here
    [b] = read_possible_answers([{"area": {"unit": ["cm", ""]}}])
    assert b.optional == {"unit"} and check_calls([Call("area", {})], [b], None).ok
