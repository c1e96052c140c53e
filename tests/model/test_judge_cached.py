"""CachedJudge: repeated runs cost nothing; a killed run resumes with identical outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from localeval.cache import Cache
from localeval.errors import JudgeCallError
from localeval.judge import JudgeRequest
from localeval.judge.cached import CachedJudge, request_key
from localeval.judge import LlamaJudge
from localeval.metrics.schemas import ContextVerdict, Rating012, Statements, Verdicts
from localeval.testing import quote_bias


class Counting:
    """Pass-through judge that counts the calls reaching it."""

    def __init__(self, judge):
        self.judge, self.calls = judge, 0
        self.fingerprint, self.name = judge.fingerprint, judge.name

    def ask(self, request):
        self.calls += 1
        return self.judge.ask(request)


@pytest.fixture(scope="module")
def judge(tiny_gguf):
    plain = LlamaJudge(tiny_gguf, n_threads=1)
    j = LlamaJudge(tiny_gguf, n_threads=1, logit_bias=quote_bias(plain))  # short strings
    plain.close()
    yield j
    j.close()


SCHEMAS = (ContextVerdict, Rating012, Statements, Verdicts)


def request(i: int) -> JudgeRequest:
    schema = SCHEMAS[i % len(SCHEMAS)]
    return JudgeRequest(
        step=schema.__name__,
        messages=({"role": "system", "content": "Judge. JSON only."},
                  {"role": "user", "content": f"Sample {i}: the Eiffel Tower is in Paris."}),
        schema=schema, seed=i, temperature=0.0 if i % 2 else 0.8,
        prob_field="verdict" if schema is ContextVerdict else None)


def test_a_repeated_run_makes_no_generation(judge, tmp_path):
    counting = Counting(judge)
    cj = CachedJudge(counting, Cache(tmp_path / "c.sqlite"))
    first = [cj.ask(request(i)) for i in range(20)]
    assert counting.calls == 20 and not any(r.cached for r in first)
    # a new process would open the file again: so does this
    cj2 = CachedJudge(counting, Cache(tmp_path / "c.sqlite"))
    second = [cj2.ask(request(i)) for i in range(20)]
    assert counting.calls == 20
    for a, b in zip(first, second):
        assert b.cached and b.usage.cache_hits == 1
        assert (b.usage.calls, b.usage.prompt_tokens, b.usage.generated_tokens) == (1, 0, 0)
        assert b.output == a.output and b.raw == a.raw and b.probs == a.probs
        assert type(b.output) is type(a.output)


def test_keys_cover_what_changes_an_answer(judge):
    base = request(0)
    k = request_key(judge.fingerprint, base)
    variants = [
        JudgeRequest(base.step, base.messages, base.schema, seed=base.seed + 1,
                     temperature=base.temperature, prob_field=base.prob_field),
        JudgeRequest(base.step, base.messages, base.schema, seed=base.seed,
                     temperature=0.3, prob_field=base.prob_field),
        JudgeRequest(base.step, base.messages, base.schema, seed=base.seed,
                     temperature=base.temperature, prob_field=None),
        JudgeRequest(base.step, base.messages, Rating012, seed=base.seed,
                     temperature=base.temperature),
        JudgeRequest(base.step, base.messages[:1], base.schema, seed=base.seed,
                     temperature=base.temperature, prob_field=base.prob_field),
    ]
    keys = {request_key(judge.fingerprint, v) for v in variants}
    assert k not in keys and len(keys) == len(variants)
    assert request_key("other-judge", base) != k
    assert request_key(judge.fingerprint, request(0)) == k


def test_truncation_is_recorded_and_not_paid_twice(tiny_gguf, tmp_path):
    counting = Counting(LlamaJudge(tiny_gguf, n_threads=1, max_tokens=4))
    cj = CachedJudge(counting, Cache(tmp_path / "c.sqlite"))
    req = request(0)
    with pytest.raises(JudgeCallError, match="^judge output truncated at 8 tokens$"):
        cj.ask(req)
    with pytest.raises(JudgeCallError, match="^judge output truncated at 8 tokens$"):
        cj.ask(req)
    assert counting.calls == 1


WORKER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    from localeval.cache import Cache
    from localeval.judge.cached import CachedJudge
    from localeval.judge.llama import LlamaJudge
    from test_judge_cached import request
    model, cache, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    from localeval.testing.tiny_gguf import quote_bias
    plain = LlamaJudge(model, n_threads=1)
    judge = CachedJudge(LlamaJudge(model, n_threads=1, logit_bias=quote_bias(plain)), Cache(cache))
    for i in range(n):
        r = judge.ask(request(i))
        print(json.dumps({{"i": i, "raw": r.raw, "cached": r.cached,
                          "generated": r.usage.generated_tokens, "probs": r.probs}}), flush=True)
""")


def _worker(tmp_path):
    path = tmp_path / "worker.py"
    path.write_text(WORKER.format(tests=os.path.dirname(__file__)))
    return path


def _run(worker, model, cache, n):
    r = subprocess.run([sys.executable, str(worker), str(model), str(cache), str(n)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return [json.loads(line) for line in r.stdout.splitlines()]


N_CALLS = 30


@pytest.fixture(scope="module")
def full_run(tiny_gguf, tmp_path_factory):
    d = tmp_path_factory.mktemp("full")
    return _run(_worker(d), tiny_gguf, d / "full.sqlite", N_CALLS)


def test_two_processes_give_identical_outputs(full_run, tiny_gguf, tmp_path):
    again = _run(_worker(tmp_path), tiny_gguf, tmp_path / "again.sqlite", N_CALLS)
    assert [r["raw"] for r in again] == [r["raw"] for r in full_run]
    assert [r["probs"] for r in again] == [r["probs"] for r in full_run]
    assert not any(r["cached"] for r in again)


def test_killed_run_resumes_with_identical_outputs(full_run, tiny_gguf, tmp_path):
    worker = _worker(tmp_path)
    proc = subprocess.Popen([sys.executable, str(worker), str(tiny_gguf),
                             str(tmp_path / "killed.sqlite"), str(N_CALLS)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    seen = [json.loads(proc.stdout.readline()) for _ in range(5)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL  # killed part-way, not finished
    assert [r["raw"] for r in seen] == [r["raw"] for r in full_run[:5]]

    resumed = _run(worker, tiny_gguf, tmp_path / "killed.sqlite", N_CALLS)
    assert [r["raw"] for r in resumed] == [r["raw"] for r in full_run]
    assert [r["probs"] for r in resumed] == [r["probs"] for r in full_run]
    hits = sum(r["cached"] for r in resumed)
    generated = sum(r["generated"] > 0 for r in resumed)
    assert 5 <= hits < N_CALLS and hits + generated == N_CALLS
    assert all(r["cached"] for r in resumed[:hits])
    assert not any(r["cached"] for r in resumed[hits:])
