"""The default output folder: one folder per run under ``localeval-out/``, and ``latest``.

``localeval run`` without ``-o`` used to write every run into ``localeval-out``
itself, so the second run of other data met the first one's folder (refused, by
``folder_rule``, but the user had to pick a folder by hand each time). Now the
folder is chosen from what makes a run the run it is, so that:

- the same command again picks the same folder, which is how a stopped run
  resumes (the folder rule then finds its own run there);
- other data, metrics, judge, embedder or settings pick another folder, and
  nothing is refused or replaced: a team's weekly runs accumulate side by side;
- ``localeval-out/latest`` points to the last run that finished, so scripts and
  ``localeval diff localeval-out/latest ...`` need not know the folder's name.

A folder is named ``LABEL-KEY``: LABEL is the run's ``--name``, else the data
file's stem (``example``, ``qa``), made safe for any file system; KEY is the
first 8 hex digits of ``results.Identity.folder_key`` of the run asked for:
every part of the run's identity that the folder rule compares (the dataset's
content hash, of the whole dataset, so a ``--limit`` trial and the full run
share a folder, as they share a cache; the metrics and user-defined metrics'
definitions; the judge and embedder as named; seed, verdict and reasons modes,
language, repeats and the localeval version), so two runs that would be
refused in one folder get two folders.

``latest`` is a relative symbolic link, replaced atomically once the run's
summary.json and reports are written (a run that stops never becomes
``latest``). Where links cannot be made (some Windows set-ups), a text file
``LATEST`` holding the folder's name is written instead.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from localeval.config import RunConfig
from localeval.dataset import Dataset, DataVersion
from localeval.metrics import Metric, known_versions
from localeval.results import RunWriter
from localeval.run.folder_rule import FolderRule, requested_identity

__all__ = ["RunFolders", "RunOutput", "folder_label", "LATEST_LINK", "LATEST_FILE"]

#: The link to the last finished run, inside the root folder.
LATEST_LINK = "latest"
#: Written instead of the link where links cannot be made.
LATEST_FILE = "LATEST"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_LABEL = 40


def folder_label(name: str | None, source: str) -> str:
    """The LABEL part: the run's name, else the data file's stem; ``run`` when neither
    leaves a usable character (a DataFrame, a name in another script)."""
    raw = name if name else (Path(source).stem if source and not source.startswith("<")
                             else "")
    label = _UNSAFE.sub("-", raw).strip("-.")[:_MAX_LABEL].strip("-.")
    return label or "run"


def _model_key(model: Any) -> str:
    """How a judge or embedder takes part in the key: as named (a path, a model name, a
    URL), its fingerprint when given as an object, ``default``/``off`` otherwise."""
    if model is None:
        return "default"
    if model is False:
        return "off"
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    return str(getattr(model, "fingerprint", None) or type(model).__name__)


@dataclass
class RunFolders:
    """``out_dir`` for ``evaluate``: choose the run's folder under ``root`` (see the module
    docstring) and point ``root/latest`` at it once the run has finished.

    ``on_chosen`` is told the folder as soon as it is chosen (the command line says
    where the run writes, and where a stopped run's rows are).
    """

    root: Path
    on_chosen: Callable[[Path], None] | None = None
    chosen: Path | None = field(default=None, init=False)

    def choose(self, cfg: RunConfig, *, name: str | None, source: str, data: DataVersion,
               metrics: Sequence[str], definitions: dict[str, str], version: str) -> Path:
        """The run's folder, ``root/LABEL-KEY``; the same inputs always give the same one.
        ``definitions``: the user-defined metrics' definition hashes (an edited criterion
        is another run)."""
        key = requested_identity(data, metrics, definitions, version=version, seed=cfg.seed,
                                 verdicts=cfg.verdicts, lang=cfg.lang, repeats=cfg.repeats,
                                 reasons=cfg.reasons, judge=_model_key(cfg.judge),
                                 embedder=_model_key(cfg.embedder)).folder_key()
        self.chosen = Path(self.root) / f"{folder_label(name, source)}-{key[:8]}"
        if self.on_chosen is not None:
            self.on_chosen(self.chosen)
        return self.chosen

    def point_latest(self) -> str:
        """Make ``root/latest`` point at the chosen folder; returns what now points there
        (``root/latest``, or ``root/LATEST`` where no link can be made)."""
        if self.chosen is None:
            raise RuntimeError("point_latest before choose")
        root = Path(self.root)
        link = root / LATEST_LINK
        tmp = root / f".{LATEST_LINK}.{os.getpid()}"
        try:
            if link.exists() and not link.is_symlink():
                raise OSError(f"{link} exists and is not a link")
            tmp.unlink(missing_ok=True)
            os.symlink(self.chosen.name, tmp, target_is_directory=True)
            os.replace(tmp, link)  # atomic: a reader sees the old link or the new one
            return str(link)
        except OSError:
            tmp.unlink(missing_ok=True)
        from localeval.results import atomic_file

        with atomic_file(root / LATEST_FILE) as f:  # an OSError becomes an OutputError
            f.write(self.chosen.name + "\n")
        return str(root / LATEST_FILE)


@dataclass
class RunOutput:
    """A run's output folder, chosen (``RunFolders``), checked against the run it holds
    (``FolderRule``) and locked (``RunWriter``) before any model loads, so that a bad
    ``-o``, a folder in use or one holding another run fails before the work."""

    writer: RunWriter | None = None
    rule: FolderRule | None = None
    folders: RunFolders | None = None

    @classmethod
    def open(cls, out_dir: Any, cfg: RunConfig, ds: Dataset, data: DataVersion,
             chosen: Sequence[Metric], *, name: str | None, overwrite: bool, options_as: str,
             version: str, warn: Callable[[str], None]) -> RunOutput:
        """``out_dir``: a folder, a ``RunFolders`` (choose one under it) or None (no files)."""
        folders = out_dir if isinstance(out_dir, RunFolders) else None
        keys, defined = [m.key for m in chosen], known_versions(chosen)
        if folders is not None:
            out_dir = folders.choose(cfg, name=name, source=ds.source, data=data, metrics=keys,
                                     definitions=defined, version=version)
        if out_dir is None:
            return cls()
        writer = RunWriter(out_dir)
        if writer.note:
            warn(writer.note)
        try:
            rule = FolderRule(writer.dir, overwrite=overwrite, name=name, options_as=options_as)
            rule.check_request(ds, data, keys, definitions=defined, version=version,
                               seed=cfg.seed, verdicts=cfg.verdicts, lang=cfg.lang,
                               repeats=cfg.repeats, reasons=cfg.reasons)
        except BaseException:
            writer.release()
            raise
        return cls(writer, rule, folders)

    def finished(self) -> None:
        """The run is complete: ``latest`` points to it (with ``RunFolders``)."""
        if self.folders is not None:
            self.folders.point_latest()

    def release(self) -> None:
        if self.writer is not None:
            self.writer.release()
