"""JudgePool over two real llama-cpp-python servers (tiny GGUF) on 127.0.0.1.

Calls spread over both servers, the fingerprint ignores the URLs (one cache
for any set of replicas), a run with several samples in flight gives the same
results as one plain HttpJudge, and stopping a server mid-run loses nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

import localeval
from localeval.cli.app import example_path
from localeval.errors import ModelError
from localeval.judge import JudgeRequest
from localeval.judge.http import HttpJudge
from localeval.judge import load_judge
from localeval.judge import JudgePool
from localeval.metrics.schemas import Rating012

from test_judge_http import free_port, msgs

METRICS = ["faithfulness", "nv_answer_accuracy"]


def _start(model) -> tuple[str, subprocess.Popen]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1",
         "--n_threads_batch", "1", "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"http://127.0.0.1:{port}", proc


def _wait(url: str, proc: subprocess.Popen) -> None:
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=1).read()
            return
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail("llama_cpp.server did not start")
            time.sleep(0.2)


@pytest.fixture(scope="module")
def servers(tiny_gguf):
    started = [_start(tiny_gguf) for _ in range(2)]  # both load at the same time
    for url, proc in started:
        _wait(url, proc)
    yield started
    for _, proc in started:
        proc.kill()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    p = tmp_path_factory.mktemp("data") / "six.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows[:6]) + "\n",
                 encoding="utf-8")
    return p


def _req(i: int) -> JudgeRequest:
    return JudgeRequest(step="rate", messages=msgs(i), schema=Rating012, seed=i)


def test_pool_spreads_calls_and_shares_one_fingerprint(servers, bias):
    (a, _), (b, _) = servers
    pool = JudgePool([a, b], per_endpoint_concurrency=2, logit_bias=bias)
    assert pool.capacity == 4
    assert JudgePool([b, a], logit_bias=bias).fingerprint == pool.fingerprint
    assert JudgePool([a], logit_bias=bias).fingerprint == pool.fingerprint
    assert JudgePool([a, b], logit_bias=bias, temperature=0.5).fingerprint != pool.fingerprint
    replies = pool.ask_many([_req(i) for i in range(8)])
    single = HttpJudge(a, logit_bias=bias)
    assert [r.raw for r in replies] == [single.ask(_req(i)).raw for i in range(8)]
    calls = {s["url"]: s["calls"] for s in pool.stats()}
    assert calls[a] >= 2 and calls[b] >= 2 and sum(calls.values()) == 8
    # comma-separated URLs on the command line build a pool
    loaded = load_judge(f"{a},{b}", logit_bias=bias, per_endpoint_concurrency=3)
    assert isinstance(loaded, JudgePool) and loaded.capacity == 6


def test_unreachable_servers(servers, bias):
    (a, _), _ = servers
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ModelError, match="no judge server in the pool answered"):
        JudgePool([dead], retries=0)
    pool = JudgePool([dead, a], retries=0, logit_bias=bias)  # starts with one down
    assert [s["healthy"] for s in pool.stats()] == [False, True]
    assert pool.ask(_req(1)).output is not None


def test_run_survives_a_server_stopped_mid_run(servers, bias, data, tmp_path):
    (a, _), (b, proc_b) = servers
    opts = {"logit_bias": bias}
    ref = localeval.evaluate(data, METRICS, judge=HttpJudge(a, **opts), embedder=False,
                             cache=False, progress=False)
    pool = JudgePool([a, b], per_endpoint_concurrency=2, health_interval=0.5, retries=0,
                     **opts)

    def stop_b_after_some_calls() -> None:
        while next(s for s in pool.stats() if s["url"] == b)["calls"] < 3:
            time.sleep(0.01)
        proc_b.kill()

    killer = threading.Thread(target=stop_b_after_some_calls, daemon=True)
    killer.start()
    res = localeval.evaluate(data, METRICS, judge=pool, embedder=False, cache=False,
                             progress=False, out_dir=tmp_path / "out")
    killer.join(timeout=5)
    assert proc_b.poll() is not None, "server b was not stopped during the run"
    assert res.records() == ref.records()
    assert res.summary["usage"]["calls"] == ref.summary["usage"]["calls"]
    stats = {s["url"]: s for s in pool.stats()}
    assert not stats[b]["healthy"] and stats[b]["failures"] >= 1
    assert stats[a]["calls"] > 0
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == [s.id for s in res.samples]
