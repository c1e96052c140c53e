"""The judge check asks its probes as the run will ask the judge: with ``--reasons none``
the reasoned metrics' probes go without reasons, and the two modes' results are kept
apart in the cache (a judge fit with reasons may not be without them)."""

from __future__ import annotations

import json

import pytest

import localeval
from localeval.cache import Cache
from localeval.judge import CachedJudge
from localeval.judge_check import run_judge_check
from localeval.testing import OracleJudge


def _verdict_items(requests):
    """The JSON schemas' verdict items of the requests that ask for verdicts."""
    for r in requests:
        text = json.dumps(r.schema.model_json_schema())
        if '"verdict"' in text:
            yield text


@pytest.mark.parametrize("reasons", ["full", "none"])
def test_the_check_asks_in_the_runs_reasons_mode(reasons):
    judge = OracleJudge()
    res = run_judge_check(judge, ["faithfulness", "context_recall"], reasons=reasons, pairs=2)
    assert res.fit
    asked = list(_verdict_items(judge.requests))
    assert asked and all(('"reason"' in s) == (reasons == "full") for s in asked)
    d = res.to_dict()
    assert d.get("reasons", "full") == reasons
    assert ("(--reasons none)" in d["line"]) == (reasons == "none")


def test_the_modes_are_cached_apart_where_reasons_differ(tmp_path):
    store = Cache(tmp_path / "c.sqlite")
    inner = OracleJudge()

    def check(reasons: str) -> int:
        before = len(inner.requests)
        run_judge_check(CachedJudge(inner, store), ["faithfulness", "nv_answer_accuracy"],
                        cache=store, reasons=reasons, pairs=1)
        return len(inner.requests) - before

    assert check("full") > 0
    assert check("full") == 0  # cached
    asked = check("none")
    assert asked > 0, "faithfulness is asked again without reasons"
    # nv_answer_accuracy gives no reasons: its result is shared between the modes
    assert check("none") == 0
    checked = run_judge_check(OracleJudge(), ["nv_answer_accuracy"], cache=store,
                              reasons="none", pairs=1)
    assert checked.usage["calls"] == 0


def test_a_run_without_reasons_checks_its_judge_without_them(tmp_path):
    judge = OracleJudge()
    res = localeval.evaluate(
        [localeval.Sample(id="s", question="Where is Paris?", answer="Paris is in France.",
                          contexts=["Paris is the capital of France."])],
        ["faithfulness"], judge=judge, cache=False, progress=False, reasons="none",
        judge_check=1)
    check = res.summary["judge_check"]
    assert check["reasons"] == "none" and check["verdict"] == "fit"
    assert all('"reason"' not in s for s in _verdict_items(judge.requests))
