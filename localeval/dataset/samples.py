"""Records into validated samples: column names, aliases and value types.

A record's columns are mapped to ``Sample`` fields (the user's column map,
then the canonical names, then the RAGAS aliases); unknown columns become
per-sample metadata. Every value is checked for its field's type, and the
first problem is one ``DataError`` naming the source, the line or row, and
the column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from localeval.dataset.formats import kind_of
from localeval.errors import DataError
from localeval.types import SAMPLE_FIELDS, Sample

__all__ = ["Dataset", "ALIASES", "samples_from_rows", "present_fields"]

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


# -- row validation -----------------------------------------------------------------
def samples_from_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], source: str,
                      cmap: dict[str, str], row_word: str = "line") -> Dataset:
    """Validate numbered records into a ``Dataset``: one ``DataError`` names the first problem.

    ``cmap`` maps the user's column names to fields (``parse_column_map``);
    ``row_word`` is how errors name a record's number ("line" in files, "row" in tables).
    """
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
        return [_id(x, i) for i, x in enumerate(v)]
    if f == "relevant_ids":
        if isinstance(v, Mapping):
            out = {}
            for k, g in v.items():
                if isinstance(g, bool) or not isinstance(g, (int, float)) or math.isnan(g):
                    raise ValueError(f"relevance grade of {k!r} must be a number, got {kind_of(g)}")
                out[str(k)] = float(g)
            return out
        if isinstance(v, (list, tuple)):
            return {_id(x, i): 1.0 for i, x in enumerate(v)}
        raise ValueError(f"expected a list of ids or an id -> grade mapping, got {kind_of(v)}")
    return v


def _id(x: Any, i: int) -> str:
    if isinstance(x, bool) or not isinstance(x, (str, int)):
        raise ValueError(f"item {i + 1} of the list is {kind_of(x)}, expected an id (string)")
    return str(x)


def present_fields(samples: Sequence[Sample]) -> set[str]:
    """Sample fields that at least one sample has."""
    return {f for s in samples for f in SAMPLE_FIELDS if s.has(f)}
