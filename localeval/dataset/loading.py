"""Load evaluation data from files and in-memory tables into validated samples.

Accepted sources: JSONL, CSV (list columns as JSON arrays), Parquet (with
pandas + pyarrow), a pandas DataFrame, a Hugging Face ``datasets.Dataset``,
a list of dicts, or a dict of columns (``Dataset.from_dict`` style). Both
RAGAS column generations are accepted. Every problem is reported as one
``DataError`` naming the file, the 1-based line or row, and the column.
Files are read in ``formats``, records checked in ``samples``; this module
picks the path for each kind of source. A source whose first record is a
conversation (``messages`` or ``user_input`` a list of messages) is read by
``conversation`` into ``MultiTurnSample`` rows instead.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from localeval.dataset.conversation import conversations_from_rows, is_conversation
from localeval.dataset.formats import CELL_FORMATS, file_format, read_file
from localeval.dataset.samples import ALIASES, Dataset, present_fields, samples_from_rows
from localeval.errors import DataError, printable
from localeval.types import MULTI_TURN_FIELDS, SAMPLE_FIELDS, MultiTurnSample, Sample

__all__ = ["load_dataset", "parse_column_map", "check_required"]


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
            raise DataError(f"bad column map '{printable(canon)}': expected FIELD=COLUMN, "
                            "e.g. answer=my_col")
        if canon not in SAMPLE_FIELDS and canon not in MULTI_TURN_FIELDS and canon != "id":
            raise DataError(f"bad column map {printable(canon)}={printable(col)}: "
                            f"'{printable(canon)}' is not a field; fields: id, "
                            + ", ".join((*SAMPLE_FIELDS, *MULTI_TURN_FIELDS)))
        if out.get(col, canon) != canon:  # one column, two fields: the first would be lost
            raise DataError(f"--columns maps column '{printable(col)}' to both {out[col]} and "
                            f"{canon}; a column gives one field")
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
        fmt = file_format(path, format)
        return _from_rows(read_file(path, format), str(path), cmap,
                          row_word="row" if fmt in ("parquet", "pq") else "line",
                          text_cells=fmt in CELL_FORMATS, parquet=fmt in ("parquet", "pq"))
    if _is_dataframe(source):
        rows = ((i + 1, r) for i, r in enumerate(source.to_dict(orient="records")))
        return _from_rows(rows, "<DataFrame>", cmap, row_word="row", frame=True)
    if hasattr(source, "to_list") and hasattr(source, "column_names"):  # datasets.Dataset
        rows = ((i + 1, r) for i, r in enumerate(source.to_list()))
        return _from_rows(rows, "<Dataset>", cmap, row_word="row", parquet=True)  # Arrow too
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
            return Dataset(list(source), "<samples>", present_fields(source))
        return _from_rows(((i + 1, r) for i, r in enumerate(source)), "<list>", cmap,
                          row_word="row")
    raise DataError(f"cannot load data of type {type(source).__name__}: pass a path, "
                    "a pandas DataFrame, a datasets.Dataset, a list of dicts or a dict of columns")


def _from_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], source: str,
               cmap: dict[str, str], row_word: str = "line", text_cells: bool = False,
               frame: bool = False, parquet: bool = False) -> Dataset:
    """The records as samples, or as conversations when the first record is one.

    CSV/TSV cells are text, so a conversation there would be a JSON cell: those
    files stay single-turn (conversations come in JSONL, JSON or tables). Arrow
    (Parquet, a Hugging Face dataset) stores a column of objects as one struct of
    every key in the column, so each call's arguments would come back with the other
    calls' argument names as nulls: such conversations are refused, not scored wrong.
    """
    it = iter(rows)
    first = next(it, None)
    if first is None or not isinstance(first[1], Mapping):
        rest: Iterable[tuple[int, Mapping[str, Any]]] = it if first is None else \
            itertools.chain([first], it)
        return samples_from_rows(rest, source, cmap, row_word, text_cells, frame)
    rows = itertools.chain([first], it)
    if not text_cells and is_conversation(first[1], cmap):
        if parquet:
            raise DataError("conversations are not read from Parquet or a Hugging Face "
                            "dataset: Arrow stores the messages' objects as structs of every "
                            "key in the column, which adds other calls' argument names to each "
                            "call; give them as JSONL or a list of dicts (see "
                            "docs/conversations-and-agents.md)", file=source)
        return conversations_from_rows(rows, source, cmap, row_word)
    return samples_from_rows(_single_turn(rows, source, cmap, row_word), source, cmap, row_word,
                             text_cells, frame)


def _single_turn(rows: Iterable[tuple[int, Any]], source: str, cmap: dict[str, str],
                 row_word: str) -> Iterator[tuple[int, Any]]:
    """The rows of a single-turn source; a conversation among them (the source is read by
    its first row) is a DataError naming its line, not a sample with its messages as
    metadata and no question."""
    for n, rec in rows:
        if isinstance(rec, Mapping) and is_conversation(rec, cmap):
            cols = [c for c, f in cmap.items() if f == "messages"] or ["messages", "user_input"]
            col = next(c for c in cols if isinstance(rec.get(c), list) or hasattr(
                rec.get(c), "tolist"))
            raise DataError("this row is a conversation (a list of messages), but the data's "
                            "first row is a single-turn sample: a file holds one kind of row; "
                            "put the conversations in a file of their own "
                            "(docs/conversations-and-agents.md)", file=source, row=n,
                            column=printable(col), unit=row_word)
        yield n, rec


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
                if f in data.names:  # the user's column is there, with no value anywhere
                    col = data.column(f)
                    raise DataError(f"no {data.unit} has a value in this column, which "
                                    f"metric {metric} needs",
                                    file=data.source, column=printable(col))
                if f not in MULTI_TURN_FIELDS and isinstance(missing[0], MultiTurnSample):
                    raise DataError(f"metric {metric} scores single-turn samples (it needs "
                                    f"'{f}'), and this data holds conversations; metrics of "
                                    "conversations: tool_call_accuracy, tool_call_f1",
                                    file=data.source)
                raise DataError(f"missing column '{f}' required by metric {metric}"
                                + _alias_hint(f), file=data.source)
            col = data.column(f, missing[0].row)
            raise DataError(f"missing value required by metric {metric}",
                            file=data.source, row=missing[0].row, column=printable(col),
                            unit=data.unit)


def _alias_hint(f: str) -> str:
    if f == "messages":
        return (" (a conversation: rows whose 'messages' or 'user_input' is a list of messages; "
                "see docs/conversations-and-agents.md)")
    if f in MULTI_TURN_FIELDS:
        return (f" (each conversation's expected {f.replace('reference_', '')} beside its "
                "messages; see docs/conversations-and-agents.md)")
    names = [a for a, c in ALIASES.items() if c == f]
    return f" (also accepted: {', '.join(names)}; or map yours with --columns {f}=COL)" if names \
        else f" (map yours with --columns {f}=COL)"


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "to_dict")
