"""Metrics: the base protocol and registry, and one module per family.

Families: ``answer`` and ``context`` (RAGAS judge metrics), ``nvidia``
(NVIDIA-style rating metrics), ``retrieval`` (ranked ids) and ``text``
(BLEU, ROUGE). They register themselves on import; ``registry()`` imports
them on first use.
"""

from localeval.metrics.base import Context, Metric, get_metric, parse_metrics, register, registry

__all__ = ["Context", "Metric", "get_metric", "parse_metrics", "register", "registry"]
