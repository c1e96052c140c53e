"""One text normalisation for matching judge output against its inputs.

Used wherever localeval asks "is this the same text?": merging duplicate
statements, checking that an extracted entity occurs in its source, and
spotting a judge that copies its prompt's example. NFKC folds full-width
and compatibility forms (common in Japanese and Chinese text), case folding
ignores case, and outer punctuation and quotes do not make two strings differ.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterator

__all__ = ["normalise", "normalised_pieces"]

_SPACE = re.compile(r"\s+")
#: The white space run that starts the last word of a window (where a piece may end).
_LAST_SPACE = re.compile(r"\s+(?=\S*\Z)")
_TRIM = " .。!！?？,，、;；:：\"'“”‘’「」『』()（）"
#: Texts longer than this are normalised piece by piece (``normalised_pieces``).
PIECE = 1 << 18


def normalise(text: str) -> str:
    """NFKC, case-folded, white space collapsed, outer punctuation and quotes stripped."""
    if len(text) <= PIECE:
        return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip(_TRIM)
    return "".join(normalised_pieces(text))


def normalised_pieces(text: str, size: int = PIECE) -> Iterator[str]:
    """``normalise(text)`` as pieces of about ``size`` characters that join to it.

    For hashing a long text (a 200 MB context) without its copies: collapsing
    the white space of the whole text at once made one string object per word
    (15 times the text's size). Pieces end where a white space run starts, so
    no run and no character sequence NFKC composes is cut, except in a word
    longer than ``size``.
    """
    n, start, started, held, last = len(text), 0, False, "", ""
    while start < n:
        end = min(start + size, n)
        if end < n:
            m = _LAST_SPACE.search(text, start, end)
            if m is not None:  # before the run, or after it when the window starts with it
                end = m.start() if m.start() > start else m.end()
        t = _SPACE.sub(" ", unicodedata.normalize("NFKC", text[start:end]).casefold())
        start = end
        if last == " " and t[:1] == " ":
            t = t[1:]  # the run went on from the last piece
        if not started:
            t = t.lstrip(_TRIM)
            started = bool(t)
        if not t:
            continue
        full = held + t
        kept = full.rstrip(_TRIM)  # what ends the text is stripped: hold it back
        held, last = full[len(kept):], full[-1]
        if kept:
            yield kept
