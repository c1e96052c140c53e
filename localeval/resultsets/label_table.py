"""The one labels reader: a table of labels, read the same way for ``validate`` and ``estimate``.

A labels file is a table (CSV, TSV, JSON, JSONL, Parquet; ``dataset.read_table``, the
one table reader) with an id column (``ID_COLUMNS``) and label columns. This
module reads it once:

- a CSV that a spreadsheet saved with ``;`` as its separator (the default
  where ``,`` is the decimal mark) is recognised by its header and read with
  ``;``; its cells may then write a decimal with a comma (``0,5``);
- text cells of a CSV or TSV (a sheet a person filled in) are unquoted:
  ``results.spreadsheet_cell`` writes a leading apostrophe before a cell a
  spreadsheet would run as a formula (``= + - @``, tab, carriage return) or
  that starts with an apostrophe itself, and ``results.unquote_cell`` removes
  exactly that one, so every id and question round-trips through a sheet;
- number cells are parsed strictly (``label_number``): digits with an optional
  sign, point and exponent, nothing else (not ``0_1``, ``1,5`` with ``,`` as
  separator, ``nan``, ``inf``); every bad cell is one DataError naming file,
  row and column;
- ``label_metric_name`` turns a ``label_<metric>`` / ``human_<metric>``
  column into the run's metric key, so a custom metric named ``Politeness
  Check`` keeps its name.

``labels.load_labels`` (validate's ground truth) and ``estimate``'s
``read_labels`` are the two views on top of it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from localeval.dataset import read_table as read_table_file
from localeval.errors import DataError
from localeval.results import unquote_cell
from localeval.resultsets.resultset import KNOWN_METRICS, METRIC_ALIASES, canonical_metric_name
from localeval.resultsets.tables import ID_COLUMNS, row_id, table_rows

__all__ = ["LabelTable", "read_label_table", "label_number", "label_metric_name",
           "LABEL_PREFIX", "HUMAN_PREFIX", "BINARY_COLUMNS"]

#: What a spreadsheet would run as a formula at the start of a cell (OWASP's CSV injection).
LABEL_PREFIX = "label_"
HUMAN_PREFIX = "human_"
#: Binary label columns (positive / negative, true / false, 1 / 0), in order of preference.
BINARY_COLUMNS = ("label", "contains_answer", "has_positive", "has_answer", "is_positive",
                  "relevant")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")


def label_metric_name(raw: str, run_metrics: Sequence[str] | None = None) -> str:
    """The metric a ``label_<raw>`` / ``human_<raw>`` column labels.

    With the run's metrics: the one written exactly so, else the one whose
    canonical name is ``raw``'s (``Faithfulness``, ``Answer Relevancy``).
    Without them: a built-in metric's key when ``raw`` names one in any
    spelling, else ``raw`` as written (NFC), so that a custom metric named
    ``Politeness Check`` (a name kept as its user wrote it) is found again.
    """
    name = unicodedata.normalize("NFC", raw).strip()
    canon = canonical_metric_name(name)
    if run_metrics:
        if name in run_metrics:
            return name
        same = [m for m in run_metrics if canonical_metric_name(m) == canon]
        if len(same) == 1:
            return same[0]
    if canon in KNOWN_METRICS or canon in METRIC_ALIASES.values() or "@" in name \
            or ":" in name:
        return canon
    return name


def label_number(v: Any, *, file: str, row: int, column: str, unit: str = "row",
                 what: str = "label", decimal_comma: bool = False) -> float | None:
    """A label or score cell as a finite float; None for an empty cell.

    Strict: a JSON number, or text of digits with an optional sign, decimal
    point and exponent (``decimal_comma``: ``0,5`` too). Anything else (a
    word, ``0_1``, a boolean, ``nan``, ``inf``) is a DataError naming the cell.
    """
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    f: float | None = None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        f = float(v)
    elif isinstance(v, str):
        s = v.strip()
        if decimal_comma and _DECIMAL_COMMA.fullmatch(s):
            s = s.replace(",", ".")
        if _NUMBER.fullmatch(s):
            f = float(s)
        elif s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            f = math.nan
    if f is None:
        raise DataError(f"{what} must be a number, got {v!r}", file=file, row=row,
                        column=column, unit=unit)
    if not math.isfinite(f):
        raise DataError(f"{what} {v!r} is not a finite number", file=file, row=row,
                        column=column, unit=unit)
    return f


@dataclass
class LabelTable:
    """The rows of a labels file, its columns and id column, and how its cells read."""

    source: str
    unit: str
    rows: list[tuple[int, dict[str, Any]]]
    columns: list[str]
    id_column: str | None
    #: CSV / TSV: text cells a spreadsheet may have quoted (``unquote_cell`` undoes it)
    sheet: bool = False
    separator: str | None = None

    def text(self, v: Any) -> Any:
        """A text cell as its writer meant it (a sheet's quoting removed)."""
        return unquote_cell(v) if self.sheet else v

    def number(self, v: Any, n: int, column: str, what: str = "label") -> float | None:
        """A number cell (``label_number``); a ``;`` sheet may use a decimal comma."""
        return label_number(v, file=self.source, row=n, column=column, unit=self.unit,
                            what=what, decimal_comma=self.separator == ";")

    def ids(self, *, need_id: bool = False) -> Iterator[tuple[int, str, dict[str, Any]]]:
        """(row number, id, row) of every row; rows are numbered "1", "2"... without an id
        column (as in result sets) unless ``need_id``. A duplicate id is a DataError."""
        if self.id_column is None and need_id:
            hint = (" (its header reads as one column: was it saved with another separator?)"
                    if len(self.columns) == 1 else "")
            raise DataError(f"a labels file needs an id column ({', '.join(ID_COLUMNS)}) to "
                            f"pair its rows with the run{hint}", file=self.source)
        seen: dict[str, int] = {}
        for i, (n, r) in enumerate(self.rows, 1):
            if self.id_column is None:
                sid = str(i)
            else:
                sid = row_id(self.text(r.get(self.id_column)), self.source, n, self.id_column,
                             self.unit)
            if sid in seen:
                raise DataError(f"duplicate id {sid!r} (first at {self.unit} {seen[sid]})",
                                file=self.source, row=n, column=self.id_column, unit=self.unit)
            seen[sid] = n
            yield n, sid, r


def _known(col: str) -> bool:
    c = col.strip()
    return (c in ID_COLUMNS or c in BINARY_COLUMNS or c.startswith((LABEL_PREFIX, HUMAN_PREFIX)))


def read_label_table(path: str | Path) -> LabelTable:
    """Read a labels file (see the module docstring); a folder or an empty table is a DataError."""
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{p} is a folder, not a labels file")
    table = read_table_file(p, recognise=_known)
    rows, unit = table_rows(table)
    if not rows:
        raise DataError(f"labels file {table.source} has no rows")
    cols = list(dict.fromkeys(c for _, r in rows for c in r))
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    return LabelTable(table.source, unit, rows, cols, id_col, sheet=table.separator is not None,
                      separator=table.separator)
