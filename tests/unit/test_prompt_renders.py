"""A judge call renders its prompt once: the message sent, the copy check and the retry share it."""

from __future__ import annotations

from collections import Counter

import pytest

import localeval.prompts as prompting
from localeval.metrics import Judging, get_metric
from localeval.prompts import examples, renderer
from localeval.testing import ScriptedJudge
from localeval.types import Sample

SAMPLE = Sample(id="s1", question="How many days of leave do employees get?",
                contexts=["Employees get 25 days of paid leave."], answer="Employees get 25 days.",
                reference="25 days.")
COPY = {"reason": "The context states that Paris is the capital.", "verdict": 1}
OWN = {"reason": "The context gives the 25 days.", "verdict": 1}


@pytest.fixture
def renders(monkeypatch):
    """Counts of ``render`` calls by ``examples`` value, however the renderer is reached."""
    counts: Counter[bool] = Counter()
    real = renderer.render

    def counting(*args, **kw):
        counts[kw.get("examples", True)] += 1
        return real(*args, **kw)

    monkeypatch.setattr(renderer, "render", counting)
    monkeypatch.setattr(prompting, "render", counting, raising=False)
    monkeypatch.setattr(examples, "render", counting)
    return counts


def _judge(reply):
    return ScriptedJudge({"context_utilization": reply})


def test_one_judged_step_renders_its_prompt_once(renders):
    judge = _judge(OWN)
    get_metric("context_utilization")().score(SAMPLE, Judging(judge=judge, copy_check=False))
    assert len(judge.calls()) == 1
    assert sum(renders.values()) == 1


def test_the_copy_check_renders_each_prompt_once(renders):
    judge = _judge(OWN)
    get_metric("context_utilization")().score(SAMPLE, Judging(judge=judge))
    # the prompt sent, once; the example-free one the check compares it with, once
    assert renders == {True: 1, False: 1}


def test_a_retry_sends_the_prompt_the_check_rendered(renders):
    judge = ScriptedJudge({"context_utilization":
                           lambda r: COPY if "Example" in r.messages[-1]["content"] else OWN})
    ctx = Judging(judge=judge)
    assert get_metric("context_utilization")().score(SAMPLE, ctx).value == 1.0
    assert len(judge.calls()) == 2 and ctx.usage.copied_calls == 1
    assert renders == {True: 1, False: 1}
