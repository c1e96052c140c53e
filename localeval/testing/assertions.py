"""Assert metric thresholds inside your own pytest suite (a quality gate as a test).

    from localeval.testing import assert_each, assert_scores

    def test_rag_quality():
        # the means (a CI gate)
        assert_scores("eval/golden.jsonl", {"faithfulness": 0.85, "ndcg@10": 0.7},
                      judge="models/judge.gguf")

    def test_every_answer_is_grounded():
        # every sample (deepeval's assert_test, case by case)
        assert_each("eval/golden.jsonl", {"faithfulness": 0.5}, judge="models/judge.gguf")
"""

from __future__ import annotations

import json
from typing import Any, Mapping

__all__ = ["assert_scores", "assert_each", "failing_samples"]

#: Samples listed in one failure message; the rest are counted.
MAX_LISTED = 20
#: Characters of a sample's working shown in the message.
WORKING_CHARS = 300


def assert_scores(data: Any, thresholds: Mapping[str, float], *, per_sample: bool = False,
                  **evaluate_kwargs: Any) -> Any:
    """Evaluate the metrics named in ``thresholds`` and fail with one line per miss.

    The means are checked (a mean below its threshold fails; for metrics where
    lower is better, above). With ``per_sample=True`` every sample is checked
    instead, as :func:`assert_each` does. Returns the ``EvaluationResult`` so a
    test can look further.
    """
    from localeval.report import check_gates
    from localeval.run import evaluate

    evaluate_kwargs.setdefault("progress", False)
    result = evaluate(data, list(thresholds), **evaluate_kwargs)
    if per_sample:
        _raise_for_samples(result, thresholds, allow_unscored=False)
        return result
    failed = check_gates(result.summary, thresholds)
    if failed:
        raise AssertionError("localeval gate failed: " + "; ".join(failed)
                             + f"\n{result.summary['signature_line']}")
    return result


def assert_each(data: Any, thresholds: Mapping[str, float], *, allow_unscored: bool = False,
                **evaluate_kwargs: Any) -> Any:
    """Evaluate ``data`` and fail naming every sample under a threshold, with its working.

    A mean can hide the one answer that invents a fact; this checks each
    sample, as deepeval's ``assert_test`` checks each case. The failure lists
    the samples' ids, their scores and the judge's working (statements and
    verdicts), so the test log says which answer to look at and why. An
    unscored sample fails too (no evidence is not a pass) unless
    ``allow_unscored``. Returns the ``EvaluationResult``.
    """
    from localeval.run import evaluate

    evaluate_kwargs.setdefault("progress", False)
    result = evaluate(data, list(thresholds), **evaluate_kwargs)
    _raise_for_samples(result, thresholds, allow_unscored=allow_unscored)
    return result


def failing_samples(result: Any, thresholds: Mapping[str, float], *,
                    allow_unscored: bool = False) -> list[str]:
    """One line per (sample, metric) that misses its threshold: id, score, working."""
    lower = {k: bool(e.get("lower_is_better")) for k, e in result.summary["metrics"].items()}
    out = []
    for s, scores in zip(result.samples, result.scores):
        for key, t in thresholds.items():
            sc = scores.get(key)
            if sc is None:
                continue
            if sc.value is None:
                if not allow_unscored:
                    out.append(f"{s.id}: {key} unscored ({sc.reason})")
                continue
            if sc.value > t if lower.get(key) else sc.value < t:
                rel = ">" if lower.get(key) else "<"
                out.append(f"{s.id}: {key} {sc.value:.3f} {rel} {t}" + _working(sc.details))
    return out


def _working(details: Mapping[str, Any]) -> str:
    if not details:
        return ""
    text = json.dumps(details, ensure_ascii=False, default=str)
    if len(text) > WORKING_CHARS:
        text = text[:WORKING_CHARS] + "…"
    return f"; working: {text}"


def _raise_for_samples(result: Any, thresholds: Mapping[str, float], *,
                       allow_unscored: bool) -> None:
    for key in thresholds:
        if key not in result.summary["metrics"]:
            from localeval.errors import UsageError

            raise UsageError(f"threshold names {key!r}, which this run did not compute; "
                             "computed: " + ", ".join(result.summary["metrics"]))
    lines = failing_samples(result, thresholds, allow_unscored=allow_unscored)
    if lines:
        ids = list(dict.fromkeys(ln.split(": ", 1)[0] for ln in lines))
        shown = lines[:MAX_LISTED]
        more = f"\n  … {len(lines) - len(shown)} more" if len(lines) > len(shown) else ""
        raise AssertionError(
            f"localeval: {len(ids)} of {len(result.samples)} samples under the thresholds "
            f"({', '.join(ids[:MAX_LISTED])}):\n  " + "\n  ".join(shown) + more
            + f"\n{result.summary['signature_line']}")
