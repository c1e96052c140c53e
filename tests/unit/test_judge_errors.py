"""A failed judge call's error: typed fields, and the usage every backend puts on it.

The in-process, HTTP and pool backends are pinned in tests/model/
(test_judge_llama.py, test_faults_judge.py); the scripted judge and the cache
wrapper here.
"""

from __future__ import annotations

import pytest

from localeval.cache import Cache
from localeval.errors import BadReply, JudgeCallError
from localeval.judge import CachedJudge, JudgeRequest, Usage
from localeval.metrics.schemas import Rating012
from localeval.testing import ScriptedJudge

MESSAGES = ({"role": "user", "content": "rate this"},)


def request(seed: int = 0) -> JudgeRequest:
    return JudgeRequest(step="rate", messages=MESSAGES, schema=Rating012, seed=seed)


def test_the_fields_are_set_in_the_constructor():
    plain = JudgeCallError("x")
    assert (plain.usage, plain.decided, plain.cached) == (Usage(), False, False)
    err = JudgeCallError("cut", usage=Usage(calls=2, generated_tokens=9), decided=True)
    assert (err.usage.calls, err.usage.generated_tokens, err.decided) == (2, 9, True)
    assert not BadReply("server sent junk", usage=Usage(calls=1)).decided


@pytest.mark.parametrize("entry", [
    {"rating": 9},                                    # invalid output
    JudgeCallError("truncated"),                      # a scripted failure
    lambda req: (_ for _ in ()).throw(JudgeCallError("raised by a callable")),
])
def test_a_scripted_judge_reports_the_usage_of_a_failed_call(entry):
    judge = ScriptedJudge({"rate": entry})
    with pytest.raises(JudgeCallError) as e:
        judge.ask(request())
    prompt = "".join(f"<{m['role']}>{m['content']}" for m in MESSAGES)
    assert (e.value.usage.calls, e.value.usage.prompt_tokens) == (1, len(prompt))


def test_the_cache_counts_a_failed_call_and_replays_a_decided_one(tmp_path):
    cost = Usage(calls=2, prompt_tokens=40, generated_tokens=16)
    judge = ScriptedJudge({"rate": [JudgeCallError("cut", usage=cost, decided=True),
                                    JudgeCallError("server hiccup"), JudgeCallError("again")]})
    cached = CachedJudge(judge, Cache(tmp_path / "c.sqlite"))
    with pytest.raises(JudgeCallError) as first:
        cached.ask(request())
    assert first.value.usage == cost and not first.value.cached  # the judge's own usage, kept
    with pytest.raises(JudgeCallError) as replay:
        cached.ask(request())
    assert replay.value.cached and replay.value.decided
    assert (replay.value.usage.calls, replay.value.usage.cache_hits) == (1, 1)
    assert len(judge.requests) == 1  # replayed, not asked again
    with pytest.raises(JudgeCallError) as transient:
        cached.ask(request(seed=1))
    assert transient.value.usage.calls == 1 and not transient.value.decided
    with pytest.raises(JudgeCallError):
        cached.ask(request(seed=1))
    assert len(judge.requests) == 3  # a transient failure is asked again


def test_a_failure_with_no_call_in_its_usage_counts_one_call(tmp_path):
    class NoCall:
        fingerprint, name = "nocall", "nocall"

        def ask(self, request):
            raise JudgeCallError("prompt longer than the context")

    with pytest.raises(JudgeCallError) as e:
        CachedJudge(NoCall(), Cache(tmp_path / "c.sqlite")).ask(request())
    assert e.value.usage == Usage(calls=1)
