"""The one way the command line writes to the terminal: every line through ``shown``.

Ids, file and folder names, run, version and tag names and the messages of a
user's own code reach the terminal in many verbs. A raw ESC recolours the
terminal (or hides a line), U+202E reverses what follows, U+2028 starts a line
a log viewer does not count, and a lone surrogate (text that JSON allows and
UTF-8 cannot encode) raises UnicodeEncodeError in ``print``. So no verb prints
itself: ``say``, ``warn``, ``note`` and ``error`` escape every line they are
given (``errors.printable``: C0/C1 controls, bidi and other format characters,
line and paragraph separators and lone surrogates written as Python writes
them, ``\\x1b``, ``\\u202e``, ``\\udc80``), and ``show`` prints a rich
renderable whose data cells are ``cell`` (a ``Text`` of ``shown`` text: no
markup is read from data either). Escaping a whole line, not only the data in
it, means no caller can forget a piece; ``printable`` is idempotent, so text
escaped earlier (a message that quotes a name) comes out the same.

The rule for text that cannot be encoded, on the terminal: a character the
stream's encoding cannot write (any character on an ASCII terminal, a lone
surrogate anywhere) is written as its backslash escape; nothing is dropped
and nothing raises.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from localeval.errors import printable

__all__ = ["shown", "say", "say_json", "json_text", "warn", "note", "error", "cell", "show", "terminal", "PROG"]

#: The prefix of the lines that are the command's own words, not its result.
PROG = "localeval"


def shown(value: object) -> str:
    """``value`` as text with every control, format and separator character made visible
    (the one escape of the command line; newlines too: one value is one line)."""
    return printable(value)


def _lines(text: object) -> str:
    """Each line of ``text`` escaped, the newlines between them kept."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def _encodable(text: str, stream: TextIO) -> str:
    """``text`` with what ``stream`` cannot encode written as backslash escapes."""
    enc = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(enc)
        return text
    except (UnicodeEncodeError, LookupError):
        try:
            return text.encode(enc, "backslashreplace").decode(enc)
        except LookupError:
            return text.encode("ascii", "backslashreplace").decode("ascii")


def say(text: object = "", *, err: bool = False, end: str = "\n", flush: bool = False) -> None:
    """Print ``text`` (each line escaped) on stdout, or stderr with ``err``."""
    stream = sys.stderr if err else sys.stdout
    print(_encodable(_lines(text), stream), file=stream, end=end, flush=flush)


def json_text(text: str) -> str:
    """A JSON text with every character ``shown`` would escape written as a JSON escape
    (``\\u202e``, a surrogate pair past U+FFFF): the same JSON, nothing raw on the
    terminal. Outside strings JSON holds only printable characters, spaces and newlines."""
    def esc(c: str) -> str:
        if c.isprintable() or c in " \n":
            return c
        code = ord(c)
        if code > 0xFFFF:
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"
    return "".join(esc(c) for c in text)


def say_json(text: str, *, end: str = "\n") -> None:
    """Print a JSON text (``dumps_strict``'s) on stdout, escaped as ``json_text``."""
    print(_encodable(json_text(text), sys.stdout), end=end)


def warn(message: object) -> None:
    """``localeval: warning: MESSAGE`` on stderr."""
    say(f"{PROG}: warning: {message}", err=True)


def note(message: object, *, kind: str = "note") -> None:
    """``localeval: note: MESSAGE`` (or another ``kind``) on stderr."""
    say(f"{PROG}: {kind}: {message}" if kind else f"{PROG}: {message}", err=True)


def error(message: object) -> None:
    """``localeval: error: MESSAGE`` on stderr."""
    say(f"{PROG}: error: {message}", err=True)


def cell(value: object, style: str = "") -> Any:
    """A rich table cell of data: a ``Text`` (no markup read) of ``shown`` lines."""
    from rich.text import Text

    return Text(_lines(value), style=style)


def terminal(*, err: bool = False, wide: bool = False) -> Any:
    """The rich Console of the command line. ``wide``: 160 columns when the stream is not
    a terminal (a pipe, a CI log), for the tables that need them; otherwise rich's own
    width ($COLUMNS, else 80 when not a terminal)."""
    from rich.console import Console

    c = Console(stderr=err)
    return c if (c.is_terminal or not wide) else Console(stderr=err, width=160)


def show(renderable: Any, *, err: bool = False, wide: bool = False, crop: bool = False,
         console: Any = None) -> None:
    """Print a rich renderable (a table of ``cell``s, a ``Text``); ``crop=False``: a line
    wider than the terminal wraps instead of being cut."""
    (console or terminal(err=err, wide=wide)).print(renderable, crop=crop)
