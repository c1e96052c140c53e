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
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["assert_not_worse"]


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
