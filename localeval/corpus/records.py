"""A corpus file of records (JSONL, CSV, TSV, JSON, Parquet) with an id and a text column.

The retrieval corpus format (``localeval/data/example_corpus.jsonl``: one
``{"id", "text"}`` object a line) and the files ``write_chunks`` writes. Files are
read by the dataset reader (``localeval.dataset.read_file``), the one reader of data
files, so a broken line is the same ``DataError`` naming the file and the line as
for an evaluation set. ``_id`` (BEIR) and ``contents`` (Pyserini) are read as ``id``
and ``text``; other columns are ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from localeval.corpus.decoding import normalise_newlines
from localeval.corpus.documents import Document, Skipped
from localeval.dataset import read_file
from localeval.errors import DataError

__all__ = ["RECORD_SUFFIXES", "read_records"]

#: Suffixes read as a corpus of records rather than as one document.
RECORD_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv", ".json", ".parquet")
_ID_COLUMNS = ("id", "_id")
_TEXT_COLUMNS = ("text", "contents")


def _column(record: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in record), None)


def read_records(path: Path, limit: int, note: Callable[[Skipped], None]
                 ) -> list[Document]:
    """The documents of a corpus file; a record with empty text is skipped with a note,
    a record without an id or a text column, or an id seen before, is a DataError."""
    src = str(path)
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for line, record in read_file(path, None):
        id_col, text_col = _column(record, _ID_COLUMNS), _column(record, _TEXT_COLUMNS)
        if id_col is None or text_col is None:
            missing = "id" if id_col is None else "text"
            raise DataError(f"no {missing!r} column (a corpus record has an id and a text; "
                            f"found {', '.join(map(repr, record)) or 'nothing'})",
                            file=src, row=line)
        doc_id, text = record[id_col], record[text_col]
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise DataError("the id must be a non-empty string", file=src, row=line,
                            column=id_col)
        if doc_id in seen:
            raise DataError(f"id {doc_id!r} is used twice (first on line {seen[doc_id]})",
                            file=src, row=line, column=id_col)
        seen[doc_id] = line
        where = f"{src}, line {line}"
        if text is None or (isinstance(text, str) and not text.strip()):
            note(Skipped(where, f"document {doc_id!r} has no text"))
            continue
        if not isinstance(text, str):
            raise DataError("the text must be a string", file=src, row=line, column=text_col)
        if len(text) > limit:  # characters: at least as many bytes
            note(Skipped(where, f"document {doc_id!r} is over the {limit / 2**20:g} MB limit "
                                "for one document (max_file_mb)"))
            continue
        docs.append(Document(doc_id, normalise_newlines(text), where))
    return docs
