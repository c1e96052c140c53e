"""Evaluation data in: files (JSONL, JSON, CSV/TSV, Parquet), DataFrames, Hugging
Face datasets and TREC run/qrels, validated into :class:`~localeval.types.Sample` rows.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Dataset": ".samples",
    "check_required": ".loading",
    "load_dataset": ".loading",
    "loads_strict": ".formats",
    "read_jsonl_rows": ".formats",
    "trec_samples": ".trec",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
