"""Data files in: JSONL, JSON, CSV/TSV and Parquet, read into numbered records.

Each reader yields (1-based line or row, record dict) and reports a broken
file as one ``DataError`` naming the file and the line. What the records
mean (columns, types) is checked in ``localeval.dataset.samples``.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Iterator

from localeval.errors import DataError

__all__ = ["read_file", "read_jsonl_rows", "kind_of"]

#: Columns holding lists; in CSV their cells are JSON arrays.
_LIST_COLUMNS = ("contexts", "reference_contexts", "retrieved_ids", "relevant_ids",
                 "retrieved_contexts", "ground_truths")


def read_file(path: Path, fmt: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line or row, record) of a data file, by ``fmt`` or the file's suffix."""
    if not path.exists():
        raise DataError("file not found", file=str(path))
    if path.is_dir():
        raise DataError("is a directory, expected a data file", file=str(path))
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt in ("parquet", "pq"):
        return _read_parquet(path)
    raw = path.read_bytes()
    if not raw.strip():
        raise DataError("file is empty", file=str(path))
    text = _decode(raw, path)
    if fmt in ("jsonl", "ndjson"):
        return read_jsonl_rows(text, path)
    if fmt == "json":
        return _read_json(text, path)
    if fmt in ("csv", "tsv"):
        return _read_csv(text, path, "\t" if fmt == "tsv" else ",")
    raise DataError(f"unknown file type {path.suffix!r}: use .jsonl, .json, .csv, .tsv or .parquet",
                    file=str(path))


def _decode(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DataError(f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start}); "
                        "save the file as UTF-8", file=str(path), row=line) from None


def read_jsonl_rows(text: str, source: str | os.PathLike[str]
                    ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line, object) for each non-blank line; a bad line is a DataError naming it."""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"malformed JSON: {e.msg} at column {e.colno}", file=str(source),
                            row=n) from None
        if not isinstance(obj, dict):
            raise DataError(f"expected a JSON object, got {kind_of(obj)}", file=str(source), row=n)
        yield n, obj


def _read_json(text: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg}", file=str(path), row=e.lineno) from None
    if isinstance(obj, dict) and all(isinstance(v, list) for v in obj.values()):
        n = len(next(iter(obj.values()), []))
        obj = [{k: v[i] if i < len(v) else None for k, v in obj.items()} for i in range(n)]
    if not isinstance(obj, list):
        raise DataError("expected a JSON array of objects", file=str(path))
    for i, r in enumerate(obj, 1):
        if not isinstance(r, dict):
            raise DataError(f"item {i}: expected a JSON object, got {kind_of(r)}", file=str(path))
        yield i, r


def _read_csv(text: str, path: Path, delim: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delim)
    if not reader.fieldnames:
        raise DataError("no header row", file=str(path))
    for rec in reader:
        n = reader.line_num
        if None in rec:
            raise DataError(f"more cells than header columns ({len(reader.fieldnames)})",
                            file=str(path), row=n)
        row: dict[str, Any] = {}
        for k, v in rec.items():
            if v is None:
                v = ""
            if k in _LIST_COLUMNS or (v[:1] in "[{" and v.strip()[-1:] in "]}"):
                v = _csv_json(v, k, path, n)
            row[k] = v
        yield n, row


def _csv_json(v: str, col: str, path: Path, n: int) -> Any:
    if col in _LIST_COLUMNS and not v.strip():
        return []
    try:
        return json.loads(v)
    except json.JSONDecodeError:
        if col in _LIST_COLUMNS:
            raise DataError('expected a JSON array in this cell, e.g. ["first", "second"]',
                            file=str(path), row=n, column=col) from None
        return v


def _read_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import pandas as pd
        frame = pd.read_parquet(path)
    except ImportError:
        raise DataError("reading Parquet needs pandas and pyarrow: pip install 'localeval[data]'",
                        file=str(path)) from None
    except Exception as e:  # pyarrow raises several types for bad files
        raise DataError(f"cannot read Parquet: {e}", file=str(path)) from None
    for i, r in enumerate(frame.to_dict(orient="records"), 1):
        yield i, {k: _unnumpy(v) for k, v in r.items()}


def _unnumpy(v: Any) -> Any:
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def kind_of(v: Any) -> str:
    """A JSON value's type as an error message names it ("a number", "a list")."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__
