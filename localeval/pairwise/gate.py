"""The pairwise gates: ``--fail-if-preferred-base`` and the pairwise judge's fitness.

``--fail-if-preferred-base`` fails (exit 1) when the judge prefers BASE beyond
the interval: the 95% interval of the preference for NEW lies entirely below
0.5. An interval that merely reaches below 0.5 does not fail it (no preference
shown is not a loss shown). As ``--fail-if-worse`` does with a metric it cannot
estimate, it also fails when there is no interval at all (nothing could be
judged: every pair inconsistent or unjudged; or one pair only), and says so:
never a pass on no evidence. ``localeval.testing.assert_not_preferred_base``
raises AssertionError with the same words.

With ``--pairwise``, ``--fail-if-unfit-judge`` also fails when the pairwise
judge check did not say fit (or did not run).
"""

from __future__ import annotations

from localeval.pairwise.summary import PairwiseResult

__all__ = ["preferred_base_failure", "unfit_pairwise_failure"]


def preferred_base_failure(r: PairwiseResult) -> str | None:
    """Why the base-preferred gate fails, or None when it passes."""
    rate = r.rate
    if rate.value is None:
        return (f"pairwise: nothing could be judged ({rate.reason}): no evidence that BASE "
                "is not preferred")
    if rate.low is None or rate.high is None:
        return (f"pairwise: the preference for NEW {rate.value:.2f} has no interval "
                f"({rate.reason}): no evidence that BASE is not preferred")
    if rate.high < 0.5:
        base = r.preferred_base()
        shown = ", ".join(p.base_id for p in base[:10]) + (" ..." if len(base) > 10 else "")
        return (f"pairwise: BASE is preferred: the preference for NEW {rate.value:.2f} "
                f"[{rate.low:.2f}, {rate.high:.2f}] lies entirely below 0.5 ({rate.n} pairs, "
                f"{r.mode} verdicts)" + (f"; BASE preferred on {len(base)}: {shown}"
                                          if base else ""))
    return None


def unfit_pairwise_failure(r: PairwiseResult) -> str | None:
    """Why the pairwise judge fails ``--fail-if-unfit-judge``, or None when it is fit."""
    if r.judge_check is None:
        return "pairwise: the pairwise judge was not checked (--no-judge-check)"
    if not r.judge_check.fit:
        return r.judge_check.summary_line()  # "pairwise judge check: UNFIT: ..."
    return None
