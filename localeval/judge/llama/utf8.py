"""A strict UTF-8 prefix automaton, to steer generation away from invalid bytes.

llama.cpp's grammar decoder accepts overlong sequences and encoded surrogates,
and Python's incremental decoder accepts a prefix such as ``ED B0`` (a
surrogate) and fails only once the character is complete, which is too late
to steer generation. So the sampler checks every token's bytes against this
automaton before emitting it, and the output always decodes strictly.
"""

from __future__ import annotations

__all__ = ["UTF8_START", "Utf8Prefix", "utf8_step"]

#: (continuation bytes still due, low and high bound of the next one) at a character boundary.
UTF8_START = (0, 0x80, 0xBF)


def utf8_step(state: tuple[int, int, int], data: bytes) -> tuple[int, int, int] | None:
    """Advance a strict UTF-8 prefix check over ``data``; None when invalid.

    ``state`` is (continuation bytes still due, low and high bound of the next
    one); the bounds rule out overlong forms, surrogates and code points past
    U+10FFFF at the first byte that shows them.
    """
    need, lo, hi = state
    for b in data:
        if need:
            if not lo <= b <= hi:
                return None
            need, lo, hi = need - 1, 0x80, 0xBF
        elif b < 0x80:
            continue
        elif 0xC2 <= b <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif b == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif b == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif 0xE1 <= b <= 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif b == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif b == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        elif 0xF1 <= b <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        else:
            return None
    return need, lo, hi


class Utf8Prefix:
    """Strict UTF-8 prefix check of the output so far."""

    def __init__(self) -> None:
        self.state = UTF8_START

    def ok(self, piece: bytes) -> bool:
        """Whether emitting ``piece`` next keeps the output valid."""
        # Empty: a control token (<|im_start|>...), which the grammar would read as
        # its text while it prints nothing. NUL never belongs in JSON text, and the
        # grammar reads a piece as a C string: whatever follows a NUL escapes it.
        return (piece != b"" and b"\x00" not in piece
                and utf8_step(self.state, piece) is not None)

    def push(self, piece: bytes) -> None:
        """Record that ``piece`` was emitted (it must have passed ``ok``)."""
        new = utf8_step(self.state, piece)
        assert new is not None
        self.state = new
