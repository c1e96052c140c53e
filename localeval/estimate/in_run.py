"""Corrected estimates for ``localeval run ... --labels FILE``: the summary's ``corrected`` section.

The run knows nothing of labels (``run`` sits below ``estimate``): the command
hands ``run.evaluate`` a hook, which the run calls once every sample is scored,
with its records read back from ``results.jsonl`` (written sample by sample),
before summary.json and the reports are written, once. The hook checks the
labels against those records exactly as ``localeval estimate`` checks them
against a finished run, and this module turns the result into plain data for
``summary.json``, which the reports (terminal table, summary.md, report.html)
show beside the judge-only means, with the judge's calibration on the labelled
rows. The records are read one at a time and only what the estimate reads is
kept (``records_result_set``), so a run that keeps no samples stays lean.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from localeval.errors import DataError
from localeval.estimate.analysis import estimate
from localeval.estimate.draw import SOFT_VERDICTS, row_uncertainty
from localeval.estimate.pages import JUDGE_WARNING
from localeval.estimate.reliability import calibration
from localeval.results import HASH_FIELDS, CorrectedSection
from localeval.resultsets import ResultSet

__all__ = ["run_corrections", "records_result_set"]


def run_corrections(run: str | Path | ResultSet | Iterable[Mapping[str, Any]],
                    labels: str | Path, *, random_draw: bool = False,
                    scale: tuple[float, float] | None = None,
                    metrics: Sequence[str] | None = None,
                    reference: bool = False, source: str = "results.jsonl",
                    judge_check: Mapping[str, Any] | None = None) -> CorrectedSection:
    """The ``corrected`` section of a run's summary.json (DataError / UsageError on bad labels).

    ``run``: a run folder or results file (read as ``localeval estimate`` reads
    it), a ``ResultSet``, or the run's records (``results.jsonl`` lines, e.g.
    ``results.ResultLines``) while the run is writing its folder: read once,
    named ``source`` in messages; summary.json need not exist yet.
    ``judge_check``: the run's judge check record (``summary["judge_check"]``), for
    records, which carry none (a run folder's is read from its summary.json): when
    the judge failed it, the notes say its judge-only means are not evidence and
    the corrected means stay valid.

    Per labelled metric: the judge-only, labels-only and corrected means with
    their intervals, the judge's bias and worth in labels (as ``estimate.json``
    has them), and ``calibration``: the reliability table of the judge's scores
    against the labels, with the Brier score when the scores are soft verdicts.
    """
    if isinstance(run, ResultSet):
        rs = run
    elif isinstance(run, (str, Path)):
        from localeval.resultsets import load_result_set

        rs = load_result_set(run)
    else:
        rs = records_result_set(run, source)
    if judge_check is not None:
        from dataclasses import replace

        from localeval.results import JudgeFitness

        # the check the run just took, read as a record reads it; the health kept
        fitness = replace(JudgeFitness.of_sections(judge_check, None),
                          warnings=rs.fitness.warnings)
        rs = replace(rs, fitness=fitness)
    r = estimate(rs, labels, metrics=metrics, random_draw=random_draw, scale=scale,
                 reference=reference)
    out: CorrectedSection = {"labels": r.labels, "draw": r.draw, "level": r.level,
                             "interval": r.method, "judge_only_warning": JUDGE_WARNING,
                             "metrics": {}, "notes": list(r.notes)}
    for m in r.metrics:
        a = m.arrays
        soft = SOFT_VERDICTS in a["uncertainty_bases"]
        out["metrics"][m.metric] = {**m.to_dict(), "calibration": calibration(
            a["judge"][a["labelled"]], a["labels"], soft=soft)}
    return out


def records_result_set(records: Iterable[Mapping[str, Any]], source: str) -> ResultSet:
    """A run's records (``results.jsonl`` lines) as the ``ResultSet`` an estimate reads.

    What ``resultsets.load_result_set`` keeps of a localeval run, less what no
    estimate reads, so that a million-row run's set stays small beside the run:
    the scores (rows with equal scores share one mapping), the question and
    content hashes (what labels are paired and checked on) and, of each
    metric's working, only the one that says how unsure the judge was (soft
    verdicts, repeats: what an active draw is redrawn from). Line numbers and
    unscored reasons are not kept. The records are this run's own, so a bad
    one is a DataError naming ``source``, not a repair.
    """
    rs = ResultSet({}, source=source, format="localeval", unit="line")
    shared: dict[tuple[tuple[str, float | None], ...], dict[str, float | None]] = {}
    for n, rec in enumerate(records, 1):
        sid, scores = rec.get("id"), rec.get("scores")
        if not isinstance(sid, str) or not isinstance(scores, dict):
            raise DataError("not a localeval record (no id or scores)", file=source, row=n)
        if sid in rs.scores:
            raise DataError(f"duplicate id {sid!r}", file=source, row=n, column="id")
        key = tuple((m, None if v is None else float(v)) for m, v in scores.items())
        rs.scores[sid] = shared.get(key) or shared.setdefault(key, dict(key))
        for m in scores:
            rs.columns.setdefault(m, f"scores.{m}")
        q = rec.get("question")
        if isinstance(q, str):
            rs.questions[sid] = q
        h = {k: rec[k] for k in HASH_FIELDS if isinstance(rec.get(k), str)}
        if h:
            rs.hashes[sid] = h
        det = rec.get("details") or {}
        unsure = {m: d for m, d in det.items()
                  if isinstance(d, dict) and row_uncertainty(d)[0] is not None}
        if unsure:
            rs.details[sid] = unsure
    if not rs.scores:
        raise DataError("no samples in the file", file=source)
    return rs
