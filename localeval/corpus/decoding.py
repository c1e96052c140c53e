"""A document file's bytes to text, or the one reason it cannot be read.

Read in this order, so that each refusal names the file and what is wrong with it:
size first (from ``stat``: a file over the limit is never opened), then a byte-order
mark (UTF-8, UTF-16 little or big endian), then NUL bytes (a binary file; UTF-16
without a mark is refused here too, since its text is half NULs), then UTF-8. No
guessing of legacy encodings: a Latin-1 or Shift-JIS file is refused naming the
first byte that is not UTF-8, and the fix (save it as UTF-8) is the user's.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from localeval.errors import os_reason

__all__ = ["read_text", "MB", "normalise_newlines"]

MB = 1024 * 1024

_BOMS = ((codecs.BOM_UTF8, "utf-8", "UTF-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
         (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"))


def normalise_newlines(text: str) -> str:
    """``\\r\\n`` and lone ``\\r`` as ``\\n``: offsets and chunk ids do not depend on the
    line ends of the machine that saved the file."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_text(path: Path, limit: int) -> tuple[str | None, str]:
    """``(text, "")`` for a readable text file of at most ``limit`` bytes, else
    ``(None, reason)``; never raises for a bad file."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block or never end
            return None, "not a regular file"
        size = info.st_size
        if size > limit:
            return None, _too_large(size, limit)
        with open(path, "rb") as f:
            raw = f.read(limit + 1)  # the file may have grown since stat
    except OSError as e:
        return None, f"cannot read: {os_reason(e)}"
    if len(raw) > limit:  # it grew since stat: only limit + 1 bytes were read
        return None, _too_large(None, limit)
    if not raw.strip():
        return None, "empty file" if not raw else "empty file (only whitespace)"
    text, reason = _decode(raw)
    if text is None:
        return None, reason
    text = normalise_newlines(text)
    nul = text.find("\x00")
    if nul >= 0:
        return None, f"binary file (a NUL character at position {nul})"
    if not text.strip():
        return None, "empty file (only whitespace)"
    return text, ""


def _size(n: int) -> str:
    """``50 MB``, ``20.5 MB``; under a tenth of a megabyte ``3,000 bytes``."""
    return f"{n / MB:.1f}".removesuffix(".0") + " MB" if n >= MB // 10 else f"{n:,} bytes"


def _too_large(size: int | None, limit: int) -> str:
    what = _size(size) if size is not None else f"more than {_size(limit)}"
    return (f"{what}, over the {_size(limit)} limit for one document "
            "(max_file_mb); split it, or raise the limit")


def _decode(raw: bytes) -> tuple[str | None, str]:
    for bom, codec, name in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom):].decode(codec), ""
            except UnicodeDecodeError as e:
                at = len(bom) + e.start
                return None, (f"not valid {name} after its byte-order mark (bytes "
                              f"{raw[at:at + 2].hex(' ')} at offset {at})")
    nul = raw.find(b"\x00")
    if nul >= 0:
        return None, (f"binary file (a NUL byte at offset {nul}); text must be UTF-8, or "
                      "UTF-16 with a byte-order mark")
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as e:
        return None, (f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); "
                      "save it as UTF-8")
