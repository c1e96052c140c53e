"""``chunk_documents``: documents into chunks of whole sentences, with stable ids.

Each document's sentences (``sentences.sentence_units``) are packed in order, as
many whole sentences as fit in ``max_chars``; a chunk never takes text from two
documents, and its text is the exact slice ``document.text[char_start:char_end]``
(paragraph breaks between its sentences included). A sentence longer than
``max_chars`` is cut (at a clause, else a space, else hard) and said so in a note.
With ``overlap_sentences=k`` a chunk starts with the last ``k`` sentences of the one
before (fewer where they would not fit). A last chunk under ``min_chars`` joins the
one before when both fit in ``max_chars``; a document shorter than ``min_chars`` gives
no chunk (a note says so).

Chunk ids: ``<doc_id>#<position>-<hash>``, the position counted from 0 within the
document and the hash the first 8 hex digits of the sha256 of the chunk's text
(UTF-8). The same corpus chunked with the same settings gives the same ids; editing
one document changes only its own chunks' ids.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from localeval.corpus.documents import Corpus, Document
from localeval.corpus.sentences import Unit, sentence_units
from localeval.errors import DataError, InvalidArgument, LocalevalWarning
from localeval.lang import detect_lang

__all__ = ["Chunk", "chunk_documents", "chunk_id", "chunk_record", "DEFAULT_MAX_CHARS",
           "DEFAULT_MIN_CHARS"]

DEFAULT_MAX_CHARS = 1500
DEFAULT_MIN_CHARS = 20


@dataclass(frozen=True)
class Chunk:
    """A run of whole sentences of one document (``text == doc.text[char_start:char_end]``)."""

    id: str
    doc_id: str
    position: int
    text: str
    lang: str
    char_start: int
    char_end: int


def chunk_id(doc_id: str, position: int, text: str) -> str:
    """``<doc_id>#<position>-<first 8 hex digits of sha256(text)>``."""
    return f"{doc_id}#{position}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"


def chunk_record(chunk: Chunk) -> dict[str, Any]:
    """One line of a chunks file: the retrieval corpus's ``id`` and ``text``, then the
    document, language, position and offsets."""
    return {"id": chunk.id, "text": chunk.text, "doc_id": chunk.doc_id, "lang": chunk.lang,
            "position": chunk.position, "char_start": chunk.char_start,
            "char_end": chunk.char_end}


def _check(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidArgument(f"{name} must be a whole number of at least {low}, got {value!r}")
    return value


def _warn(message: str) -> None:
    warnings.warn(message, LocalevalWarning, stacklevel=3)


def chunk_documents(corpus: Corpus | Iterable[Document], *,
                    max_chars: int = DEFAULT_MAX_CHARS, min_chars: int = DEFAULT_MIN_CHARS,
                    overlap_sentences: int = 0,
                    on_note: Callable[[str], None] | None = None) -> list[Chunk]:
    """The chunks of every document, document by document in id order.

    ``on_note`` receives each note (a sentence cut, a document too short) as one line
    (default: a ``LocalevalWarning``). No chunk at all is a ``DataError``.
    """
    max_chars = _check("max_chars", max_chars, 20)
    min_chars = _check("min_chars", min_chars, 0)
    overlap_sentences = _check("overlap_sentences", overlap_sentences, 0)
    if min_chars >= max_chars:
        raise InvalidArgument(f"min_chars ({min_chars}) must be below max_chars ({max_chars})")
    say = on_note or _warn
    docs = sorted(corpus.documents if isinstance(corpus, Corpus) else corpus,
                  key=lambda d: d.id)
    chunks: list[Chunk] = []
    short = 0
    for doc in docs:
        units, long = sentence_units(doc.text, max_chars)
        for s in long:
            say(f"{doc.id}: a sentence of {s.end - s.start:,} characters (at character "
                f"{s.start:,}) is longer than max_chars={max_chars}; cut into {s.pieces} "
                f"pieces ({', '.join(s.how)})")
        spans = _merge_short_tail(_pack(units, max_chars, overlap_sentences), units,
                                  max_chars, min_chars)
        if not spans or (len(spans) == 1
                         and units[spans[0][1]].end - units[spans[0][0]].start < min_chars):
            short += 1
            say(f"{doc.id}: no chunk: its text is shorter than min_chars={min_chars}")
            continue
        for position, (i, j) in enumerate(spans):
            start, end = units[i].start, units[j].end
            text = doc.text[start:end]
            chunks.append(Chunk(chunk_id(doc.id, position, text), doc.id, position, text,
                                detect_lang(text), start, end))
    if not chunks:
        raise DataError(f"no chunk: all {short} document{'s' * (short != 1)} are shorter "
                        f"than min_chars={min_chars}" if short else "no chunk: no document")
    return chunks


def _pack(units: list[Unit], max_chars: int, overlap: int) -> list[tuple[int, int]]:
    """Greedy spans ``(first unit, last unit)``, each at most ``max_chars`` long."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(units)
    while i < n:
        j = i
        while j + 1 < n and units[j + 1].end - units[i].start <= max_chars:
            j += 1
        spans.append((i, j))
        if j == n - 1:
            break
        # the next chunk repeats up to `overlap` sentences, as many as fit, and always
        # starts after this one did (so every chunk brings new text)
        k = min(overlap, j - i)
        while k and units[j + 1].end - units[j + 1 - k].start > max_chars:
            k -= 1
        i = j + 1 - k
    return spans


def _merge_short_tail(spans: list[tuple[int, int]], units: list[Unit], max_chars: int,
                      min_chars: int) -> list[tuple[int, int]]:
    """A last chunk under ``min_chars`` joins the one before when both fit, else takes
    sentences from its end (without overlap) while it fits and the one before keeps one."""
    if len(spans) < 2:
        return spans
    (pi, pj), (li, lj) = spans[-2], spans[-1]
    if units[lj].end - units[li].start >= min_chars:
        return spans
    if units[lj].end - units[pi].start <= max_chars:
        return [*spans[:-2], (pi, lj)]
    if li == pj + 1:
        while (units[lj].end - units[li].start < min_chars and pj > pi
               and units[lj].end - units[pj].start <= max_chars):
            pj, li = pj - 1, li - 1
    return [*spans[:-2], (pi, pj), (li, lj)]
