"""``results.csv``: the run's per-sample scores as a table for spreadsheets and pandas.

``results.jsonl`` is the full record (working included); people asked for
something a spreadsheet or ``pd.read_csv`` opens as is. One row per sample:
``id``, ``question``, one column per metric (empty when unscored), then one
``<metric>_reason`` column per metric with why it is unscored (empty when scored).
The file is written with the csv module (quoting of commas, quotes and line
breaks in questions is its job) in UTF-8 with a byte-order mark, so that
Excel shows Japanese and Chinese text correctly; pandas and the csv module
read the mark transparently.

Text cells go through ``spreadsheet_cell``: a cell starting with ``= + - @``,
a tab or a carriage return is a formula to Excel and LibreOffice (CSV
injection), so it gets a leading ``'`` as OWASP recommends; scores are
numbers and stay numbers. Every CSV localeval writes uses that helper.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from localeval.results.files import atomic_file

__all__ = ["CSV_FILE", "write_results_csv", "spreadsheet_cell", "unquote_cell"]

#: The table's file name in a run folder.
CSV_FILE = "results.csv"
# What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: what gets a leading apostrophe: a formula start, or an apostrophe (so it round-trips)
_QUOTED = _FORMULA_START + ("'",)


def spreadsheet_cell(value: Any) -> Any:
    """A text cell a spreadsheet shows as text, and :func:`unquote_cell` reads back exactly.

    ``'`` goes before a cell starting with ``= + - @``, tab or CR (OWASP's
    CSV-injection advice) and before one starting with ``'`` itself, so that
    ``'=1`` is written ``''=1`` and read back as ``'=1``: every id and text
    round-trips. Numbers (``int``, ``float``) are returned as they are: a
    negative score is not a formula. Anything else is written as its ``str``.
    The one quoting rule of results.csv and the label sheets.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_QUOTED) else text


def unquote_cell(text: Any) -> Any:
    """Undo :func:`spreadsheet_cell` on a cell read back from a sheet a person filled in."""
    if isinstance(text, str) and text[:1] == "'" and text[1:2] and text[1:2] in _QUOTED:
        return text[1:]
    return text


def write_results_csv(path: str | os.PathLike[str],
                      records: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``records`` (results.jsonl lines) as a CSV table at ``path``, atomically.

    ``records`` is read twice (the metrics for the header, then the rows), so an
    iterable that reads the file again on each pass serves without holding them.
    """
    p = Path(path)
    metrics: dict[str, None] = {}
    for r in records:
        for k in r.get("scores") or {}:
            metrics.setdefault(k, None)
    head = ["id", "question", *metrics, *(f"{m}_reason" for m in metrics)]
    with atomic_file(p, encoding="utf-8-sig", newline="") as f:
        w = csv.writer(f)
        w.writerow([spreadsheet_cell(h) for h in head])
        for r in records:
            scores = r.get("scores") or {}
            errors = r.get("errors") or {}
            w.writerow([spreadsheet_cell(r.get("id", "")), spreadsheet_cell(r.get("question")),
                        *("" if scores.get(m) is None else repr(float(scores[m]))
                          for m in metrics),
                        *(spreadsheet_cell(errors.get(m)) if scores.get(m) is None else ""
                          for m in metrics)])
    return p
