"""``--reasons none`` through real llama.cpp: the tiny random-weight GGUF.

What must hold for any judge: the grammar built from a reason-less schema ends
each item at its verdict (the reply has no ``reason`` key), soft verdicts are
read at the verdict token with probabilities in [0, 1] summing to one over
{0, 1}, and a run writes fewer tokens than the same run with full reasons.
"""

from __future__ import annotations

import json
import math

import pytest

import localeval
from localeval.cli.app import example_path
from localeval.judge import JudgeRequest, LlamaJudge
from localeval.metrics.schemas import (
    ContextVerdict,
    correctness_schema,
    verdict_only,
    verdicts_schema,
)

METRICS = ["faithfulness", "context_precision", "context_recall", "answer_correctness"]


@pytest.fixture(scope="module")
def judge(tiny_gguf):
    j = LlamaJudge(tiny_gguf, n_threads=1, n_ctx=2048)
    yield j
    j.close()


@pytest.mark.parametrize("schema, with_reasons, n", [
    (verdicts_schema(3, 0), verdicts_schema(3), 3),
    (verdict_only(ContextVerdict), ContextVerdict, 1),
    (correctness_schema(2, 1, 0), correctness_schema(2, 1), 3)])
def test_the_grammar_ends_each_item_at_its_verdict(judge, schema, with_reasons, n):
    req = JudgeRequest(step="t", schema=schema, prob_field="verdict",
                       messages=({"role": "user", "content": "Judge it."},))
    reply = judge.ask(req)
    raw = json.loads(reply.raw)
    assert "reason" not in reply.raw
    items = raw.get("verdicts") or raw.get("answer", []) + raw.get("reference", []) or [raw]
    assert [set(i) for i in items] == [{"verdict"}] * n
    assert len(reply.probs) == n
    for p in reply.probs:
        assert set(p) == {"0", "1"}
        assert math.fsum(p.values()) == pytest.approx(1.0)
        assert 0.0 <= p["1"] <= 1.0
    # fewer tokens than the same items with reasons: the reason strings are gone
    full = judge.ask(JudgeRequest(step="t", schema=with_reasons, prob_field="verdict",
                                  messages=req.messages))
    assert "reason" in full.raw
    assert reply.usage.generated_tokens < full.usage.generated_tokens


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    path = tmp_path_factory.mktemp("reasons") / "two.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                            for r in rows if r["id"] in ("en-01", "ja-01")), "utf-8")
    return path


def test_a_soft_run_without_reasons(tiny_gguf, bias, data):
    kw = dict(judge=str(tiny_gguf), embedder=False, progress=False, judge_check=False,
              cache=False, verdicts="soft",
              judge_options={"n_ctx": 4096, "logit_bias": bias})
    metrics = [m for m in METRICS if m != "answer_correctness"] + [
        "answer_correctness:weights=1,0"]
    runs = {mode: localeval.evaluate(data, metrics, reasons=mode, **kw)
            for mode in ("full", "none")}
    none = runs["none"]
    assert none.summary["signature"]["reasons"] == "none"
    seen = 0
    for rec in none.records():
        text = json.dumps(rec["details"], ensure_ascii=False)
        assert '"reason"' not in text
        for d in rec["details"].values():
            rows = d.get("verdicts") or d.get("classifications") or []
            for row in rows:
                assert set(row) <= {"statement", "context", "verdict", "p_verdict_1"}
                assert 0.0 <= row["p_verdict_1"] <= 1.0
                seen += 1
        for key in ("faithfulness", "context_precision", "context_recall"):
            v = rec["scores"][key]
            assert v is None or 0.0 <= v <= 1.0
    assert seen > 0
    full = runs["full"]
    assert any('"reason"' in json.dumps(r["details"]) for r in full.records())
    # the same verdict calls, without their reasons: fewer generated tokens
    assert (none.summary["usage"]["generated_tokens"]
            < full.summary["usage"]["generated_tokens"])


def test_the_bench_reports_both_modes(tiny_gguf, tmp_path, monkeypatch):
    """scripts/bench_reasons.py end to end on the tiny model: cost and spread per mode."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import bench_reasons

    out = tmp_path / "rows.json"
    assert bench_reasons.main(["--judge", str(tiny_gguf), "--samples", "2", "--metrics",
                               "faithfulness,context_precision", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["mode"] for r in rows] == ["full", "none"]
    full, none = rows
    assert none["generated_tokens_per_sample"] < full["generated_tokens_per_sample"]
    assert "|reasons:none|" in none["signature_line"] and "reasons:" not in full["signature_line"]
    for r in rows:
        assert r["probabilities"] == r["verdicts"] > 0
        assert 0.0 <= r["share_near_0_or_1"] <= 1.0
