"""Gate a change in your own test suite: the new version may not be worse than the base.

    from localeval.testing import assert_not_worse

    def test_new_retriever_is_not_worse():
        assert_not_worse("eval/runs/main", "eval/runs/branch",
                         {"faithfulness": 0.02, "context_recall": 0.0})

The same rule as ``localeval diff --fail-if-worse METRIC=MARGIN``: a metric
fails when it is shown worse by more than MARGIN (a one-sided test at 5%, Holm
over the metrics named when there are several), when it has no pair scored on
both sides, or when pairs are unscored on either side beyond ``allow_unscored``.
``fail_if_underpowered=True`` is ``--fail-if-underpowered`` (fail where the
test could not have failed at this size),
``fail_if_unfit_judge=True`` is ``--fail-if-unfit-judge``.

``assert_non_inferior`` is ``--require-not-worse METRIC=MARGIN``: it passes
only when every metric is shown to lose less than its margin (pass means
evidence of no regression)::

    from localeval.testing import assert_non_inferior

    def test_new_retriever_is_shown_not_worse():
        assert_non_inferior("eval/runs/main", "eval/runs/branch", {"hit_rate@3": 0.05})

``assert_not_preferred_base`` is ``localeval diff --pairwise
--fail-if-preferred-base``: the judge, asked in both orders, may not prefer
the base beyond the interval and the margin (``margin=``, default 0.05: the
preference for NEW's interval over the judged pairs entirely below 0.45 fails),
and a comparison where nothing could be judged fails::

    from localeval.testing import assert_not_preferred_base

    def test_new_prompt_is_not_less_preferred():
        assert_not_preferred_base("eval/runs/main", "eval/runs/branch", judge="demo",
                                  base_data="eval/data.jsonl", new_data="eval/data.jsonl")
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

__all__ = ["assert_not_worse", "assert_non_inferior", "assert_not_preferred_base"]


def assert_not_worse(base: Any, new: Any, margins: Mapping[str, float], *,
                     allow_unscored: Any = 0, fail_if_unfit_judge: bool = False,
                     fail_if_underpowered: bool = False, **diff_kwargs: Any) -> Any:
    """Fail (AssertionError, one line per metric) when ``new`` is worse than ``base``.

    ``base`` / ``new``: run folders, results files, RAGAS/deepeval exports or
    ResultSets; ``margins``: {metric: allowed loss} (``"all"`` for every metric);
    ``diff_kwargs`` go to :func:`localeval.versions.diff_runs` (``seed``,
    ``n_resamples``, ``base_data``...). Returns the VersionDiff so a test can look further.

    A margin must be a finite number >= 0 (``UsageError`` otherwise, before any
    work: an infinite or NaN margin could never fail, a text is not a number).
    ``allow_unscored``: the pairs unscored on either side a margin tolerates, as
    ``assert_scores`` takes it (a count, a share, ``"all"`` or ``True``, or a
    mapping metric -> one of these; default none). ``fail_if_unfit_judge``:
    fail when either side's judge did not pass its judge check and a judged
    metric is compared. ``fail_if_underpowered``: fail where a gate could not
    have failed at this size (too few changed pairs for its one-sided test).
    """
    from localeval.versions import worse_failures

    return _diff_gate("assert_not_worse", base, new, margins, allow_unscored,
                      fail_if_unfit_judge, diff_kwargs,
                      lambda d, m, option, allow: worse_failures(d, m, option, allow,
                                                                 fail_if_underpowered))


def assert_non_inferior(base: Any, new: Any, margins: Mapping[str, float], *,
                        allow_unscored: Any = 0, fail_if_unfit_judge: bool = False,
                        **diff_kwargs: Any) -> Any:
    """Fail unless ``new`` is shown to lose less than each margin: ``localeval diff
    --require-not-worse``. A one-sided test at 5% per metric, no correction (every
    metric must be shown, so passing a metric truly worse by its margin stays at
    most 5% likely); too few pairs to show it fails. Arguments as
    :func:`assert_not_worse`; returns the VersionDiff."""
    from localeval.versions import not_worse_failures

    return _diff_gate("assert_non_inferior", base, new, margins, allow_unscored,
                      fail_if_unfit_judge, diff_kwargs, not_worse_failures)


def _diff_gate(option: str, base: Any, new: Any, margins: Mapping[str, float],
               allow_unscored: Any, fail_if_unfit_judge: bool, diff_kwargs: Mapping[str, Any],
               failures_of: Callable[[Any, Any, str, Any], list[str]]) -> Any:
    """The two metric gates' common course: margins and allowance checked before any
    work, the diff, ``failures_of``'s lines (and the unfit judge's), one AssertionError."""
    from localeval.report import unscored_policy
    from localeval.versions import check_margins, diff_runs, unfit_judge_failures

    checked = check_margins(margins, option)
    unscored_policy(allow_unscored)  # a bad allowance fails before any work
    d = diff_runs(base, new, **diff_kwargs)
    failures = failures_of(d, checked, option, allow_unscored)
    if fail_if_unfit_judge:
        failures += unfit_judge_failures(d)
    if failures:
        raise AssertionError(f"{option} failed (new against base):\n"
                             + "\n".join(f"  {f}" for f in failures)
                             + f"\n  ({d.pairing_text()})")
    return d


def assert_not_preferred_base(base: Any, new: Any, *, judge: Any,
                              fail_if_unfit_judge: bool = False,
                              fail_if_underpowered: bool = False,
                              **pairwise_kwargs: Any) -> Any:
    """Fail (AssertionError) when the judge prefers ``base`` to ``new`` beyond the interval.

    The rule and the words of ``localeval diff --pairwise --fail-if-preferred-base``
    (``pairwise.preferred_base_gate``): the 95% interval of the preference for NEW,
    over the judged pairs (identical answers are not judged), lies entirely below
    0.5 - ``margin`` (a keyword of ``compare_pairwise``, default 0.05; 0 for the
    strict rule): one-sided at 2.5%; or nothing could be judged. Fewer judged pairs
    than an interval needs (6) could not fail: it passes, unless
    ``fail_if_underpowered``. ``fail_if_unfit_judge``: also fail when the pairwise
    judge check did not say fit. ``pairwise_kwargs`` go to
    :func:`localeval.compare_pairwise` (``base_data``, ``criterion``, ``verdicts``,
    ``margin``, ``cache``...). Returns the PairwiseResult so a test can look further.
    """
    from localeval.pairwise import compare_pairwise, preferred_base_failure, unfit_pairwise_failure

    r = compare_pairwise(base, new, judge=judge, **pairwise_kwargs)
    failures = [preferred_base_failure(r, fail_if_underpowered=fail_if_underpowered),
                unfit_pairwise_failure(r) if fail_if_unfit_judge else None]
    shown = [f for f in failures if f]
    if shown:
        raise AssertionError("assert_not_preferred_base failed (new against base):\n"
                             + "\n".join(f"  {f}" for f in shown)
                             + f"\n  ({r.sentence()})")
    return r
