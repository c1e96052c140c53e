"""Data files in: JSONL, JSON, CSV/TSV and Parquet, read into numbered records.

The one table reader of localeval: datasets and corpora (``read_file``,
streamed) and the tables other tools and people write, result exports and
label tables (``read_table``, through ``resultsets``), all come through
these readers; CSV and TSV through ``csv_text.csv_records``.

Each reader yields (1-based line or row, record dict) and reports a broken
file as one ``DataError`` naming the file and the line. What the records
mean (columns, types) is checked in ``localeval.dataset.samples``; CSV/TSV
cells stay text here, because only the column's field says whether a cell
like ``[1, 2]`` is a list or an answer that happens to look like one.

JSON is read strictly (RFC 8259): ``NaN``, ``Infinity`` and numbers too large
for a float are refused, so that no non-finite value can reach a score or a
results file, which strict JSON readers would then reject.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from localeval.dataset.csv_text import csv_records, csv_separator
from localeval.errors import DataError, os_reason
from localeval.strict_json import loads_strict

__all__ = ["read_file", "read_table", "Table", "read_jsonl_rows", "json_value",
           "json_table_rows", "kind_of", "file_format", "loads_strict", "CELL_FORMATS"]

#: Formats whose cells are text; ``samples`` parses list cells as JSON arrays.
CELL_FORMATS = ("csv", "tsv")


def file_format(path: Path, fmt: str | None) -> str:
    """The format name of a data file: ``fmt`` if given, else the file's suffix, lower case."""
    return (fmt or path.suffix.lstrip(".")).lower()


def read_file(path: Path, fmt: str | None, *, allow_non_finite: bool = False
              ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line or row, record) of a data file, by ``fmt`` or the file's suffix.

    ``allow_non_finite``: NaN and Infinity in JSON are read as floats (result
    sets other tools wrote, where NaN means unscored); datasets refuse them.
    """
    fmt = file_format(path, fmt)
    if fmt in ("parquet", "pq", "jsonl", "ndjson"):
        _exists(path)
        if fmt in ("jsonl", "ndjson"):
            return _read_jsonl_file(path, allow_non_finite)
        return _read_parquet(path)
    text = _file_text(path)
    if fmt == "json":
        return _read_json(text, path, allow_non_finite)
    if fmt in CELL_FORMATS:
        return csv_records(text, str(path), "\t" if fmt == "tsv" else ",")
    raise DataError(f"unknown file type {path.suffix!r}: use .jsonl, .json, .csv, .tsv or .parquet",
                    file=str(path))


@dataclass(frozen=True)
class Table:
    """A table file read whole: its records, where they came from and how they are numbered.

    ``unit``: "line" for JSONL and CSV/TSV (a record is numbered by the line it
    starts on), "row" for JSON and Parquet. ``separator``: the one a CSV/TSV
    was read with; None for the other formats.
    """

    rows: list[tuple[int, dict[str, Any]]]
    source: str
    unit: str
    separator: str | None = None


def read_table(path: str | Path, fmt: str | None = None, *,
               recognise: Callable[[str], bool] | None = None) -> Table:
    """A table another tool or a person wrote (a result export, a labels file), read whole.

    The same readers as ``read_file``, with the leniency such tables need:
    NaN in JSON (unscored), a CSV row short of trailing cells padded with
    empty ones, and with ``recognise`` (a test of a header cell) a CSV a
    spreadsheet saved with ``;`` read with ``;`` (``csv_separator``).
    """
    p = Path(path)
    fmt = file_format(p, fmt)
    if fmt not in CELL_FORMATS:
        unit = "line" if fmt in ("jsonl", "ndjson") else "row"
        return Table(list(read_file(p, fmt, allow_non_finite=True)), str(p), unit)
    text = _file_text(p)
    sep = "\t" if fmt == "tsv" else csv_separator(text, recognise) if recognise else ","
    return Table(list(csv_records(text, str(p), sep, pad_short=True)), str(p), "line", sep)


def _exists(path: Path) -> None:
    if not path.exists():
        raise DataError("file not found", file=str(path))
    if path.is_dir():
        raise DataError("is a directory, expected a data file", file=str(path))


def _file_text(path: Path) -> str:
    """The text of a whole data file; DataErrors for a missing, unreadable or empty one."""
    _exists(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read: {os_reason(e)}", file=str(path)) from None
    if not raw.strip():
        raise DataError("file is empty", file=str(path))
    return _decode(raw, path)


def _decode(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DataError(f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start}); "
                        "save the file as UTF-8", file=str(path), row=line) from None


def read_jsonl_rows(text: str, source: str | os.PathLike[str], *,
                    allow_non_finite: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line, object) for each non-blank line; a bad line is a DataError naming it.

    Lines end at ``\\n`` only (``\\r\\n`` too: ``\\r`` is JSON whitespace):
    ``str.splitlines`` would also split at U+2028, U+2029 and U+0085, which
    JSON allows raw inside strings. Datasets are strict JSON; readers of result
    sets pass ``allow_non_finite`` to read NaN as other tools write it.
    """
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield n, _jsonl_record(line, n, source, allow_non_finite)


def _read_jsonl_file(path: Path, allow_non_finite: bool = False
                     ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) of a JSONL file read one line at a time.

    Only the line being parsed is in memory beside the records already made:
    the file's bytes, its text and its list of lines were all held at once
    before (a 200 MB line took 19 times its size). A line too large for the
    memory left is one DataError naming it.
    """
    src, offset, seen = str(path), 0, False
    try:
        f = open(path, "rb")
    except OSError as e:
        raise DataError(f"cannot read: {os_reason(e)}", file=src) from None
    with f:
        n = 0
        # binary lines end at b"\n" only, as JSONL's do; no enumerate(): its reused result
        # tuple would keep the last line's bytes alive while the line is parsed
        for raw in f:
            n += 1
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise DataError(f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset "
                                f"{offset + e.start}); save the file as UTF-8", file=src,
                                row=n) from None
            except MemoryError:
                raise _too_large(src, n, len(raw)) from None
            offset += len(raw)
            del raw
            if not line or line.isspace():  # no strip(): that would copy a long line
                continue
            seen = True
            record = _jsonl_record(line, n, src, allow_non_finite)
            del line  # not kept alive by this frame while the caller uses the record
            yield n, record
    if not seen:
        raise DataError("file is empty", file=src)


def _jsonl_record(line: str, n: int, source: str | os.PathLike[str],
                  allow_non_finite: bool) -> dict[str, Any]:
    """The object on JSONL line ``n``; a DataError naming the line when it is not one."""
    try:
        obj = loads_strict(line, allow_non_finite)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg} at column {e.colno}", file=str(source),
                        row=n) from None
    except MemoryError:
        raise _too_large(str(source), n, len(line)) from None
    except ValueError as e:
        raise DataError(str(e), file=str(source), row=n) from None
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {kind_of(obj)}", file=str(source), row=n)
    return obj


def _too_large(source: str, n: int, size: int) -> DataError:
    return DataError(f"line too large to read ({size:,} bytes; the memory ran out): split the "
                     "long value or the file, or give this process more memory",
                     file=source, row=n)


def _read_json(text: str, path: Path, allow_non_finite: bool
               ) -> Iterator[tuple[int, dict[str, Any]]]:
    return json_table_rows(json_value(text, str(path), allow_non_finite), str(path))


def json_value(text: str, src: str, allow_non_finite: bool = False) -> Any:
    """The JSON value of a whole file (``loads_strict``); a DataError naming line and column."""
    try:
        return loads_strict(text, allow_non_finite)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg} at column {e.colno}", file=src,
                        row=e.lineno) from None
    except ValueError as e:
        raise DataError(str(e), file=src) from None


def json_table_rows(obj: Any, src: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row, record) of a JSON table: an array of objects, or any ``DataFrame.to_json`` orient.

    records, columns (``{col: {index: value}}``), index (``{index: {col: value}}``),
    split, table, and ``{col: [values]}``; a ragged column reads None past its end.
    """
    if isinstance(obj, dict) and isinstance(obj.get("data"), list):
        if "columns" in obj:  # orient="split"
            cols = obj["columns"]
            obj = [dict(zip(cols, r)) if isinstance(r, list) else r for r in obj["data"]]
        else:  # orient="table"
            obj = obj["data"]
    elif isinstance(obj, dict) and obj and all(isinstance(v, dict) for v in obj.values()):
        first = next(iter(obj.values()))
        if all(_intlike(k) for k in first) and not all(_intlike(k) for k in obj):
            cols = list(obj)  # orient="columns"
            index = list(dict.fromkeys(k for c in cols for k in obj[c]))
            obj = [{c: obj[c].get(i) for c in cols} for i in index]
        else:  # orient="index"
            obj = list(obj.values())
    elif isinstance(obj, dict) and all(isinstance(v, list) for v in obj.values()):
        n = max((len(v) for v in obj.values()), default=0)
        obj = [{k: (v[i] if i < len(v) else None) for k, v in obj.items()} for i in range(n)]
    if not isinstance(obj, list):
        raise DataError("expected a table: a JSON array of objects or a pandas to_json() "
                        "export", file=src)
    for i, r in enumerate(obj, 1):
        if not isinstance(r, dict):
            raise DataError(f"expected a JSON object, got {kind_of(r)}", file=src, row=i,
                            unit="row")
        yield i, r


def _intlike(k: Any) -> bool:
    return isinstance(k, int) or (isinstance(k, str) and k.lstrip("-").isdigit())


def _read_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a Parquet file as plain Python values, read by pyarrow.

    pyarrow's own conversion keeps what pandas loses: a map column becomes
    ``[(key, value), ...]`` (made a dict here), and a struct column (what pandas
    writes for a column of dicts) has every key of every row, None where a row
    lacked it (those Nones are dropped here, so the row's own dict comes back).
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError("reading Parquet needs pyarrow: pip install 'localeval[data]'",
                        file=str(path)) from None
    try:
        table = pq.read_table(path)
    except OSError as e:
        raise DataError(f"cannot read Parquet: {os_reason(e)}", file=str(path)) from None
    except Exception as e:  # pyarrow raises several types for bad files
        raise DataError(f"cannot read Parquet: {e}", file=str(path)) from None
    import pyarrow as pa

    meta = table.schema.pandas_metadata or {}
    index = {c for c in meta.get("index_columns", []) if isinstance(c, str)}
    if index:
        table = table.drop_columns([c for c in table.column_names if c in index])
    maps = {f.name for f in table.schema if pa.types.is_map(f.type)}
    structs = {f.name for f in table.schema if pa.types.is_struct(f.type)}
    return _parquet_rows(table, maps, structs)


def _parquet_rows(table: Any, maps: set[str], structs: set[str]
                  ) -> Iterator[tuple[int, dict[str, Any]]]:
    n = 0
    for batch in table.to_batches(max_chunksize=4096):
        for rec in batch.to_pylist():
            n += 1
            for k in maps:
                if rec[k] is not None:
                    rec[k] = dict(rec[k])
            for k in structs:
                if rec[k] is not None:
                    rec[k] = {f: v for f, v in rec[k].items() if v is not None}
            yield n, rec


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
