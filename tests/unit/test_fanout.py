"""A sample's independent judge calls in flight together (``Judging.fanout``).

With a judge that serves several calls at once, ``score_sample`` runs the
metrics side by side and the metrics ask their per-context verdicts, the two
NV judges, both statement lists and AspectCritic's votes together. These tests
pin what must not change with that: every score, the one-time extraction of
shared statements, the order of results and errors; and that calls really
overlap.
"""

from __future__ import annotations

import threading
import time

import pytest

from localeval.errors import JudgeCallError
from localeval.metrics import Judging, parse_metrics
from localeval.run.sample_scoring import score_sample
from localeval.run.strategies import samples_in_flight
from localeval.testing import HashEmbedder
from localeval.testing.scripted import ScriptedJudge, auto_output
from localeval.types import Sample

SAMPLE = Sample(
    id="s1",
    question="Who directed Oppenheimer and who played the lead?",
    answer="Christopher Nolan directed Oppenheimer. Cillian Murphy played Oppenheimer.",
    contexts=["Oppenheimer is a 2023 film written and directed by Christopher Nolan.",
              "Cillian Murphy stars as J. Robert Oppenheimer.",
              "The film grossed over $900 million."],
    reference="Christopher Nolan directed Oppenheimer; Cillian Murphy played the title role.",
)

METRICS = ("faithfulness,answer_correctness,noise_sensitivity,context_precision,"
           "context_utilization,context_recall,context_entity_recall,nv_context_relevance,"
           "nv_answer_accuracy,nv_response_groundedness,answer_relevancy,context_relevancy")


def varied(request) -> dict:
    """An output that depends on the request (so a mixed-up reply changes a score)."""
    out = auto_output(request.schema)
    inputs = request.inputs
    k = inputs.get("k") or inputs.get("source")
    if "verdict" in out:
        out["verdict"] = int(k in (1, "reference")) if k is not None else 1
    if "verdicts" in out:
        for i, v in enumerate(out["verdicts"]):
            v["verdict"] = (i + len(str(k))) % 2
    if "rating" in out:
        out["rating"] = 2 if request.step.endswith("_1") else 0
    if "statements" in out:
        target = inputs.get("target")
        out["statements"] = ([f"{target} statement {i}" for i in range(2)]
                             if target else out["statements"])
    return out


class SlowJudge:
    """A scripted judge counting how many calls are open at once.

    With ``meet=n`` each call waits until n calls are open together (an event, not a
    sleep, so a slow machine cannot fake or hide the overlap); after that, or after
    ``patience`` seconds without it, calls go straight through.
    """

    fingerprint = name = "slow-scripted"

    def __init__(self, meet: int = 0, patience: float = 10.0) -> None:
        self.inner = ScriptedJudge(auto=True)
        self.meet, self.patience = meet, patience
        self.met = threading.Event()
        self.lock = threading.Lock()
        self.now = self.peak = 0
        self.steps: list[tuple[str, str]] = []

    def ask(self, request):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.steps.append((request.step, str(request.inputs.get("target"))))
            if self.meet and self.now >= self.meet:
                self.met.set()
        try:
            if self.meet:
                self.met.wait(self.patience)
            entry = varied(request)
            return self.inner._reply(request, entry)
        finally:
            with self.lock:
                self.now -= 1


def run(fanout: int, meet: int = 0):
    judge = SlowJudge(meet)
    ctx = Judging(judge=judge, embedder=HashEmbedder(), fanout=fanout)
    scores = score_sample(SAMPLE, parse_metrics(METRICS), ctx, repeats=1)
    return scores, judge, ctx


def test_fanned_out_scores_equal_one_at_a_time_and_calls_overlap():
    seq_scores, seq_judge, seq_ctx = run(1)
    par_scores, par_judge, par_ctx = run(8, meet=4)
    assert seq_judge.peak == 1
    assert par_judge.met.is_set(), "independent calls of one sample did not overlap"
    assert list(par_scores) == list(seq_scores)  # same keys, same order
    for key, s in seq_scores.items():
        p = par_scores[key]
        assert (p.value, p.reason, p.details) == (s.value, s.reason, s.details), key
    assert sorted(par_judge.steps) == sorted(seq_judge.steps)
    assert par_ctx.usage.calls == seq_ctx.usage.calls == len(seq_judge.steps)
    # Faithfulness, answer_correctness and noise_sensitivity share one extraction
    # per source text even when they ask for it at the same moment.
    assert par_judge.steps.count(("statements", "answer")) == 1
    assert par_judge.steps.count(("statements", "reference")) == 1


def test_map_keeps_order_and_raises_the_first_error_in_item_order():
    ctx = Judging(fanout=4)

    def f(i: int) -> int:
        time.sleep(0.01 * (5 - i))  # later items finish first
        if i in (2, 4):
            raise JudgeCallError(f"failed {i}")
        return i * i

    assert ctx.map(lambda i: i * i, range(5)) == [0, 1, 4, 9, 16]
    with pytest.raises(JudgeCallError, match="failed 2"):
        ctx.map(f, range(5))
    assert Judging(fanout=1).map(str, [1, 2]) == ["1", "2"]


def test_a_failed_shared_call_is_asked_again_by_the_next_asker():
    calls = []

    class Flaky:
        fingerprint = name = "flaky"

        def __init__(self):
            self.inner = ScriptedJudge(auto=True)

        def ask(self, request):
            calls.append(request.step)
            time.sleep(0.02)
            if len(calls) == 1:
                raise JudgeCallError("server hiccup")
            return self.inner.ask(request)

    ctx = Judging(judge=Flaky(), fanout=3)
    from localeval.metrics.schemas import Statements

    def ask(_):
        try:
            return ctx.ask("statements", Statements, SAMPLE, target="answer").output
        except JudgeCallError as e:
            return str(e)

    got = ctx.map(ask, range(3))
    assert got.count("server hiccup") == 1
    assert len(calls) == 2, "the two other askers shared one retry"


def test_samples_in_flight():
    assert samples_in_flight(1, 12) == 1
    assert samples_in_flight(16, 12) == 4
    assert samples_in_flight(3, 3) == 2
    assert samples_in_flight(8, 1) == 8
    # The in-process judge: one sample fills two to four slots without evicting another's prefix.
    assert [samples_in_flight(n, 12, at_least=1) for n in (2, 4, 7, 8, 16)] == [1, 1, 2, 2, 4]
