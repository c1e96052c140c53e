"""localeval's tool-call checker against the Berkeley Function Calling Leaderboard's own.

Two modes, run by two interpreters (bfcl-eval is installed apart, never into the project's
install, as the ragas goldens are)::

    python -m venv /tmp/bfclvenv && /tmp/bfclvenv/bin/pip install bfcl-eval soundfile
    /tmp/bfclvenv/bin/python scripts/bfcl_agreement.py build
    .venv/bin/python scripts/bfcl_agreement.py compare

``build`` reads BFCL's question and possible-answer files of the simple (Python), multiple,
parallel and parallel-multiple categories from the installed package, makes model outputs
from each case's possible answer (the answer itself, with the first acceptable value of each
argument, and seeded perturbations of it, ``PERTURBATIONS``), runs BFCL's AST checker
(``bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker``) on each and writes
tests/data/bfcl/agreement.jsonl.gz: one line per case, its functions, its possible answer
and its checks (perturbation, output in BFCL's decoded shape ``[{"func": {"arg": value}}]``,
BFCL's verdict and error type). Sorted keys, seeded choices and a gzip header without a
time make a rebuild give the same bytes.

``compare`` reads the fixture, checks every output with ``localeval.toolcheck.check_calls``
and prints the agreement per category and perturbation, then each kind of disagreement
with its count. tests/unit/test_bfcl_agreement.py asserts the same counts.

Java and JavaScript are left out: their outputs are source text that BFCL converts with
language-specific parsers (``"new ArrayList<>(...)"``), while localeval checks JSON arguments
as agents send them.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "bfcl" / "agreement.jsonl.gz"
#: BFCL's file stem -> localeval's category name.
CATEGORIES = {"simple_python": "simple", "multiple": "multiple", "parallel": "parallel",
              "parallel_multiple": "parallel_multiple"}
#: A model BFCL keeps dotted function names for (``underscore_to_dot`` False), so the
#: checker compares names as the functions declare them.
BFCL_MODEL = "gorilla-openfunctions-v2"
PERTURBATIONS = (
    "as_given",                  # the possible answer itself: first acceptable value of each argument
    "other_acceptable",          # the last acceptable value wherever an argument has several
    "string_case",               # a string value upper-cased with a trailing "." (BFCL normalises both)
    "string_spacing",            # a string's spaces as "-", or a space put inside one without
    "nested_string_case",        # the strings in a list or an object argument upper-cased
    "wrong_value",               # one argument's value changed, same type
    "wrong_type",                # one argument's value of another type ("9" for 9, [s] for s, ...)
    "int_as_float",              # an integer argument given as 9.0
    "float_as_int",              # a float argument with an integral value given as 9
    "bool_as_int",               # a boolean argument given as 1 or 0
    "number_as_bool",            # an integer or float argument given as true
    "list_reversed",             # a list argument's items in reverse order
    "list_items_retyped",        # a list of integers given as floats, of integral floats as integers
    "dict_key_added",            # an object argument with a key its accepted values lack
    "dict_key_dropped",          # an object argument with one of its keys left out
    "missing_required",          # a required argument left out
    "extra_argument",            # an argument no function declares
    "unlisted_argument",         # a declared argument the possible answer does not list
    "optional_omitted",          # an argument whose acceptable values include "" left out
    "listed_optional_omitted",   # an argument not required, listed without "", left out
    "wrong_function",            # a call's name changed to one no function has
    "other_function",            # a call's name changed to another declared function
    "reordered",                 # the calls in reverse order
    "call_dropped",              # one call left out
    "call_duplicated",           # one call made twice
    "no_call",                   # no call at all
)


# ---------------------------------------------------------------- outputs from answers

def first(values: list[Any]) -> Any:
    """The first acceptable value that is not the optional marker "" (None when there is none)."""
    return next((v for v in values if v != ""), None)


def concrete(value: Any, schema: dict[str, Any]) -> Any:
    """A model's value from one acceptable value: BFCL writes a dict's acceptable value (and
    each dict of a list of dicts) as key -> list of acceptable values, one level deep."""
    kind, items = schema.get("type"), schema.get("items", {}).get("type")
    if kind == "dict" and isinstance(value, dict):
        return {k: first(vs) for k, vs in value.items() if first(vs) is not None}
    if kind == "array" and items == "dict" and isinstance(value, list):
        return [concrete(v, {"type": "dict"}) for v in value]
    return copy.deepcopy(value)


def answer_output(case: dict[str, Any], pick: Any = first) -> list[dict[str, Any]]:
    """The possible answer as a model output, one value picked per argument."""
    docs = {f["name"]: f for f in case["function"]}
    out = []
    for call in case["ground_truth"]:
        (name, args), = call.items()
        props = docs.get(name, {}).get("parameters", {}).get("properties", {})
        made = {}
        for arg, values in args.items():
            v = pick(values)
            if v is not None:
                made[arg] = concrete(v, props.get(arg, {}))
        out.append({name: made})
    return out


def last(values: list[Any]) -> Any:
    return next((v for v in reversed(values) if v != ""), None)


# ---------------------------------------------------------------- perturbations

def _doc(case: dict[str, Any], name: str) -> dict[str, Any]:
    return next((f for f in case["function"] if f["name"] == name), {})


def _schema(case: dict[str, Any], name: str, arg: str) -> dict[str, Any]:
    return dict(_doc(case, name).get("parameters", {}).get("properties", {}).get(arg, {}))


def _declared(case: dict[str, Any], name: str) -> tuple[dict[str, Any], list[str]]:
    params = _doc(case, name).get("parameters", {})
    return params.get("properties", {}), list(params.get("required", []))


def _args(out: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(call index, function, argument) of every argument given, in order."""
    return [(i, name, arg) for i, call in enumerate(out) for name, args in call.items() for arg in args]


def _changed(value: Any, rng: random.Random) -> Any:
    """A value of the same type that differs from ``value`` (None when none is made)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.randint(1, 9)
    if isinstance(value, float):
        return round(value + rng.choice((0.5, 1.5, 2.5)), 6)
    if isinstance(value, str):
        return value + rng.choice(("zq", "xw", "qv"))
    if isinstance(value, list):
        return value[:-1] if value else None
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        new = _changed(value[key], rng)
        return None if new is None else {**value, key: new}
    return None


def _retyped(value: Any) -> Any:
    """The same content as another type: the mistakes models make with JSON types."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return [value]
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return None


def _upper(value: Any) -> Any:
    """Strings upper-cased inside a list or an object, one level deep."""
    if isinstance(value, list):
        return [v.upper() if isinstance(v, str) else v for v in value]
    return {k: v.upper() if isinstance(v, str) else v for k, v in value.items()}


def _sample_value(schema: dict[str, Any]) -> Any:
    return {"integer": 1, "float": 1.5, "boolean": True, "array": [], "tuple": [],
            "dict": {}}.get(schema.get("type", "string"), "value")


def perturb(case: dict[str, Any], kind: str, rng: random.Random) -> list[dict[str, Any]] | None:
    """The output for one perturbation, or None where it does not apply to the case."""
    out = answer_output(case)
    names = [f["name"] for f in case["function"]]
    given = _args(out)
    if kind == "as_given":
        return out
    if kind == "other_acceptable":
        other = answer_output(case, last)
        return other if other != out else None
    if kind == "no_call":
        return []
    if kind in ("reordered", "call_dropped"):
        if len(out) < 2 or (kind == "reordered" and out[::-1] == out):
            return None
        if kind == "reordered":
            return out[::-1]
        del out[rng.randrange(len(out))]
        return out
    if kind == "call_duplicated":
        i = rng.randrange(len(out))
        return out[:i + 1] + [copy.deepcopy(out[i])] + out[i + 1:]
    if kind in ("wrong_function", "other_function"):
        i = rng.randrange(len(out))
        (name, args), = out[i].items()
        others = [n for n in names if n != name]
        if kind == "other_function" and not others:
            return None
        out[i] = {(name + "_v2") if kind == "wrong_function" else rng.choice(others): args}
        return out
    if kind in ("extra_argument", "unlisted_argument"):
        i = rng.randrange(len(out))
        (name, args), = out[i].items()
        listed = case["ground_truth"][i][name]
        props, _ = _declared(case, name)
        if kind == "extra_argument":
            args["unexpected_argument"] = "value"
            return out
        free = sorted(p for p in props if p not in listed)
        if not free:
            return None
        arg = rng.choice(free)
        args[arg] = _sample_value(props[arg])
        return out
    chosen: list[tuple[int, str, str, Any]] = []
    for i, name, arg in given:
        values = case["ground_truth"][i][name][arg]
        schema = _schema(case, name, arg)
        value = out[i][name][arg]
        _, required = _declared(case, name)
        if kind == "missing_required" and arg in required:
            chosen.append((i, name, arg, None))
        elif kind == "optional_omitted" and "" in values:
            chosen.append((i, name, arg, None))
        elif kind == "listed_optional_omitted" and "" not in values and arg not in required:
            chosen.append((i, name, arg, None))
        elif kind == "string_case" and isinstance(value, str) and value.upper() + "." != value:
            chosen.append((i, name, arg, value.upper() + "."))
        elif kind == "wrong_value":
            new = _changed(value, rng)
            if new is not None and new not in values:
                chosen.append((i, name, arg, new))
        elif kind == "string_spacing" and isinstance(value, str) and len(value) > 1:
            half = len(value) // 2
            chosen.append((i, name, arg, value.replace(" ", "-") if " " in value
                           else value[:half] + " " + value[half:]))
        elif kind == "nested_string_case" and isinstance(value, list | dict) and _upper(value) != value:
            chosen.append((i, name, arg, _upper(value)))
        elif kind == "bool_as_int" and isinstance(value, bool):
            chosen.append((i, name, arg, int(value)))
        elif (kind == "number_as_bool" and schema.get("type") in ("integer", "float")
              and type(value) in (int, float)):
            chosen.append((i, name, arg, True))
        elif kind == "list_reversed" and isinstance(value, list) and value[::-1] != value:
            chosen.append((i, name, arg, value[::-1]))
        elif kind == "list_items_retyped" and isinstance(value, list) and value:
            items = schema.get("items", {}).get("type")
            if items == "integer" and all(type(v) is int for v in value):
                chosen.append((i, name, arg, [float(v) for v in value]))
            elif items == "float" and all(type(v) is float and v.is_integer() for v in value):
                chosen.append((i, name, arg, [int(v) for v in value]))
        elif kind == "dict_key_added" and isinstance(value, dict):
            chosen.append((i, name, arg, {**value, "unexpected_key": "value"}))
        elif kind == "dict_key_dropped" and isinstance(value, dict) and value:
            key = rng.choice(sorted(value))
            chosen.append((i, name, arg, {k: v for k, v in value.items() if k != key}))
        elif kind == "wrong_type" and _retyped(value) is not None:
            chosen.append((i, name, arg, _retyped(value)))
        elif (kind == "int_as_float" and schema.get("type") == "integer"
              and type(value) is int):
            chosen.append((i, name, arg, float(value)))
        elif (kind == "float_as_int" and schema.get("type") == "float"
              and type(value) is float and value.is_integer()):
            chosen.append((i, name, arg, int(value)))
    if not chosen:
        return None
    i, name, arg, new = rng.choice(chosen)
    if new is None:
        del out[i][name][arg]
    else:
        out[i][name][arg] = new
    return out


# ---------------------------------------------------------------- build (BFCL's interpreter)

def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build(out_path: Path) -> int:
    from importlib.metadata import version

    import bfcl_eval
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    data = Path(bfcl_eval.__file__).parent / "data"
    lines = []
    tally: Counter[tuple[str, str, bool]] = Counter()
    for stem, category in CATEGORIES.items():
        questions = _read_jsonl(data / f"BFCL_v4_{stem}.json")
        answers = {a["id"]: a["ground_truth"] for a in _read_jsonl(data / "possible_answer" / f"BFCL_v4_{stem}.json")}
        for q in questions:
            case = {"id": q["id"], "function": q["function"], "ground_truth": answers[q["id"]]}
            checks = []
            for kind in PERTURBATIONS:
                output = perturb(case, kind, random.Random(f"{q['id']}/{kind}"))
                if output is None:
                    continue
                frozen = json.loads(json.dumps(output))  # the checker sees exactly what is stored
                try:
                    result = ast_checker(copy.deepcopy(q["function"]), frozen, copy.deepcopy(case["ground_truth"]),
                                         Language.PYTHON, stem, BFCL_MODEL)
                    valid, error = bool(result["valid"]), (None if result["valid"] else result["error_type"])
                except Exception as e:  # noqa: BLE001 - BFCL's checker failing on an input is a verdict too
                    valid, error = False, f"exception:{type(e).__name__}"
                tally[(category, kind, valid)] += 1
                checks.append({"perturbation": kind, "output": output, "bfcl_valid": valid,
                               "bfcl_error_type": error})
            lines.append(json.dumps({"id": q["id"], "category": category, "functions": q["function"],
                                     "possible_answer": case["ground_truth"], "checks": checks},
                                    sort_keys=True, ensure_ascii=False))
    meta = {"bfcl_eval": version("bfcl-eval"), "model_name": BFCL_MODEL, "language": "python",
            "perturbations": list(PERTURBATIONS)}
    body = "\n".join([json.dumps({"meta": meta}, sort_keys=True), *lines]) + "\n"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_bytes(gzip.compress(body.encode("utf-8"), compresslevel=9, mtime=0))
    sys.stdout.write(f"wrote {out_path} ({out_path.stat().st_size} bytes), bfcl-eval {meta['bfcl_eval']}\n")
    for (category, kind, valid), n in sorted(tally.items()):
        sys.stdout.write(f"  {category:18} {kind:24} {'valid' if valid else 'invalid':8} {n}\n")
    return 0


# ---------------------------------------------------------------- compare (localeval's interpreter)

def read_fixture(path: Path = FIXTURE) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()]
    return rows[0]["meta"], rows[1:]


def localeval_verdict(case: dict[str, Any], output: list[dict[str, Any]]) -> tuple[bool, str | None]:
    """localeval's verdict on one output: ok, and the first failure's kind."""
    from localeval.toolcheck import Call, check_calls, read_functions, read_possible_answers

    calls = [Call(name, args) for item in output for name, args in item.items()]
    try:
        verdict = check_calls(calls, read_possible_answers(case["possible_answer"]),
                              read_functions(case["functions"]), category=case["category"])
    except ValueError as e:  # a refused case is a verdict too: the table shows it
        return False, f"raised:{type(e).__name__}"
    kind = str(verdict.failures[0].kind) if verdict.failures else None
    return bool(verdict.ok), kind


def disagreements(cases: list[dict[str, Any]]) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]],
                                                        dict[tuple[Any, ...], list[str]],
                                                        Counter[tuple[str, str | None]]]:
    """Checks and disagreements per (category, perturbation); each kind of disagreement
    (category, perturbation, BFCL's verdict and error, localeval's) with the cases' ids; and
    where both fail, BFCL's error type beside localeval's first failure kind."""
    seen: Counter[tuple[str, str]] = Counter()
    differ: Counter[tuple[str, str]] = Counter()
    kinds: dict[tuple[Any, ...], list[str]] = {}
    reasons: Counter[tuple[str, str | None]] = Counter()
    for case in cases:
        for check in case["checks"]:
            key = (case["category"], check["perturbation"])
            seen[key] += 1
            ok, failure = localeval_verdict(case, check["output"])
            if ok != check["bfcl_valid"]:
                differ[key] += 1
                kinds.setdefault((*key, check["bfcl_valid"], check["bfcl_error_type"], ok, failure),
                                 []).append(case["id"])
            elif not ok:
                reasons[(check["bfcl_error_type"], failure)] += 1
    return seen, differ, kinds, reasons


def compare(path: Path) -> int:
    meta, cases = read_fixture(path)
    seen, differ, kinds, reasons = disagreements(cases)
    w = sys.stdout.write
    w(f"BFCL AST checker (bfcl-eval {meta['bfcl_eval']}) vs localeval.toolcheck, {len(cases)} cases\n\n")
    cats = list(CATEGORIES.values())
    w(f"| perturbation | {' | '.join(cats)} |\n|---|{'---|' * len(cats)}\n")
    for kind in meta["perturbations"]:
        cells = [f"{seen[(c, kind)] - differ[(c, kind)]}/{seen[(c, kind)]}" if seen[(c, kind)] else "-"
                 for c in cats]
        w(f"| {kind} | {' | '.join(cells)} |\n")
    total, bad = sum(seen.values()), sum(differ.values())
    w(f"\nagree on {total - bad} of {total} checks; {bad} disagree\n")
    for (cat, kind, bv, berr, lv, lfail), ids in sorted(kinds.items(), key=lambda kv: (kv[0][:2], -len(kv[1]))):
        w(f"\n{len(ids):5}  {cat} / {kind}: BFCL {'valid' if bv else 'invalid'} ({berr}), "
          f"localeval {'ok' if lv else 'fails'} ({lfail}); e.g. {', '.join(ids[:4])}\n")
    w("\nwhere both fail: BFCL's error type -> localeval's first failure kind\n")
    for (berr, lfail), n in sorted(reasons.items(), key=lambda kv: (kv[0][0], -kv[1])):
        w(f"{n:6}  {berr} -> {lfail}\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("build", "compare"))
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    args = parser.parse_args(argv)
    return build(args.fixture) if args.mode == "build" else compare(args.fixture)


if __name__ == "__main__":
    raise SystemExit(main())
