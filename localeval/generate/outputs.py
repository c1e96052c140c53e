"""The files of a generated test set, each written atomically (``results.atomic_file``).

``testset.jsonl`` and ``testset.csv`` hold the kept rows (``Candidate.to_row``;
in the CSV every list or mapping is a JSON array or object; the CSV is written by
``results.write_csv``, the dialect of every CSV localeval writes: UTF-8 with a
byte-order mark, ``\\r\\n``, text cells quoted against spreadsheet formulas),
``dropped.jsonl`` the dropped rows with their reasons, ``qrels.txt`` the TREC
qrels (``qid 0 chunk_id 1`` for each source chunk of a kept row; TREC's
whitespace-separated lines, not a CSV), ``chunks.jsonl`` the chunks
(``write_chunks``) and
``summary.json`` the counts and the signature; ``testset.html`` (``page``) and
``summary.md`` (``summary_md``) show them to a person. A failed write is an
``OutputError`` naming the file (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from localeval.corpus import Chunk
from localeval.generate.candidates import Candidate
from localeval.generate.chunks_file import write_chunks
from localeval.generate.page import write_testset_page
from localeval.generate.summary_md import render_testset_summary
from localeval.results import atomic_file, dumps_strict, write_csv

__all__ = ["write_testset_files", "TESTSET_FILES", "csv_cell"]

#: The files ``generate_testset`` writes into its output folder.
TESTSET_FILES = ("testset.jsonl", "testset.csv", "dropped.jsonl", "qrels.txt",
                 "chunks.jsonl", "summary.json", "testset.html", "summary.md")


def csv_cell(value: Any) -> Any:
    """One CSV cell: a list or mapping as JSON, anything else as it is (``write_csv`` quotes
    text against spreadsheet formulas)."""
    if isinstance(value, (list, tuple, dict)):
        return dumps_strict(value)
    return value


def _jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    lines = [dumps_strict(r) + "\n" for r in rows]
    with atomic_file(path, newline="\n") as f:
        f.writelines(lines)


def _csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    if not columns:
        columns = list(Candidate("", "", "", (), (), (), "", "").to_row())
    write_csv(path, columns, ([csv_cell(r.get(c)) for c in columns] for r in rows))


def _qrels(path: Path, kept: Sequence[Candidate]) -> None:
    with atomic_file(path, newline="\n") as f:
        for c in kept:
            for cid in dict.fromkeys(c.chunk_ids):
                f.write(f"{c.id} 0 {cid} 1\n")


def write_testset_files(out: Path, kept: Sequence[Candidate], dropped: Sequence[Candidate],
                        chunks: Sequence[Chunk], summary: dict[str, Any]) -> dict[str, Path]:
    """Write every file of the test set into the folder ``out``; return them by name."""
    rows = [c.to_row() for c in kept]
    paths = {name: out / name for name in TESTSET_FILES}
    _jsonl(paths["testset.jsonl"], rows)
    _csv(paths["testset.csv"], rows)
    _jsonl(paths["dropped.jsonl"], [c.to_row() for c in dropped])
    _qrels(paths["qrels.txt"], kept)
    write_chunks(paths["chunks.jsonl"], chunks)
    with atomic_file(paths["summary.json"], newline="\n") as f:
        f.write(dumps_strict(summary, indent=2) + "\n")
    with atomic_file(paths["summary.md"], newline="\n") as f:
        f.write(render_testset_summary(summary, out))
    write_testset_page(out, kept, dropped, chunks, summary)
    return paths
