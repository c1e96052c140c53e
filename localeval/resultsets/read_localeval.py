"""localeval's own ``results.jsonl`` as a ResultSet: one line per sample, with its scores,
errors and details, and from the summary.json beside it (read as the run's record,
``results.record_of``) the run's name, signature, judge fitness and which metrics it
recorded as lower-is-better.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from localeval.errors import DataError
from localeval.results import HASH_FIELDS
from localeval.resultsets.resultset import ResultSet

__all__ = ["from_localeval", "add_summary_next_to"]


def from_localeval(rows: Sequence[tuple[int, dict[str, Any]]], src: str) -> ResultSet:
    """The parsed lines of a results.jsonl; strict (localeval wrote it: a bad value is an error)."""
    rs = ResultSet({}, source=src, format="localeval", unit="line")
    for n, rec in rows:
        sid = rec.get("id")
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            raise DataError("missing or bad 'id' (a string is expected)", file=src, row=n,
                            column="id")
        sid = str(sid)
        if sid in rs.scores:
            raise DataError(f"duplicate id {sid!r} (first at line {rs.rows[sid]})", file=src,
                            row=n, column="id")
        scores = rec.get("scores")
        if not isinstance(scores, dict):
            raise DataError("'scores' must be an object {metric: number or null}", file=src,
                            row=n, column="scores")
        clean: dict[str, float | None] = {}
        for m, v in scores.items():
            clean[m] = _number(v, src, n, f"scores.{m}", "line")
            rs.columns.setdefault(m, f"scores.{m}")
        rs.scores[sid] = clean
        rs.rows[sid] = n
        errs = rec.get("errors") or {}
        if isinstance(errs, dict) and errs:
            rs.errors[sid] = {k: str(v) for k, v in errs.items()}
        det = rec.get("details") or {}
        if isinstance(det, dict) and det:
            rs.details[sid] = det
        q = rec.get("question") or rec.get("user_input")
        if isinstance(q, str):
            rs.questions[sid] = q
        # runs written before localeval recorded content have neither hash
        h = {k: rec[k] for k in HASH_FIELDS if isinstance(rec.get(k), str)}
        if h:
            rs.hashes[sid] = h
    return rs


def add_summary_next_to(rs: ResultSet, results: Path) -> None:
    """Fill ``rs.record``, ``rs.signature``, ``rs.directions``, ``rs.fitness`` and the
    set's title from the summary.json beside results.jsonl, read as the run's record
    (``results.record_of``: checked, older summaries upgraded).

    The scores are the run's whatever the summary says: an absent summary leaves
    these empty, and one that cannot be read (damaged, hand-edited) too, with a note
    in ``rs.notes`` naming the file and the field. A summary without a ``metrics``
    object (a hand-made one that records only the signature and the judge check) is
    read with none. The run writes ``"lower_is_better": true`` in a metric's entry
    when it is and nothing when it is not, so a metric with an entry is recorded
    either way (a metrics-file metric too, which the registry does not know).

    The title: the run's ``--name``, else its folder's name after resolving links
    (``results.run_title``: ``localeval-out/latest`` is never titled "latest"); a
    results file under another name keeps its own unless the run was named.
    """
    from localeval.results import SUMMARY_FILE, read_summary, record_of, run_title

    folder = results.parent
    record = None
    if (folder / SUMMARY_FILE).is_file():
        try:
            summary = read_summary(folder, run=False)
            if "metrics" not in summary:
                summary = {**summary, "metrics": {}}
            record = record_of(summary, folder / SUMMARY_FILE)
        except DataError as e:
            rs.notes.append(f"its summary.json was not read ({e}): no signature or judge "
                            "check is known for it")
    if (record is not None and record.name) or results.name == "results.jsonl":
        rs.name = run_title(folder, record)
    if record is None:
        return
    rs.record = record
    # as the file holds it (today's keys): what diff.json shows and history compares
    sig = record.signature
    rs.signature = sig.model_dump(exclude_unset=True) if sig is not None else {}
    rs.directions = {k: v.lower_is_better for k, v in record.metrics.items()}
    rs.fitness = record.fitness


def _number(v: Any, src: str, n: int, col: str, unit: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DataError(f"expected a number or null, got {v!r}", file=src, row=n, column=col,
                        unit=unit)
    f = float(v)
    return None if math.isnan(f) else f
