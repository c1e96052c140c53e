"""The run folder's file format, in one place: what ``localeval run`` writes and
``localeval report`` reads back.

A run folder holds ``results.jsonl`` (one line per sample: ``id``, its content
(``question``, ``contexts_hash``, ``answer_hash``; see ``content``), ``scores``,
``errors`` and ``details``, written as each sample finishes, so an interrupted
run leaves a valid file), ``summary.json`` and ``results.csv`` (scores and
unscored reasons as a table, ``table``), both written atomically at the end.
The writer and the reader live together here so that the two can never drift.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "add_to_summary": ".writer",
    "FAILED": ".fitness",
    "GatesEntry": ".schema",
    "Identity": ".identity",
    "IdentityPart": ".identity",
    "JudgeFitness": ".fitness",
    "MetricEntry": ".schema",
    "PARTS": ".identity",
    "RunRecord": ".record",
    "RunSection": ".schema",
    "SignatureEntry": ".schema",
    "SummaryModel": ".schema",
    "judged_keys": ".fitness",
    "metric_head": ".fitness",
    "read_record": ".record",
    "record_of": ".record",
    "new_summary": ".record",
    "relevant_parts": ".identity",
    "run_title": ".record",
    "same_setup_text": ".identity",
    "CONTENT_FIELDS": ".content",
    "HASH_FIELDS": ".content",
    "INPUT_FIELDS": ".content",
    "changed_content": ".content",
    "sample_content": ".content",
    "CORRECTED": ".sections",
    "CorrectedMetric": ".sections",
    "CorrectedSection": ".sections",
    "IntervalEntry": ".sections",
    "MetricEstimates": ".sections",
    "RESULTS_FILE": ".files",
    "SUMMARY_FILE": ".files",
    "ResultLines": ".lines",
    "RunWriter": ".writer",
    "atomic_file": ".files",
    "content_fields": ".content",
    "content_hash": ".content",
    "current_interval": ".summary_keys",
    "current_summary": ".summary_keys",
    "dumps_strict": ".files",
    "make_output_folder": ".writer",
    "read_run": ".reader",
    "read_summary": ".reader",
    "sample_record": ".writer",
    "spreadsheet_cell": ".table",
    "unquote_cell": ".table",
    "whole_lines": ".files",
    "write_csv": ".table",
    "write_results_csv": ".table",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
