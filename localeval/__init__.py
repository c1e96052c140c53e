"""localeval: offline RAG evaluation with a local GGUF judge and local embeddings.

Public API. Heavy libraries (torch, llama_cpp, sentence_transformers) are
imported only when a model is loaded.
"""

from __future__ import annotations

from localeval.lazy import lazy_face
from localeval.version import __version__

_WHERE = {
    "evaluate": "localeval.run",
    "answer": "localeval.pipeline",
    "generate_testset": "localeval.generate",
    "compare_pairwise": "localeval.pairwise",
    "rank_versions": "localeval.pairwise",
    "EvaluationResult": "localeval.run",
    "configure": "localeval.config",
    "load_dataset": "localeval.dataset",
    "Dataset": "localeval.dataset",
    "Sample": "localeval.types",
    "MultiTurnSample": "localeval.types",
    "Message": "localeval.types",
    "ToolCall": "localeval.types",
    "Score": "localeval.types",
    "Metric": "localeval.metrics",
    "Judging": "localeval.metrics",
    "RunConfig": "localeval.config",
    "register": "localeval.metrics",
    "registry": "localeval.metrics",
    "get_metric": "localeval.metrics",
    "parse_metrics": "localeval.metrics",
    "LocalevalError": "localeval.errors",
    "DataError": "localeval.errors",
    "ModelError": "localeval.errors",
    "UsageError": "localeval.errors",
}
_face_getattr, __dir__ = lazy_face(__name__, _WHERE)


def __getattr__(name: str) -> object:
    # ``Context`` was the judge door's old name (it collides with a RAG sample's
    # contexts); kept one release for user code, with a warning on each use.
    if name == "Context":
        import warnings

        warnings.warn("localeval.Context is deprecated: use localeval.Judging (the judge door)",
                      DeprecationWarning, stacklevel=2)
        return _face_getattr("Judging")
    return _face_getattr(name)

__all__ = [
    "__version__",
    "evaluate",
    "answer",
    "generate_testset",
    "compare_pairwise",
    "rank_versions",
    "configure",
    "EvaluationResult",
    "load_dataset",
    "Dataset",
    "Sample",
    "MultiTurnSample",
    "Message",
    "ToolCall",
    "Score",
    "Metric",
    "Judging",
    "RunConfig",
    "register",
    "registry",
    "get_metric",
    "parse_metrics",
    "LocalevalError",
    "DataError",
    "ModelError",
    "UsageError",
]
