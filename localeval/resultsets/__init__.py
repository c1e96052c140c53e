"""The floor under the analyses of finished runs: result sets, their readers, and pairing.

``compare``/``validate`` (``agreement``), ``estimate`` and ``diff``
(``versions``) all read finished runs and pair their samples; each reads them
here, so a format or a pairing rule is written once. Modules: ``resultset``
(the ``ResultSet`` type: scores, reasons, workings and content per sample id),
``readers`` (``load_result_set``: a localeval run folder or results file, a
ragas or deepeval export, through ``read_localeval``, ``read_ragas``,
``read_deepeval`` and the table readers of ``tables``), ``label_table`` (the
one reader of label tables and sheet cells, which ``validate`` and
``estimate`` view in their own ways), ``alignment`` (two judges of the same
samples: by id, then by content), ``pairing`` (two versions of a pipeline:
by id, then by question), ``fitness`` (whether a set's judge passed its judge
check, and the plain caveat beside its judged numbers when it did not) and
``run_index`` (the run folders under some folders and what each summary says:
``localeval runs``).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Alignment": ".alignment",
    "BINARY_COLUMNS": ".label_table",
    "HUMAN_PREFIX": ".label_table",
    "FAILED": ".fitness",
    "ID_COLUMNS": ".tables",
    "SideFitness": ".fitness",
    "LabelTable": ".label_table",
    "ResultSet": ".resultset",
    "RunEntry": ".run_index",
    "agreement_caveat": ".fitness",
    "align": ".alignment",
    "canonical_metric_name": ".resultset",
    "check_score": ".resultset",
    "describe_pairing": ".pairing",
    "estimate_note": ".fitness",
    "failure_text": ".fitness",
    "find_runs": ".run_index",
    "fitness_notes": ".fitness",
    "judge_caveat": ".fitness",
    "label_metric_name": ".label_table",
    "label_number": ".label_table",
    "load_result_set": ".readers",
    "metric_models": ".fitness",
    "pair_versions": ".pairing",
    "pairing_dict": ".pairing",
    "read_label_table": ".label_table",
    "read_table": ".tables",
    "row_id": ".tables",
    "side_fitness": ".fitness",
    "side_notes": ".fitness",
    "unfit_judge_failure": ".fitness",
    "validation_caveat": ".fitness",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
