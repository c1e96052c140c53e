"""The one rule for text that UTF-8 cannot encode: a lone surrogate (``"\\ud800"``).

JSON allows ``"\\ud800"`` and Python reads it into a ``str``, but no UTF-8 file,
hash or terminal can hold that character. Rather than crash (a traceback in the
middle of a run) or silently change the text, every place localeval writes or
hashes text follows one rule (docs/failure-behaviour.md, "Outputs of every verb"):

- JSON files: the character is written as its JSON escape ``\\udXXX``, so the file
  is valid UTF-8 and reads back to the very same string (``dumps_strict``);
- other text files (Markdown, HTML, CSV, qrels): written as the six characters
  ``\\udXXX`` (Python's ``backslashreplace``, ``TEXT_ERRORS``);
- hashes (the cache's keys, content hashes, the dataset's version): the UTF-8
  bytes with the surrogate encoded as its three bytes (``surrogatepass``,
  ``hash_bytes``): every valid text hashes exactly as before, and no valid text
  can collide with one holding a surrogate;
- the terminal: ``errors.printable`` shows it as ``\\udXXX``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["TEXT_ERRORS", "dumps_strict", "hash_bytes", "escape_surrogates"]

#: The ``errors=`` of every text file localeval writes: a lone surrogate as ``\udXXX``.
TEXT_ERRORS = "backslashreplace"

_SURROGATE = re.compile("[\ud800-\udfff]")


def hash_bytes(text: str) -> bytes:
    """``text`` as the bytes a hash is taken of: UTF-8, a lone surrogate as its 3 bytes."""
    return text.encode("utf-8", "surrogatepass")


def escape_surrogates(json_text: str) -> str:
    """JSON text with every lone surrogate written as its ``\\udXXX`` escape.

    A surrogate can only stand inside a JSON string here (``json.dumps`` writes
    nothing else that is not ASCII), where the escape means the same character.
    """
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def dumps_strict(obj: Any, **kw: Any) -> str:
    """``json.dumps`` that writes only strict JSON (RFC 8259) that UTF-8 can encode.

    No NaN or Infinity: scores are made finite before they get here (the runner
    unscores a non-finite value); a non-finite float left in a metric's working
    becomes null rather than a token strict JSON readers reject. A lone surrogate
    is written as its escape (the module's rule), so encoding the text never fails.
    """
    try:
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False, **kw)
    except ValueError:
        text = json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False, **kw)
    return escape_surrogates(text)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
