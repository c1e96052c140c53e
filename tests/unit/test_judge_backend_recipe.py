"""A judge backend written only from docs/architecture.md's "Where to add" recipe.

The recipe: subclass ``judge.JudgeBackend``, set ``name`` and ``fingerprint``,
write ``ask`` (a failure raises ``JudgeCallError(..., usage=)``), declare
``capacity`` when calls can run at once, and register the specs that select
it with ``register_judge_backend``. Nothing else in the package is told about
it, yet a run through ``evaluate`` must send it calls at once, count what its
failed calls cost, and name it in the run's signature; with the cache on too,
since ``CachedJudge`` forwards only the protocol's declared members.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading

import pytest

import localeval
from localeval.errors import JudgeCallError
from localeval.judge import (
    CachedJudge,
    JudgeBackend,
    JudgeReply,
    JudgeRequest,
    Usage,
    load_judge,
    register_judge_backend,
    unregister_judge_backend,
)
from localeval.judge.parse import parse_reply
from localeval.run.strategies import pool_capacity
from localeval.testing.scripted import auto_output

#: What the backend's failed call costs: two generations, both cut off.
FAILED = Usage(calls=2, prompt_tokens=50, generated_tokens=40)
OK = Usage(calls=1, prompt_tokens=10, generated_tokens=3)


class EchoJudge(JudgeBackend):
    """Answers each step with a schema-valid JSON text; fails every call about sample "bad".

    The first ``capacity`` calls wait for each other at a barrier: they pass
    only if the run really sent that many at once (the barrier breaks after
    a timeout otherwise, and ``overlapped`` stays False).
    """

    def __init__(self, spec: str, capacity: int) -> None:
        self.name = spec
        self.fingerprint = hashlib.sha256(f"echo|{spec}".encode()).hexdigest()
        self._capacity = capacity
        self._barrier = threading.Barrier(capacity, timeout=10) if capacity > 1 else None
        self._lock = threading.Lock()
        self.calls: list[tuple[str, str]] = []
        self.in_flight = self.peak = 0
        self.overlapped = False

    @property
    def capacity(self) -> int:
        return self._capacity

    def ask(self, request: JudgeRequest) -> JudgeReply:
        with self._lock:
            first_wave = len(self.calls) < self._capacity
            self.calls.append((request.step, request.sample.id))
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            if self._barrier is not None and first_wave:
                try:
                    self._barrier.wait()
                    self.overlapped = True
                except threading.BrokenBarrierError:
                    pass
            if request.sample.id == "bad":
                raise JudgeCallError("output cut off at the token budget",
                                     usage=dataclasses.replace(FAILED), decided=True)
            raw = json.dumps(auto_output(request.schema))
            usage = dataclasses.replace(OK)
            return JudgeReply(output=parse_reply(raw, request.schema, usage), raw=raw,
                              usage=usage)
        finally:
            with self._lock:
                self.in_flight -= 1


@pytest.fixture
def echo_backend():
    """Register the "echo:" backend for one test; the judges it built, by spec."""
    built: dict[str, EchoJudge] = {}

    def build(spec, *, models_dir, judge_model, capacity=3, **options):
        built[spec] = EchoJudge(spec, capacity)
        return built[spec]

    register_judge_backend("echo", lambda spec: bool(spec and spec.startswith("echo:")),
                           build, options=("capacity",))
    yield built
    unregister_judge_backend("echo")


def data(n: int) -> list[dict]:
    rows = [{"id": f"s{i}", "question": f"Q{i}?", "answer": f"A{i}.", "contexts": [f"c{i}"]}
            for i in range(n)]
    rows[1]["id"] = "bad"
    return rows


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cached"])
def test_a_recipe_backend_runs_concurrently_counts_failures_and_is_signed(
        echo_backend, tmp_path, cache):
    res = localeval.evaluate(data(6), ["faithfulness"], judge="echo:v1", embedder=False,
                             cache=tmp_path / "cache.db" if cache else False,
                             judge_check=False, judge_options={"capacity": 3})
    judge = echo_backend["echo:v1"]
    assert judge.overlapped and judge.peak == 3, "the declared capacity was not used"

    # Usage: the failed calls count their two generations and their tokens.
    failed = sum(1 for _, sid in judge.calls if sid == "bad")
    ok = len(judge.calls) - failed
    assert failed >= 1 and ok >= 5
    usage = res.summary["usage"]
    assert usage["calls"] == ok * OK.calls + failed * FAILED.calls
    assert usage["generated_tokens"] == ok * OK.generated_tokens + failed * FAILED.generated_tokens
    assert usage["prompt_tokens"] == ok * OK.prompt_tokens + failed * FAILED.prompt_tokens
    bad = next(s for s in res.scores if s["faithfulness"].value is None)
    assert "cut off" in (bad["faithfulness"].reason or "")

    # The run's signature names the backend and its fingerprint.
    sig = res.summary["signature"]
    assert sig["judge"] == "echo:v1" and sig["judge_fingerprint"] == judge.fingerprint
    assert f"judge:echo:v1@{judge.fingerprint[:12]}" in res.summary["signature_line"]


def test_a_recipe_backend_of_capacity_one_gets_one_call_at_a_time(echo_backend):
    localeval.evaluate(data(4), ["faithfulness"], judge="echo:seq", embedder=False,
                       cache=False, judge_check=False, judge_options={"capacity": 1})
    assert echo_backend["echo:seq"].peak == 1


def test_the_cache_wrapper_forwards_the_declared_capabilities(echo_backend, tmp_path):
    from localeval.cache import Cache

    inner = load_judge("echo:fwd", capacity=5)
    cached = CachedJudge(inner, Cache(tmp_path / "c.db"))
    assert (cached.capacity, cached.batches, pool_capacity(cached)) == (5, False, 5)
    assert cached.signature() == {"judge": "echo:fwd", "fingerprint": inner.fingerprint}
    cached.interrupt(), cached.resume(), cached.close()
    with pytest.raises(AttributeError):  # nothing beyond the protocol passes through
        cached.calls  # noqa: B018


def test_options_of_another_backend_never_reach_a_backend(echo_backend):
    """``--parallel`` (the GGUF backend's) and HTTP's options are dropped before ``build``."""
    j = load_judge("echo:opts", parallel=4, per_endpoint_concurrency=2, timeout=5)
    assert j.capacity == 3


def test_a_judge_object_that_declares_nothing_gets_the_sequential_defaults():
    class Bare:
        name = fingerprint = "bare"

        def ask(self, request):
            raise AssertionError("not called")

    j = load_judge(Bare())
    assert (j.name, j.fingerprint, j.capacity, j.batches) == ("bare", "bare", 1, False)
    assert j.signature() == {"judge": "bare", "fingerprint": "bare"}
    j.close()
