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

__all__ = ["normalise"]

_SPACE = re.compile(r"\s+")
_TRIM = " .。!！?？,，、;；:：\"'“”‘’「」『』()（）"


def normalise(text: str) -> str:
    """NFKC, case-folded, white space collapsed, outer punctuation and quotes stripped."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip(_TRIM)
