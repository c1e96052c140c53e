"""A document's text as spans of whole sentences, the units that chunks are packed from.

Blocks first: paragraphs end at a blank line, and a Markdown heading line (``# ...``)
is a block of its own, so no sentence runs across a paragraph break. Each block's
language is detected (``localeval.lang.detect_lang``) and its sentences split by the
project's splitter (``localeval.lang.split_sentences``: pysbd, with the fixes for
Japanese and Chinese quotations). Sentences are found back in the text, so every
unit is a ``(start, end)`` span of the document and a chunk is an exact slice of it;
a unit runs up to the next one, so no text between sentences is ever lost.

A sentence longer than ``max_chars`` is cut into pieces: after the last clause mark
(``,;:`` and ``、，；：``) in the second half of the window, else at the last space
there, else hard at ``max_chars`` (CJK text without punctuation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from localeval.lang import detect_lang, split_sentences

__all__ = ["Unit", "LongSentence", "sentence_units"]

_BLANK = re.compile(r"\n[ \t\f\v]*\n\s*")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t][^\n]*$", re.M)
_CLAUSE = re.compile(r"[,;:\u3001\uff0c\uff1b\uff1a\u2014](?=\s|[^\x00-\x7f])|[\u3001\uff0c\uff1b\uff1a]")
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Unit:
    """A sentence, or a piece of one (``cut``: how it was cut from the sentence: "at a
    clause", "at a space", "hard", or "rest" for the last piece)."""

    start: int
    end: int
    cut: str = ""


@dataclass(frozen=True)
class LongSentence:
    """A sentence over ``max_chars``, and how it was cut."""

    start: int
    end: int
    pieces: int
    how: tuple[str, ...]


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraph spans (without surrounding whitespace); headings apart."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in [*_BLANK.finditer(text), None]:
        end = m.start() if m else len(text)
        for s, e in _split_headings(text, pos, end):
            seg = text[s:e]
            lead = len(seg) - len(seg.lstrip())
            s, e = s + lead, s + len(seg.rstrip())
            if e > s:
                spans.append((s, e))
        pos = m.end() if m else len(text)
    return spans


def _split_headings(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out, pos = [], start
    for m in _HEADING.finditer(text, start, end):
        if m.start() > pos:
            out.append((pos, m.start()))
        out.append((m.start(), m.end()))
        pos = m.end()
    if pos < end:
        out.append((pos, end))
    return out


def _find(block: str, sentence: str, cursor: int) -> tuple[int, int]:
    """Where ``sentence`` lies in ``block`` at or after ``cursor`` ((-1, -1) if nowhere)."""
    i = block.find(sentence, cursor)
    if i >= 0:
        return i, i + len(sentence)
    # the splitter may have joined pieces without the space between them (a Japanese
    # quotation run on): match ignoring whitespace
    chars = [re.escape(c) for c in sentence if not c.isspace()]
    m = re.compile(r"\s*".join(chars)).search(block, cursor) if chars else None
    return (m.start(), m.end()) if m else (-1, -1)


def _starts(block: str, lang: str) -> list[int]:
    """Where each sentence of ``block`` starts; the first at 0, so nothing is left out."""
    starts, cursor = [0], 0
    for sentence in split_sentences(block, lang):
        i, cursor_next = _find(block, sentence, cursor)
        if i < 0:
            break  # what follows stays in the sentence before: never lost
        if i > starts[-1]:
            starts.append(i)
        cursor = cursor_next
    return starts


def _cut(text: str, start: int, end: int, max_chars: int) -> list[Unit]:
    """Pieces of the over-long span ``text[start:end]``, each at most ``max_chars``."""
    pieces: list[Unit] = []
    pos = start
    while end - pos > max_chars:
        window = text[pos:pos + max_chars]
        half = max_chars // 2
        marks = [m.end() for m in _CLAUSE.finditer(window, half)]
        how = "at a clause"
        cut = marks[-1] if marks else -1
        if cut < 0:
            spaces = [m.start() for m in _SPACE.finditer(window, half)]
            cut, how = (spaces[-1], "at a space") if spaces else (max_chars, "hard")
        piece_end = pos + len(window[:cut].rstrip())
        pieces.append(Unit(pos, piece_end, how))
        pos += cut
        while pos < end and text[pos].isspace():
            pos += 1
    if pos < end:
        pieces.append(Unit(pos, end, "rest"))
    return pieces


def sentence_units(text: str, max_chars: int) -> tuple[list[Unit], list[LongSentence]]:
    """The document's sentences as spans, each at most ``max_chars`` long, and the
    sentences that had to be cut to get there."""
    units: list[Unit] = []
    long: list[LongSentence] = []
    for bs, be in _blocks(text):
        block = text[bs:be]
        starts = _starts(block, detect_lang(block))
        for s, e in zip(starts, [*starts[1:], len(block)]):
            s, e = bs + s, bs + len(block[:e].rstrip())
            if e - s > max_chars:
                pieces = _cut(text, s, e, max_chars)
                units.extend(pieces)
                how = tuple(dict.fromkeys(p.cut for p in pieces if p.cut != "rest"))
                long.append(LongSentence(s, e, len(pieces), how))
            elif e > s:
                units.append(Unit(s, e))
    return units, long
