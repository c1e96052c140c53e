"""Write tests/data/ragas_tool_goldens.json: ragas's own tool-call scores on generated cases.

tests/golden/test_ragas_tool_goldens.py reads the same conversations with
localeval's conversation reader and scores them with ``tool_call_accuracy`` and
``tool_call_f1``, so "follows ragas" is checked against ragas itself.

ragas is installed apart, never into the project's install::

    pip install --target /tmp/ragas-target 'ragas>=0.4,<0.5'
    python scripts/ragas_tool_goldens.py --ragas-dir /tmp/ragas-target

The cases are hand-written ones (orders, missing and extra calls, no calls,
argument types that ragas's text comparison and its hashing tell apart or not,
nested and Unicode arguments) and seeded random ones. Each is scored with
ragas 0.4's ``metrics.collections.ToolCallAccuracy`` and ``ToolCallF1``; a case
with a string distance as its argument comparison with the older
``ragas.metrics.ToolCallAccuracy(arg_comparison_metric=NonLLMStringSimilarity(...))``
(the collections class compares exactly only), and exact cases with both classes,
which must agree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import warnings
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "ragas_tool_goldens.json"


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def convo(*turns: list[dict[str, Any]] | str) -> list[dict[str, Any]]:
    """ragas JSON messages: a string is a user turn, a list of calls an assistant turn that
    makes them (answered by one tool message each); a final assistant answer closes it."""
    out: list[dict[str, Any]] = []
    for t in turns:
        if isinstance(t, str):
            out.append({"type": "human", "content": t})
        elif t:
            out.append({"type": "ai", "content": "", "tool_calls": t})
            out.extend({"type": "tool", "content": f"result of {c['name']}"} for c in t)
    out.append({"type": "ai", "content": "Done."})
    return out


W = call("weather", city="Paris")
C = call("convert", value=75, unit="C")
S = call("search", query="opening hours", limit=5)


def hand_cases() -> list[dict[str, Any]]:
    """(name, messages, reference calls, options): the cases the docs' table speaks of."""
    cases: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]] = [
        ("one exact call", convo("q", [W]), [W], {}),
        ("two calls in order", convo("q", [W], "q2", [C]), [W, C], {}),
        ("two calls swapped, strict", convo("q", [C, W]), [W, C], {}),
        ("two calls swapped, any order", convo("q", [C, W]), [W, C], {"strict_order": False}),
        ("a call missing", convo("q", [W]), [W, C], {}),
        ("a call missing, any order", convo("q", [C]), [W, C], {"strict_order": False}),
        ("an extra call", convo("q", [W, C]), [W], {}),
        ("an extra call, any order", convo("q", [S, W]), [W], {"strict_order": False}),
        ("no calls expected, none made", convo("q"), [], {}),
        ("calls expected, none made", convo("q"), [W], {}),
        ("no calls expected, some made", convo("q", [W]), [], {}),
        ("wrong argument value", convo("q", [call("weather", city="Lyon")]), [W], {}),
        ("one of two arguments wrong", convo("q", [call("convert", value=75, unit="F")]), [C], {}),
        ("an argument missing", convo("q", [call("convert", value=75)]), [C], {}),
        ("an extra argument", convo("q", [call("weather", city="Paris", days=3)]), [W], {}),
        ("no arguments either side", convo("q", [call("now")]), [call("now")], {}),
        ("no arguments expected, some given", convo("q", [call("now", tz="UTC")]),
         [call("now")], {}),
        ("arguments expected, none given", convo("q", [call("weather")]), [W], {}),
        ("int against float", convo("q", [call("convert", value=75.0, unit="C")]), [C], {}),
        ("int against string", convo("q", [call("convert", value="75", unit="C")]), [C], {}),
        ("true against 1", convo("q", [call("flag", on=True)]), [call("flag", on=1)], {}),
        ("true against 'True'", convo("q", [call("flag", on="True")]),
         [call("flag", on=True)], {}),
        ("null argument", convo("q", [call("find", near=None)]), [call("find", near=None)], {}),
        ("null against 'None'", convo("q", [call("find", near="None")]),
         [call("find", near=None)], {}),
        ("nested object, same", convo("q", [call("book", who={"name": "Ann", "n": 2})]),
         [call("book", who={"name": "Ann", "n": 2})], {}),
        ("nested object, keys reordered", convo("q", [call("book", who={"n": 2, "name": "Ann"})]),
         [call("book", who={"name": "Ann", "n": 2})], {}),
        ("nested object, a value differs", convo("q", [call("book", who={"name": "Ann", "n": 3})]),
         [call("book", who={"name": "Ann", "n": 2})], {}),
        ("list argument, same", convo("q", [call("mail", to=["a@x", "b@x"])]),
         [call("mail", to=["a@x", "b@x"])], {}),
        ("list argument, reordered", convo("q", [call("mail", to=["b@x", "a@x"])]),
         [call("mail", to=["a@x", "b@x"])], {}),
        ("deeply nested", convo("q", [call("q", f={"a": [{"b": [1, {"c": None}]}]})]),
         [call("q", f={"a": [{"b": [1, {"c": None}]}]})], {}),
        ("Japanese arguments", convo("q", [call("天気", 都市="東京")]),
         [call("天気", 都市="東京")], {}),
        ("the same call twice", convo("q", [W, W]), [W], {}),
        ("the same call twice, both expected", convo("q", [W, W]), [W, W], {}),
        ("one tool, two argument sets, swapped, any order",
         convo("q", [call("weather", city="Rome"), W]), [W, call("weather", city="Rome")],
         {"strict_order": False}),
        ("calls across several assistant turns", convo("q", [W], "q2", [C], "q3", [S]),
         [W, C, S], {}),
        ("a tool name differs", convo("q", [call("forecast", city="Paris")]), [W], {}),
        ("float arithmetic text", convo("q", [call("pay", amount=0.1 + 0.2)]),
         [call("pay", amount=0.3)], {}),
        ("close text, levenshtein", convo("q", [call("weather", city="Pariss")]), [W],
         {"arg_comparison": "levenshtein"}),
        ("close text, jaro_winkler", convo("q", [call("search", query="opening hour", limit=5)]),
         [S], {"arg_comparison": "jaro_winkler"}),
        ("close text, jaro", convo("q", [call("search", query="hours", limit=50)]), [S],
         {"arg_comparison": "jaro"}),
        ("close text, hamming", convo("q", [call("weather", city="Parid")]), [W],
         {"arg_comparison": "hamming"}),
        ("nested text, levenshtein", convo("q", [call("book", who={"n": 2, "name": "Ann"})]),
         [call("book", who={"name": "Ann", "n": 2})], {"arg_comparison": "levenshtein"}),
        ("swapped, any order, levenshtein", convo("q", [C, call("weather", city="Pari")]),
         [W, C], {"strict_order": False, "arg_comparison": "levenshtein"}),
    ]
    return [{"name": n, "user_input": m, "reference_tool_calls": r, **o} for n, m, r, o in cases]


def random_cases(n: int, seed: int) -> list[dict[str, Any]]:
    """Seeded random conversations: a reference plan and a perturbed copy of it."""
    rng = random.Random(seed)
    tools = ["search", "weather", "book", "convert", "mail", "lookup"]
    values = [1, 2, 2.0, 3.5, True, False, None, "a", "b", "Paris", "東京", [1, 2], [2, 1],
              {"k": 1}, {"k": 1, "j": [True]}, ""]

    def rand_call() -> dict[str, Any]:
        keys = rng.sample(["x", "y", "z", "w"], rng.randint(0, 3))
        return call(rng.choice(tools), **{k: rng.choice(values) for k in keys})

    out = []
    for i in range(n):
        ref = [rand_call() for _ in range(rng.randint(0, 4))]
        made = json.loads(json.dumps(ref))
        for _ in range(rng.randint(0, 3)):
            op = rng.choice(["drop", "add", "swap", "value", "name", "key"])
            if op == "drop" and made:
                made.pop(rng.randrange(len(made)))
            elif op == "add":
                made.insert(rng.randint(0, len(made)), rand_call())
            elif op == "swap" and len(made) > 1:
                a, b = rng.sample(range(len(made)), 2)
                made[a], made[b] = made[b], made[a]
            elif op == "value" and made and made[0]["args"]:
                c = rng.choice(made)
                if c["args"]:
                    c["args"][rng.choice(sorted(c["args"]))] = rng.choice(values)
            elif op == "name" and made:
                rng.choice(made)["name"] = rng.choice(tools)
            elif op == "key" and made:
                rng.choice(made)["args"][rng.choice(["x", "y", "z", "w"])] = rng.choice(values)
        turns: list[Any] = ["q"]
        while made:  # the calls spread over one to three assistant turns
            k = rng.randint(1, len(made))
            turns.extend([made[:k], "next"])
            made = made[k:]
        opts: dict[str, Any] = {}
        if rng.random() < 0.5:
            opts["strict_order"] = False
        if rng.random() < 0.3:
            opts["arg_comparison"] = rng.choice(["levenshtein", "jaro", "jaro_winkler", "hamming"])
        out.append({"name": f"random {i}", "user_input": convo(*turns),
                    "reference_tool_calls": ref, **opts})
    return out


def score_with_ragas(cases: list[dict[str, Any]]) -> None:
    from ragas.dataset_schema import MultiTurnSample
    from ragas.metrics import ToolCallAccuracy as LegacyAccuracy
    from ragas.metrics._string import DistanceMeasure, NonLLMStringSimilarity
    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    async def one(case: dict[str, Any]) -> None:
        sample = MultiTurnSample(user_input=case["user_input"],
                                 reference_tool_calls=case["reference_tool_calls"])
        strict = case.get("strict_order", True)
        comparison = case.get("arg_comparison", "exact")
        legacy = LegacyAccuracy(strict_order=strict)
        if comparison != "exact":
            legacy.arg_comparison_metric = NonLLMStringSimilarity(
                distance_measure=DistanceMeasure(comparison))
        old = await legacy.multi_turn_ascore(sample)
        if comparison == "exact":
            new = (await ToolCallAccuracy(strict_order=strict).ascore(
                user_input=sample.user_input,
                reference_tool_calls=sample.reference_tool_calls)).value
            assert new == old, (case["name"], new, old)
        case["tool_call_accuracy"] = float(old)
        case["tool_call_f1"] = float((await ToolCallF1().ascore(
            user_input=sample.user_input,
            reference_tool_calls=sample.reference_tool_calls)).value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ragas warns on every length mismatch
        for case in cases:
            asyncio.run(one(case))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ragas-dir", help="where ragas was installed (pip install --target)")
    ap.add_argument("--random", type=int, default=40, help="random cases besides the hand ones")
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from suite.ragas_prompts import import_ragas  # one work-around for ragas 0.4.3's imports

    ragas = import_ragas(args.ragas_dir)
    if ragas is None:
        raise SystemExit("ragas is needed: pip install --target /tmp/ragas-target "
                         "'ragas>=0.4,<0.5' and pass --ragas-dir /tmp/ragas-target")
    # the JSON round trip first: ragas scores exactly what the test will read
    cases = json.loads(json.dumps(hand_cases() + random_cases(args.random, args.seed)))
    score_with_ragas(cases)
    doc = {"ragas_version": ragas.__version__, "seed": args.seed, "cases": cases}
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {args.out} (ragas {ragas.__version__})")


if __name__ == "__main__":
    main()
