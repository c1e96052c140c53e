"""``write_chunks``: a corpus's chunks as a JSONL file in the retrieval corpus format.

One object a line, ``{"id", "text", "doc_id", "lang", "position", "char_start",
"char_end"}`` (``localeval.corpus.chunk_record``): the ``id``/``text`` pair of
``localeval/data/example_corpus.jsonl``, so the file is itself a corpus that
``localeval.corpus.read_corpus`` reads back (chunk ids as document ids). Written
atomically (``localeval.results.atomic_file``): a reader never sees half a file, and
a failed write leaves no temporary file and raises an ``OutputError`` naming it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from localeval.corpus import Chunk, chunk_record
from localeval.results import atomic_file, dumps_strict

__all__ = ["write_chunks"]


def write_chunks(path: str | os.PathLike[str], chunks: Iterable[Chunk]) -> Path:
    """Write ``chunks`` to ``path`` (JSONL, UTF-8, in the order given); return the path."""
    lines = [dumps_strict(chunk_record(c)) + "\n" for c in chunks]
    out = Path(path)
    with atomic_file(out, newline="\n") as f:
        f.writelines(lines)
    return out
