"""localeval's own ``results.jsonl`` as a ResultSet: one line per sample, with its scores,
errors and details, and from the summary.json beside it the run's signature and which
metrics it recorded as lower-is-better.
"""

from __future__ import annotations

import json
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
    """Fill ``rs.signature``, ``rs.directions`` and ``rs.judge_fitness`` from the summary.json
    beside results.jsonl (left empty when it is absent or unreadable: the scores are still
    the run's).

    The run writes ``"lower_is_better": true`` in a metric's summary entry when it is and
    nothing when it is not, so a metric with an entry is recorded either way (a
    metrics-file metric too, which the registry does not know).
    """
    try:
        summary = json.loads((results.parent / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(summary, dict):
        return
    sig = summary.get("signature")
    rs.signature = sig if isinstance(sig, dict) else {}
    metrics = summary.get("metrics")
    if isinstance(metrics, dict):
        rs.directions = {k: v.get("lower_is_better") is True for k, v in metrics.items()
                         if isinstance(v, dict)}
    from localeval.results import current_summary  # older spellings of the judge check

    current = current_summary(summary)
    rs.judge_fitness = {k: dict(current[k]) for k in ("judge_check", "judge_health")
                        if isinstance(current.get(k), dict)}


def _number(v: Any, src: str, n: int, col: str, unit: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DataError(f"expected a number or null, got {v!r}", file=src, row=n, column=col,
                        unit=unit)
    f = float(v)
    return None if math.isnan(f) else f
