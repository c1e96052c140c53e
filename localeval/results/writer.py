"""Writing a run folder: one ``results.jsonl`` line per finished sample, then ``summary.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any, Iterator, Mapping

from localeval.results.content import content_fields
from localeval.errors import UsageError, os_reason
from localeval.results.files import RESULTS_FILE, SUMMARY_FILE, dumps_strict, write_json
from localeval.results.lock import FolderLock
from localeval.results.table import CSV_FILE, write_results_csv
from localeval.types import Sample, Score

__all__ = ["RunWriter", "sample_record"]


def sample_record(sample: Sample, scores: Mapping[str, Score]) -> dict[str, Any]:
    """One ``results.jsonl`` line: the sample's id and content (question, hashes of contexts
    and answer: what ``compare`` aligns on), its values, why any is unscored, the working."""
    return {
        "id": sample.id,
        **content_fields(sample.question, sample.contexts, sample.answer),
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
    place. Each line is flushed as it is written, so an interrupted run leaves
    every finished sample on disk. ``note`` says when a stale lock was taken over.
    """

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(out_dir)
        _make_folder(self.dir)
        self._lock = FolderLock(self.dir)
        self.note = self._lock.acquire()
        self._f: IO[str] | None = None

    def start(self) -> None:
        """Open ``results.jsonl`` for this run (replacing an earlier run's)."""
        if self._f is None:
            try:
                self._f = open(self.dir / RESULTS_FILE, "w", encoding="utf-8")
            except OSError as e:
                self.release()
                raise UsageError(f"cannot write {self.dir / RESULTS_FILE}: "
                                 f"{os_reason(e)}") from None

    def write(self, record: Mapping[str, Any]) -> None:
        self.start()
        assert self._f is not None
        try:
            self._f.write(dumps_strict(record) + "\n")
            self._f.flush()
        except OSError as e:
            raise UsageError(f"cannot write {self.dir / RESULTS_FILE}: {os_reason(e)}; "
                             "the lines written so far are kept") from None

    def close(self, summary: Mapping[str, Any]) -> None:
        """Close ``results.jsonl``, write ``summary.json`` and let go of the folder."""
        try:
            self.start()
            assert self._f is not None
            self._f.close()
            write_json(self.dir / SUMMARY_FILE, summary)
            write_results_csv(self.dir / CSV_FILE, _WrittenRecords(self.dir / RESULTS_FILE))
        except OSError as e:
            raise UsageError(f"cannot write {self.dir / SUMMARY_FILE}: {os_reason(e)}") from None
        finally:
            self.release()

    def release(self) -> None:
        """Let go of the folder without writing a summary (a run that failed before scoring)."""
        if self._f is not None and not self._f.closed:
            self._f.close()
        self._lock.release()


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


def _make_folder(d: Path) -> None:
    """Create the output folder; a path that cannot be one is a UsageError saying why."""
    if d.exists() and not d.is_dir():
        raise UsageError(f"output folder {d} is a file; choose a folder with -o")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocker = next((p for p in d.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file" if blocker is not None else os_reason(e)
        raise UsageError(f"cannot create output folder {d}: {why}; choose another with -o"
                         ) from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise UsageError(f"output folder {d}: permission denied (not writable); "
                         "choose another with -o")
