"""The judge check: run a judge on the known-answer probes and say whether it is fit.

A judge's scores are evidence only if the judge can tell a clearly faithful
answer from an invented one, a relevant context from an unrelated one, and
so on. Each metric is run on both variants of every probe pair of its kind;
the pair passes when the good variant scores strictly better (a tie, or an
unscored variant, is a miss). The pass rate per metric gives its verdict:

- ``fit``: at least 80% of pairs ordered right;
- ``doubtful``: 60-80%;
- ``unfit``: below 60% (a judge guessing at random passes about 40%, a judge
  that gives everything the same score, or copies its examples, passes none).

The whole judge is as fit as its worst checked metric. Only the judge is
tested: answer_correctness is checked on its judge part (factuality, weights
1:0), since its embedding share would order the pairs right with any judge,
and a ``:threshold=`` wrapper is checked on the raw score. The check runs at
temperature 0 in its own ``Judging`` (own memo, own usage), so it changes no
score of a run; each metric's result is cached (judge and embedder
fingerprints, probe set, prompt versions, metric, verdict mode), so a judge
is checked once, not every run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from localeval.cache import judge_label, text_key
from localeval.judge import Judge, Usage
from localeval.judge_check.probes import probes_for, probes_version
from localeval.metrics import Judging, Metric, parse_metrics, score_one
from localeval.types import Score

__all__ = ["MetricCheck", "JudgeCheckResult", "run_judge_check", "checkable", "rate_verdict",
           "FIT", "DOUBTFUL", "QUICK_PAIRS"]

FIT = 0.8
#: Pairs per metric in the quick check every run takes (``localeval judge check``: all 10).
QUICK_PAIRS = 4
DOUBTFUL = 0.6
#: Bumped when the rules above change, so cached results are not reused.
CHECK_VERSION = "2"
_ORDER = {"fit": 0, "doubtful": 1, "unfit": 2}
Progress = Callable[[int, int, Usage], None]


def rate_verdict(rate: float) -> str:
    """The verdict for a pass rate."""
    return "fit" if rate >= FIT else "doubtful" if rate >= DOUBTFUL else "unfit"


@dataclass
class MetricCheck:
    """One metric's result on its probe pairs."""

    metric: str
    pairs: int = 0
    passed: int = 0
    ties: int = 0
    unscored: int = 0
    verdict: str = "unfit"
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.pairs if self.pairs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "pass_rate": round(self.pass_rate, 4)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MetricCheck":
        return cls(d["metric"], d["pairs"], d["passed"], d.get("ties", 0), d["unscored"],
                   d["verdict"], list(d.get("misses") or []))


@dataclass
class JudgeCheckResult:
    """The judge check of one judge over the metrics a run uses."""

    judge: str
    fingerprint: str
    probes: str
    metrics: dict[str, MetricCheck] = field(default_factory=dict)
    #: Metrics not checked, with the reason (no probes, no embedder...).
    skipped: dict[str, str] = field(default_factory=dict)
    #: Judge usage of this check only (cache hits included), never mixed into a run's.
    usage: dict[str, Any] = field(default_factory=dict)
    copied_calls: int = 0
    #: The reasons mode the probes were asked in (``--reasons``).
    reasons: str = "full"

    @property
    def verdict(self) -> str:
        if not self.metrics:
            return "unchecked"
        return max((m.verdict for m in self.metrics.values()), key=_ORDER.__getitem__)

    @property
    def fit(self) -> bool:
        return self.verdict == "fit"

    @property
    def pass_rate(self) -> float:
        pairs = sum(m.pairs for m in self.metrics.values())
        return sum(m.passed for m in self.metrics.values()) / pairs if pairs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge, "fingerprint": self.fingerprint, "probes": self.probes,
            "verdict": self.verdict, "pass_rate": round(self.pass_rate, 4),
            "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
            "skipped": dict(self.skipped), "usage": dict(self.usage),
            "copied_calls": self.copied_calls, "line": self.summary_line(),
            **({"reasons": self.reasons} if self.reasons != "full" else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "JudgeCheckResult":
        metrics = {k: MetricCheck.from_dict(v) for k, v in d["metrics"].items()}
        return cls(d["judge"], d["fingerprint"], d["probes"], metrics, dict(d.get("skipped") or {}),
                   dict(d.get("usage") or {}), d.get("copied_calls", 0),
                   str(d.get("reasons", "full")))

    def summary_line(self) -> str:
        """One line for the terminal and the reports."""
        if not self.metrics:
            why = "; ".join(f"{k}: {v}" for k, v in self.skipped.items()) or "no judge metrics"
            return f"judge check: nothing checked ({why})"
        parts = ", ".join(f"{k} {m.passed}/{m.pairs}" for k, m in self.metrics.items())
        mode = "" if self.reasons == "full" else f" (--reasons {self.reasons})"
        if self.verdict == "fit":
            return f"judge check{mode}: fit ({parts} known-answer pairs ordered right)"
        return (f"judge check{mode}: {self.verdict.upper()}: this judge does not reliably tell "
                f"good from bad on known-answer pairs ({parts}); its scores are not evidence")


def _judge_part(m: Metric) -> Metric:
    """The metric as the check runs it: without a threshold, and without its embedding share."""
    inner = getattr(m, "inner", None)
    if isinstance(inner, Metric):  # Thresholded: the judge orders raw scores
        m = inner
    names = {f.name for f in dataclasses.fields(m)} if dataclasses.is_dataclass(m) else set()
    if "weights" in names and len(m.weights) == 2 and m.weights[1]:
        m = dataclasses.replace(m, weights=(1.0, 0.0))
    return m


def checkable(metrics: Sequence[Metric | str], *, embedder: bool = True
              ) -> tuple[dict[str, Metric], dict[str, str]]:
    """The metrics the check runs (by the key it reports) and those it skips, with why."""
    chosen = [x for m in metrics for x in (parse_metrics(m) if isinstance(m, str) else [m])]
    run: dict[str, Metric] = {}
    skipped: dict[str, str] = {}
    for m in chosen:
        if not m.uses_judge:
            continue
        key = (getattr(m, "inner", None) or m).key
        part = _judge_part(m)
        if not probes_for(part.name):
            skipped[key] = "no probe pairs for this metric"
        elif part.uses_embedder and not embedder:
            skipped[key] = "needs an embedding model, and none is loaded"
        else:
            run.setdefault(key, part)
    return run, skipped


def _prompts_hash() -> str:
    import localeval.prompts as prompting

    return text_key(*(f"{s}={prompting.prompt_version(s)}" for s in prompting.steps()))


def _cache_key(judge: Judge, embedder: Any, metric: Metric, verdicts: str,
               pairs: int | None, reasons: str = "full") -> str:
    from localeval.version import __version__

    embed = getattr(embedder, "fingerprint", "") if metric.uses_embedder else ""
    # the reasons mode changes a reasoned metric's prompts and so, maybe, its fitness
    mode = [reasons] if reasons != "full" and metric.gives_reasons else []
    return text_key("judge_check", CHECK_VERSION, __version__, probes_version(), _prompts_hash(),
                    getattr(judge, "fingerprint", ""), embed, metric.key, verdicts,
                    "all" if pairs is None else str(pairs), mode)


def _ordered(m: Metric, good: Score, bad: Score) -> bool:
    if good.value is None or bad.value is None:
        return False
    return good.value < bad.value if m.lower_is_better else good.value > bad.value


def run_judge_check(judge: Judge, metrics: Sequence[Metric | str], *, embedder: Any = None,
                verdicts: str = "hard", cache: Any = None,
                on_progress: Progress | None = None, pairs: int | None = None,
                reasons: str = "full") -> JudgeCheckResult:
    """Run every judge metric in ``metrics`` that the probes cover on ``judge``.

    ``embedder`` serves the metrics that also embed (answer_relevancy); without
    one they are skipped. ``cache`` (a :class:`localeval.cache.Cache`) stores each
    metric's result; ``on_progress(done, total, usage)`` is told after each
    probe sample (two per pair) with the check's usage so far. ``pairs`` caps
    the pairs per metric (languages in turn; None: all ten), for the quick
    check every run takes. ``reasons``: the run's reasons mode (``--reasons``), so
    the judge is checked as the run will ask it: a judge fit with reasons may not
    be without them.
    """
    run, skipped = checkable(metrics, embedder=embedder is not None)
    ctx = Judging(judge=judge, embedder=embedder, lang="auto", seed=0, temperature=0.0,
                  verdicts=verdicts, reasons=reasons)
    result = JudgeCheckResult(getattr(judge, "name", "?"), getattr(judge, "fingerprint", "?"),
                              probes_version(), skipped=skipped, reasons=reasons)
    total = 2 * sum(len(probes_for(m.name, pairs)) for m in run.values())
    done = 0
    for key, m in run.items():
        ckey = _cache_key(judge, embedder, m, verdicts, pairs, reasons)
        hit = cache.get_call(ckey) if cache is not None else None
        if hit is not None:
            result.metrics[key] = MetricCheck.from_dict({**hit, "metric": key})
            done += 2 * len(probes_for(m.name, pairs))
            if on_progress:
                on_progress(done, total, ctx.usage)
            continue
        mc = MetricCheck(key)
        for probe in probes_for(m.name, pairs):
            pair = []
            for sample in (probe.good, probe.bad):
                ctx.begin_sample()
                pair.append(score_one(m, sample, ctx))
                done += 1
                if on_progress:
                    on_progress(done, total, ctx.usage)
            good, bad = pair
            mc.pairs += 1
            if _ordered(m, good, bad):
                mc.passed += 1
                continue
            mc.unscored += good.value is None or bad.value is None
            mc.ties += good.value is not None and good.value == bad.value
            mc.misses.append({"probe": probe.id, "good": good.value, "bad": bad.value,
                              "reason": good.reason or bad.reason})
        mc.verdict = rate_verdict(mc.pass_rate)
        result.metrics[key] = mc
        if cache is not None:
            cache.put_call(ckey, judge_label(result.judge, result.fingerprint), "judge_check",
                           mc.to_dict())
    result.usage = ctx.usage.to_dict()
    result.copied_calls = int(getattr(ctx.usage, "copied_calls", 0))
    return result

