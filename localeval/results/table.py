"""The one CSV writer (``write_csv``) and ``results.csv``, the run's scores for spreadsheets.

Every CSV localeval writes (``results.csv``, the labelling sheet and its
``.judge.csv``, a generated ``testset.csv``) goes through :func:`write_csv`, in
one dialect (its docstring says why). ``results.jsonl`` is the full record
(working included); people asked for something a spreadsheet or
``pd.read_csv`` opens as is. One row per sample: ``id``, ``question``, one
column per metric (empty when unscored), then one ``<metric>_reason`` column
per metric with why it is unscored (empty when scored).

Text cells go through ``spreadsheet_cell``: a cell starting with ``= + - @``,
a tab or a carriage return is a formula to Excel and LibreOffice (CSV
injection), so it gets a leading ``'`` as OWASP recommends; scores are
numbers and stay numbers. ``write_csv`` applies it to every cell, so no
caller can forget it, and ``unquote_cell`` undoes it when a sheet is read back.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from localeval.results.files import atomic_file

__all__ = ["CSV_FILE", "write_csv", "write_results_csv", "spreadsheet_cell", "unquote_cell"]

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


def write_csv(path: str | os.PathLike[str], header: Sequence[Any],
              rows: Iterable[Sequence[Any]]) -> Path:
    """Write a table at ``path`` atomically (``atomic_file``), in localeval's one CSV dialect.

    - UTF-8 with a byte-order mark: without one, Excel opens a CSV in the
      system's legacy code page and Japanese, Chinese or accented text comes
      out garbled; pandas, the csv module (``utf-8-sig``) and localeval's own
      table reader drop the mark.
    - ``\\r\\n`` line ends: RFC 4180's and what spreadsheets write; every CSV
      reader takes them (a line break inside a quoted cell stays as written).
    - ``QUOTE_MINIMAL``: a cell is quoted only when it holds a comma, a quote or
      a line break, so a number stays a number to a spreadsheet.
    - every cell through :func:`spreadsheet_cell` (formula injection; text
      read back exactly with :func:`unquote_cell`); ``None`` is an empty cell,
      an ``int`` or ``float`` is written as a number (a float as its ``repr``,
      which reads back to the same float).

    ``rows`` is consumed once, as it is written: a generator serves.
    """
    p = Path(path)
    with atomic_file(p, encoding="utf-8-sig", newline="") as f:
        w = csv.writer(f, dialect="excel", lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
        w.writerow([spreadsheet_cell(h) for h in header])
        for row in rows:
            w.writerow([spreadsheet_cell(c) for c in row])
    return p


def write_results_csv(path: str | os.PathLike[str],
                      records: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``records`` (results.jsonl lines) as a CSV table at ``path``, atomically.

    ``records`` is read twice (the metrics for the header, then the rows), so an
    iterable that reads the file again on each pass serves without holding them.
    """
    metrics: dict[str, None] = {}
    for r in records:
        for k in r.get("scores") or {}:
            metrics.setdefault(k, None)
    head = ["id", "question", *metrics, *(f"{m}_reason" for m in metrics)]
    return write_csv(path, head, _result_rows(records, list(metrics)))


def _result_rows(records: Iterable[Mapping[str, Any]], metrics: list[str]
                 ) -> Iterator[list[Any]]:
    for r in records:
        scores = r.get("scores") or {}
        errors = r.get("errors") or {}
        yield [r.get("id", ""), r.get("question"),
               *(None if scores.get(m) is None else float(scores[m]) for m in metrics),
               *(errors.get(m) if scores.get(m) is None else None for m in metrics)]
