"""Data files in: JSONL, JSON, CSV/TSV and Parquet, read into numbered records.

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

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any, Iterator

from localeval.errors import DataError, JSONValueError, os_reason

__all__ = ["read_file", "read_jsonl_rows", "kind_of", "file_format", "loads_strict",
           "CELL_FORMATS"]

#: Formats whose cells are text; ``samples`` parses list cells as JSON arrays.
CELL_FORMATS = ("csv", "tsv")


def _reject_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not a number JSON allows; write null for a missing value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONValueError(f"the number {text[:40]} is too large for a float")
    return value


#: One decoder for every call: ``json.loads`` with hooks would build a new one each time.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
#: For result sets written by other tools (and older localeval runs), where NaN means
#: "unscored": non-finite numbers pass, nesting and digit limits still hold.
_LENIENT = json.JSONDecoder()


def loads_strict(text: str, allow_non_finite: bool = False) -> Any:
    """``json.loads`` that refuses NaN, Infinity, overflowing numbers and absurd nesting.

    Every failure is a ``ValueError`` whose message is meant for the user
    (``JSONDecodeError`` keeps its position in ``lineno``/``colno``).
    ``allow_non_finite`` lets NaN and Infinity through as floats.
    """
    try:
        return (_LENIENT if allow_non_finite else _DECODER).decode(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise JSONValueError("nested too deeply (arrays or objects inside each other "
                             "hundreds of levels deep)") from None
    except JSONValueError:
        raise
    except ValueError as e:  # int() past sys.get_int_max_str_digits()
        if "digits" in str(e):
            raise JSONValueError("a number with thousands of digits; write it as a "
                                 "string") from None
        raise JSONValueError(str(e)) from None


def file_format(path: Path, fmt: str | None) -> str:
    """The format name of a data file: ``fmt`` if given, else the file's suffix, lower case."""
    return (fmt or path.suffix.lstrip(".")).lower()


def read_file(path: Path, fmt: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line or row, record) of a data file, by ``fmt`` or the file's suffix."""
    try:
        if not path.exists():
            raise DataError("file not found", file=str(path))
        if path.is_dir():
            raise DataError("is a directory, expected a data file", file=str(path))
        fmt = file_format(path, fmt)
        if fmt in ("parquet", "pq"):
            return _read_parquet(path)
        if fmt in ("jsonl", "ndjson"):
            return _read_jsonl_file(path)
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read: {os_reason(e)}", file=str(path)) from None
    if not raw.strip():
        raise DataError("file is empty", file=str(path))
    text = _decode(raw, path)
    if fmt == "json":
        return _read_json(text, path)
    if fmt in CELL_FORMATS:
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


def _read_jsonl_file(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
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
            record = _jsonl_record(line, n, src, False)
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


def _read_json(text: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        obj = loads_strict(text)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg}", file=str(path), row=e.lineno) from None
    except ValueError as e:
        raise DataError(str(e), file=str(path)) from None
    if isinstance(obj, dict) and all(isinstance(v, list) for v in obj.values()):
        n = len(next(iter(obj.values()), []))
        obj = [{k: v[i] if i < len(v) else None for k, v in obj.items()} for i in range(n)]
    if not isinstance(obj, list):
        raise DataError("expected a JSON array of objects", file=str(path))
    for i, r in enumerate(obj, 1):
        if not isinstance(r, dict):
            raise DataError(f"item {i}: expected a JSON object, got {kind_of(r)}", file=str(path))
        yield i, r


def _read_csv(text: str, path: Path, delim: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the record starts, {column: cell text}); damage is an error, never a guess."""
    # A cell can be as long as the file: the csv module's default 128 KiB cap would
    # fail on one long retrieved context. The limit is process-wide; only raise it.
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    # strict: a quote in the wrong place is an error instead of silently merged rows.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    src = str(path)
    nul = text.find("\x00")
    if nul >= 0:  # the csv module passes NUL through; in a text file it means damage
        raise DataError("contains a NUL byte; is this a text file?", file=src,
                        row=text.count("\n", 0, nul) + 1)
    start = 1
    try:
        header = next(reader, None)
        if not header or not any(h.strip() for h in header):
            raise DataError("no header row", file=src)
        _check_header(header, src)
        start = reader.line_num + 1
        for cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):  # a blank line
                start = reader.line_num + 1
                continue
            _check_row(cells, header, delim, src, start, reader.line_num)
            yield start, dict(zip(header, cells))
            start = reader.line_num + 1
    except csv.Error as e:
        raise DataError(_csv_problem(str(e), delim, reader.line_num), file=src,
                        row=start) from None


def _check_header(header: list[str], src: str) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(header, 1):
        if name in seen:
            raise DataError(f"duplicate column {name!r} in the header (columns {seen[name]} "
                            f"and {i}); rename one", file=src, row=1)
        seen[name] = i


def _check_row(cells: list[str], header: list[str], delim: str, src: str, start: int,
               end: int) -> None:
    if len(cells) != len(header):
        more = len(cells) > len(header)
        raise DataError(f"{len(cells)} cell{'s' * (len(cells) != 1)}, but the header has "
                        f"{len(header)} columns"
                        + ("" if more else "; a missing cell must still be written, "
                           f"empty, between its {'tabs' if delim == chr(9) else 'commas'}"),
                        file=src, row=start)
    if delim == "\t" and end > start:
        for col, cell in zip(header, cells):
            if "\n" in cell and "\t" in cell:
                # TSV cells hold no tabs: a quoted cell with both a tab and a line
                # break has swallowed the rows after it.
                raise DataError(f"a cell that starts with a quote runs on to line {end}, "
                                "taking in the rows between: close the quote, or, if the "
                                "quote is part of the text, quote the whole cell and double "
                                "the quotes inside it",
                                file=src, row=start, column=col)


def _csv_problem(msg: str, delim: str, end: int) -> str:
    if "unexpected end of data" in msg:
        return ("a quoted cell is never closed (unterminated quote): it runs to the end "
                "of the file")
    if "expected after" in msg:
        sep = "tab" if delim == "\t" else "comma"
        return (f"a quote in the wrong place (line {end}: after a closing quote the cell "
                f"must end with a {sep}); quote the whole cell and double the quotes inside "
                'it, e.g. "He said ""yes"""')
    return f"cannot parse: {msg}"


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
