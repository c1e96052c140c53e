"""Table files as rows: CSV / TSV, every pandas ``to_json`` orient, JSON Lines and Parquet.

Result exports (RAGAS ``to_pandas()`` saved to disk) and label files are both
tables; they are read by ``dataset``'s one table reader (``dataset.read_table``,
CSV and TSV through ``dataset.csv_records``), so every table reads the same
way as a dataset does: cells of any length, strict quoting, one DataError
naming file, line and column. Rows are ``(row or line number, {column:
value})``; the number is 1-based, for error messages: a JSONL line, else the
row's place among the data rows (``row 1`` is the first row under a CSV's
header), as the messages about label and score cells have always counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from localeval.dataset import Table, csv_records, json_table_rows, json_value
from localeval.dataset import read_table as read_table_file
from localeval.errors import DataError

__all__ = ["read_table", "table_rows", "decode_utf8", "json_load", "json_table_rows",
           "csv_rows", "row_id", "ID_COLUMNS"]

#: Columns that give a sample its id, in order of preference.
ID_COLUMNS = ("id", "sample_id", "qid")


def decode_utf8(raw: bytes, path: Path) -> str:
    """The file's text (a BOM is dropped); a DataError naming the byte when it is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 (byte offset {e.start}); save the file as UTF-8",
                        file=str(path)) from None


def read_table(path: str | Path) -> tuple[list[tuple[int, dict[str, Any]]], str, str]:
    """Rows of a CSV / TSV / JSON / JSONL / Parquet table as ``[(number, {column: value})]``.

    Returns (rows, source, unit) where unit is "line" or "row" for messages.
    Used for label files too, so every table format reads the same way.
    """
    rows, unit = table_rows(read_table_file(path))
    return rows, str(path), unit


def table_rows(table: Table) -> tuple[list[tuple[int, dict[str, Any]]], str]:
    """(rows, unit) of a table read by ``dataset.read_table``, CSV rows counted as rows."""
    if table.separator is None:
        return table.rows, table.unit
    return [(i, r) for i, (_, r) in enumerate(table.rows, 1)], "row"


def json_load(text: str, src: str) -> Any:
    """A JSON file's value (NaN allowed: unscored); a DataError naming line and column."""
    return json_value(text, src, allow_non_finite=True)


def csv_rows(text: str, src: str, delim: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV (or TSV, ``delim="\\t"``) text; every cell a string, short rows padded."""
    for i, (_, rec) in enumerate(csv_records(text, src, delim, pad_short=True), 1):
        yield i, rec


def row_id(value: Any, src: str, n: int, column: str, unit: str) -> str:
    """A table's id cell as a sample id; ``3.0`` (pandas writes ints as floats) reads ``"3"``."""
    if value is None or value == "" or isinstance(value, (bool, list, dict)):
        raise DataError("missing id", file=src, row=n, column=column, unit=unit)
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
