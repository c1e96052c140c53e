"""The one output policy: where a command may write, and over what.

A command builds one ``OutputPolicy`` from every path it reads (data files,
corpus folders, run folders, label sheets, pipeline files, metrics files, the
cache file) and ``overwrite``, before it does any work, and every output goes
through it. It refuses (``OutputError``, exit 2, one message naming the output,
the input and the way out; nothing is written):

- an output that *is* an input (the same file, through any symbolic link);
- an output *inside* an input folder: the next run would read it as input (a test
  set written into the corpus folder becomes a document);
- an output folder that *holds* an input: the command's files would be written
  over it or mixed into the data it reads;
- a finished result made with *other settings* (``check_settings``): each
  verb stamps its result with the options that shaped it; the same settings
  again replace it (a rerun), other ones only with ``--overwrite``.

Files are then written atomically or appended line by line (``files``), and
every operating-system error is an ``OutputError`` naming the file.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Mapping

from localeval.errors import OutputError, printable
from localeval.output.files import AppendFile, atomic_file, make_folder, write_text
from localeval.output.text import dumps_strict

__all__ = ["OutputPolicy", "SETTINGS_KEY", "settings_record", "html_settings_comment"]

#: The key of a JSON result that holds the settings it was made with.
SETTINGS_KEY = "output_settings"
_HTML_MARK = "localeval-output-settings"
_HTML_RE = re.compile(r"<!-- " + _HTML_MARK + r" ([A-Za-z0-9+/=]+) -->")

PathArg = str | os.PathLike[str]


@dataclass(frozen=True)
class _Input:
    shown: str
    real: str
    is_dir: bool


def _real(path: PathArg) -> str:
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def _under(inner: str, outer: str) -> bool:
    """``inner`` lies strictly inside the folder ``outer`` (both resolved)."""
    return inner != outer and Path(inner).is_relative_to(outer)


def _same(a: PathArg, real_a: str, b: _Input) -> bool:
    try:
        return os.path.samefile(a, b.real)
    except OSError:  # one of them does not exist (yet): compare the resolved paths
        return real_a == b.real


def settings_record(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``{"stamp": ..., "settings": ...}``: what a result records about how it was made."""
    canon = json.loads(dumps_strict(dict(settings), sort_keys=True))
    stamp = hashlib.sha256(dumps_strict(canon, sort_keys=True).encode("utf-8")).hexdigest()[:16]
    return {"stamp": stamp, "settings": canon}


def html_settings_comment(settings: Mapping[str, Any]) -> str:
    """The settings record as one HTML comment, for a page that is the result itself."""
    raw = dumps_strict(settings_record(settings), sort_keys=True).encode("utf-8")
    return f"<!-- {_HTML_MARK} {base64.b64encode(raw).decode('ascii')} -->\n"


class OutputPolicy:
    """Every input of one command, and the checks and writers of its outputs."""

    def __init__(self, inputs: Iterable[PathArg | None] = (), *, overwrite: bool = False,
                 option: str = "-o", overwrite_option: str = "--overwrite") -> None:
        self.overwrite = overwrite
        self.option = option
        self.overwrite_option = overwrite_option
        self.inputs: list[_Input] = []
        for p in inputs:
            if p is None or os.fspath(p) in ("", "-"):
                continue
            real = _real(p)
            self.inputs.append(_Input(printable(os.fspath(p)), real, os.path.isdir(real)))

    def add_inputs(self, inputs: Iterable[PathArg | None]) -> None:
        """More paths the command reads, known once it has looked (a run's files)."""
        self.inputs += OutputPolicy(inputs).inputs

    # -- where ---------------------------------------------------------------------------

    def check(self, out: PathArg, *, folder: bool, option: str | None = None) -> Path:
        """Refuse ``out`` (a file, or a folder when ``folder``) if it is, lies inside, or
        (a folder) holds an input; returns it as a Path. Nothing is created."""
        opt = option or self.option
        real = _real(out)
        shown = printable(os.fspath(out))
        for inp in self.inputs:
            if _same(out, real, inp):
                raise OutputError(f"{opt} {shown} is {inp.shown}, an input this command "
                                  f"reads; nothing was written. Choose another {opt}")
            if inp.is_dir and _under(real, inp.real):
                raise OutputError(f"{opt} {shown} lies inside {inp.shown}, an input folder "
                                  "this command reads: the next run would read what is written "
                                  f"there as input. Nothing was written; choose an {opt} "
                                  "outside it")
            if folder and _under(inp.real, real):
                raise OutputError(f"{opt} {shown} holds {inp.shown}, an input this command "
                                  "reads: its files would be written over or mixed into "
                                  f"it. Nothing was written; choose another {opt}")
        return Path(out)

    def folder(self, out: PathArg, *, option: str | None = None) -> Path:
        """``check`` the folder, then create it (``files.make_folder``)."""
        self.check(out, folder=True, option=option)
        return make_folder(out, option=option or self.option)

    # -- over what -----------------------------------------------------------------------

    def check_settings(self, result: PathArg, settings: Mapping[str, Any], *,
                       option: str | None = None) -> None:
        """Refuse to replace the finished result ``result`` made with other ``settings``.

        ``result`` is the verb's main file (diff.json, a test set's summary.json, a
        history page); a missing one is fine, and so is one with the same stamp (the
        same command again). One without a readable stamp (another program's file, an
        earlier localeval's) is replaced only with ``overwrite``, like one of other
        settings. The message names each setting that differs.
        """
        path = Path(result)
        if self.overwrite or not path.exists():
            return
        opt = option or self.option
        old = _recorded(path)
        new = settings_record(settings)
        if old is not None and old.get("stamp") == new["stamp"]:
            return
        if old is None:
            why = "which records no settings (another program's file, or an earlier localeval's)"
        else:
            why = f"made with other settings ({_differences(old.get('settings'), new['settings'])})"
        raise OutputError(f"{opt}: {printable(os.fspath(path))} holds a finished result "
                          f"{why}, which this command would replace. Nothing was written. "
                          f"To keep it, choose another {opt}; to replace it, add "
                          f"{self.overwrite_option}")

    # -- writing -------------------------------------------------------------------------

    @contextlib.contextmanager
    def atomic(self, path: PathArg, *, newline: str | None = None) -> Iterator[IO[str]]:
        """``files.atomic_file`` for an output ``check``-ed first."""
        self.check(path, folder=False)
        with atomic_file(path, newline=newline) as f:
            yield f

    def write_text(self, path: PathArg, text: str, *, newline: str | None = None) -> Path:
        self.check(path, folder=False)
        return write_text(path, text, newline=newline)

    def write_json(self, path: PathArg, obj: Mapping[str, Any],
                   settings: Mapping[str, Any] | None = None) -> Path:
        """Indented strict JSON; with ``settings``, stamped with them (``SETTINGS_KEY``)."""
        body = dict(obj)
        if settings is not None:
            body[SETTINGS_KEY] = settings_record(settings)
        return self.write_text(path, dumps_strict(body, indent=2) + "\n")

    def appender(self, path: PathArg) -> AppendFile:
        """An ``AppendFile`` for a checkpoint ``check``-ed first (not yet started)."""
        self.check(path, folder=False)
        return AppendFile(path)


def _recorded(path: Path) -> dict[str, Any] | None:
    """The settings record a result holds, None when it holds none that can be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if path.suffix == ".json":
        try:
            rec = json.loads(text).get(SETTINGS_KEY)
        except (ValueError, AttributeError):
            return None
        return rec if isinstance(rec, dict) else None
    m = _HTML_RE.search(text)
    if m is None:
        return None
    try:
        rec = json.loads(base64.b64decode(m.group(1)).decode("utf-8"))
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def _differences(old: Any, new: Mapping[str, Any]) -> str:
    """``seed: 0 -> 1; base: a -> c`` for each setting that differs."""
    old = old if isinstance(old, dict) else {}
    parts = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            parts.append(f"{printable(key)}: {_short(old.get(key))} -> {_short(new.get(key))}")
    return "; ".join(parts) or "its stamp differs"


def _short(value: Any) -> str:
    text = printable(dumps_strict(value, sort_keys=True))
    return text if len(text) <= 80 else text[:77] + "..."
