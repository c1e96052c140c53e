"""The pairwise gates: ``--fail-if-preferred-base`` and the pairwise judge's fitness.

``--fail-if-preferred-base`` fails (exit 1) exactly when the verdict says "BASE
is preferred": the 95% interval of the preference for NEW, over the judged pairs,
lies entirely below 0.5 - margin (the margin of ``--pairwise-margin`` /
``margin=``, default 0.05; ``0`` gives the strict rule, entirely below 0.5). Why
the margin and not 0.5: the gate and the printed verdict then never disagree (an
interval such as [0.40, 0.48] reads "not shown" and passes, instead of a line
saying one thing and an exit code another), and a preference inside the margin is
by the user's own definition no difference. So it tests one-sided at 2.5%, not
at the 5% of ``--fail-if-worse``: it reads the upper end of the verdict's
two-sided 95% interval, and its line and diff.json (``level``, ``sided``,
``correction``) say so. Its false alarms stay within that level: with no
preference (the versions exchangeable, so the per-pair preferences symmetric
about 0.5) the randomization interval below 100 judged pairs is exact at every
size; with the margin the gate fails less often still. Measured: tests/unit/test_pairwise_equivalence_sim.py and
docs/comparing-versions.md. One gate, so no multiple-comparison rule.

What the gate does not judge:

- every pair identical (no answer changed): nothing to judge, and nothing can be
  preferred: it passes and says so;
- pairs asked but none judged (every pair inconsistent or unjudged): it fails, as
  ``--fail-if-worse`` does with a metric it cannot estimate: never a pass on no
  evidence;
- judged pairs too few for a 95% interval (fewer than 6: no randomization test
  reaches 95%): the gate *could not have failed at this size*. It says so (the
  line ``preferred_base_gate`` returns, printed and written into diff.json) and
  passes, unless ``fail_if_underpowered`` (``--fail-if-underpowered``) turns that
  into a failure. Failing it always would be a false alarm every time with no
  preference at all.

``localeval.testing.assert_not_preferred_base`` raises AssertionError with the
same words. With ``--pairwise``, ``--fail-if-unfit-judge`` also fails when the
pairwise judge check did not say fit (or did not run).
"""

from __future__ import annotations

from typing import Any

from localeval.pairwise.equivalence import BASE, NO_ESTIMATE, NOT_SHOWN
from localeval.pairwise.summary import PairwiseResult

__all__ = ["preferred_base_failure", "preferred_base_gate", "unfit_pairwise_failure"]

#: the statuses of ``preferred_base_gate``
FAILED, PASSED, COULD_NOT_FAIL, NOTHING = "failed", "passed", "could not fail", "nothing to judge"


#: The gate's level, one-sided: the upper end of the verdict's two-sided 95% interval
#: (``--fail-if-worse`` tests one-sided at 5%; this gate agrees with its printed verdict).
LEVEL = 0.025
SIDED = "one-sided"
CORRECTION = "one gate: no correction"


def _rule(margin: float) -> str:
    return (f"fails when the 95% interval of the preference for NEW lies entirely below "
            f"{0.5 - margin:.2f} (0.5 - margin {margin:.2g}): one-sided, at the 2.5% level "
            "(the level of the printed verdict's 'BASE is preferred'); "
            f"{CORRECTION}")


def _stated(margin: float) -> str:
    """The level and sidedness every line of the gate ends with."""
    return (f"gate: {SIDED}, {LEVEL:.1%}: the 95% interval lies below {0.5 - margin:.2f}; "
            f"{CORRECTION}")


def preferred_base_gate(r: PairwiseResult, *, fail_if_underpowered: bool = False
                        ) -> dict[str, Any]:
    """The gate's outcome as diff.json writes it: ``status`` (failed, passed, could not
    fail, nothing to judge), ``line`` (what it says, passed or failed), the rule and the
    margin."""
    rate, m = r.rate, r.margin
    status, line = PASSED, ""
    if r.pairs and r.identical == len(r.pairs):
        status = NOTHING
        line = (f"pairwise: nothing to judge: every answer is the same in both versions "
                f"({r.identical}): BASE cannot be preferred")
    elif r.verdict == NO_ESTIMATE:
        status = FAILED
        line = (f"pairwise: nothing could be judged ({rate.reason}): no evidence that BASE "
                "is not preferred")
    elif r.verdict == NOT_SHOWN and rate.ci is None:
        status = FAILED if fail_if_underpowered else COULD_NOT_FAIL
        line = (f"pairwise: the gate could not have failed at this size: the preference for "
                f"NEW {rate.value:.2f} has no interval ({rate.reason})"
                + ("" if fail_if_underpowered else
                   "; --fail-if-underpowered makes this a failure"))
    elif r.verdict == BASE:
        base = r.preferred_base()
        shown = ", ".join(p.base_id for p in base[:10]) + (" ..." if len(base) > 10 else "")
        status = FAILED
        line = (f"pairwise: BASE is preferred: the preference for NEW {rate.value:.2f} "
                f"[{rate.low:.2f}, {rate.high:.2f}] lies entirely below {0.5 - m:.2f} "
                f"(0.5 - margin {m:.2g}; {rate.n} judged pairs, {r.mode} verdicts)"
                + (f"; BASE preferred on {len(base)}: {shown}" if base else ""))
    else:
        line = (f"pairwise: BASE is not shown preferred: the preference for NEW "
                f"{rate.value:.2f} [{rate.low:.2f}, {rate.high:.2f}] does not lie entirely "
                f"below {0.5 - m:.2f} (0.5 - margin {m:.2g}; {rate.n} judged pairs)")
    if status != NOTHING:
        line += f" [{_stated(m)}]"
    return {"gate": "fail-if-preferred-base", "status": status, "line": line,
            "margin": m, "level": LEVEL, "sided": SIDED, "correction": CORRECTION,
            "rule": _rule(m)}


def preferred_base_failure(r: PairwiseResult, *, fail_if_underpowered: bool = False
                           ) -> str | None:
    """Why the base-preferred gate fails, or None when it passes (``preferred_base_gate``)."""
    gate = preferred_base_gate(r, fail_if_underpowered=fail_if_underpowered)
    return gate["line"] if gate["status"] == FAILED else None


def unfit_pairwise_failure(r: PairwiseResult) -> str | None:
    """Why the pairwise judge fails ``--fail-if-unfit-judge``, or None when it is fit."""
    if r.judge_check is None:
        return "pairwise: the pairwise judge was not checked (--no-judge-check)"
    if not r.judge_check.fit:
        return r.judge_check.summary_line()  # "pairwise judge check: UNFIT: ..."
    return None
