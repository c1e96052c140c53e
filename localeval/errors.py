"""Errors that end a run with a clear one-line message and a fixed exit code.

The CLI prints ``str(err)`` and exits with ``err.exit_code``; a traceback is
shown only with ``--debug``. Per-sample judge failures are not here: they are
recorded on the sample as an unscored reason (see ``JudgeCallError``).
"""

from __future__ import annotations

__all__ = [
    "LocalevalError",
    "UsageError",
    "DataError",
    "InvalidArgument",
    "ModelError",
    "JudgeCallError",
    "OutputError",
    "LocalevalWarning",
    "os_reason",
    "printable",
]


class LocalevalError(Exception):
    """Base class: a message meant for the user and the process exit code."""

    exit_code: int = 2


class UsageError(LocalevalError):
    """Bad command-line arguments or metric specifications (exit 2)."""

    exit_code = 2


class InvalidArgument(UsageError, TypeError, ValueError):
    """A value of the wrong type or range for a parameter (exit 2 on the command line).

    Raised to Python callers too (a metric built with ``strictness=inf``, a metric
    class where an instance belongs), so it is both a TypeError and a ValueError:
    code that catches either, as Python code does for bad arguments, catches it.
    ``detail`` is the message without the caller's name (``"scale: expected ..."``),
    for a metrics file to put after its own file and table.
    """

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message


class DataError(LocalevalError):
    """Bad input data; the message names file, line/row and column (exit 2)."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None, unit: str = "line") -> None:
        where = []
        if file:
            where.append(str(file))
        if row is not None:
            where.append(f"{unit} {row}")
        if column:
            where.append(f"column '{column}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.file, self.row, self.column = file, row, column


class OutputError(UsageError):
    """A file of the output folder cannot be written (disk full, read-only, permission).

    Exit 2, as every fault of the output folder the user named with ``-o``
    (docs/failure-behaviour.md): the fix is on the user's side (free space,
    choose another folder), not the model's. The message names the file.
    """


class LocalevalWarning(UserWarning):
    """Something recovered from that the user should know (a torn last line was skipped).

    The command line prints these as ``localeval: warning: ...``.
    """


class ModelError(LocalevalError):
    """A judge or embedding model cannot be loaded or reached (exit 3)."""

    exit_code = 3


class JudgeCallError(Exception):
    """One judge call failed in a way that unscores a sample, not the run.

    Examples: output truncated at the token budget, prompt longer than the
    context window. The runner records ``str(err)`` as the unscored reason.
    """


def os_reason(err: OSError) -> str:
    """The reason in an OSError as a short phrase ("permission denied"), without the path.

    Path problems are reported as ``PATH: reason``; ``str(OSError)`` repeats the
    path and the errno, so every caller words them the same way through this.
    """
    reason = err.strerror or str(err) or type(err).__name__
    return reason[:1].lower() + reason[1:]


def printable(text: object) -> str:
    """``text`` with every character a terminal or page would act on written as an escape.

    User-provided names reach error messages; a raw ESC would recolour the
    terminal and U+202E would reverse what follows, so control, format (bidi)
    and separator characters are shown as Python writes them (``\\x1b``,
    ``\\u202e``); every other character, CJK included, is kept as is.
    """
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in str(text))
