"""Evaluation data in: files (JSONL, JSON, CSV/TSV, Parquet), DataFrames, Hugging
Face datasets and TREC run/qrels, validated into :class:`~localeval.types.Sample` rows
(conversations, ragas's multi-turn JSON or OpenAI chat messages, into ``MultiTurnSample``),
and the content hash of the loaded rows (``fingerprint``: the dataset's version).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Dataset": ".samples",
    "DataVersion": ".fingerprint",
    "data_version": ".fingerprint",
    "check_required": ".loading",
    "load_dataset": ".loading",
    "loads_strict": ".formats",
    "csv_records": ".csv_text",
    "json_table_rows": ".formats",
    "json_value": ".formats",
    "read_table": ".formats",
    "Table": ".formats",
    "read_file": ".formats",
    "read_jsonl_rows": ".formats",
    "read_list_cell": ".cells",
    "text_list": ".cells",
    "select_samples": ".subset",
    "Subset": ".subset",
    "trec_samples": ".trec",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
