"""One run at a time per output folder: a lock file that names the run holding it.

Two runs writing the same ``results.jsonl`` interleave their lines (and NUL
bytes where one truncates what the other appends). The folder's lock is an
advisory ``flock`` on ``DIR/.localeval.lock``; the file holds the holder's pid,
host and start time so that the second run can say who holds it.

Written with the standard library rather than the ``filelock`` package:
``filelock`` does not record or report the holder, and the kernel's flock
already gives what matters most, release when the holder dies (even by
SIGKILL), so a lock left by a dead run is simply taken over, and said so.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from pathlib import Path

from localeval.errors import OutputError, UsageError, os_reason

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # not POSIX: no flock, checked before use

__all__ = ["FolderLock", "LOCK_FILE"]

#: The lock file's name inside the output folder.
LOCK_FILE = ".localeval.lock"


class FolderLock:
    """An exclusive, non-blocking lock on an output folder, held until ``release``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> str | None:
        """Take the lock; a UsageError names the holder when another run has it.

        Returns a note to show the user when a lock left by a run that is gone
        was taken over, else None.
        """
        for _ in range(10):  # the holder may unlink the file between our open and lock
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise UsageError(f"output folder {self.folder}: cannot write in it "
                                 f"({os_reason(e)}); choose another with -o") from None
            if not _try_lock(fd):
                holder = _holder(fd)
                os.close(fd)
                raise UsageError(f"output folder {self.folder} is in use by another localeval "
                                 f"run ({holder}); wait for it to finish or choose another "
                                 "folder with -o")
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:  # pragma: no cover - ten races in a row
            raise UsageError(f"output folder {self.folder}: could not lock {self.path}")
        self._fd = fd
        left = _holder(fd, raw=True)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()} {socket.gethostname()} {stamp}\n".encode())
        except OSError as e:  # a full disk or quota: no lock file, empty or not, stays behind
            self.release()
            raise OutputError(f"cannot write {self.path}: {os_reason(e)}; free space in "
                              f"{self.folder} or choose another folder with -o") from None
        if not left:
            return None
        pid = left.split()[0]
        state = "no longer running" if not _alive(pid) else "no longer holding it"
        return (f"took over the lock {self.path} left by an earlier run (pid {pid}, "
                f"{state}); its results in this folder are replaced")

    def release(self) -> None:
        """Remove the lock file and let go (idempotent)."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)  # before unlocking: a waiter then sees a new inode
        except OSError:
            pass
        os.close(self._fd)  # closing drops the flock
        self._fd = None


def _try_lock(fd: int) -> bool:
    if fcntl is None:  # pragma: no cover - Windows: lock one byte past the holder's line
        import msvcrt

        os.lseek(fd, 4096, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError as e:  # some network file systems refuse flock: run unlocked
        return e.errno not in (errno.EAGAIN, errno.EACCES)  # those two: held by another


def _holder(fd: int, raw: bool = False) -> str:
    """The holder's line (raw) or "pid N on HOST since TIME" for messages."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        line = os.read(fd, 200).decode("utf-8", "replace").strip()
    except OSError:
        line = ""
    if raw:
        return line
    parts = line.split(maxsplit=2)
    if len(parts) == 3:
        return f"pid {parts[0]} on {parts[1]}, since {parts[2]}"
    return "a process that has not written its pid yet" if not line else line


def _alive(pid: str) -> bool:
    if not pid.isdigit() or not 0 < int(pid) < 2**22:  # never signal 0 or a group
        return False
    try:
        os.kill(int(pid), 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
