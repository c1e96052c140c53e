"""The names of a run folder's files; the writers they share live in ``localeval.output``.

``atomic_file``, ``write_json``, ``dumps_strict`` and ``whole_lines`` are the
output policy's own (``localeval.output``: atomic writes, the lone-surrogate
rule, reading back a file whose last line a stopped write cut short), re-exported
here so that callers of ``localeval.results`` keep working.
"""

from __future__ import annotations

from localeval.output import atomic_file, dumps_strict, whole_lines, write_json

__all__ = ["RESULTS_FILE", "SUMMARY_FILE", "write_json", "dumps_strict", "atomic_file",
           "whole_lines"]

#: One JSON object per sample, appended as each sample finishes.
RESULTS_FILE = "results.jsonl"
#: The run's aggregate: metric means, CIs, signature, usage.
SUMMARY_FILE = "summary.json"

