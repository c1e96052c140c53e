"""localeval: offline RAG evaluation with a local GGUF judge and local embeddings.

Public API. Heavy libraries (torch, llama_cpp, sentence_transformers) are
imported only when a model is loaded.
"""

from __future__ import annotations

__version__ = "0.1.0"

from localeval.config import configure
from localeval.dataset import Dataset, load_dataset
from localeval.errors import DataError, LocalevalError, ModelError, UsageError
from localeval.metrics.base import Context, Metric, get_metric, parse_metrics, register, registry
from localeval.runner import EvaluationResult, evaluate
from localeval.types import Sample, Score

__all__ = [
    "__version__",
    "evaluate",
    "configure",
    "EvaluationResult",
    "load_dataset",
    "Dataset",
    "Sample",
    "Score",
    "Metric",
    "Context",
    "register",
    "registry",
    "get_metric",
    "parse_metrics",
    "LocalevalError",
    "DataError",
    "ModelError",
    "UsageError",
]
