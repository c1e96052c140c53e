"""Load evaluation data from files and in-memory tables into validated samples.

Accepted sources: JSONL, CSV (list columns as JSON arrays), Parquet (with
pandas + pyarrow), a pandas DataFrame, a Hugging Face ``datasets.Dataset``,
a list of dicts, or a dict of columns (``Dataset.from_dict`` style). Both
RAGAS column generations are accepted. Every problem is reported as one
``DataError`` naming the file, the 1-based line or row, and the column.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from localeval.errors import DataError
from localeval.types import SAMPLE_FIELDS, Sample

__all__ = ["Dataset", "load_dataset", "ALIASES", "parse_column_map", "check_required",
           "read_jsonl_rows"]

#: Alternative column names -> canonical Sample field (RAGAS v2 and older names).
ALIASES: dict[str, str] = {
    "user_input": "question",
    "query": "question",
    "response": "answer",
    "retrieved_contexts": "contexts",
    "ground_truth": "reference",
    "ground_truths": "reference",
    "sample_id": "id",
    "qid": "id",
}

_TEXT = ("question", "answer", "reference")
_TEXT_LISTS = ("contexts", "reference_contexts")
_LIST_COLUMNS = ("contexts", "reference_contexts", "retrieved_ids", "relevant_ids",
                 "retrieved_contexts", "ground_truths")


@dataclass
class Dataset:
    """Validated samples plus where they came from (for error messages)."""

    samples: list[Sample]
    source: str = "<data>"
    columns: set[str] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __getitem__(self, i: int) -> Sample:
        return self.samples[i]


def parse_column_map(items: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["answer=my_col"]`` or ``{"answer": "my_col"}`` -> {user column: canonical field}."""
    if not items:
        return {}
    pairs = items.items() if isinstance(items, Mapping) else (
        (p.split("=", 1) if "=" in p else (p, "")) for s in items for p in s.split(","))
    out: dict[str, str] = {}
    for canon, col in pairs:
        canon, col = canon.strip(), col.strip()
        if not col:
            raise DataError(f"bad column map {canon!r}: expected FIELD=COLUMN, e.g. answer=my_col")
        if canon not in SAMPLE_FIELDS and canon != "id":
            raise DataError(f"bad column map: {canon!r} is not a field; fields: id, "
                            + ", ".join(SAMPLE_FIELDS))
        out[col] = canon
    return out


def load_dataset(source: Any, *, columns: Iterable[str] | Mapping[str, str] | None = None,
                 format: str | None = None) -> Dataset:
    """Load and validate ``source`` (path, DataFrame, HF Dataset, list or dict of columns).

    ``columns`` maps canonical fields to the user's column names
    (``{"answer": "my_col"}`` or ``["answer=my_col"]``); other unknown
    columns are kept as per-sample metadata.
    """
    cmap = parse_column_map(columns)
    if isinstance(source, Dataset):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _from_rows(_read_file(path, format), str(path), cmap)
    if _is_dataframe(source):
        rows = ((i + 1, r) for i, r in enumerate(source.to_dict(orient="records")))
        return _from_rows(rows, "<DataFrame>", cmap, row_word="row")
    if hasattr(source, "to_list") and hasattr(source, "column_names"):  # datasets.Dataset
        rows = ((i + 1, r) for i, r in enumerate(source.to_list()))
        return _from_rows(rows, "<Dataset>", cmap, row_word="row")
    if isinstance(source, Mapping):
        cols = {k: list(v) for k, v in source.items()}
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise DataError("columns have different lengths: "
                            + ", ".join(f"{k}={len(v)}" for k, v in cols.items()))
        n = lengths.pop() if lengths else 0
        rows = ((i + 1, {k: v[i] for k, v in cols.items()}) for i in range(n))
        return _from_rows(rows, "<dict>", cmap, row_word="row")
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes)):
        if source and all(isinstance(s, Sample) for s in source):
            return Dataset(list(source), "<samples>", _present(source))
        return _from_rows(((i + 1, r) for i, r in enumerate(source)), "<list>", cmap,
                          row_word="row")
    raise DataError(f"cannot load data of type {type(source).__name__}: pass a path, "
                    "a pandas DataFrame, a datasets.Dataset, a list of dicts or a dict of columns")


def check_required(data: Dataset, needs: Mapping[str, Sequence[str]]) -> None:
    """Fail fast when a chosen metric needs a field the data lacks.

    ``needs`` maps metric key -> required fields. A field absent from the
    whole dataset is one error naming the column and the metric; a field
    missing on some rows names the first such row.
    """
    for metric, fields in needs.items():
        for f in fields:
            missing = [s for s in data.samples if not s.has(f)]
            if not missing:
                continue
            if len(missing) == len(data.samples):
                raise DataError(f"missing column '{f}' required by metric {metric}"
                                + _alias_hint(f), file=data.source)
            raise DataError(f"missing value required by metric {metric}", file=data.source,
                            row=missing[0].row, column=f)


def _alias_hint(f: str) -> str:
    names = [a for a, c in ALIASES.items() if c == f]
    return f" (also accepted: {', '.join(names)}; or map yours with --columns {f}=COL)" if names \
        else f" (map yours with --columns {f}=COL)"


# -- readers ------------------------------------------------------------------------
def _read_file(path: Path, fmt: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
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
            raise DataError(f"expected a JSON object, got {_kind(obj)}", file=str(source), row=n)
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
            raise DataError(f"item {i}: expected a JSON object, got {_kind(r)}", file=str(path))
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


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "to_dict")


# -- row validation -----------------------------------------------------------------
def _from_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], source: str,
               cmap: dict[str, str], row_word: str = "line") -> Dataset:
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    present: set[str] = set()
    for n, rec in rows:
        s = _sample(n, rec, source, cmap, row_word)
        if s.id in seen:
            raise _err(f"duplicate id {s.id!r} (first seen at {row_word} {seen[s.id]})", source,
                       n, "id", row_word)
        seen[s.id] = n
        present.update(f for f in SAMPLE_FIELDS if s.has(f))
        samples.append(s)
    if not samples:
        raise DataError("no samples: the data is empty", file=source)
    return Dataset(samples, source, present)


def _err(msg: str, source: str, n: int | None, col: str | None, row_word: str) -> DataError:
    return DataError(msg, file=source, row=n, column=col, unit=row_word)


def _sample(n: int, rec: Mapping[str, Any], source: str, cmap: dict[str, str],
            row_word: str) -> Sample:
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    meta: dict[str, Any] = {}
    for col, v in rec.items():
        if not isinstance(col, str):
            col = str(col)
        canon = cmap.get(col) or (col if col in SAMPLE_FIELDS or col == "id" else ALIASES.get(col))
        if canon is None or (col in ALIASES and col in cmap.values()):
            meta[col] = v
            continue
        if canon in values and values[canon] is not None and not _missing(v):
            raise _err(f"both '{origin[canon]}' and '{col}' given for {canon}; keep one", source,
                       n, col, row_word)
        if canon not in values or not _missing(v):
            values[canon] = None if _missing(v) else v
            origin[canon] = col
    kw: dict[str, Any] = {}
    for f, v in values.items():
        col = origin[f]
        if v is None:
            continue
        try:
            kw[f] = _coerce(f, v, col)
        except ValueError as e:
            raise _err(str(e), source, n, col, row_word) from None
    sid = kw.pop("id", None)
    return Sample(id=sid if sid is not None else str(n), metadata=meta, row=n, **kw)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _kind(v: Any) -> str:
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


def _coerce(f: str, v: Any, col: str) -> Any:
    if f == "id":
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise ValueError(f"id must be a string or integer, got {_kind(v)}")
        return str(v)
    if f in _TEXT:
        if col == "ground_truths" and isinstance(v, list) and all(isinstance(x, str) for x in v):
            return " ".join(v)
        if not isinstance(v, str):
            raise ValueError(f"expected text, got {_kind(v)}")
        return v
    if f in _TEXT_LISTS:
        if isinstance(v, str):
            raise ValueError("expected a list of strings, got a string; "
                             'write it as a list, e.g. ["first passage", "second passage"]')
        if not isinstance(v, (list, tuple)):
            raise ValueError(f"expected a list of strings, got {_kind(v)}")
        for i, x in enumerate(v):
            if not isinstance(x, str):
                raise ValueError(f"item {i + 1} of the list is {_kind(x)}, expected a string")
        return list(v)
    if f == "retrieved_ids":
        if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
            raise ValueError(f"expected a ranked list of ids, got {_kind(v)}")
        return [_id(x, i) for i, x in enumerate(v)]
    if f == "relevant_ids":
        if isinstance(v, Mapping):
            out = {}
            for k, g in v.items():
                if isinstance(g, bool) or not isinstance(g, (int, float)) or math.isnan(g):
                    raise ValueError(f"relevance grade of {k!r} must be a number, got {_kind(g)}")
                out[str(k)] = float(g)
            return out
        if isinstance(v, (list, tuple)):
            return {_id(x, i): 1.0 for i, x in enumerate(v)}
        raise ValueError(f"expected a list of ids or an id -> grade mapping, got {_kind(v)}")
    return v


def _id(x: Any, i: int) -> str:
    if isinstance(x, bool) or not isinstance(x, (str, int)):
        raise ValueError(f"item {i + 1} of the list is {_kind(x)}, expected an id (string)")
    return str(x)


def _present(samples: Sequence[Sample]) -> set[str]:
    return {f for s in samples for f in SAMPLE_FIELDS if s.has(f)}
