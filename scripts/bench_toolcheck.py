"""Benchmark the tool-call checks on one long conversation: load it, score every check.

    .venv/bin/python scripts/bench_toolcheck.py [--calls 2000] [--repeat 5] [--wrong 0.05]

Builds one conversation of ``--calls`` tool calls (generated from a fixed seed into a
temporary folder, never committed): a user turn, then assistant steps of two parallel
calls each, each call followed by its tool result, over four tools with integer, float,
string, enum, list and nested object arguments. Its ``possible_answers`` give BFCL-style
accepted values (two spellings of each city, an optional unit), its
``reference_trajectory`` the steps, and ``<data>.tools.json`` the schemas. A share
``--wrong`` of the calls made are perturbed (a wrong value or type), so the matching
searches as it would on a real model's output.

It reports, best of ``--repeat`` (CPU time of this process, single-threaded): loading
the file through ``load_dataset`` (every field checked), and each metric's ``score`` on
the conversation: ``tool_call_ast`` (parallel, any order), ``tool_call_validity`` and
``tool_trajectory`` in its four modes.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

TOOLS = [
    {"type": "function", "function": {"name": "weather", "parameters": {
        "type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "convert", "parameters": {
        "type": "object", "properties": {"amount": {"type": "number"},
                                         "currency": {"type": "string"}},
        "required": ["amount", "currency"]}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"terms": {"type": "array",
                                                   "items": {"type": "string"}},
                                         "k": {"type": "integer"}},
        "required": ["terms"]}}},
    {"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "properties": {"slot": {"type": "object", "properties": {
            "day": {"type": "string"}, "people": {"type": "integer"}},
            "required": ["day", "people"]}},
        "required": ["slot"]}}},
]


def _call(rng: random.Random, i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One call made and its accepted values (BFCL's shape)."""
    kind = i % 4
    if kind == 0:
        city = f"City {i}"
        return ({"name": "weather", "args": {"city": city.upper(), "days": i % 7 + 1}},
                {"weather": {"city": [city, f"city-{i}"], "days": [i % 7 + 1],
                             "unit": ["celsius", ""]}})
    if kind == 1:
        amount = rng.randint(1, 999)
        return ({"name": "convert", "args": {"amount": amount, "currency": "EUR"}},
                {"convert": {"amount": [float(amount)], "currency": ["EUR", "euro"]}})
    if kind == 2:
        terms = [f"t{i}", f"u{i}"]
        return ({"name": "search", "args": {"terms": terms, "k": 5}},
                {"search": {"terms": [terms], "k": [5, ""]}})
    day = datetime.date(2024, 1, 1) + datetime.timedelta(days=i // 4)
    slot = {"day": day.isoformat(), "people": i % 6 + 1}
    return ({"name": "book", "args": {"slot": slot}},
            {"book": {"slot": [{"day": [slot["day"]], "people": [slot["people"]]}]}})


def _perturb(call: dict[str, Any], rng: random.Random) -> None:
    args = call["args"]
    key = rng.choice(sorted(args))
    args[key] = str(args[key]) if not isinstance(args[key], str) else args[key] + "x"


def build(folder: Path, calls: int, wrong: float, seed: int = 0) -> Path:
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Do all of these."}]
    answers, steps = [], []
    for s in range(0, calls, 2):
        made, step = [], []
        for i in range(s, min(s + 2, calls)):
            call, answer = _call(rng, i)
            if rng.random() < wrong:
                _perturb(call, rng)
            made.append(call)
            step.append(answer)
        answers.extend(step)
        steps.append(step)
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{s + k}", "type": "function", "function": {
                "name": c["name"], "arguments": json.dumps(c["args"])}}
            for k, c in enumerate(made)]})
        messages.extend({"role": "tool", "tool_call_id": f"c{s + k}", "content": "done"}
                        for k in range(len(made)))
    messages.append({"role": "assistant", "content": "All done."})
    path = folder / "long.jsonl"
    row = {"id": "long", "messages": messages, "possible_answers": answers,
           "reference_trajectory": steps}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (folder / "long.tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--wrong", type=float, default=0.05)
    args = ap.parse_args()

    from localeval.dataset import load_dataset
    from localeval.metrics import parse_metrics

    with tempfile.TemporaryDirectory() as tmp:
        path = build(Path(tmp), args.calls, args.wrong)
        secs, data = best(lambda: load_dataset(path), args.repeat)
        [sample] = data.samples
        print(f"{len(sample.tool_calls())} calls in {len(sample.messages)} messages; "
              f"best of {args.repeat}, CPU seconds")
        print(f"{'load_dataset (every field checked)':40s} {secs:8.4f}")
        spec = ("tool_call_ast,tool_call_validity,tool_trajectory,tool_trajectory:mode=unordered,"
                "tool_trajectory:mode=subset,tool_trajectory:mode=superset")
        total = 0.0
        for m in parse_metrics(spec):
            m.score(sample)  # first call: imports (scipy's matching) not counted
            secs, score = best(functools.partial(m.score, sample), args.repeat)
            total += secs
            fails = len(score.details.get("failures", []))
            print(f"{m.key:40s} {secs:8.4f}  score {score.value}  failures {fails}")
        print(f"{'all six metrics':40s} {total:8.4f}")


if __name__ == "__main__":
    main()
