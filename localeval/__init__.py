"""localeval: offline RAG evaluation with a local GGUF judge and local embeddings.

Public API. Heavy libraries (torch, llama_cpp, sentence_transformers) are
imported only when a model is loaded.
"""

from __future__ import annotations

from localeval.lazy import lazy_face
from localeval.version import __version__

_WHERE = {
    "evaluate": "localeval.run",
    "EvaluationResult": "localeval.run",
    "configure": "localeval.config",
    "load_dataset": "localeval.dataset",
    "Dataset": "localeval.dataset",
    "Sample": "localeval.types",
    "Score": "localeval.types",
    "Metric": "localeval.metrics",
    "Context": "localeval.metrics",
    "register": "localeval.metrics",
    "registry": "localeval.metrics",
    "get_metric": "localeval.metrics",
    "parse_metrics": "localeval.metrics",
    "LocalevalError": "localeval.errors",
    "DataError": "localeval.errors",
    "ModelError": "localeval.errors",
    "UsageError": "localeval.errors",
}
__getattr__, __dir__ = lazy_face(__name__, _WHERE)

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
