"""judge check: known-answer probe pairs that tell a judge fit to score from one that is not.

``run_judge_check`` runs a run's judge metrics on the bundled probes (en/ja/zh)
and returns a verdict per metric and overall; ``localeval judge check`` and
every run (unless ``--no-judge-check``) use it. ``run_pairwise_check`` checks a
pairwise judge (``localeval diff --pairwise``) on the same probes: a right answer
against a hallucinated one, in both orders (``pairwise``).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "QUICK_PAIRS": ".check",
    "JudgeCheckResult": ".check",
    "MetricCheck": ".check",
    "PairwiseCheck": ".pairwise",
    "pairwise_probes": ".pairwise",
    "run_pairwise_check": ".pairwise",
    "run_judge_check": ".check",
    "checkable": ".check",
    "rate_verdict": ".check",
    "KIND_METRICS": ".probes",
    "load_probes": ".probes",
    "probes_for": ".probes",
    "probes_version": ".probes",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
