"""Scoring away from the driver: the set-up shared by worker processes and Ray actors.

A worker cannot be handed the driver's judge object: it loads its own from
a ``WorkerSpec`` (the judge and embedder as paths, names or URLs, the run's
settings and metrics), scores whole samples with a ``SampleScorer`` and sends
back a ``ScoredSample``, which the driver merges into its own ``Judging`` in
input order, so the summary equals a single-process run's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

from localeval.errors import UsageError
from localeval.judge import Usage
from localeval.metrics import Accounting, Judging, Metric
from localeval.run.sample_scoring import score_sample
from localeval.run.wiring import build_embedder, build_judge
from localeval.types import Sample, Score

__all__ = ["JudgeInfo", "ScoredSample", "WorkerSpec", "SampleScorer"]


@dataclass(frozen=True)
class JudgeInfo:
    """Name and fingerprint of the workers' judge: the driver loads none but signs the run with it."""

    name: str | None
    fingerprint: str | None


@dataclass
class ScoredSample:
    """One sample's model scores and what scoring it cost, as a worker sends them back."""

    scores: dict[str, Score]
    usage: Usage
    prompt_versions: dict[str, str]
    judge: JudgeInfo

    def merge_into(self, ctx: Judging) -> dict[str, Score]:
        """Add this sample's usage and prompt versions to the driver's ``ctx``; return the scores."""
        ctx.accounting.merge(self.usage, self.prompt_versions, judge=self.judge)
        return self.scores


@dataclass
class WorkerSpec:
    """Everything a worker needs to load its models and score like the driver would."""

    judge: Any
    judge_options: dict[str, Any] | None
    embedder: Any
    device: str
    metrics: list[Metric]
    repeats: int
    ctx_kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def for_run(cls, judge: Any, judge_options: dict[str, Any] | None, embedder: Any,
                device: str, metrics: Sequence[Metric], repeats: int, ctx: Judging, *,
                flag: str, forms: str) -> "WorkerSpec":
        """The spec for workers started by ``flag``; UsageError when a model is an object.

        ``forms`` says what the flag accepts instead ("a path or name").
        """
        for spec, what in ((judge, "judge"), (embedder, "embedder")):
            if spec not in (None, False) and not isinstance(spec, (str, os.PathLike)):
                raise UsageError(f"{flag} needs the {what} as {forms}, not an object")
        return cls(judge=judge if judge in (None, False) else str(judge),
                   judge_options=judge_options,
                   embedder=embedder if embedder in (None, False) else str(embedder),
                   device=device, metrics=list(metrics), repeats=repeats,
                   ctx_kwargs={"lang": ctx.lang, "seed": ctx.seed,
                               "temperature": ctx.temperature, "verdicts": ctx.verdicts,
                               "reasons": ctx.reasons})


class SampleScorer:
    """A worker's models and context, loaded once; scores one whole sample per call."""

    def __init__(self, spec: WorkerSpec, cache: Any) -> None:
        # Several scoring processes share the cores, each with its own llama.cpp
        # OpenMP threads: threads that spin while idle would take the cores the
        # working ones need, so workers wait passively (scripts/bench_openmp.py).
        # libgomp reads this when llama_cpp is first imported, which happens
        # below; a user's setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        judge = (build_judge(spec.judge, cache, spec.judge_options)
                 if any(m.uses_judge for m in spec.metrics) else None)
        embedder = (build_embedder(spec.embedder, cache, spec.device)
                    if any(m.uses_embedder for m in spec.metrics) else None)
        self.ctx = Judging(judge=judge, embedder=embedder, **spec.ctx_kwargs)
        self.metrics, self.repeats = spec.metrics, spec.repeats

    def score(self, s: Sample) -> ScoredSample:
        door = self.ctx.for_sample(accounting=Accounting())  # this sample's cost alone
        scores = score_sample(s, self.metrics, door, self.repeats)
        j = door.judge
        return ScoredSample(scores, door.usage, dict(door.prompt_versions),
                            JudgeInfo(getattr(j, "name", None), getattr(j, "fingerprint", None)))
