"""The one walk over a user's model folder: every file, ending on symbolic link loops.

A model folder may hold links (a user links a shared subfolder in), so links to
folders are followed, as before; but a link to the folder it is in or to one
above it (``loop -> ..``) is not: ``os.walk(..., followlinks=True)`` would go
round it for ever. ``os.walk``, ``Path.rglob`` and ``shutil.copytree`` offer
"never follow" or "follow blindly"; "follow unless it leads back up the path
walked" is what neither does, hence this module. A folder without a loop is
walked exactly as ``os.walk(..., followlinks=True)`` walks it, so the digests of
the models already in use do not change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

__all__ = ["model_files", "loop_guard"]

_Id = tuple[int, int] | str


def _real(path: str) -> _Id:
    """A folder's identity: (device, inode), or its resolved path where stat fails."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (st.st_dev, st.st_ino)


def _leads_back(folder: str, name: str, path_ids: set[_Id]) -> bool:
    """True when ``folder/name`` is a link to a folder on the path walked (``path_ids``)."""
    p = os.path.join(folder, name)
    return os.path.islink(p) and _real(p) in path_ids


def model_files(root: str | os.PathLike[str], *, skip_dir: Callable[[str], bool],
                keep_file: Callable[[str], bool]) -> list[Path]:
    """The files under ``root`` that ``keep_file`` keeps (by name), in folders ``skip_dir``
    does not skip (by name), sorted by their path relative to ``root``; links to
    folders followed unless they lead back up the path walked."""
    top = os.fspath(root)
    paths: dict[str, set[_Id]] = {top: {_real(top)}}  # folder -> the folders on its path
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
        here = paths.pop(dirpath, {_real(dirpath)})
        dirnames[:] = [d for d in sorted(dirnames)
                       if not skip_dir(d) and not _leads_back(dirpath, d, here)]
        for d in dirnames:
            sub = os.path.join(dirpath, d)
            paths[sub] = here | {_real(sub)}
        out.extend(Path(dirpath) / f for f in filenames if keep_file(f))
    return sorted(out, key=lambda p: p.relative_to(top).as_posix())


def loop_guard() -> Callable[[str, list[str]], set[str]]:
    """An ``ignore`` for ``shutil.copytree`` that leaves out a link to a folder on the path
    copied (a loop), which copytree would copy into itself until the path is too long."""
    paths: dict[str, set[_Id]] = {}

    def ignore(folder: str, names: list[str]) -> set[str]:
        parent = paths.get(os.path.dirname(folder), set())
        here = paths[folder] = parent | {_real(folder)}
        return {n for n in names if _leads_back(folder, n, here)}

    return ignore
