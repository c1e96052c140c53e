"""One run as the history shows it: a localeval run folder, or another tool's export.

A localeval run is read by ``resultsets.find_runs`` (one ``RunEntry`` per
folder, a damaged or older summary with its reason), so the history and
``localeval runs`` never disagree about what a summary says. An export that
``localeval diff`` reads (ragas, deepeval, a table) is read by
``resultsets.load_result_set`` and summarised by ``report.summarize_metrics``,
the code that writes a run's own means and intervals; it has no signature, so
the history says what it lacks. A ragas export holds the questions and answers
too: read as a data set, it gets the same dataset hashes a run of those rows
would record, and joins that run's group.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Mapping, Sequence

from localeval.errors import LocalevalError, UsageError, printable

__all__ = ["MetricPoint", "HistoryRun", "from_entry", "from_export", "parse_added"]


@dataclass(frozen=True)
class MetricPoint:
    """One metric of one run: the mean and its 95% interval (None: not recorded)."""

    mean: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    unscored: int | None = None


@dataclass
class HistoryRun:
    """What the page shows of one run (None: not recorded)."""

    label: str
    #: the run folder, or the export's file
    source: str
    #: "localeval", or the export's format ("ragas", "deepeval", "table")
    kind: str = "localeval"
    started: str | None = None
    dated_by: str = "summary"
    tags: dict[str, str] = field(default_factory=dict)
    testset_hash: str | None = None
    dataset_hash: str | None = None
    rows: int | None = None
    samples: int | None = None
    judge: str | None = None
    embedder: str | None = None
    signature: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, MetricPoint] = field(default_factory=dict)
    gates: dict[str, Any] | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    #: the run's report.html, when there is one
    report: Path | None = None
    #: what ``localeval diff`` reads for this run (None: nothing to compare)
    diffable: Path | None = None

    @property
    def version(self) -> str | None:
        """The dataset version the history groups by: the test set's, else the data's."""
        return self.testset_hash or self.dataset_hash


def from_entry(e: Any) -> HistoryRun:
    """A ``resultsets.RunEntry`` as the history shows it."""
    folder = Path(e.folder)
    metrics = {}
    for key, m in e.metrics.items():
        low, high = e.intervals.get(key, (None, None))
        metrics[key] = MetricPoint(m.get("mean"), low, high, m.get("n"), m.get("unscored"))
    report = folder / "report.html"
    results = folder / "results.jsonl"
    return HistoryRun(
        label=e.name or folder.name or str(folder), source=str(folder), started=e.started,
        dated_by=e.dated_by, tags=dict(e.tags), testset_hash=e.testset_hash,
        dataset_hash=e.dataset_hash, rows=e.rows, samples=e.samples, judge=e.judge,
        embedder=e.embedder, signature=dict(e.signature), metrics=metrics, gates=e.gates,
        problem=e.problem, notes=list(e.notes),
        report=report if report.is_file() else None,
        diffable=folder if e.problem is None and results.is_file() else None)


def parse_added(specs: Sequence[str] | None) -> list[tuple[str, Path]]:
    """``--add NAME=FILE`` (repeatable): (name, path) pairs; a bad one is a UsageError."""
    out: list[tuple[str, Path]] = []
    for spec in specs or []:
        name, sep, path = spec.partition("=")
        name = name.strip()
        if not sep or not name or not path:
            raise UsageError(f"--add {printable(spec)}: expected NAME=FILE, e.g. "
                             "--add ragas-v1=ragas_export.csv")
        if any(not c.isprintable() for c in name) or len(name) > 200:
            raise UsageError(f"--add {printable(name)}: a name of at most 200 printable "
                             "characters")
        if name in {n for n, _ in out}:
            raise UsageError(f"--add {printable(name)}: the name is given twice")
        p = Path(path)
        if not p.is_file():
            raise UsageError(f"--add {printable(name)}: {printable(path)}: no such file")
        out.append((name, p))
    return out


#: what an export lacks, said beside it
NO_SIGNATURE = ("not a localeval run: no signature (which judge, prompts, embedder and "
                "verdict mode scored it is not recorded), no report, no gates")


def from_export(name: str, path: Path) -> HistoryRun:
    """Another tool's export as a run of the history; one that cannot be read is listed
    with the reason, as a damaged summary is."""
    from localeval.resultsets import load_result_set

    run = HistoryRun(label=name, source=str(path), kind="export", dated_by="file time",
                     started=_file_time(path), notes=[NO_SIGNATURE])
    try:
        rs = load_result_set(path)
    except LocalevalError as err:
        run.problem = f"cannot be read as a ragas or deepeval export: {err}"
        return run
    run.kind = rs.format
    run.samples = len(rs.scores)
    run.metrics = _summarise(rs.scores, rs.errors, rs.metrics)
    run.diffable = path
    _hash_inputs(run, path)
    return run


def _summarise(scores: Mapping[str, Mapping[str, float | None]],
               errors: Mapping[str, Mapping[str, str]],
               order: Sequence[str]) -> dict[str, MetricPoint]:
    """Each metric's mean and interval, by the code that writes a run's summary."""
    from localeval.report import summarize_metrics
    from localeval.types import Score

    columns = {}
    for key in order:
        col = []
        for sid, row in scores.items():
            v = row.get(key)
            col.append(Score(float(v)) if v is not None else
                       Score.unscored(errors.get(sid, {}).get(key) or "no score"))
        columns[key] = col
    out = {}
    for key, s in summarize_metrics(columns).items():
        ci = s.get("ci95") or [None, None]
        out[key] = MetricPoint(s.get("mean"), ci[0], ci[1], s.get("n"), s.get("unscored"))
    return out


def _hash_inputs(run: HistoryRun, path: Path) -> None:
    """The export's rows read as a data set: the hashes a localeval run of them records."""
    from localeval.dataset import data_version, load_dataset

    try:
        v = data_version(load_dataset(str(path)))
    except (LocalevalError, ValueError, TypeError):
        run.notes.append("its rows could not be read as a data set: no dataset version")
        return
    run.dataset_hash, run.testset_hash, run.rows = v.content, v.testset, v.rows


def _file_time(path: Path) -> str | None:
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")
