"""Writing a run folder: one ``results.jsonl`` line per finished sample, then ``summary.json``."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Iterator, Mapping

from localeval.errors import OutputError, os_reason
from localeval.output import make_folder
from localeval.results.content import sample_content
from localeval.results.files import RESULTS_FILE, SUMMARY_FILE, dumps_strict, write_json
from localeval.results.folder_lock import FolderLock
from localeval.results.table import CSV_FILE, write_results_csv
from localeval.types import Sample, Score

__all__ = ["RunWriter", "sample_record", "make_output_folder", "add_to_summary"]


def sample_record(sample: Sample, scores: Mapping[str, Score]) -> dict[str, Any]:
    """One ``results.jsonl`` line: the sample's id and content (question, hashes of contexts
    and answer: what ``compare`` aligns on), its values, why any is unscored, the working."""
    return {
        "id": sample.id,
        **sample_content(sample),
        "scores": {k: v.value for k, v in scores.items()},
        "errors": {k: v.reason for k, v in scores.items() if v.value is None},
        "details": {k: v.details for k, v in scores.items() if v.details},
    }


class RunWriter:
    """Appends one results line per finished sample; writes summary.json and results.csv last.

    Creating it checks the output folder and locks it (``lock.FolderLock``), so
    a bad ``-o`` or a folder another run is using fails before any work is done;
    ``results.jsonl`` is replaced only when the first line is written (or
    ``start``), so a run that fails before scoring leaves the last results in
    place. Each line goes to the file in one ``os.write`` loop, unbuffered, so an
    interrupted run leaves every finished sample on disk; a write that fails
    part-way (a full disk) is cut back to the last whole line and reported as an
    ``OutputError`` naming ``results.jsonl``. ``note`` says when a stale lock was
    taken over.
    """

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(out_dir)
        make_output_folder(self.dir)
        self._lock = FolderLock(self.dir)
        self.note = self._lock.acquire()
        self._fd: int | None = None
        self._size = 0  # bytes of whole lines written: where a failed write is cut back to
        self._failed = False
        self._lines = 0

    @property
    def results_path(self) -> Path:
        return self.dir / RESULTS_FILE

    def start(self) -> None:
        """Open ``results.jsonl`` for this run (replacing an earlier run's)."""
        if self._fd is None:
            try:
                self._fd = os.open(self.results_path,
                                   os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_BINARY, 0o644)
            except OSError as e:
                self.release()
                raise OutputError(f"cannot write {self.results_path}: {os_reason(e)}") from None

    def write(self, record: Mapping[str, Any]) -> None:
        """Append ``record`` as one whole line, or raise OutputError leaving the lines before."""
        self.start()
        assert self._fd is not None
        data = (dumps_strict(record) + "\n").encode("utf-8")  # surrogates escaped: encodes
        try:
            view = memoryview(data)
            while view:  # os.write may write part of it (a disk filling up)
                view = view[os.write(self._fd, view):]
        except OSError as e:
            self._failed = True
            with contextlib.suppress(OSError):  # no torn last line: cut back to the last whole one
                os.ftruncate(self._fd, self._size)
                os.lseek(self._fd, self._size, os.SEEK_SET)
            raise OutputError(f"cannot write {self.results_path}: {os_reason(e)}; the "
                              f"{self._lines} lines written so far are kept") from None
        self._size += len(data)
        self._lines += 1

    def close(self, summary: Mapping[str, Any]) -> None:
        """Close ``results.jsonl``, write ``summary.json`` and results.csv, let go of the folder.

        After a failed ``write`` (its OutputError is on its way to the user) the
        summary and table are still tried, for the lines that were written, but a
        second failure is not raised over the first: the message names the file
        that failed first.
        """
        try:
            self.start()
            self._close_results()
            try:
                write_json(self.dir / SUMMARY_FILE, summary)
                write_results_csv(self.dir / CSV_FILE, _WrittenRecords(self.results_path))
            except OutputError:
                if not self._failed:
                    raise
        finally:
            self.release()

    def release(self) -> None:
        """Let go of the folder without writing a summary (a run that failed before scoring)."""
        self._close_results()
        self._lock.release()

    def _close_results(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


# results.jsonl is written as bytes (UTF-8, ``\n`` line ends) on every system
_O_BINARY = getattr(os, "O_BINARY", 0)


class _WrittenRecords:
    """The lines of ``results.jsonl`` read back, anew on each pass (results.csv makes two).

    Read back rather than kept: a million samples' records held for results.csv
    took about half a gigabyte. The file is this run's own strict JSON.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with open(self.path, encoding="utf-8", newline="") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def make_output_folder(d: Path) -> None:
    """Create the output folder; a path that cannot be one is an OutputError saying why
    (exit 2; ``output.make_folder``)."""
    make_folder(d)


def add_to_summary(out_dir: str | os.PathLike[str], sections: Mapping[str, Any]) -> None:
    """Add ``sections`` to a finished run's summary.json, under the folder's lock.

    For what is known only once ``evaluate`` has returned: the outcome of the
    command line's gates (``localeval runs`` shows it). The file is replaced
    atomically; a folder another run holds by now is a UsageError, a file that
    cannot be written an OutputError (the caller warns: the run itself is complete).
    """
    d = Path(out_dir)
    lock = FolderLock(d)
    lock.acquire()
    try:
        path = d / SUMMARY_FILE
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise OutputError(f"cannot add to {path}: {e}") from None
        summary.update(sections)
        write_json(path, summary)
    finally:
        lock.release()
