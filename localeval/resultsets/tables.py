"""Table files as rows: CSV / TSV, every pandas ``to_json`` orient, and JSON Lines.

Result exports (RAGAS ``to_pandas()`` saved to disk) and label files are both
tables, so they are read here once and every table format reads the same way.
Rows are ``(row or line number, {column: value})``; the number is 1-based,
for error messages.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Iterator

from localeval.dataset import read_jsonl_rows
from localeval.errors import DataError

__all__ = ["read_table", "decode_utf8", "json_load", "json_table_rows", "csv_rows",
           "row_id", "ID_COLUMNS"]

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
    """Rows of a CSV / TSV / JSON / JSONL table as ``[(row number, {column: value})]``.

    Returns (rows, source, unit) where unit is "line" or "row" for messages.
    Used for label files too, so every table format reads the same way.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError("file not found", file=str(p))
    text = decode_utf8(p.read_bytes(), p)
    if not text.strip():
        raise DataError("file is empty", file=str(p))
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return list(read_jsonl_rows(text, str(p), allow_non_finite=True)), str(p), "line"
    if suffix == ".json":
        return list(json_table_rows(json_load(text, str(p)), str(p))), str(p), "row"
    if suffix in (".csv", ".tsv"):
        return list(csv_rows(text, str(p), "\t" if suffix == ".tsv" else ",")), str(p), "row"
    raise DataError(f"unknown file type {p.suffix!r}: use .csv, .tsv, .json or .jsonl",
                    file=str(p))


def json_load(text: str, src: str) -> Any:
    """``json.loads`` with a DataError naming the line and column of a syntax error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg} at column {e.colno}", file=src,
                        row=e.lineno) from None


def json_table_rows(obj: Any, src: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every ``DataFrame.to_json`` orient: records, columns, index, split, table, values-less."""
    if isinstance(obj, dict) and isinstance(obj.get("data"), list):
        if "columns" in obj:  # orient="split"
            cols = obj["columns"]
            recs = [dict(zip(cols, r)) if isinstance(r, list) else r for r in obj["data"]]
        else:  # orient="table"
            recs = obj["data"]
        obj = recs
    elif isinstance(obj, dict) and obj and all(isinstance(v, dict) for v in obj.values()):
        # orient="columns" ({col: {index: value}}) or "index" ({index: {col: value}})
        first = next(iter(obj.values()))
        inner_keys = list(first)
        if all(_intlike(k) for k in inner_keys) and not all(_intlike(k) for k in obj):
            cols = list(obj)
            index = list(dict.fromkeys(k for c in cols for k in obj[c]))
            obj = [{c: obj[c].get(i) for c in cols} for i in index]
        else:
            obj = list(obj.values())
    elif isinstance(obj, dict) and obj and all(isinstance(v, list) for v in obj.values()):
        n = max(len(v) for v in obj.values())
        obj = [{k: (v[i] if i < len(v) else None) for k, v in obj.items()} for i in range(n)]
    if not isinstance(obj, list):
        raise DataError("expected a table: a JSON array of objects or a pandas to_json() "
                        "export", file=src)
    for i, r in enumerate(obj, 1):
        if not isinstance(r, dict):
            raise DataError(f"expected a JSON object, got {type(r).__name__}", file=src,
                            row=i, unit="row")
        yield i, r


def _intlike(k: Any) -> bool:
    return isinstance(k, int) or (isinstance(k, str) and k.lstrip("-").isdigit())


def csv_rows(text: str, src: str, delim: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV (or TSV, ``delim="\\t"``) text; every cell a string."""
    # The stdlib reader, not pandas: pandas is optional for localeval, and the
    # list columns RAGAS writes (Python reprs) are not needed to compare scores.
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delim)
    if not reader.fieldnames:
        raise DataError("no header row", file=src)
    for i, rec in enumerate(reader, 1):
        if None in rec:
            raise DataError(f"more cells than header columns ({len(reader.fieldnames)})",
                            file=src, row=i, unit="row")
        yield i, {k: (v if v is not None else "") for k, v in rec.items()}


def row_id(value: Any, src: str, n: int, column: str, unit: str) -> str:
    """A table's id cell as a sample id; ``3.0`` (pandas writes ints as floats) reads ``"3"``."""
    if value is None or value == "" or isinstance(value, (bool, list, dict)):
        raise DataError("missing id", file=src, row=n, column=column, unit=unit)
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
