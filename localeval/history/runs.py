"""One run as the history shows it: a localeval run folder, or another tool's export.

A localeval run is read by ``resultsets.find_runs`` (one ``RunEntry`` per
folder, its record read by ``results``, a damaged or older summary with its
reason), and the history keeps that entry, so the history and ``localeval
runs`` never disagree about what a summary says, nor about the judge's
fitness. A run is titled as every view titles it (``results.run_title``: its
``--name``, else its folder's name after resolving links, so a run reached
through ``localeval-out/latest`` is never "latest"). An export that
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
from localeval.results import Identity, JudgeFitness, run_title
from localeval.resultsets import RunEntry

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
    """What the page shows of one run: its ``RunEntry`` (what ``localeval runs`` lists;
    an export's is filled in by :func:`from_export`) and what the page adds."""

    label: str
    entry: RunEntry
    #: "localeval", or the export's format ("ragas", "deepeval", "table")
    kind: str = "localeval"
    metrics: dict[str, MetricPoint] = field(default_factory=dict)
    #: the run's report.html, when there is one
    report: Path | None = None
    #: what ``localeval diff`` reads for this run (None: nothing to compare)
    diffable: Path | None = None

    @property
    def source(self) -> str:
        """The run folder, or the export's file."""
        return self.entry.folder

    @property
    def started(self) -> str | None:
        return self.entry.started

    @property
    def problem(self) -> str | None:
        return self.entry.problem

    @property
    def notes(self) -> list[str]:
        return self.entry.notes

    @property
    def signature(self) -> dict[str, Any]:
        return self.entry.signature

    @property
    def testset_hash(self) -> str | None:
        return self.entry.testset_hash

    @property
    def rows(self) -> int | None:
        return self.entry.rows

    @property
    def version(self) -> str | None:
        """The dataset version the history groups by: the test set's, else the data's."""
        return self.entry.testset_hash or self.entry.dataset_hash

    @property
    def identity(self) -> Identity:
        """What the run's scores depend on (one that records nothing for an export)."""
        rec = self.entry.record
        return rec.identity if rec is not None else Identity(recorded=False)

    @property
    def fitness(self) -> JudgeFitness | None:
        return self.entry.fitness

    def caveat(self, metric: str) -> str | None:
        """"judge unfit" beside a judged metric of a run whose judge failed its check."""
        return self.entry.caveat(metric)

    def drawn(self, metric: str) -> bool:
        """The run has a point on ``metric``'s chart."""
        p = self.metrics.get(metric)
        return p is not None and p.mean is not None


def from_entry(e: RunEntry) -> HistoryRun:
    """A ``resultsets.RunEntry`` as the history shows it."""
    folder = Path(e.folder)
    metrics = {}
    for key, m in e.metrics.items():
        low, high = e.intervals.get(key, (None, None))
        metrics[key] = MetricPoint(m.get("mean"), low, high, m.get("n"), m.get("unscored"))
    report = folder / "report.html"
    results = folder / "results.jsonl"
    return HistoryRun(
        label=run_title(folder, e.record), entry=e, metrics=metrics,
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

    entry = RunEntry(str(path), started=_file_time(path), dated_by="file time",
                     notes=[NO_SIGNATURE])
    run = HistoryRun(label=name, entry=entry, kind="export")
    try:
        rs = load_result_set(path)
    except LocalevalError as err:
        entry.problem = f"cannot be read as a ragas or deepeval export: {err}"
        return run
    run.kind = rs.format
    entry.samples = len(rs.scores)
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
    run.entry.dataset_hash, run.entry.testset_hash, run.entry.rows = v.content, v.testset, v.rows


def _file_time(path: Path) -> str | None:
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")
