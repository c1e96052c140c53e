"""Assert metric thresholds inside your own pytest suite (a quality gate as a test).

    from localeval.testing import assert_scores

    def test_rag_quality():
        assert_scores("eval/golden.jsonl", {"faithfulness": 0.85, "ndcg@10": 0.7},
                      judge="models/judge.gguf")
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["assert_scores"]


def assert_scores(data: Any, thresholds: Mapping[str, float], **evaluate_kwargs: Any) -> Any:
    """Evaluate the metrics named in ``thresholds`` and fail with one line per miss.

    Returns the ``EvaluationResult`` so a test can look further.
    """
    from localeval.report import check_gates
    from localeval.run import evaluate

    evaluate_kwargs.setdefault("progress", False)
    result = evaluate(data, list(thresholds), **evaluate_kwargs)
    failed = check_gates(result.summary, thresholds)
    if failed:
        raise AssertionError("localeval gate failed: " + "; ".join(failed)
                             + f"\n{result.summary['signature_line']}")
    return result
