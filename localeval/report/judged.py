"""Which of a summary's metrics a judge scored, and what that does to how they read.

A judged metric's 95% interval is a bootstrap over the judge's own scores: it says
how sure we are of the judge's average on these samples, not how close that average
is to the truth (a judge scoring 1.000 on every sample gets ``[1.000, 1.000]``).
Every report says so beside the intervals (``CI_NOTE``); labels give an interval of
the truth (``run --labels``, docs/calibrated-estimates.md).

A judge that failed its judge check (``summary["judge_check"]``) may still score
1.0 everywhere; its metrics are then not coloured as good or bad
(``judge_unfit``), and the reports mark them.

A summary entry may say ``"judged": true/false`` itself; otherwise the metric's
key is looked up in the registry (a metric the registry does not know is a
user-defined judged metric, AspectCritic and the like, when the run had a judge).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["CI_NOTE", "CI_MARK", "judged_keys", "judge_unfit", "ci_note"]

#: The mark beside a judged metric's interval, explained by ``CI_NOTE``.
CI_MARK = "*"
#: What a judged metric's interval is (the footnote under every summary table).
CI_NOTE = ("* 95% CI of the judge's own average (not of the truth; labels give that: "
           "docs/calibrated-estimates.md)")

#: Judge check verdicts that say nothing against the judge.
_PASSED = (None, "fit", "unchecked", "skipped")


def _head(key: str) -> str:
    """The metric name in a key: ``answer_correctness:weights=...`` -> ``answer_correctness``."""
    return key.split(":", 1)[0].split("@", 1)[0].strip()


def _had_judge(summary: Mapping[str, Any]) -> bool:
    sig = summary.get("signature") or {}
    return bool(summary.get("judge_health") or sig.get("judge")
                or (summary.get("usage") or {}).get("calls"))


def judged_keys(summary: Mapping[str, Any]) -> set[str]:
    """The keys of ``summary["metrics"]`` whose scores come from a judge."""
    metrics = summary.get("metrics") or {}
    if not metrics:
        return set()
    from localeval.metrics import registry

    known = registry()
    had_judge = _had_judge(summary)
    out = set()
    for key, entry in metrics.items():
        flag = entry.get("judged") if isinstance(entry, Mapping) else None
        if isinstance(flag, bool):
            judged = flag
        else:
            cls = known.get(_head(str(key)))
            judged = bool(cls.uses_judge) if cls is not None else had_judge
        if judged:
            out.add(key)
    return out


def judge_unfit(summary: Mapping[str, Any]) -> str | None:
    """The marker for a judge that failed its judge check ("judge unfit", "judge doubtful",
    "judge check error"), or None when it passed or took none."""
    verdict = (summary.get("judge_check") or {}).get("verdict")
    if verdict in _PASSED:
        return None
    return "judge check error" if verdict == "error" else f"judge {verdict}"


def ci_note(summary: Mapping[str, Any]) -> str:
    """``CI_NOTE`` when the summary has a judged metric (its interval is marked), else ""."""
    return CI_NOTE if judged_keys(summary) else ""
