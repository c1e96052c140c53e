"""Accounting: what each judge call cost, and what the model's own work would have cost.

A ``MeteredJudge`` records every call (tokens sent, reused from the KV cache,
generated, seconds) against the sample and metric that made it; ``totals``
and ``group_totals`` sum the records; ``measure_speeds`` and ``compute_floor``
give the compute floor they are compared with; ``simulate_prefix_reuse``
counts what a single-slot prefix cache would evaluate for any prompts
(ragas's, in ``ragas_prompts``).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

__all__ = ["SUITE", "STEP_METRIC", "CallRecord", "MeteredJudge", "MetricAttribution",
           "no_shared_statements", "totals", "group_totals", "calls_of", "Speeds",
           "compute_floor", "measure_speeds", "simulate_prefix_reuse"]

#: Every judge metric, plus answer_similarity (embedding only): the "full suite".
SUITE = (
    "faithfulness", "answer_relevancy", "context_precision", "context_utilization",
    "context_recall", "context_entity_recall", "noise_sensitivity", "answer_correctness",
    "context_relevancy", "nv_context_relevance", "nv_answer_accuracy",
    "nv_response_groundedness", "answer_similarity",
)

#: Which metric a judge step belongs to when no metric is known (``statements`` is shared).
STEP_METRIC = {
    "faithfulness_verdicts": "faithfulness", "answer_relevancy": "answer_relevancy",
    "context_precision": "context_precision", "context_utilization": "context_utilization",
    "context_recall": "context_recall", "entities": "context_entity_recall",
    "noise_verdicts": "noise_sensitivity", "answer_correctness": "answer_correctness",
    "context_relevancy": "context_relevancy", "statements": "(shared statements)",
}


# -- accounting ------------------------------------------------------------------------
@dataclass
class CallRecord:
    """One judge call as the judge accounted for it."""

    sample: str
    metric: str
    step: str
    calls: int
    prompt_tokens: int
    reused_tokens: int
    generated_tokens: int
    seconds: float

    @property
    def evaluated_tokens(self) -> int:
        return self.prompt_tokens - self.reused_tokens


class MeteredJudge:
    """Wraps a judge: records every call, and can switch prefix reuse off.

    ``prefix_reuse=False`` empties llama.cpp's KV cache before each call, so
    every prompt is evaluated from its first token: the "fast path off"
    baseline. Everything else is forwarded to the wrapped judge, so the run
    signature names the real model.
    """

    def __init__(self, inner: Any, *, prefix_reuse: bool = True) -> None:
        self.inner = inner
        self.prefix_reuse = prefix_reuse
        self.records: list[CallRecord] = []
        self.sample = ""
        self.metric = ""

    def __getattr__(self, item: str) -> Any:  # fingerprint, name, signature(), n_ctx, ...
        return getattr(self.inner, item)

    def ask(self, request: Any) -> Any:
        if not self.prefix_reuse:
            self.inner._llm.reset()
        # A failed call (JudgeCallError) has no usage to record: its time shows only
        # in the sample's wall seconds, and the run prints the sample's errors.
        reply = self.inner.ask(request)
        u = reply.usage
        self.records.append(CallRecord(
            sample=self.sample, metric=self.metric or STEP_METRIC.get(request.step, request.step),
            step=request.step, calls=u.calls, prompt_tokens=u.prompt_tokens,
            reused_tokens=u.reused_tokens, generated_tokens=u.generated_tokens,
            seconds=u.seconds))
        return reply


class MetricAttribution:
    """Tells ``judge`` which metric is scoring, and times each metric (embeddings included).

    A ``localeval.run.MetricObserver``, passed as ``evaluate(..., observer=...)``:
    the run announces each model metric of each sample before scoring it,
    which is exactly the unit this benchmark attributes judge calls and
    seconds to. Calls made outside a metric fall back to attribution by step.
    """

    def __init__(self, judge: MeteredJudge,
                 metric_seconds: dict[tuple[str, str], float]) -> None:
        self.judge = judge
        self.metric_seconds = metric_seconds

    def started(self, sample: Any, metric: Any) -> None:
        self.judge.metric = metric.key

    def finished(self, sample: Any, metric: Any, score: Any, seconds: float) -> None:
        key = (sample.id, metric.key)
        self.metric_seconds[key] = self.metric_seconds.get(key, 0.0) + seconds
        self.judge.metric = ""


@contextlib.contextmanager
def no_shared_statements() -> Iterator[None]:
    """Switch off ``Judging``'s per-sample memo, so repeated steps are asked again.

    The memo is what lets faithfulness, answer_correctness and
    noise_sensitivity share one ``statements`` call; without it each asks.
    """
    from localeval.metrics import Judging

    original = Judging.ask

    def ask(self: Any, *a: Any, **kw: Any) -> Any:
        self._memo.clear()
        return original(self, *a, **kw)

    Judging.ask = ask  # type: ignore[method-assign]
    try:
        yield
    finally:
        Judging.ask = original  # type: ignore[method-assign]


def totals(records: Iterable[CallRecord]) -> dict[str, float]:
    """Summed calls / tokens / seconds of ``records``."""
    out = {"calls": 0, "prompt_tokens": 0, "evaluated_tokens": 0, "generated_tokens": 0,
           "judge_seconds": 0.0}
    for r in records:
        out["calls"] += r.calls
        out["prompt_tokens"] += r.prompt_tokens
        out["evaluated_tokens"] += r.evaluated_tokens
        out["generated_tokens"] += r.generated_tokens
        out["judge_seconds"] += r.seconds
    return out


def group_totals(records: Sequence[CallRecord], key: Callable[[CallRecord], str]
                 ) -> dict[str, dict[str, float]]:
    """``totals`` per group, groups in first-seen order."""
    groups: dict[str, list[CallRecord]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return {k: totals(v) for k, v in groups.items()}


# -- speeds and the compute floor -----------------------------------------------------------
@dataclass
class Speeds:
    """Prompt-processing and generation speed of the judge, tokens per second."""

    pp: float
    tg: float
    pp_tokens: int
    tg_tokens: int


def compute_floor(evaluated_tokens: float, generated_tokens: float, speeds: Speeds) -> float:
    """Seconds the model's own work needs: evaluated / pp + generated / tg."""
    return evaluated_tokens / speeds.pp + generated_tokens / speeds.tg


def measure_speeds(judge: Any, text: str, *, pp_tokens: int = 512, tg_tokens: int = 64,
                   repeats: int = 3) -> Speeds:
    """Median pp speed on a fresh ``pp_tokens`` prompt and tg speed, unconstrained.

    pp: the KV cache is emptied and the prompt evaluated in one go, as a
    judge's first call of a sample is. tg: the judge's own token loop with
    no grammar (its ``logit_bias`` applies, as in the run).
    """
    toks = judge._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    while len(toks) < pp_tokens:
        toks = toks + toks
    toks = toks[:pp_tokens]
    judge.generate(toks[:16], None, 2)  # warm-up: first decode allocates
    pp, tg = [], []
    n_gen = tg_tokens
    for _ in range(repeats):
        judge._llm.reset()
        t0 = time.perf_counter()
        judge.decoder.logits_after(toks)
        pp.append(len(toks) / (time.perf_counter() - t0))
        # The prompt is cached now: generate() evaluates one token, then generates.
        g = judge.generate(toks, None, tg_tokens)
        n_gen = max(1, len(g.tokens))
        tg.append(n_gen / g.seconds)
    judge._llm.reset()
    return Speeds(pp=statistics.median(pp), tg=statistics.median(tg), pp_tokens=len(toks),
                  tg_tokens=n_gen)


# -- a single-slot prefix cache, simulated ------------------------------------------------
def simulate_prefix_reuse(prompts: Sequence[Sequence[int]]) -> list[int]:
    """Tokens a single-slot KV cache would evaluate for ``prompts`` issued in order.

    Same rule as ``LlamaJudge._eval_to``: the longest common prefix with the
    previous prompt is kept, except the last token (its logits are needed).
    """
    out, prev = [], []
    for p in prompts:
        m = min(len(prev), len(p) - 1)
        lcp = 0
        while lcp < m and prev[lcp] == p[lcp]:
            lcp += 1
        out.append(len(p) - lcp)
        prev = list(p)
    return out


def calls_of(rows: Iterable[Mapping[str, Any]]) -> list[CallRecord]:
    """CallRecords back from their JSON form."""
    return [CallRecord(**r) for r in rows]
