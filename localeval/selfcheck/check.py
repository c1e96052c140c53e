"""``localeval judge check``: run a judge on the known-answer probes and say if it is fit.

A judge's scores are evidence only if the judge can tell a clearly faithful
answer from an invented one, a relevant context from an unrelated one, and
so on. Each metric is run on both variants of every probe pair of its kind;
the pair passes when the good variant scores strictly better (a tie, or an
unscored variant, is a miss). The pass rate per metric gives its verdict:

- ``fit``: at least 80% of pairs ordered right;
- ``doubtful``: 60-80%;
- ``unfit``: below 60% (a judge guessing at random passes about 40-50%,
  a judge that gives everything the same score passes none).

The whole judge is as fit as its worst checked metric. The result is cached
(keyed by judge fingerprint, probe set, prompt versions, metric and verdict
mode), so a run checks a judge once, not every time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from localeval.cache import text_key
from localeval.metrics import Context, Metric, get_metric, score_one
from localeval.selfcheck.probes import LOWER_IS_BETTER, probes_for, probes_version

__all__ = ["MetricCheck", "CheckResult", "check_judge", "FIT", "DOUBTFUL"]

FIT = 0.8
DOUBTFUL = 0.6
#: Bumped when the rules above change, so cached results are not reused.
CHECK_VERSION = "1"
_ORDER = {"fit": 0, "doubtful": 1, "unfit": 2}


def rate_verdict(rate: float) -> str:
    """The verdict for a pass rate."""
    return "fit" if rate >= FIT else "doubtful" if rate >= DOUBTFUL else "unfit"


@dataclass
class MetricCheck:
    """One metric's result on its probe pairs."""

    metric: str
    pairs: int
    passed: int
    unscored: int
    verdict: str
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.pairs if self.pairs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "pass_rate": round(self.pass_rate, 4)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MetricCheck":
        return cls(d["metric"], d["pairs"], d["passed"], d["unscored"], d["verdict"],
                   list(d.get("misses") or []))


@dataclass
class CheckResult:
    """The self-test of one judge over the metrics a run uses."""

    judge: str
    fingerprint: str
    probes: str
    metrics: dict[str, MetricCheck]
    copied_calls: int = 0
    calls: int = 0

    @property
    def verdict(self) -> str:
        if not self.metrics:
            return "unchecked"
        return max((m.verdict for m in self.metrics.values()), key=_ORDER.__getitem__)

    @property
    def fit(self) -> bool:
        return self.verdict == "fit"

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge, "fingerprint": self.fingerprint, "probes": self.probes,
            "verdict": self.verdict, "calls": self.calls, "copied_calls": self.copied_calls,
            "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CheckResult":
        metrics = {k: MetricCheck.from_dict(v) for k, v in d["metrics"].items()}
        return cls(d["judge"], d["fingerprint"], d["probes"], metrics,
                   d.get("copied_calls", 0), d.get("calls", 0))

    def summary_line(self) -> str:
        """One line for the terminal and the reports."""
        parts = ", ".join(f"{k} {m.passed}/{m.pairs}" for k, m in self.metrics.items())
        if self.verdict == "fit":
            return f"judge self-test: fit ({parts} known-answer pairs ordered right)"
        return (f"judge self-test: {self.verdict.upper()}: this judge does not reliably tell "
                f"good from bad on known-answer pairs ({parts}); its scores are not evidence")


def _cache_key(ctx: Context, metric: Metric) -> str:
    judge = ctx.judge
    embed = getattr(ctx.embedder, "fingerprint", "") if ctx.embedder is not None else ""
    return text_key("selfcheck", CHECK_VERSION, probes_version(), getattr(judge, "fingerprint", ""),
                    embed, metric.key, ctx.verdicts, json.dumps(ctx.prompt_versions, sort_keys=True))


def check_judge(ctx: Context, metrics: Sequence[Metric | str], *, cache: Any = None,
                on_pair: Callable[[int, int], None] | None = None) -> CheckResult:
    """Run every judge metric in ``metrics`` that the probes cover, on ``ctx``'s judge.

    ``cache`` (a :class:`localeval.cache.Cache`) stores each metric's result;
    ``on_pair(done, total)`` reports progress. Metrics without probes (or that
    use no judge) are skipped.
    """
    chosen = [get_metric(m) if isinstance(m, str) else m for m in metrics]
    chosen = [m for m in chosen if m.uses_judge and probes_for(m.name)]
    total = sum(len(probes_for(m.name)) for m in chosen)
    done = 0
    judge = ctx.judge
    result = CheckResult(getattr(judge, "name", "?"), getattr(judge, "fingerprint", "?"),
                         probes_version(), {})
    for m in chosen:
        key = _cache_key(ctx, m)
        hit = cache.get_call(key) if cache is not None else None
        if hit is not None:
            result.metrics[m.key] = MetricCheck.from_dict(hit)
            done += len(probes_for(m.name))
            if on_pair:
                on_pair(done, total)
            continue
        calls0, copied0 = ctx.usage.calls, ctx.checks.get("copied", 0)
        mc = MetricCheck(m.key, 0, 0, 0, "unfit")
        for probe in probes_for(m.name):
            ctx.begin_sample()
            good = score_one(m, probe.good, ctx)
            ctx.begin_sample()
            bad = score_one(m, probe.bad, ctx)
            mc.pairs += 1
            if good.value is None or bad.value is None:
                mc.unscored += 1
                ok = False
            elif m.name in LOWER_IS_BETTER:
                ok = good.value < bad.value
            else:
                ok = good.value > bad.value
            if ok:
                mc.passed += 1
            else:
                mc.misses.append({"probe": probe.id, "good": good.value, "bad": bad.value,
                                  "reason": good.reason or bad.reason})
            done += 1
            if on_pair:
                on_pair(done, total)
        mc.verdict = rate_verdict(mc.pass_rate)
        result.metrics[m.key] = mc
        result.calls += ctx.usage.calls - calls0
        result.copied_calls += ctx.checks.get("copied", 0) - copied0
        if cache is not None:
            cache.put_call(key, result.fingerprint, "selfcheck", mc.to_dict())
    return result
