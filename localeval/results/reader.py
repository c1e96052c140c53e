"""Reading a run folder back (``localeval report DIR``), with one clear error on bad files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from localeval.errors import DataError, os_reason
from localeval.results.files import RESULTS_FILE, SUMMARY_FILE, whole_lines
from localeval.results.record import read_record, read_summary_json
from localeval.results.summary_keys import current_summary

__all__ = ["read_run", "read_summary"]


def read_run(out_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read ``summary.json`` and ``results.jsonl`` from a results directory.

    Raises DataError naming the file and line on anything unreadable, so
    ``localeval report DIR`` fails with one clear message; a last line cut short
    by a write that did not finish is skipped with a warning (``whole_lines``).
    Keys older versions wrote come back under today's names (``current_summary``).
    """
    d = Path(out_dir)
    rp = d / RESULTS_FILE
    for p in (d / SUMMARY_FILE, rp):
        if not p.is_file():
            raise DataError(f"not found (is {d} a localeval results directory?)", file=str(p))
    summary = read_summary(d)
    records = list(_read_records(rp))
    return summary, records


def read_summary(out_dir: str | os.PathLike[str], *, run: bool = True) -> dict[str, Any]:
    """``summary.json`` of a run folder, keys under today's names (``current_summary``).

    With ``run`` (the default) the summary is read as a run's record
    (``record.read_record``: every known field checked, a wrong one named) and its
    mapping returned. ``run=False`` returns any JSON object, for a caller that tells
    a run's summary from another command's (``generate`` writes one too) itself.
    """
    if run:
        return read_record(out_dir).summary
    return current_summary(read_summary_json(Path(out_dir) / SUMMARY_FILE))


def _read_records(path: Path) -> Iterable[dict[str, Any]]:
    from localeval.dataset import read_jsonl_rows

    try:
        text = whole_lines(path.read_bytes(), path).decode("utf-8")
    except OSError as e:
        raise DataError(f"cannot read: {os_reason(e)}", file=str(path)) from None
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8: {e}", file=str(path)) from None
    # lenient: runs written before results were strict JSON may hold NaN in details
    for n, obj in read_jsonl_rows(text, path, allow_non_finite=True):
        if "id" not in obj:
            raise DataError("expected an object with an 'id'", file=str(path), row=n)
        yield obj
