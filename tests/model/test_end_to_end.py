"""The whole product through real llama.cpp and the real embedder.

A tiny random-weight GGUF (built by the suite) judges a slice of the bundled
example: every metric runs end to end, gives a number in range or a recorded
reason, and the run is deterministic, resumable after SIGKILL, and the same
with two worker processes. Random weights cannot judge well; these tests are
about the machinery, not the quality of the numbers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import localeval
from localeval.cli.app import example_path

ALL_JUDGE = ["faithfulness", "answer_relevancy", "context_precision", "context_utilization",
             "context_recall", "context_entity_recall", "noise_sensitivity",
             "noise_sensitivity:mode=irrelevant", "answer_correctness", "context_relevancy",
             "nv_context_relevance", "nv_answer_accuracy", "nv_response_groundedness"]
OTHER = ["answer_similarity", "hit_rate@3", "mrr", "ndcg@5", "bleu", "rougeL"]


@pytest.fixture(scope="module")
def slice_path(tmp_path_factory):
    """Two English and one Japanese example sample, one of them deliberately unfaithful."""
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    en = [r for r in rows if r["id"].startswith("en")]
    ja = [r for r in rows if r["id"].startswith("ja")]
    pick = [en[0], next(r for r in en if r["quality"] == "unfaithful"), ja[0]]
    p = tmp_path_factory.mktemp("data") / "slice.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in pick) + "\n",
                 encoding="utf-8")
    return p


def _check_in_range(res):
    for sc in res.scores:
        for key, s in sc.items():
            if s.value is None:
                assert s.reason, f"{key}: unscored without a reason"
            elif not key.startswith("answer_relevancy"):
                assert -1e-9 <= s.value <= 1 + 1e-9, (key, s.value)
            else:
                assert -1 <= s.value <= 1, (key, s.value)


def test_every_metric_end_to_end_and_deterministic(tiny_gguf, bias, tmp_path):
    """The whole bundled example (20 en + 10 ja + 10 zh samples), every metric, twice."""
    kw = dict(judge=str(tiny_gguf), judge_options={"n_ctx": 4096, "logit_bias": bias},
              progress=False)
    first = localeval.evaluate(example_path(), ALL_JUDGE + OTHER, cache=tmp_path / "c1.sqlite",
                               out_dir=tmp_path / "out", **kw)
    assert len(first.scores) == 40
    _check_in_range(first)
    assert set(first.summary["metrics"]) == set(ALL_JUDGE + OTHER)
    u = first.summary["usage"]
    assert u["calls"] > 300 and u["generated_tokens"] > 0
    assert u["reused_tokens"] > 0, "a sample's calls share the KV prefix"
    sig = first.summary["signature"]
    assert sig["judge"] == tiny_gguf.name and len(sig["judge_fingerprint"]) >= 12
    assert sig["prompts"] and sig["embedder"]
    for f in ("results.jsonl", "summary.json", "summary.md", "report.html"):
        assert (tmp_path / "out" / f).stat().st_size > 0
    # same seed, fresh cache, new judge instance: identical results
    second = localeval.evaluate(example_path(), ALL_JUDGE + OTHER,
                                cache=tmp_path / "c2.sqlite", **kw)
    assert first.records() == second.records()
    # the cache serves a repeated run with zero new generations
    third = localeval.evaluate(example_path(), ALL_JUDGE + OTHER, cache=tmp_path / "c1.sqlite",
                               **kw)
    assert third.records() == first.records()
    assert third.summary["usage"]["generated_tokens"] == 0
    assert third.summary["usage"]["cache_hits"] == third.summary["usage"]["calls"]


_DRIVER = ("import json, os, sys, localeval; "
           "localeval.configure(logit_bias={int(k): v for k, v in "
           "json.loads(os.environ['TEST_BIAS']).items()}); "
           "from localeval.cli.app import main; sys.exit(main(sys.argv[1:]))")


def _cli(args, bias, **kw):
    """The real CLI in a new process (configured with the test's quote bias)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", TEST_BIAS=json.dumps(bias))
    return subprocess.Popen([sys.executable, "-c", _DRIVER, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_resume_after_sigkill_gives_identical_results(tiny_gguf, bias, tmp_path):
    data = tmp_path / "six.jsonl"
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()][:6]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                    encoding="utf-8")
    metrics = "faithfulness,context_precision,nv_context_relevance,mrr"
    base = ["run", str(data), "-m", metrics, "--judge", str(tiny_gguf), "--n-ctx", "4096",
            "--quiet"]
    ref = _cli(base + ["-o", str(tmp_path / "ref"), "--cache", str(tmp_path / "ref.sqlite")],
               bias)
    assert ref.wait(timeout=600) == 0, ref.stderr.read()

    out, cache = tmp_path / "run", tmp_path / "run.sqlite"
    proc = _cli(base + ["-o", str(out), "--cache", str(cache)], bias)
    results = out / "results.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline:
        if results.exists() and results.read_text().count("\n") >= 2:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert killed, "the run finished before it could be killed; test data too small"
    done_before = results.read_text().count("\n")
    assert 1 <= done_before < 6
    again = _cli(base + ["-o", str(out), "--cache", str(cache), "--json"], bias)
    stdout, stderr = again.communicate(timeout=600)
    assert again.returncode == 0, stderr
    resumed = json.loads(stdout)
    assert resumed["usage"]["cache_hits"] >= done_before, "finished calls are not repeated"
    want = (tmp_path / "ref" / "results.jsonl").read_text()
    assert results.read_text() == want


def test_workers_give_the_same_results(tiny_gguf, bias, slice_path, tmp_path):
    kw = dict(judge=str(tiny_gguf), judge_options={"n_ctx": 4096, "logit_bias": bias},
              progress=False)
    metrics = ["faithfulness", "nv_answer_accuracy", "answer_similarity", "mrr"]
    one = localeval.evaluate(slice_path, metrics, cache=tmp_path / "a.sqlite", **kw)
    two = localeval.evaluate(slice_path, metrics, cache=tmp_path / "b.sqlite", workers=2, **kw)
    assert one.records() == two.records()
    assert two.summary["signature"]["judge"] == tiny_gguf.name
    assert two.summary["usage"]["calls"] == one.summary["usage"]["calls"]


def test_cli_errors_for_bad_models(tmp_path, capsys):
    from localeval.cli.app import main

    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 20)
    code = main(["run", str(example_path()), "-m", "faithfulness", "--judge", str(bad),
                 "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 3 and str(bad) in err and "Traceback" not in err
    code = main(["run", str(example_path()), "-m", "answer_similarity", "--embedder",
                 "no-such-embedder", "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 3 and "embedding model not found: no-such-embedder" in err
    code = main(["run", str(example_path()), "-m", "faithfulness", "--judge",
                 str(tmp_path / "missing.gguf"), "-o", str(tmp_path / "o")])
    assert code == 3 and "judge model not found" in capsys.readouterr().err


def test_soft_verdicts_through_llama(tiny_gguf, bias, slice_path, tmp_path):
    res = localeval.evaluate(slice_path, ["faithfulness", "context_precision"],
                             judge=str(tiny_gguf),
                             judge_options={"n_ctx": 4096, "logit_bias": bias},
                             verdicts="soft", cache=False, progress=False)
    _check_in_range(res)
    assert res.summary["signature"]["verdicts"] == "soft"
    soft = [v for sc in res.scores for v in [sc["context_precision"]] if v.value is not None]
    for s in soft:
        for item in s.details.get("verdicts", []):
            if "p_verdict_1" in item:
                assert 0.0 <= item["p_verdict_1"] <= 1.0


def test_cli_repeats_statistics(tiny_gguf, bias, slice_path, tmp_path):
    out = tmp_path / "rep"
    proc = _cli(["run", str(slice_path), "-m", "faithfulness,nv_context_relevance", "--judge",
                 str(tiny_gguf), "--n-ctx", "4096", "--repeats", "3", "-o", str(out), "--json",
                 "--cache", str(tmp_path / "rep.sqlite")], bias)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    summary = json.loads(stdout)
    for key in ("faithfulness", "nv_context_relevance"):
        m = summary["metrics"][key]
        assert len(m["run_means"]) == 3 and m["run_spread"] >= 0
        assert m["mean_sample_std"] is None or m["mean_sample_std"] >= 0
    assert summary["signature"]["repeats"] == 3 and "repeats:3" in summary["signature_line"]
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    scored = [r for r in recs if r["scores"]["nv_context_relevance"] is not None]
    assert scored, "the NV metric scores with the tiny model"
    for r in scored:
        d = r["details"]["nv_context_relevance"]
        vals = [v for v in d["repeats"] if v is not None]
        assert r["scores"]["nv_context_relevance"] == pytest.approx(sum(vals) / len(vals))
