"""The runs under some folders: each run folder found, and what its summary.json says.

``localeval runs`` lists every run a team has kept (a folder per run, or a tree
of them), oldest first: when it started, its name and tags, the dataset's version
and rows, the judge and its judge check, each metric's mean and unscored count
(with the caveat beside a judged mean whose judge failed its check), and the
gates' outcome. A folder is a run folder when it holds ``results.jsonl``, or a
``summary.json`` with a ``metrics`` object (other commands, ``generate``, write a
summary.json of their own, which is passed over).

Each summary is read as the run's record (``results.record_of``: older keys
under today's names, every known field checked for its type), so ``runs``,
``history`` and every other view read a run the same way. Nothing here raises
for a folder's content: a summary that cannot be read, or whose record is
damaged, is listed with the reason (``problem``); one from an earlier localeval,
without the dataset hash, the start time or a name, is listed with what it has
and a note. Hidden folders, ``__pycache__``, ``node_modules`` and
``site-packages`` are not searched, and links to folders are not followed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from localeval.errors import DataError, UsageError, printable
from localeval.results import (
    RESULTS_FILE,
    SUMMARY_FILE,
    JudgeFitness,
    MetricEntry,
    RunRecord,
    read_summary,
    record_of,
)

__all__ = ["RunEntry", "find_runs", "read_entry"]

_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})


@dataclass
class RunEntry:
    """One run folder as ``localeval runs`` lists it (None: not recorded).

    The fields are what the table and ``--json`` show, taken from the run's
    record (``record``; None when the summary could not be read, or for an
    export the history fills in itself).
    """

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
    #: the run's record, as every view reads it (None: no readable summary)
    record: RunRecord | None = None

    @property
    def fitness(self) -> JudgeFitness | None:
        """The run's judge fitness (None: no record)."""
        return self.record.fitness if self.record is not None else None

    @property
    def judged(self) -> frozenset[str]:
        """The metric keys a judge scored."""
        return self.record.judged if self.record is not None else frozenset()

    def caveat(self, metric: str) -> str | None:
        """The marker beside ``metric``'s mean ("judge unfit"), None when it needs none."""
        return self.record.caveat(metric) if self.record is not None else None

    @property
    def check(self) -> str:
        """The judge check's verdict as the tables show it beside the judge ("judge check:
        UNFIT"); "" without a judge check, or for a judge-less run whose check was skipped."""
        f = self.fitness
        if f is None or f.verdict is None or not (self.judge or f.marker):
            return ""
        return f"judge check: {f.verdict.upper() if f.failed else f.verdict}"

    def to_dict(self) -> dict[str, Any]:
        """The entry as ``localeval runs --json`` prints it."""
        fitness = self.fitness
        return {"folder": self.folder, "started": self.started, "dated_by": self.dated_by,
                "name": self.name, "tags": dict(self.tags),
                "dataset": {"hash": self.dataset_hash, "testset": self.testset_hash,
                            "rows": self.rows},
                "samples": self.samples, "judge": self.judge, "embedder": self.embedder,
                "metrics": {k: {**v, "caveat": self.caveat(k)} for k, v in self.metrics.items()},
                "gates": dict(self.gates) if self.gates is not None else None,
                "localeval": self.localeval, "signature_line": self.signature_line,
                "problem": self.problem, "notes": list(self.notes),
                "judge_fitness": fitness.to_dict() if fitness is not None else None}


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
        if RESULTS_FILE in filenames or SUMMARY_FILE in filenames:
            yield Path(dirpath)


def read_entry(folder: Path) -> RunEntry | None:
    """The entry of ``folder``; None when it is not a run folder (a summary.json that is
    not a run's, and no results.jsonl)."""
    has_results = (folder / RESULTS_FILE).is_file()
    entry = RunEntry(str(folder))
    if not (folder / SUMMARY_FILE).is_file():
        entry.problem = ("no summary.json: the run stopped before it finished (killed), "
                         "or the file was removed")
        _date_from_file(entry, folder / RESULTS_FILE)
        return entry
    _date_from_file(entry, folder / SUMMARY_FILE)
    try:
        summary = read_summary(folder, run=False)  # any JSON object: another command's too
        if not isinstance(summary.get("metrics"), Mapping):
            if not has_results:
                return None
            entry.problem = "summary.json has no 'metrics' object: not a run's summary"
            return entry
        record = record_of(summary, folder / SUMMARY_FILE)
    except DataError as e:
        entry.problem = f"summary.json cannot be read: {_reason(e, folder)}"
        return entry
    _fill(entry, record)
    if not has_results:
        entry.notes.append("no results.jsonl beside summary.json")
    return entry


def _fill(e: RunEntry, record: RunRecord) -> None:
    """The entry's fields from the run's (checked) record."""
    e.record = record
    model, run, sig = record.model, record.run, record.signature
    if run is not None:
        if run.started is not None:
            e.started, e.dated_by = run.started, "summary"
        e.name, e.tags = run.name or None, dict(run.tags)
    if sig is not None:
        e.signature = sig.model_dump(exclude_unset=True)
        e.dataset_hash, e.testset_hash = sig.dataset_hash or None, sig.testset_hash or None
        e.rows, e.localeval = sig.dataset_rows, sig.localeval or None
        e.judge = _model(sig.judge, sig.judge_fingerprint)
        e.embedder = _model(sig.embedder, sig.embedder_fingerprint)
    e.samples = model.n_samples
    e.signature_line = model.signature_line or None
    for key, m in record.metrics.items():
        e.metrics[key] = {"mean": _finite(m.mean), "n": _given(m, "n"),
                          "unscored": _given(m, "unscored")}
        low, high = m.ci95 or (None, None)
        low, high = _finite(low), _finite(high)
        if low is not None and high is not None:
            e.intervals[key] = (low, high)
    if model.gates is not None:
        g = model.gates
        e.gates = {"passed": g.passed, "gates": list(g.gates), "failed": list(g.failed)}
    stop = model.interrupted
    if stop is not None and stop.model_fields_set:
        e.notes.append(f"interrupted: {printable(stop.finished)} of "
                       f"{printable(stop.total)} samples finished")
    sub = sig.subset if sig is not None else None
    if sub is not None and sub.model_fields_set:
        e.notes.append(f"a subset: {printable(sub.kept)} of {printable(sub.of)} "
                       "samples (--limit/--sample)")
    missing = [what for what, have in (("dataset hash", e.dataset_hash),
                                       ("start time", run is not None and run.model_fields_set))
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
    head = f"{folder / SUMMARY_FILE}: "
    return text[len(head):] if text.startswith(head) else text


def _finite(v: float | None) -> float | None:
    """A recorded number, None for NaN or an infinity (an earlier run could write them)."""
    return v if v is not None and math.isfinite(v) else None


def _given(m: MetricEntry, key: str) -> int | None:
    """A count the summary recorded (None where it has none, not the schema's default)."""
    return getattr(m, key) if key in m.model_fields_set else None


def _model(name: str | None, fingerprint: str | None) -> str | None:
    """``name@fingerprint`` (its first 12 digits), as the signature line writes a model."""
    if not name:
        return None
    return f"{name}@{fingerprint[:12]}" if fingerprint else name
