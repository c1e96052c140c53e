"""The names of a run folder's files, the atomic write they share, and reading back
whole lines of a file that a stopped write may have cut short."""

from __future__ import annotations

import contextlib
import json
import math
import os
import warnings
from pathlib import Path
from typing import IO, Any, Iterator

from localeval.errors import LocalevalWarning, OutputError, os_reason

__all__ = ["RESULTS_FILE", "SUMMARY_FILE", "write_json", "dumps_strict", "atomic_file",
           "whole_lines"]

#: One JSON object per sample, appended as each sample finishes.
RESULTS_FILE = "results.jsonl"
#: The run's aggregate: metric means, CIs, signature, usage.
SUMMARY_FILE = "summary.json"


def dumps_strict(obj: Any, **kw: Any) -> str:
    """``json.dumps`` that writes only strict JSON (RFC 8259): no NaN, no Infinity.

    Scores are made finite before they get here (the runner unscores a
    non-finite value); a non-finite float left in a metric's working becomes
    null rather than a token that strict JSON readers reject.
    """
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, **kw)
    except ValueError:
        return json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False, **kw)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, encoding: str = "utf-8",
                newline: str | None = None) -> Iterator[IO[str]]:
    """A text file that replaces ``path`` only once it is completely written.

    Written as ``PATH.tmp`` then renamed, so a reader never sees half of it. If
    anything fails (a full disk, an error while rendering) the temporary file is
    removed, never left beside the results; an operating-system error becomes
    an ``OutputError`` naming ``path`` (exit 2: a fault of the output folder).
    """
    final = Path(path)
    tmp = final.with_name(final.name + ".tmp")
    try:
        with open(tmp, "w", encoding=encoding, newline=newline) as f:
            yield f
        os.replace(tmp, final)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError):
            raise OutputError(f"cannot write {final}: {os_reason(e)}") from None
        raise


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented strict JSON, atomically (``atomic_file``)."""
    text = dumps_strict(obj, indent=2) + "\n"
    with atomic_file(path) as f:
        f.write(text)


def whole_lines(raw: bytes, path: str | os.PathLike[str]) -> bytes:
    """``raw`` (a JSONL file's bytes) without a last line that a stopped write cut short.

    localeval appends whole lines, but a run killed mid-write, a power loss or
    an older version on a full disk can leave a last line without its newline
    that is not JSON (possibly cut inside a UTF-8 character). That line is
    dropped with a ``LocalevalWarning`` naming the file and line, so the folder
    stays readable; a bad line anywhere else is still an error for the reader.
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
    warnings.warn(f"{path}, line {line}: the last line is cut short (a write that did not "
                  f"finish: a full disk or a killed run); it is skipped, the lines before it "
                  "are read", LocalevalWarning, stacklevel=3)
    return raw[:cut]
