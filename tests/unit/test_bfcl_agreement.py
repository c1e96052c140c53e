"""localeval's tool-call checker gives BFCL's AST checker's verdict on every fixture case.

tests/data/bfcl/agreement.jsonl.gz is written by ``scripts/bfcl_agreement.py build`` with
bfcl-eval installed apart (tests/data/bfcl/README.md): the simple, multiple, parallel and
parallel-multiple cases of BFCL, each checked by BFCL's own checker with the possible answer
as the output and with seeded perturbations of it. Here every output goes through
``localeval.toolcheck.check_calls`` and must get BFCL's verdict, except the decisions in
``DECISIONS``, whose counts are exact: a count that grows or shrinks fails, so a change in
either checker is seen. The same table is in docs/conversations-and-agents.md. With the
category left to ``"auto"`` (guessed from the answers) every verdict is the same.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bfcl_agreement.py"
DOC = ROOT / "docs" / "conversations-and-agents.md"

#: Where localeval's verdict differs from BFCL's on purpose: (category, perturbation) ->
#: (checks that differ, why). Every other check must agree.
DECISIONS: dict[tuple[str, str], tuple[int, str]] = {
    ("parallel", "reordered"): (
        1, "BFCL pairs each answer with the first unmatched call that fits and never goes back; "
           "parallel_178's first answer accepts Microsoft or Apple, takes the Apple call the third "
           "answer needs, and BFCL fails a complete answer in another order. localeval finds a "
           "pairing where every answer has its own call."),
    ("simple", "list_items_retyped"): (
        4, "An integer where a list's items are floats ([12, 15] for [12.0, 15.0]): BFCL accepts an "
           "integer for a float only as the argument itself, localeval wherever a float is declared "
           "(a JSON number)."),
    ("parallel_multiple", "list_items_retyped"): (
        1, "The same rule as in simple (parallel_multiple_67: coefficients [6, -3, 2, -1, 1])."),
}


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("bfcl_agreement", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def fixture(script):
    return script.read_fixture()


@pytest.fixture(scope="module")
def outcome(script, fixture):
    return script.disagreements(fixture[1])


def test_the_fixture_covers_every_case_and_perturbation(script, fixture):
    meta, cases = fixture
    assert meta["bfcl_eval"] == "2026.3.23" and meta["language"] == "python"
    assert Counter(c["category"] for c in cases) == {
        "simple": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200}
    seen = Counter((c["category"], k["perturbation"]) for c in cases for k in c["checks"])
    for category in ("simple", "multiple", "parallel", "parallel_multiple"):
        for kind in ("as_given", "wrong_value", "wrong_type", "missing_required",
                     "extra_argument", "wrong_function", "int_as_float", "optional_omitted"):
            assert seen[(category, kind)] >= 50, (category, kind)
    for category in ("parallel", "parallel_multiple"):
        assert seen[(category, "reordered")] == 200
    # BFCL itself: the answer passes and the plain mistakes fail (the fixture is not blind).
    verdicts = Counter((k["perturbation"], k["bfcl_valid"]) for c in cases for k in c["checks"])
    assert verdicts[("as_given", True)] >= 995
    for kind in ("wrong_value", "wrong_type", "missing_required", "extra_argument",
                 "wrong_function", "no_call"):
        assert verdicts[(kind, True)] == 0, kind


def test_localeval_agrees_with_bfcl_except_the_documented_decisions(outcome):
    seen, differ, kinds, _ = outcome
    assert sum(seen.values()) == 13_644  # as docs/conversations-and-agents.md says
    unexplained = {k: n for k, n in differ.items() if k not in DECISIONS}
    detail = "\n".join(f"{n} x {key[:2]}: BFCL {key[2]} ({key[3]}), localeval {key[4]} ({key[5]}); "
                       f"e.g. {', '.join(ids[:3])}"
                       for key, ids in kinds.items() for n in [len(ids)] if key[:2] in unexplained)
    assert not unexplained, f"disagreements with BFCL that no decision explains:\n{detail}"
    assert {k: n for k, n in differ.items()} == {k: n for k, (n, _) in DECISIONS.items()}


def _doc_rows() -> dict[tuple[str, str], int]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Agreement with BFCL's checker", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (\d+) \|", section, re.M)
    return {(c, p): int(n) for c, p, n in rows}


def test_the_docs_list_the_same_decisions():
    assert _doc_rows() == {k: n for k, (n, _) in DECISIONS.items()}


def test_the_category_guessed_from_the_answers_gives_the_same_verdicts(fixture):
    """Users rarely name BFCL's category: ``category="auto"`` must judge every fixture output
    as the named category does."""
    from localeval.toolcheck import Call, check_calls, read_functions, read_possible_answers

    differ: Counter[tuple[str, str]] = Counter()
    for case in fixture[1]:
        answers = read_possible_answers(case["possible_answer"])
        functions = read_functions(case["functions"])
        for check in case["checks"]:
            calls = [Call(n, a) for item in check["output"] for n, a in item.items()]
            named = check_calls(calls, answers, functions, category=case["category"]).ok
            if check_calls(calls, answers, functions, category="auto").ok != named:
                differ[(case["category"], check["perturbation"])] += 1
    assert not differ
