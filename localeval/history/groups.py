"""The history's shape: runs grouped by dataset version, and where the scoring set-up changed.

Runs of one version of the data are comparable in time; runs of another
version are not (their means move with the data), so each version gets its
own group, keyed by the test set's hash (two versions of a pipeline on the
same questions share it), else by the data's. A run that records neither (a
damaged summary, an earlier localeval, an export whose rows cannot be read)
goes into a group of its own kind, with the reason beside it.

On each metric's chart, between each run with a point and the run before it
with a point (runs without the metric are passed over: a judge-less run says
nothing about the judge of a faithfulness trend), a change of judge, prompts,
embedder, verdict mode, repeats or language is found by the runs' identities
(``results.Identity.setup_notes``, the sentences ``localeval diff`` prints),
for the set-up that metric uses (a change of judge says nothing about ROUGE):
a jump of a judged metric there may be the judge's, not the pipeline's. A run
without a signature (an export) cannot be told apart, which is marked too.

A judged metric's trend through a run whose judge failed its judge check is
not evidence; each trend lists those runs (``Trend.unfit``) for the chart and
the page to say so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from localeval.history.runs import HistoryRun

__all__ = ["Mark", "Trend", "Group", "group_runs", "diff_name", "NO_VERSION"]

#: the title of the group of runs that record no dataset version
NO_VERSION = "No dataset version recorded"


@dataclass
class Mark:
    """A change of scoring set-up between run ``base`` and run ``index`` of a group: the
    two nearest runs with a point on the metric's chart (``base`` < ``index``)."""

    index: int
    #: 1, 2, ...: the mark's number on the chart and in the list under it
    number: int
    #: True when a side records no signature: a change cannot be ruled out
    unknown: bool
    notes: list[str]
    base: int


@dataclass
class Trend:
    """One metric across a group's runs, with the set-up changes that matter to it."""

    metric: str
    marks: list[Mark] = field(default_factory=list)
    #: the indices of the runs drawn on the chart whose judge failed (or could not run)
    #: its judge check: a judged metric only, so the trend through them is not evidence
    unfit: list[int] = field(default_factory=list)


@dataclass
class Group:
    """The runs of one dataset version, oldest first."""

    version: str | None
    title: str
    #: what the version is, or why the group's runs have none
    about: str
    runs: list[HistoryRun] = field(default_factory=list)
    trends: list[Trend] = field(default_factory=list)
    #: run index -> the diff folder's name for (run index - 1, run index)
    diffs: dict[int, str] = field(default_factory=dict)


def diff_name(base: HistoryRun, new: HistoryRun) -> str:
    """A stable folder name for the diff of two runs: the same pair, the same name, so a
    page written later links to diffs written earlier."""
    key = f"{Path(base.source).resolve()}\0{Path(new.source).resolve()}"
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def group_runs(runs: Sequence[HistoryRun]) -> list[Group]:
    """The groups: newest activity first, the runs without a version last."""
    by: dict[str | None, list[HistoryRun]] = {}
    latest: dict[str | None, int] = {}  # a version's newest run: its place in time
    for i, r in enumerate(sorted(runs, key=lambda r: (r.started or "", r.source))):
        by.setdefault(r.version, []).append(r)
        latest[r.version] = i
    keys = sorted((k for k in by if k is not None), key=latest.__getitem__, reverse=True)
    uses = _uses()
    groups = [_group(k, by[k], uses) for k in keys]
    if None in by:
        groups.append(_group(None, by[None], uses))
    return groups


def _group(version: str | None, runs: list[HistoryRun], uses: Callable[[str], Any]) -> Group:
    if version is None:
        g = Group(None, NO_VERSION, "These runs record no dataset version, so which data each "
                  "scored is not known and their means are not comparable; each says why.")
    else:
        by_testset = any(r.testset_hash == version for r in runs)
        rows = {r.rows for r in runs if r.rows is not None}
        g = Group(version, f"{'Test set' if by_testset else 'Data'} {version[:12]}",
                  ("the same questions and references (test-set hash"
                   if by_testset else "the same rows (dataset hash; no test-set hash recorded")
                  + f" {version}), {_rows_text(rows)}")
    g.runs = runs
    metrics = list(dict.fromkeys(k for r in runs for k in r.metrics))
    g.trends = [Trend(m, _marks(runs, m, *uses(m)),
                      [i for i, r in enumerate(runs) if r.drawn(m) and r.caveat(m)])
                for m in metrics]
    for i in range(1, len(runs)):
        a, b = runs[i - 1], runs[i]
        if version is not None and a.diffable is not None and b.diffable is not None:
            g.diffs[i] = diff_name(a, b)
    return g


def _rows_text(rows: set[int]) -> str:
    if not rows:
        return "rows not recorded"
    return f"{min(rows)} rows" if len(rows) == 1 else f"{min(rows)}–{max(rows)} rows"


def _marks(runs: list[HistoryRun], metric: str, judged: bool, embedded: bool) -> list[Mark]:
    """The set-up changes on ``metric``'s chart: each run with a point against the one
    before it with a point, for the parts of the set-up the metric uses."""
    marks: list[Mark] = []
    drawn = [i for i, r in enumerate(runs) if r.drawn(metric)]
    for j, i in zip(drawn, drawn[1:]):
        a, b = runs[j], runs[i]
        ia, ib = a.identity, b.identity
        if not ia.recorded and not ib.recorded and a.kind == b.kind == "localeval":
            continue  # two runs that record nothing: said once each, not marked
        notes, same = ia.setup_notes(ib, f"'{a.label}'", f"'{b.label}'", judged=judged,
                                     embedded=embedded)
        if not same:
            notes = [n for n in notes if not n.startswith("the test sets differ")] or notes
            marks.append(Mark(i, len(marks) + 1, not (ia.recorded and ib.recorded), notes, j))
    return marks


def _uses() -> Callable[[str], tuple[bool, bool]]:
    """(uses a judge, uses an embedder) by metric key, asked of the registry once per key."""
    from localeval.resultsets import metric_models

    memo: dict[str, tuple[bool, bool]] = {}

    def uses(metric: str) -> tuple[bool, bool]:
        if metric not in memo:
            memo[metric] = metric_models(metric)
        return memo[metric]

    return uses
