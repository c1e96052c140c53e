"""Gate a change in your own test suite: the new version may not be worse than the base.

    from localeval.testing import assert_not_worse

    def test_new_retriever_is_not_worse():
        assert_not_worse("eval/runs/main", "eval/runs/branch",
                         {"faithfulness": 0.02, "context_recall": 0.0})

The same rule as ``localeval diff --fail-if-worse METRIC=MARGIN``: a metric
fails when the 95% interval of new - base lies entirely below -MARGIN, when
it has none (fewer than 6 pairs, nothing scored), or when pairs are unscored
on either side beyond ``allow_unscored``: never a pass on no evidence.
``fail_if_unfit_judge=True`` is ``--fail-if-unfit-judge``.

``assert_not_preferred_base`` is ``localeval diff --pairwise
--fail-if-preferred-base``: the judge, asked in both orders, may not prefer
the base beyond the interval, and a comparison with no interval fails::

    from localeval.testing import assert_not_preferred_base

    def test_new_prompt_is_not_less_preferred():
        assert_not_preferred_base("eval/runs/main", "eval/runs/branch", judge="demo",
                                  base_data="eval/data.jsonl", new_data="eval/data.jsonl")
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["assert_not_worse", "assert_not_preferred_base"]


def assert_not_worse(base: Any, new: Any, margins: Mapping[str, float], *,
                     allow_unscored: Any = 0, fail_if_unfit_judge: bool = False,
                     **diff_kwargs: Any) -> Any:
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
    metric is compared.
    """
    from localeval.report import unscored_policy
    from localeval.versions import check_margins, diff_runs, unfit_judge_failures, worse_failures

    option = "assert_not_worse"
    margins = check_margins(margins, option)
    unscored_policy(allow_unscored)  # a bad allowance fails before any work
    d = diff_runs(base, new, **diff_kwargs)
    failures = worse_failures(d, margins, option, allow_unscored)
    if fail_if_unfit_judge:
        failures += unfit_judge_failures(d)
    if failures:
        raise AssertionError("assert_not_worse failed (new against base):\n"
                             + "\n".join(f"  {f}" for f in failures)
                             + f"\n  ({d.pairing_text()})")
    return d


def assert_not_preferred_base(base: Any, new: Any, *, judge: Any,
                              fail_if_unfit_judge: bool = False, **pairwise_kwargs: Any) -> Any:
    """Fail (AssertionError) when the judge prefers ``base`` to ``new`` beyond the interval.

    The rule and the words of ``localeval diff --pairwise --fail-if-preferred-base``
    (``pairwise.preferred_base_failure``): the 95% interval of the preference for
    NEW lies entirely below 0.5, or there is none (nothing could be judged, or one
    pair). ``fail_if_unfit_judge``: also fail when the pairwise judge check did not
    say fit. ``pairwise_kwargs`` go to :func:`localeval.compare_pairwise`
    (``base_data``, ``criterion``, ``verdicts``, ``cache``...). Returns the
    PairwiseResult so a test can look further.
    """
    from localeval.pairwise import compare_pairwise, preferred_base_failure, unfit_pairwise_failure

    r = compare_pairwise(base, new, judge=judge, **pairwise_kwargs)
    failures = [preferred_base_failure(r),
                unfit_pairwise_failure(r) if fail_if_unfit_judge else None]
    shown = [f for f in failures if f]
    if shown:
        raise AssertionError("assert_not_preferred_base failed (new against base):\n"
                             + "\n".join(f"  {f}" for f in shown)
                             + f"\n  ({r.sentence()})")
    return r
