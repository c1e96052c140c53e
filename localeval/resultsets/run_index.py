"""The runs under some folders: each run folder found, and what its summary.json says.

``localeval runs`` lists every run a team has kept (a folder per run, or a tree
of them), oldest first: when it started, its name and tags, the dataset's version
and rows, the judge, each metric's mean and unscored count, and the gates'
outcome. A folder is a run folder when it holds ``results.jsonl``, or a
``summary.json`` with a ``metrics`` object (other commands, ``generate``, write a
summary.json of their own, which is passed over).

The summary is read by ``results.read_summary`` (keys of older versions under
today's names), then every field is read for what it is, never trusted: a
summary that cannot be read is listed with the reason (``problem``); one from an
earlier localeval, without the dataset hash, the start time or a name, is listed
with what it has and a note; nothing here raises for a folder's content. Hidden
folders, ``__pycache__``, ``node_modules`` and ``site-packages`` are not searched,
and links to folders are not followed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from localeval.errors import DataError, UsageError, printable
from localeval.results import RESULTS_FILE, read_summary

__all__ = ["RunEntry", "find_runs", "read_entry"]

_SUMMARY = "summary.json"
_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})


@dataclass
class RunEntry:
    """One run folder as ``localeval runs`` lists it (None: not recorded)."""

    folder: str
    started: str | None = None
    #: where ``started`` comes from: "summary" (the run's own record) or "file time"
    dated_by: str = "summary"
    name: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    dataset_hash: str | None = None
    testset_hash: str | None = None
    rows: int | None = None
    samples: int | None = None
    judge: str | None = None
    embedder: str | None = None
    #: metric key -> {"mean", "n", "unscored"}
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: metric key -> (low, high) of the mean's 95% interval, where the summary has one
    #: (``localeval history`` draws it; not in ``to_dict``, which ``runs --json`` prints)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: {"passed", "gates", "failed"} when the run had gates
    gates: dict[str, Any] | None = None
    localeval: str | None = None
    signature: dict[str, Any] = field(default_factory=dict)
    signature_line: str | None = None
    #: why the folder's summary could not be read (the entry then holds little else)
    problem: str | None = None
    #: what a reader should know: stopped early, a subset, an earlier localeval
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The entry as ``localeval runs --json`` prints it."""
        return {"folder": self.folder, "started": self.started, "dated_by": self.dated_by,
                "name": self.name, "tags": dict(self.tags),
                "dataset": {"hash": self.dataset_hash, "testset": self.testset_hash,
                            "rows": self.rows},
                "samples": self.samples, "judge": self.judge, "embedder": self.embedder,
                "metrics": {k: dict(v) for k, v in self.metrics.items()},
                "gates": dict(self.gates) if self.gates is not None else None,
                "localeval": self.localeval, "signature_line": self.signature_line,
                "problem": self.problem, "notes": list(self.notes)}


def find_runs(folders: Iterable[str | os.PathLike[str]]) -> list[RunEntry]:
    """Every run folder under ``folders`` (each searched recursively), oldest first.

    A folder that does not exist is a UsageError; what a run folder holds never is.
    """
    tops = [Path(f) for f in folders]
    for top in tops:
        if not top.is_dir():
            raise UsageError(f"{top}: no such folder")
    seen: set[Path] = set()
    entries = []
    for top in tops:
        for d in _run_folders(top):
            key = d.resolve()
            if key not in seen:
                seen.add(key)
                entry = read_entry(d)
                if entry is not None:
                    entries.append(entry)
    return sorted(entries, key=lambda e: (e.started or "", e.folder))


def _run_folders(top: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIPPED)
        if RESULTS_FILE in filenames or _SUMMARY in filenames:
            yield Path(dirpath)


def read_entry(folder: Path) -> RunEntry | None:
    """The entry of ``folder``; None when it is not a run folder (a summary.json that is
    not a run's, and no results.jsonl)."""
    has_results = (folder / RESULTS_FILE).is_file()
    entry = RunEntry(str(folder))
    if not (folder / _SUMMARY).is_file():
        entry.problem = ("no summary.json: the run stopped before it finished (killed), "
                         "or the file was removed")
        _date_from_file(entry, folder / RESULTS_FILE)
        return entry
    _date_from_file(entry, folder / _SUMMARY)
    try:
        summary = read_summary(folder, run=False)
    except DataError as e:
        entry.problem = f"summary.json cannot be read: {_reason(e, folder)}"
        return entry
    if not isinstance(summary.get("metrics"), Mapping):
        if not has_results:
            return None
        entry.problem = "summary.json has no 'metrics' object: not a run's summary"
        return entry
    _fill(entry, summary)
    if not has_results:
        entry.notes.append("no results.jsonl beside summary.json")
    return entry


def _fill(e: RunEntry, summary: Mapping[str, Any]) -> None:
    run = _mapping(summary.get("run"))
    if isinstance(run.get("started"), str):
        e.started, e.dated_by = run["started"], "summary"
    e.name = _text(run.get("name"))
    e.tags = {str(k): str(v) for k, v in _mapping(run.get("tags")).items()}
    sig = _mapping(summary.get("signature"))
    e.signature = dict(sig)
    e.dataset_hash, e.testset_hash = _text(sig.get("dataset_hash")), _text(sig.get("testset_hash"))
    e.rows = _count(sig.get("dataset_rows"))
    e.samples = _count(summary.get("n_samples"))
    e.judge = _model(sig.get("judge"), sig.get("judge_fingerprint"))
    e.embedder = _model(sig.get("embedder"), sig.get("embedder_fingerprint"))
    e.localeval = _text(sig.get("localeval"))
    e.signature_line = _text(summary.get("signature_line"))
    for key, m in _mapping(summary.get("metrics")).items():
        m = _mapping(m)
        e.metrics[str(key)] = {"mean": _number(m.get("mean")), "n": _count(m.get("n")),
                               "unscored": _count(m.get("unscored"))}
        ci = m.get("ci95")
        bounds = [_number(x) for x in ci] if isinstance(ci, list) and len(ci) == 2 else []
        if len(bounds) == 2 and bounds[0] is not None and bounds[1] is not None:
            e.intervals[str(key)] = (bounds[0], bounds[1])
    gates = _mapping(summary.get("gates"))
    if isinstance(gates.get("passed"), bool):
        failed = gates.get("failed")
        e.gates = {"passed": gates["passed"],
                   "gates": [str(g) for g in gates.get("gates") or [] if isinstance(g, str)],
                   "failed": [str(f) for f in failed] if isinstance(failed, list) else []}
    stop = _mapping(summary.get("interrupted"))
    if stop:
        e.notes.append(f"interrupted: {printable(stop.get('finished'))} of "
                       f"{printable(stop.get('total'))} samples finished")
    sub = _mapping(sig.get("subset"))
    if sub:
        e.notes.append(f"a subset: {printable(sub.get('kept'))} of {printable(sub.get('of'))} "
                       "samples (--limit/--sample)")
    missing = [what for what, have in (("dataset hash", e.dataset_hash), ("start time", run))
               if not have]
    if missing:
        e.notes.append(f"written by an earlier localeval: no {' or '.join(missing)} recorded")


def _date_from_file(e: RunEntry, path: Path) -> None:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return
    e.started = datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")
    e.dated_by = "file time"


def _reason(err: DataError, folder: Path) -> str:
    """The error without the file's name in front (the entry names the folder)."""
    text = str(err)
    head = f"{folder / _SUMMARY}: "
    return text[len(head):] if text.startswith(head) else text


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _model(name: Any, fingerprint: Any) -> str | None:
    """``name@fingerprint`` (its first 12 digits), as the signature line writes a model."""
    if not isinstance(name, str) or not name:
        return None
    return f"{name}@{fingerprint[:12]}" if isinstance(fingerprint, str) and fingerprint else name
