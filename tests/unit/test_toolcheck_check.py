"""BFCL's categories, schema validity per rule and agentevals' trajectory modes, by hand
tables (``localeval.toolcheck``); the readers' errors name what is wrong."""

from __future__ import annotations

import pytest

from localeval.errors import InvalidArgument
from localeval.toolcheck import (
    Call,
    check_calls,
    match_trajectory,
    read_calls,
    read_functions,
    read_possible_answers,
    tool_call_validity,
)

TOOLS = read_functions([
    {"type": "function", "function": {"name": "weather", "parameters": {
        "type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
            "where": {"type": "object", "properties": {"lat": {"type": "number"}},
                      "required": ["lat"]}},
        "required": ["city"]}}},
    {"name": "book", "description": "BFCL's shape", "parameters": {
        "type": "dict", "properties": {"people": {"type": "integer"},
                                       "time": {"type": "string"}},
        "required": ["people"]}},
])


def W(city: str, **kw) -> Call:
    return Call("weather", {"city": city, **kw})


PARIS = {"weather": {"city": ["Paris"], "unit": ["celsius", ""]}}
NYC = {"weather": {"city": ["New York", "NYC"], "unit": ["celsius", ""]}}
BOOK = {"book": {"people": [2], "time": ["19:00", ""]}}

# (category, calls made, possible answers, ok, kinds of the failures)
CATEGORY_TABLE = [
    ("simple", [W("paris")], [PARIS], True, []),
    ("simple", [W("Paris", unit="CELSIUS")], [PARIS], True, []),
    ("simple", [W("Paris"), W("Paris")], [PARIS], False, ["wrong_count", "extra_call"]),
    ("simple", [], [PARIS], False, ["wrong_count", "missing_call"]),
    ("simple", [W("Lyon")], [PARIS], False, ["wrong_value"]),
    ("simple", [W("Paris", days=3)], [PARIS], False, ["unexpected_argument"]),
    ("simple", [Call("weather", {"unit": "celsius"})], [PARIS], False, ["missing_required"]),
    ("simple", [Call("forecast", {"city": "Paris"})], [PARIS], False, ["not_a_function"]),
    ("multiple", [Call("book", {"people": 2})], [BOOK], True, []),
    ("multiple", [W("Paris")], [BOOK], False, ["wrong_function"]),
    ("multiple", [Call("book", {"people": 2.0})], [BOOK], False, ["wrong_type"]),
    ("parallel", [W("NYC"), W("Paris")], [PARIS, NYC], True, []),
    ("parallel", [W("Paris"), W("new york")], [PARIS, NYC], True, []),
    ("parallel", [W("Paris")], [PARIS, NYC], False, ["wrong_count", "missing_call"]),
    ("parallel", [W("Paris"), W("Rome")], [PARIS, NYC], False, ["wrong_value"]),
    ("parallel", [W("Paris"), W("Paris"), W("NYC")], [PARIS, NYC], False,
     ["wrong_count", "extra_call"]),
    ("parallel_multiple", [Call("book", {"people": 2}), W("Paris")], [PARIS, BOOK], True, []),
    ("parallel_multiple", [W("Paris"), W("Paris")], [PARIS, BOOK], False,
     ["missing_call", "extra_call"]),
    ("irrelevance", [], [], True, []),
    ("irrelevance", [W("Paris")], [], False, ["should_not_call"]),
    ("auto", [], [], True, []),
    ("auto", [W("Paris")], [], False, ["should_not_call"]),
    ("auto", [W("Paris"), W("NYC")], [NYC, PARIS], True, []),
]


@pytest.mark.parametrize("category,calls,answers,ok,kinds", CATEGORY_TABLE)
def test_categories(category, calls, answers, ok, kinds):
    v = check_calls(calls, read_possible_answers(answers), TOOLS, category=category)
    assert v.ok is ok
    assert [f.kind for f in v.failures] == kinds, v.failures


def test_parallel_finds_a_matching_where_a_greedy_pass_would_not():
    # the first answer accepts either call, the second only the first call: greedy pairing
    # (BFCL's) takes the first call for the first answer and fails; a matching does not
    either = {"weather": {"city": ["Paris", "Lyon"]}}
    only = {"weather": {"city": ["Paris"]}}
    v = check_calls([W("Paris"), W("Lyon")], read_possible_answers([either, only]), TOOLS)
    assert v.ok and v.category == "parallel"


def test_a_failure_names_the_call_the_argument_and_why():
    v = check_calls([W("Paris"), W("NYC", days="3")],
                    read_possible_answers([PARIS, {"weather": {"city": ["NYC"], "days": [3]}}]),
                    TOOLS)
    [f] = v.failures
    assert (f.call_index, f.function, f.argument, f.kind) == (1, "weather", "days",
                                                              "wrong_type")
    assert "expected integer, got string '3'" in f.reason


def test_without_schemas_names_and_values_still_decide():
    answers = read_possible_answers([{"name": "f", "arguments": {"x": 1}}])
    assert check_calls([Call("f", {"x": 1.0})], answers, None).ok
    assert not check_calls([Call("g", {"x": 1})], answers, None).ok
    assert check_calls([Call("f", {"x": 1})], answers, None).failures == []


# (calls made, ok, kinds): schema validity, one rule a row
VALIDITY_TABLE = [
    ([W("Paris")], True, []),
    ([], True, []),
    ([Call("forecast", {})], False, ["not_a_function"]),
    ([Call("weather", {})], False, ["missing_required"]),
    ([W("Paris", country="FR")], False, ["unexpected_argument"]),
    ([W("Paris", days=2.0)], False, ["wrong_type"]),
    ([W("Paris", days=True)], False, ["wrong_type"]),
    ([W("Paris", unit="kelvin")], False, ["not_in_enum"]),
    ([W("Paris", where={"lat": 2})], True, []),  # an integer for a number
    ([W("Paris", where={})], False, ["missing_required"]),
    ([W("Paris", where={"lat": "2"})], False, ["wrong_type"]),
    ([W("Paris", where={"lat": 2, "lon": 3})], False, ["unexpected_argument"]),
    ([Call("book", {"people": 2, "time": 19})], False, ["wrong_type"]),
    ([W("Paris"), Call("x", {}), Call("book", {})], False,
     ["not_a_function", "missing_required"]),
]


@pytest.mark.parametrize("calls,ok,kinds", VALIDITY_TABLE)
def test_validity_rules(calls, ok, kinds):
    v = tool_call_validity(calls, TOOLS)
    assert v.ok is ok and [f.kind for f in v.failures] == kinds, v.failures


def test_an_open_schema_takes_undeclared_arguments():
    fns = read_functions([{"name": "f", "parameters": {"type": "object", "properties": {},
                                                       "additionalProperties": True}}])
    assert tool_call_validity([Call("f", {"anything": 1})], fns).ok


A, B, C = Call("a", {"x": 1}), Call("b", {"y": "q"}), Call("c", {})
RA, RB, RC = ({"name": n, "arguments": c.arguments} for n, c in (("a", A), ("b", B), ("c", C)))

# (mode, made steps, reference steps, ok)
TRAJECTORY_TABLE = [
    ("strict", [[A], [B]], [[RA], [RB]], True),
    ("strict", [[B], [A]], [[RA], [RB]], False),          # order of steps counts
    ("strict", [[A, B]], [[RB, RA]], True),               # a step is a set
    ("strict", [[A, B]], [[RA], [RB]], False),            # two steps are not one
    ("strict", [[A], [B], [C]], [[RA], [RB]], False),
    ("strict", [[A], [], [B]], [[RA], [RB]], True),        # a message without calls is no step
    ("strict", [], [], True),
    ("unordered", [[B], [A]], [[RA], [RB]], True),
    ("unordered", [[A, B]], [[RA], [RB]], True),
    ("unordered", [[A], [A]], [[RA]], False),             # a call twice is two calls
    ("unordered", [[A]], [[RA], [RB]], False),
    ("subset", [[A]], [[RA], [RB]], True),
    ("subset", [[A], [C]], [[RA], [RB]], False),
    ("subset", [], [[RA]], True),
    ("superset", [[C], [B], [A]], [[RA], [RB]], True),
    ("superset", [[A]], [[RA], [RB]], False),
    ("superset", [[A]], [], True),
    ("superset", [[A], [A]], [[RA], [RA]], True),
    ("superset", [[A]], [[RA], [RA]], False),
]


@pytest.mark.parametrize("mode,made,ref,ok", TRAJECTORY_TABLE)
def test_trajectory_modes(mode, made, ref, ok):
    assert match_trajectory(made, ref, mode).ok is ok


def test_trajectory_compares_arguments_by_the_rules():
    ref = [[{"a": {"x": [1, 2], "note": ["", "hi"]}}]]
    assert match_trajectory([[Call("a", {"x": 2})]], ref, "strict").ok
    v = match_trajectory([[Call("a", {"x": 3})]], ref, "strict")
    assert not v.ok and v.failures[0].argument == "x"
    assert match_trajectory([[Call("a", {"x": 1.0})]], ref, "strict", read_functions(
        [{"name": "a", "parameters": {"properties": {"x": {"type": "integer"},
                                                     "note": {"type": "string"}}}}])).ok \
        is False


@pytest.mark.parametrize("bad,words", [
    ("nope", "expected a list of expected calls"),
    ([{"f": {"x": 1}}], "argument 'x': BFCL's shape gives a list of accepted values"),
    ([{"f": {"x": []}}], "no accepted value"),
    ([{"f": {}, "g": {}}], "answer 1: expected one function name"),
    ([{"name": "f", "arguments": "{x"}], "arguments are not JSON"),
    ([{"name": "f", "arguments": [1]}], "arguments must be an object"),
])
def test_possible_answer_errors(bad, words):
    with pytest.raises(InvalidArgument, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_possible_answers(bad)


@pytest.mark.parametrize("bad,words", [
    ([{"description": "x"}], "tool 1: the tool has no name"),
    ([{"name": "f", "parameters": {"properties": {"x": {"type": "str"}}}}],
     "unknown type 'str'"),
    ([{"name": "f", "parameters": {"required": "x"}}], "required must be a list"),
    ([{"name": "f"}, {"name": "f"}], "tool 2: a second tool named 'f'"),
    (3, "expected a list of tool definitions"),
])
def test_function_errors(bad, words):
    with pytest.raises(InvalidArgument, match=words):
        read_functions(bad)


def test_calls_read_every_shape():
    calls = read_calls([{"name": "f", "args": {"a": 1}},
                        {"type": "function", "function": {"name": "g", "arguments": "{\"b\": 2}"}},
                        Call("h", {})])
    assert calls == [Call("f", {"a": 1}), Call("g", {"b": 2}), Call("h", {})]
