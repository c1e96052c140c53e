"""Assert metric thresholds inside your own pytest suite (a quality gate as a test).

    from localeval.testing import assert_each, assert_scores

    def test_rag_quality():
        # the means (a CI gate); unscored samples fail it unless allowed
        assert_scores("eval/golden.jsonl", {"faithfulness": 0.85, "ndcg@10": 0.7},
                      judge="models/judge.gguf", fail_if_unfit_judge=True)

    def test_every_answer_is_grounded():
        # every sample (deepeval's assert_test, case by case)
        assert_each("eval/golden.jsonl", {"faithfulness": 0.5}, judge="models/judge.gguf")

The same gates as ``localeval run --fail-under`` / ``--fail-under-each`` /
``--fail-if-unfit-judge`` (``report.gates``), with the same messages. For one
test per row, see ``localeval.testing.rows`` / ``assert_row``.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["assert_scores", "assert_each", "check_result", "gate_evaluate"]


def assert_scores(data: Any, thresholds: Mapping[str, float], *, per_sample: bool = False,
                  allow_unscored: Any = 0, fail_if_unfit_judge: bool = False,
                  **evaluate_kwargs: Any) -> Any:
    """Evaluate the metrics named in ``thresholds`` and fail with one line per failed gate.

    The means are checked (a mean below its threshold fails; for metrics where
    lower is better, above). A mean is over the scored samples only, so a metric
    with unscored samples fails too, naming how many and why, unless
    ``allow_unscored`` allows them: a count (2), a share (0.1 or "10%"), "all" or
    True (the scored samples only), or a mapping metric -> one of these. With
    ``per_sample=True`` every sample is checked instead, as :func:`assert_each`
    does. ``fail_if_unfit_judge``: fail when the judge did not pass its judge check
    (the judge check then runs even where it is switched off by configuration).
    Returns the ``EvaluationResult`` so a test can look further.
    """
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    result = gate_evaluate(data, thresholds, fail_if_unfit_judge, evaluate_kwargs)
    check_result(result, {} if per_sample else thresholds,
                 thresholds if per_sample else {}, allow_unscored=allow_unscored,
                 fail_if_unfit_judge=fail_if_unfit_judge)
    return result


def assert_each(data: Any, thresholds: Mapping[str, float], *, allow_unscored: Any = 0,
                fail_if_unfit_judge: bool = False, **evaluate_kwargs: Any) -> Any:
    """Evaluate ``data`` and fail naming every sample under a threshold, with its working.

    A mean can hide the one answer that invents a fact; this checks each
    sample, as deepeval's ``assert_test`` checks each case. The failure lists
    the samples' ids, questions, scores and the judge's working (statements and
    verdicts), so the test log says which answer to look at and why. Unscored
    samples fail too (no evidence is not a pass) beyond ``allow_unscored`` (as
    in :func:`assert_scores`). Returns the ``EvaluationResult``.
    """
    __tracebackhide__ = True
    result = gate_evaluate(data, thresholds, fail_if_unfit_judge, evaluate_kwargs)
    check_result(result, {}, thresholds, allow_unscored=allow_unscored,
                 fail_if_unfit_judge=fail_if_unfit_judge)
    return result


def check_result(result: Any, mean: Mapping[str, float], each: Mapping[str, float], *,
                 allow_unscored: Any = 0, fail_if_unfit_judge: bool = False) -> None:
    """Raise ``AssertionError`` with one ``gate failed`` line (or block) per failed gate.

    ``mean`` and ``each`` map metric keys to thresholds for the mean and the
    per-sample gates of an ``EvaluationResult`` already computed.
    """
    __tracebackhide__ = True
    from localeval.report import check_each, check_gates, judge_fit_failure

    failed = check_gates(result.summary, mean, allow_unscored)
    failed += check_each(result.samples, result.scores, result.summary, each, allow_unscored)
    unfit = judge_fit_failure(result.summary) if fail_if_unfit_judge else None
    if unfit:
        failed.append(unfit)
    if failed:
        raise AssertionError("\n".join(f"localeval: gate failed: {f}" for f in failed)
                             + f"\n{result.record.model.signature_line}")


def gate_evaluate(data: Any, thresholds: Mapping[str, float], fail_if_unfit_judge: bool,
              kwargs: dict[str, Any]) -> Any:
    """``evaluate`` on the metrics the thresholds name, quietly, with the judge check a gate needs."""
    __tracebackhide__ = True
    from localeval.errors import UsageError
    from localeval.run import evaluate

    kwargs.setdefault("progress", False)
    check = kwargs.pop("judge_check", None)  # evaluate's own default is None too
    if fail_if_unfit_judge:
        if check is False:
            raise UsageError("fail_if_unfit_judge needs the judge check: judge_check=False "
                             "switches it off")
        check = True
    return evaluate(data, list(thresholds), judge_check=check, **kwargs)
