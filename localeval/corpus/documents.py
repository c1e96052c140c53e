"""A corpus in memory: its documents, the files it skipped, and its canonical hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterator

__all__ = ["Document", "Skipped", "Corpus", "corpus_hash"]


@dataclass(frozen=True)
class Document:
    """One document: its id (a path relative to the corpus folder, posix, or the id
    column of a JSONL/CSV corpus), its text (line ends made ``\\n``) and where it was
    read from (a file, or ``file, line N`` for a corpus record)."""

    id: str
    text: str
    source: str


@dataclass(frozen=True)
class Skipped:
    """A file or record that gave no document, and why (said once, to the user)."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


@dataclass(frozen=True)
class Corpus:
    """The documents of a corpus, sorted by id, and what was skipped while reading it."""

    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...]
    source: str

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)


def corpus_hash(corpus: Corpus | tuple[Document, ...] | list[Document]) -> str:
    """sha256 (hex) of the documents' ids and texts, in id order.

    Canonical: independent of the order in which files or records were read and of
    where the corpus lies (only ids and texts count; the skipped files do not), so two
    readings of the same content give the same hash, and a signature can name it.
    Each id and text is written with its length first, so no two corpora collide by
    moving text between documents.
    """
    docs = corpus.documents if isinstance(corpus, Corpus) else corpus
    h = hashlib.sha256(b"localeval-corpus-1\n")
    for doc in sorted(docs, key=lambda d: d.id):
        for part in (doc.id, doc.text):
            raw = part.encode("utf-8")
            h.update(b"%d:" % len(raw))
            h.update(raw)
    return h.hexdigest()
