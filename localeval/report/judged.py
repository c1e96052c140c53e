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
Both rules are the results layer's (``results.RunRecord``): every view of a run
reads judged-ness and fitness there.
"""

from __future__ import annotations

from typing import Any, Mapping

from localeval.results import JudgeFitness, record_of

__all__ = ["CI_NOTE", "CI_MARK", "judged_keys", "judge_unfit", "ci_note"]

#: The mark beside a judged metric's interval, explained by ``CI_NOTE``.
CI_MARK = "*"
#: What a judged metric's interval is (the footnote under every summary table).
CI_NOTE = ("* 95% CI of the judge's own average (not of the truth; labels give that: "
           "docs/calibrated-estimates.md)")


def judged_keys(summary: Mapping[str, Any]) -> set[str]:
    """The keys of ``summary["metrics"]`` whose scores come from a judge (the run's record
    decides, as for every view of a run)."""
    if not summary.get("metrics"):
        return set()
    return set(record_of(summary).judged)


def judge_unfit(summary: Mapping[str, Any]) -> str | None:
    """The marker for a judge that failed its judge check ("judge unfit", "judge doubtful",
    "judge check error"), or None when it passed or took none."""
    if not isinstance(summary.get("metrics"), Mapping):  # not a run's summary: its check alone
        return JudgeFitness.of_sections(summary.get("judge_check"),
                                        summary.get("judge_health")).marker
    return record_of(summary).fitness.marker


def ci_note(summary: Mapping[str, Any]) -> str:
    """``CI_NOTE`` when the summary has a judged metric (its interval is marked), else ""."""
    return CI_NOTE if judged_keys(summary) else ""
