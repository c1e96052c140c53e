"""Records into validated samples: column names, aliases and value types.

A record's columns are mapped to ``Sample`` fields (the user's column map,
then the canonical names, then the RAGAS aliases); unknown columns become
per-sample metadata. Every value is checked for its field's type, and the
first problem is one ``DataError`` naming the source, the line or row, and
the column.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from localeval.dataset.cells import read_list_cell
from localeval.dataset.formats import kind_of, loads_strict
from localeval.errors import DataError, printable
from localeval.types import MULTI_TURN_FIELDS, SAMPLE_FIELDS, Sample

__all__ = ["Dataset", "ALIASES", "samples_from_rows", "present_fields", "relevance_grade",
           "too_deep", "unnumpy", "MAX_NESTING", "read_as", "not_a_record", "unused_columns"]

#: Alternative column names -> canonical Sample field (RAGAS v2 and older names).
ALIASES: dict[str, str] = {
    "user_input": "question",
    "query": "question",
    "response": "answer",
    "retrieved_contexts": "contexts",
    # ragas's id-based context precision/recall columns (a generated test set has them)
    "retrieved_context_ids": "retrieved_ids",
    "reference_context_ids": "relevant_ids",
    "ground_truth": "reference",
    "ground_truths": "reference",
    "sample_id": "id",
    "qid": "id",
}

_TEXT = ("question", "answer", "reference")
_TEXT_LISTS = ("contexts", "reference_contexts")
#: Fields whose CSV/TSV cell is JSON (an array, or an object of grades).
_JSON_CELLS = ("contexts", "reference_contexts", "retrieved_ids", "relevant_ids")
#: Deepest nesting kept in a metadata value: RAG data nests a few levels; a value
#: hundreds deep would only break the writers of the results and the report.
MAX_NESTING = 64
#: Largest relevance grade, either sign: exponential nDCG gain 2^g stays finite
#: summed over millions of documents (trec_eval grades are small integers).
MAX_GRADE = 1000


@dataclass
class Dataset:
    """Validated samples plus where they came from (for error messages)."""

    samples: list[Sample]
    source: str = "<data>"
    columns: set[str] = field(default_factory=set)
    #: field -> the user's column that gave it (``response`` for ``answer``), for messages
    names: dict[str, str] = field(default_factory=dict)
    #: how messages count records: "line" in JSONL/CSV files, "row" in tables and Parquet
    unit: str = "line"
    #: (line, field) -> the column that gave it there, where not ``names[field]`` (a file
    #: whose rows name a field differently: ``answer`` here, ``response`` there)
    row_names: dict[tuple[int, str], str] = field(default_factory=dict)

    def column(self, f: str, row: int | None = None) -> str:
        """The user's name for field ``f`` (at ``row``, when given; the field's own name
        when no column gave it)."""
        here = self.row_names.get((row, f)) if row is not None else None
        return here or self.names.get(f, f)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __getitem__(self, i: int) -> Sample:
        return self.samples[i]


# -- row validation -----------------------------------------------------------------
def samples_from_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], source: str,
                      cmap: dict[str, str], row_word: str = "line",
                      text_cells: bool = False, frame: bool = False) -> Dataset:
    """Validate numbered records into a ``Dataset``: one ``DataError`` names the first problem.

    ``cmap`` maps the user's column names to fields (``parse_column_map``);
    ``row_word`` is how errors name a record's number ("line" in files, "row" in tables).
    ``text_cells``: every value is a CSV/TSV cell's text; list fields are parsed
    as JSON, text fields stay text even when they look like JSON. ``frame``: the
    rows come from a pandas DataFrame, maybe read from such a file (``pd.read_csv``):
    a text cell in a list field is read as the file's cell would be, and a NaN
    in a field is the file's empty cell.

    A record without an id gets its 1-based position among the records as id,
    whatever the source (a CSV's line numbers would differ from the same data's
    row numbers in JSONL or a DataFrame).
    """
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    present: set[str] = set()
    columns: set[str] = set()
    names: dict[str, str] = {}
    row_names: dict[tuple[int, str], str] = {}
    for k, (n, rec) in enumerate(rows, 1):
        if not isinstance(rec, Mapping):
            raise not_a_record(rec, source, n, row_word)
        columns.update(str(c) for c in rec)
        s = _sample(n, rec, source, cmap, row_word, text_cells, frame, k, names, row_names)
        if s.id in seen:
            col = row_names.get((n, "id")) or names.get("id", "id")
            raise _err(f"duplicate id '{printable(s.id)}' (first seen at {row_word} "
                       f"{seen[s.id]})" + read_as(col, "id", cmap), source, n, col, row_word)
        seen[s.id] = n
        present.update(f for f in SAMPLE_FIELDS if s.has(f))
        samples.append(s)
    if samples:
        unused_columns(cmap, columns, source)
    if not samples:
        raise DataError("no samples: the data is empty", file=source)
    return Dataset(samples, source, present, names, row_word, row_names)


def not_a_record(rec: Any, source: str, n: int, row_word: str) -> DataError:
    """A row that is not a record (a list of strings passed where dicts belong)."""
    return _err(f"expected a record (a mapping of column names to values), got {kind_of(rec)}",
                source, n, None, row_word)


def unused_columns(cmap: Mapping[str, str], columns: set[str], source: str) -> None:
    """A ``--columns`` mapping whose column no row has is a DataError naming it, the
    file's column that differs only in case or outer spaces when there is one, and the
    file's columns as it writes them."""
    unused = [c for c in cmap if c not in columns]
    if not unused:
        return
    col = unused[0]
    near = [c for c in sorted(columns) if c.strip().casefold() == col.strip().casefold()]
    hint = f" (its column '{printable(near[0])}' differs in case or spaces)" if near else ""
    raise DataError(f"--columns {cmap[col]}={printable(col)}: the data has no column "
                    f"'{printable(col)}'{hint}; its columns: "
                    + ", ".join(f"'{printable(c)}'" for c in sorted(columns)), file=source)


def read_as(col: str, canon: str, cmap: Mapping[str, str]) -> str:
    """The user's mapping of column ``col`` to field ``canon``, for a message; empty for
    a column not mapped (its own name, or an alias: the message speaks the file's words)."""
    return f" (--columns {canon}={printable(col)})" if cmap.get(col) == canon else ""


def _err(msg: str, source: str, n: int | None, col: str | None, row_word: str) -> DataError:
    return DataError(msg, file=source, row=n, column=None if col is None else printable(col),
                     unit=row_word)


def _sample(n: int, rec: Mapping[str, Any], source: str, cmap: dict[str, str],
            row_word: str, text_cells: bool = False, frame: bool = False,
            ordinal: int | None = None, names: dict[str, str] | None = None,
            row_names: dict[tuple[int, str], str] | None = None) -> Sample:
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    meta: dict[str, Any] = {}
    for col, v in rec.items():
        if not isinstance(col, str):
            col = str(col)
        v = unnumpy(v)
        canon = cmap.get(col) or (col if col in SAMPLE_FIELDS or col == "id" else ALIASES.get(col))
        if canon is None or (col not in cmap and canon in cmap.values()):
            # not a field, or a field the user mapped another column onto: metadata
            meta[col] = _cell_meta(v) if text_cells else v
            if too_deep(meta[col]):
                raise _err(f"nested more than {MAX_NESTING} levels deep", source, n, col,
                           row_word)
            continue
        if text_cells or (frame and isinstance(v, str)):
            try:
                v = _from_cell(canon, v, col)
            except ValueError as e:
                raise _err(str(e) + read_as(col, canon, cmap), source, n, col, row_word) from None
        if canon in values and values[canon] is not None and not _missing(v):
            raise _err(f"both '{printable(origin[canon])}' and '{printable(col)}' given for "
                       f"{canon}; keep one", source, n, col, row_word)
        if canon not in values or not _missing(v):
            values[canon] = None if _missing(v) else v
            origin[canon] = col
    if frame:  # pd.read_csv's NaN is the file's empty cell: "" or []
        values.update({f: _from_cell(f, "", origin[f]) for f, v in values.items()
                       if v is None and f != "id"})
        if "id" in values:
            values["id"] = frame_id(rec[origin["id"]])
    kw: dict[str, Any] = {}
    for f, v in values.items():
        col = origin[f]
        if v is None:
            continue
        try:
            kw[f] = _coerce(f, v, col)
        except ValueError as e:
            raise _err(str(e) + read_as(col, f, cmap), source, n, col, row_word) from None
    if names is not None:
        for f, col in origin.items():
            if names.setdefault(f, col) != col and row_names is not None:
                row_names[(n, f)] = col
    sid = kw.pop("id", None)
    return Sample(id=sid if sid is not None else str(ordinal or n), metadata=meta, row=n, **kw)


def frame_id(v: Any) -> Any:
    """A DataFrame's id cell as the CSV file it was read from gives it: text.

    ``pd.read_csv`` turns a column of numeric ids into int64, into float64 when a
    cell is empty (1 becomes 1.0, the empty cell NaN) and True/False into bool;
    the file's reader gives each cell's text. So an integral float is its
    integer's text ("1"), another float its shortest text ("1.5"), a bool
    "True"/"False" and NaN the empty cell's "". (pandas has dropped what the
    text alone kept: a leading zero, an exponent: ``dtype={"id": str}`` keeps it.)
    Anything else is left for ``_coerce`` to check.
    """
    v = unnumpy(v)
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return str(int(v)) if v.is_integer() else repr(v)
    return v


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def unnumpy(v: Any) -> Any:
    """numpy arrays and scalars (DataFrame cells) as plain Python values."""
    return v.tolist() if hasattr(v, "tolist") and not isinstance(v, (str, bytes)) else v


def _from_cell(f: str, v: str, col: str) -> Any:
    """A CSV/TSV cell's value for field ``f``: JSON for list fields, the text otherwise."""
    if f not in _JSON_CELLS and not (col == "ground_truths" and v.lstrip()[:1] == "["):
        return v
    if not v.strip():
        return []
    try:
        return read_list_cell(v)
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError):
            if f == "relevant_ids":
                raise ValueError('expected a JSON array of ids or an object of grades in this '
                                 'cell, e.g. ["doc1", "doc7"] or {"doc1": 2, "doc7": 1}') from None
            raise ValueError('expected a list in this cell: a JSON array, e.g. '
                             '["first", "second"], or a Python list of strings as pandas '
                             "writes it, e.g. ['first', 'second']") from None
        raise


def _cell_meta(v: str) -> Any:
    """A metadata cell: JSON when it is a JSON array or object, else the text."""
    t = v.strip()
    if t[:1] + t[-1:] in ("[]", "{}"):
        try:
            return loads_strict(t)
        except ValueError:
            pass
    return v


def too_deep(v: Any) -> bool:
    """True when ``v`` nests lists/dicts more than MAX_NESTING deep (iterative: no recursion)."""
    stack = [(v, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (list, tuple, dict)):
            if d >= MAX_NESTING:
                return True
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return False


def _coerce(f: str, v: Any, col: str) -> Any:
    if f == "id":
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise ValueError(f"id must be a string or integer, got {kind_of(v)}")
        return str(v)
    if f in _TEXT:
        if col == "ground_truths" and isinstance(v, list) and all(isinstance(x, str) for x in v):
            return " ".join(v)
        if not isinstance(v, str):
            raise ValueError(f"expected text, got {kind_of(v)}")
        return v
    if f in _TEXT_LISTS:
        if isinstance(v, str):
            raise ValueError("expected a list of strings, got a string; "
                             'write it as a list, e.g. ["first passage", "second passage"]')
        if not isinstance(v, (list, tuple)):
            raise ValueError(f"expected a list of strings, got {kind_of(v)}")
        for i, x in enumerate(v):
            if not isinstance(x, str):
                raise ValueError(f"item {i + 1} of the list is {kind_of(x)}, expected a string")
        return list(v)
    if f == "retrieved_ids":
        if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
            raise ValueError(f"expected a ranked list of ids, got {kind_of(v)}")
        ids = [_id(x, i) for i, x in enumerate(v)]
        return ids.copy()  # allocated at its size: a grown list keeps a quarter spare
    if f == "relevant_ids":
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, tuple) and len(x) == 2
                                                      for x in v):
            v = dict(v)  # an Arrow map read by pandas: [(id, grade), ...]
        if isinstance(v, Mapping):
            return {sys.intern(str(k)): relevance_grade(k, g) for k, g in v.items()}
        if isinstance(v, (list, tuple)):
            return {_id(x, i): 1.0 for i, x in enumerate(v)}
        raise ValueError(f"expected a list of ids or an id -> grade mapping, got {kind_of(v)}")
    return v


#: The usual grades as shared float objects: a million rankings need not hold a million 1.0s.
_GRADES: dict[Any, float] = {i: float(i) for i in range(-10, 11)}


def relevance_grade(k: Any, g: Any) -> float:
    """A relevance grade as a float; ValueError unless a finite number within +-MAX_GRADE."""
    if isinstance(g, bool) or not isinstance(g, (int, float)):
        raise ValueError(f"relevance grade of {k!r} must be a number, got {kind_of(g)}")
    if not (isinstance(g, int) or math.isfinite(g)):
        raise ValueError(f"relevance grade of {k!r} must be a finite number, got {g}")
    if abs(g) > MAX_GRADE:
        if isinstance(g, float):
            shown = f"{g:.4g}"
        else:  # str() of a huge int is slow, and refused past 4300 digits
            shown = str(g) if g.bit_length() <= 64 else f"a number of {_digits(g)} digits"
        raise ValueError(f"relevance grade of {k!r} is {shown}; grades must lie between "
                         f"-{MAX_GRADE} and {MAX_GRADE}")
    shared = _GRADES.get(g)
    return float(g) if shared is None else shared


def _digits(n: int) -> int:
    """Decimal digits of ``n`` without ``str(n)``: an estimate from the bit length, made exact."""
    n = abs(n)
    d = int((n.bit_length() - 1) * 0.30102999566398) + 1
    return d + 1 if n >= 10 ** d else d


def _id(x: Any, i: int) -> str:
    if isinstance(x, bool) or not isinstance(x, (str, int)):
        raise ValueError(f"item {i + 1} of the list is {kind_of(x)}, expected an id (string)")
    return sys.intern(str(x))  # one string per document id, however many rankings name it


def present_fields(samples: Sequence[Sample]) -> set[str]:
    """Sample fields that at least one sample has (a conversation's fields too)."""
    return {f for s in samples for f in (*SAMPLE_FIELDS, *MULTI_TURN_FIELDS) if s.has(f)}
