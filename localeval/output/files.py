"""Writing files so that nothing is ever half written, and every fault names its file.

- ``atomic_file``: a text file that replaces its path only once completely
  written (``PATH.tmp`` then ``os.replace``); the temporary file never stays.
- ``AppendFile``: a checkpoint that grows one whole line at a time, each line
  on disk before the next is asked for; a failed write is cut back to the last
  whole line, so what is on disk always reads back.
- ``whole_lines``: the bytes of such a file without a last line a stopped write
  cut short (inside a multi-byte character too).
- ``make_folder``: an output folder, created or refused with the reason.

Every ``OSError`` becomes an ``OutputError`` naming the file (exit 2: the fix is
the user's: free space, another folder), never a traceback or exit 3.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from pathlib import Path
from typing import IO, Iterable, Iterator

from localeval.errors import LocalevalWarning, OutputError, os_reason, printable
from localeval.output.text import TEXT_ERRORS, dumps_strict

__all__ = ["atomic_file", "write_text", "write_json", "make_folder", "whole_lines",
           "AppendFile", "cannot_write", "move_into_place"]

# files are written as bytes (UTF-8, ``\n`` line ends) on every system
_O_BINARY = getattr(os, "O_BINARY", 0)


def cannot_write(path: str | os.PathLike[str], err: OSError, then: str = "") -> OutputError:
    """The one message of a write that failed: ``cannot write PATH: reason[; then]``."""
    return OutputError(f"cannot write {printable(os.fspath(path))}: {os_reason(err)}"
                       + (f"; {then}" if then else ""))


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, encoding: str = "utf-8",
                newline: str | None = None) -> Iterator[IO[str]]:
    """A text file that replaces ``path`` only once it is completely written.

    Written as ``PATH.tmp`` then renamed, so a reader never sees half of it. If
    anything fails (a full disk, an error while rendering) the temporary file is
    removed, never left beside the results; an operating-system error becomes
    an ``OutputError`` naming ``path`` (exit 2). Text UTF-8 cannot encode is
    written as ``\\udXXX`` (``text.TEXT_ERRORS``).
    """
    final = Path(path)
    tmp = final.with_name(final.name + ".tmp")
    try:
        with open(tmp, "w", encoding=encoding, newline=newline, errors=TEXT_ERRORS) as f:
            yield f
        os.replace(tmp, final)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError):
            raise cannot_write(final, e) from None
        raise


def write_text(path: str | os.PathLike[str], text: str, *, newline: str | None = None) -> Path:
    """Write ``text`` to ``path`` atomically (``atomic_file``); returns the path."""
    with atomic_file(path, newline=newline) as f:
        f.write(text)
    return Path(path)


def write_json(path: str | os.PathLike[str], obj: object) -> Path:
    """Write ``obj`` as indented strict JSON, atomically; returns the path."""
    return write_text(path, dumps_strict(obj, indent=2) + "\n")


def move_into_place(tmp: str | os.PathLike[str], final: str | os.PathLike[str], *,
                    then: str = "") -> Path:
    """Rename a finished ``tmp`` (a checkpoint) to ``final``; an OSError is an OutputError."""
    try:
        os.replace(tmp, final)
    except OSError as e:
        raise cannot_write(final, e, then) from None
    return Path(final)


def make_folder(folder: str | os.PathLike[str], *, option: str = "-o") -> Path:
    """Create the output folder; a path that cannot be one is an OutputError saying why."""
    d = Path(folder)
    shown = printable(os.fspath(d))
    if d.exists() and not d.is_dir():
        raise OutputError(f"output folder {shown} is a file; choose a folder with {option}")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocker = next((p for p in d.parents if p.exists() and not p.is_dir()), None)
        why = f"{printable(os.fspath(blocker))} is a file" if blocker is not None else os_reason(e)
        raise OutputError(f"cannot create output folder {shown}: {why}; choose another "
                          f"with {option}") from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {shown}: permission denied (not writable); "
                          f"choose another with {option}")
    return d


def whole_lines(raw: bytes, path: str | os.PathLike[str]) -> bytes:
    """``raw`` (a JSONL file's bytes) without a last line that a stopped write cut short.

    localeval appends whole lines, but a run killed mid-write, a power loss or
    an older version on a full disk can leave a last line without its newline
    that is not JSON, possibly cut inside a UTF-8 character. Only that line is
    dropped, with a ``LocalevalWarning`` naming the file and line; every line
    before it is kept. A bad line anywhere else is still an error for the reader.
    """
    if not raw or raw.endswith(b"\n"):
        return raw
    cut = raw.rfind(b"\n") + 1
    last = raw[cut:]
    if not last.strip():
        return raw
    try:
        json.loads(last.decode("utf-8"))
        return raw  # a complete last line without its newline: kept
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        pass
    line = raw.count(b"\n") + 1
    warnings.warn(f"{printable(os.fspath(path))}, line {line}: the last line is cut short (a "
                  "write that did not finish: a full disk or a killed run); it is skipped, "
                  "the lines before it are read", LocalevalWarning, stacklevel=3)
    return raw[:cut]


class AppendFile:
    """A checkpoint file written one whole line at a time (``start``, ``add``, ``close``).

    ``start(lines)`` replaces the file atomically with ``lines`` (a header and
    what an earlier run left), then each ``add`` appends one line with one
    unbuffered ``os.write`` loop, so a line is on disk before the next is asked
    for and Ctrl-C or a kill loses nothing written. A write that fails part way
    (a full disk) is cut back to the last whole line and raised as an
    ``OutputError`` naming the file and saying the lines before are kept.
    Thread-safe enough for one writer per line: callers hold their own lock.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._size = 0
        self.lines = 0

    def start(self, lines: Iterable[str] = ()) -> AppendFile:
        """Replace the file with ``lines`` (each without its newline), ready to append."""
        with atomic_file(self.path, newline="\n") as f:
            for line in lines:
                f.write(line + "\n")
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | _O_BINARY)
            self._size = os.fstat(self._fd).st_size
        except OSError as e:
            raise cannot_write(self.path, e) from None
        return self

    def add(self, line: str) -> None:
        """Append ``line`` and its newline, or raise OutputError keeping the lines before."""
        if self._fd is None:
            raise OutputError(f"{printable(os.fspath(self.path))} is not open for writing")
        data = (line + "\n").encode("utf-8", TEXT_ERRORS)
        try:
            view = memoryview(data)
            while view:  # os.write may write part of it (a disk filling up)
                view = view[os.write(self._fd, view):]
        except OSError as e:
            with contextlib.suppress(OSError):  # no torn last line: cut back to the last whole one
                os.ftruncate(self._fd, self._size)
            raise cannot_write(self.path, e, "the lines written before are kept in it") from None
        self._size += len(data)
        self.lines += 1

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
