"""``read_corpus``: a folder of documents, one document file, or a corpus file of records.

A folder is walked recursively (symbolic links to folders are not followed; names
starting with a dot, such as ``.git``, are left out). Its ``.txt``/``.text``,
``.md``/``.markdown`` and ``.html``/``.htm`` files are documents, each with the path
relative to the folder (posix separators, NFC) as its id. Every file that gives no
document is skipped with one note naming it and the reason; files with other
suffixes are named together in one note. A corpus with no usable document is a
``DataError`` (exit 2) that lists what was found and why each was skipped.
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable

from localeval.corpus.decoding import MB, read_text
from localeval.corpus.documents import Corpus, Document, Skipped
from localeval.corpus.html_text import html_to_text
from localeval.corpus.records import RECORD_SUFFIXES, read_records
from localeval.errors import DataError, InvalidArgument, LocalevalWarning

__all__ = ["read_corpus", "DOCUMENT_SUFFIXES", "DEFAULT_MAX_FILE_MB"]

DOCUMENT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".html", ".htm")
_HTML = (".html", ".htm")
DEFAULT_MAX_FILE_MB = 20.0
#: Shown in the note on skipped PDFs: no PDF reader is a dependency of localeval.
_PDF = "PDF is not read (no PDF reader is installed with localeval); convert it to text first"
#: At most this many names in a note or an error that lists files.
_SHOWN = 20


def _warn(message: str) -> None:
    warnings.warn(message, LocalevalWarning, stacklevel=4)


def read_corpus(path: str | os.PathLike[str], *, max_file_mb: float = DEFAULT_MAX_FILE_MB,
                on_note: Callable[[str], None] | None = None) -> Corpus:
    """Read the documents at ``path`` (a folder, a document file or a JSONL/CSV corpus).

    ``on_note`` receives each note as one line of text (default: a ``LocalevalWarning``).
    Documents come sorted by id, so the order files are listed in does not matter.
    """
    if isinstance(max_file_mb, bool) or not isinstance(max_file_mb, (int, float)) \
            or not max_file_mb > 0:
        raise InvalidArgument(f"max_file_mb must be a positive number of megabytes, "
                              f"got {max_file_mb!r}")
    root = Path(path)
    limit = int(max_file_mb * MB)
    say = on_note or _warn
    skipped: list[Skipped] = []

    def note(s: Skipped) -> None:
        skipped.append(s)
        say(f"{s.source}: skipped: {s.reason}")

    if not root.exists():
        raise DataError("not found: give a folder of documents, a document file or a "
                        "JSONL/CSV corpus", file=str(root))
    if root.is_dir():
        docs = _read_folder(root, limit, note)
    elif root.suffix.lower() in RECORD_SUFFIXES:
        docs = read_records(root, limit, note)
    elif root.suffix.lower() in DOCUMENT_SUFFIXES + (".pdf",):
        doc = _read_document(root, root.name, limit, note)
        docs = [doc] if doc else []
    else:
        raise DataError(f"unknown file type {root.suffix!r}: a corpus is a folder, a "
                        f"document ({', '.join(DOCUMENT_SUFFIXES)}) or a corpus file "
                        f"({', '.join(RECORD_SUFFIXES)})", file=str(root))
    if not docs:
        raise DataError(_nothing_usable(skipped), file=str(root))
    docs.sort(key=lambda d: d.id)
    return Corpus(tuple(docs), tuple(skipped), str(root))


def _read_document(path: Path, doc_id: str, limit: int,
                   note: Callable[[Skipped], None]) -> Document | None:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        note(Skipped(str(path), _PDF))
        return None
    text, reason = read_text(path, limit)
    if text is not None and suffix in _HTML:
        text = html_to_text(text)
        if not text.strip():
            text, reason = None, "no text left once the HTML markup is removed"
    if text is None:
        note(Skipped(str(path), reason))
        return None
    return Document(doc_id, text, str(path))


def _files(root: Path) -> list[Path]:
    """Every file under ``root`` in a stable order, hidden names and linked folders left out."""
    out: list[Path] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out.extend(Path(folder) / n for n in sorted(names) if not n.startswith("."))
    return out


def _read_folder(root: Path, limit: int, note: Callable[[Skipped], None]) -> list[Document]:
    docs: list[Document] = []
    other: list[Path] = []
    for path in _files(root):
        suffix = path.suffix.lower()
        if suffix not in DOCUMENT_SUFFIXES and suffix != ".pdf":
            other.append(path)
            continue
        doc_id = unicodedata.normalize("NFC", path.relative_to(root).as_posix())
        doc = _read_document(path, doc_id, limit, note)
        if doc:
            docs.append(doc)
    if other:
        kinds = Counter(p.suffix.lower() or "(no suffix)" for p in other)
        names = ", ".join(p.relative_to(root).as_posix() for p in other[:_SHOWN])
        more = f" and {len(other) - _SHOWN} more" if len(other) > _SHOWN else ""
        reason = (f"{len(other)} file{'s' * (len(other) != 1)} of other types ("
                  + ", ".join(f"{k} \u00d7{n}" for k, n in sorted(kinds.items()))
                  + f"): {names}{more}; documents are {', '.join(DOCUMENT_SUFFIXES)}")
        note(Skipped(str(root), reason))
    return docs


def _nothing_usable(skipped: list[Skipped]) -> str:
    if not skipped:
        return ("no document found: the corpus is empty (documents are "
                f"{', '.join(DOCUMENT_SUFFIXES)} files, or a corpus file)")
    lines = [f"  {s}" for s in skipped[:_SHOWN]]
    if len(skipped) > _SHOWN:
        lines.append(f"  ... and {len(skipped) - _SHOWN} more")
    return "no usable document; skipped:\n" + "\n".join(lines)
