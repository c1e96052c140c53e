"""The run folder's file format, in one place: what ``localeval run`` writes and
``localeval report`` reads back.

A run folder holds ``results.jsonl`` (one line per sample: ``id``, ``scores``,
``errors`` and ``details``, written as each sample finishes, so an interrupted
run leaves a valid file) and ``summary.json`` (written atomically at the end).
The writer and the reader live together here so that the two can never drift.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "RunWriter": ".writer",
    "read_run": ".reader",
    "sample_record": ".writer",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
