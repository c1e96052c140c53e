"""The rows ``localeval answer`` writes: the input's columns, then what the pipeline filled.

Each output row is built from the validated sample (``localeval.dataset``): its
id, its fields under the user's own column names (``response`` stays
``response``) and its other columns as they were, so ``localeval run`` reads the
output with the same ``--columns``. Values are written as localeval reads them
(a CSV's list cells as lists, the id as text). The filled fields overwrite the
input's; a failed row has a ``pipeline_error`` and no answer.

A row is known by its key, (id, question): the rows of an earlier, interrupted
run to the same output are found by it, so changing a question asks it again.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.dataset import Dataset, read_jsonl_rows
from localeval.errors import DataError, os_reason
from localeval.pipeline.contract import OUTPUT_FIELDS, Output
from localeval.results import whole_lines
from localeval.types import SAMPLE_FIELDS, Sample

__all__ = ["ERROR_COLUMN", "Columns", "RowKey", "base_row", "filled_row", "failed_row",
           "earlier_rows", "is_filled"]

#: The column a failed row carries: the exception's type and message.
ERROR_COLUMN = "pipeline_error"

RowKey = tuple[str, str]


@dataclass(frozen=True)
class Columns:
    """The output's column for each field: the user's column that gave it, else its own name."""

    names: dict[str, str]

    @classmethod
    def of(cls, data: Dataset) -> Columns:
        return cls({f: data.column(f) for f in ("id", *SAMPLE_FIELDS)})

    def __getitem__(self, field: str) -> str:
        return self.names[field]

    def key(self, row: dict[str, Any]) -> RowKey | None:
        """The row's (id, question), None when it lacks either (not a row of this data)."""
        sid, question = row.get(self["id"]), row.get(self["question"])
        if sid is None or not isinstance(question, str):
            return None
        return str(sid), question


def base_row(sample: Sample, cols: Columns) -> dict[str, Any]:
    """The sample as an output row before the pipeline fills it."""
    row: dict[str, Any] = {cols["id"]: sample.id}
    for f in SAMPLE_FIELDS:
        value = getattr(sample, f)
        if f == "relevant_ids" and isinstance(value, dict) and all(
                g == 1 for g in value.values()):
            value = list(value)  # a list of ids was read as grades of 1: written back a list
        if value is not None:
            row[cols[f]] = copy.deepcopy(value)
    for k, v in sample.metadata.items():
        row.setdefault(k, copy.deepcopy(v))
    return row


def filled_row(row: dict[str, Any], out: Output, cols: Columns) -> dict[str, Any]:
    """``row`` with the pipeline's output; a field it did not return is left as the row had it."""
    filled = dict(row)
    filled.pop(ERROR_COLUMN, None)
    for f in OUTPUT_FIELDS:
        value = getattr(out, f)
        if value is not None:
            filled[cols[f]] = value
    return filled


def failed_row(row: dict[str, Any], message: str, cols: Columns) -> dict[str, Any]:
    """``row`` without an answer (nor the input's contexts and ids: they would mix two
    versions of the pipeline) and with the error, so a rerun asks it again."""
    failed = dict(row)
    failed[cols["answer"]] = None
    for f in ("contexts", "retrieved_ids"):
        if cols[f] in failed:
            failed[cols[f]] = None
    failed.pop(ERROR_COLUMN, None)
    failed[ERROR_COLUMN] = message
    return failed


def is_filled(row: dict[str, Any], cols: Columns) -> bool:
    """A row the pipeline answered: an answer and no error."""
    return isinstance(row.get(cols["answer"]), str) and row.get(ERROR_COLUMN) is None


def earlier_rows(out: Path, cols: Columns) -> dict[RowKey, dict[str, Any]]:
    """The rows an earlier run to ``out`` left, by key (filled or failed; a later one wins).

    Read from ``out`` and from ``out.tmp``, the file a run writes before it renames
    it to ``out``: a run that was killed outright (no Ctrl-C) leaves its rows there.
    """
    rows: dict[RowKey, dict[str, Any]] = {}
    for path in (out, out.with_name(out.name + ".tmp")):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as e:
            raise DataError(f"cannot read the earlier output to resume from: {os_reason(e)}",
                            file=str(path)) from None
        try:
            text = whole_lines(raw, path).decode("utf-8")
            records = list(read_jsonl_rows(text, os.fspath(path)))
        except (DataError, UnicodeDecodeError) as e:
            raise DataError(f"{e}; this file is read to resume an earlier 'localeval answer'. "
                            "Name another output, or pass --no-cache to replace it") from None
        for _, record in records:
            key = cols.key(record)
            if key is not None:
                rows[key] = record
    return rows
