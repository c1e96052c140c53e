"""deepeval results as JSON (``EvaluationResult.model_dump()`` or a saved test run) as a ResultSet.

Accepted: ``{"test_results": [{"name", "input", "metrics_data": [{"name",
"score", "success", "reason", "error", ...}]}]}`` in snake_case, the camelCase
``testCases`` / ``metricsData`` of deepeval's saved test runs, or a bare list
of test results. Metric display names ("Contextual Recall") become localeval
keys.
"""

from __future__ import annotations

import re
from typing import Any

from localeval.errors import DataError
from localeval.results import content_fields
from localeval.resultsets.resultset import ResultSet, as_score, canonical_metric_name

__all__ = ["looks_deepeval", "from_deepeval"]

_LIST_KEYS = ("test_results", "testResults", "test_cases", "testCases")
_AUTO_NAME = re.compile(r"^test_case_\d+$")  # deepeval's name for an unnamed test case


def looks_deepeval(obj: Any) -> bool:
    """Whether parsed JSON has deepeval's shape (a list of test results with metrics data)."""
    if isinstance(obj, dict):
        return any(isinstance(obj.get(k), list) for k in _LIST_KEYS)
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return "metrics_data" in obj[0] or "metricsData" in obj[0]
    return False


def from_deepeval(obj: Any, src: str) -> ResultSet:
    """The test results of a deepeval JSON; ids from ``additional_metadata.id`` or the case name.

    Cases are numbered by row unless every case has an explicit id and the ids
    are unique (a name other than deepeval's automatic ``test_case_N`` counts).
    """
    cases = obj
    if isinstance(obj, dict):
        key = next((k for k in _LIST_KEYS if isinstance(obj.get(k), list)), None)
        if key is None:
            raise DataError("expected 'test_results': a list of test results", file=src)
        cases = obj[key]
    rs = ResultSet({}, source=src, format="deepeval", ids_from="row", unit="test result")
    explicit: list[str | None] = []
    for i, case in enumerate(cases, 1):
        where = f"test result {i}"
        if not isinstance(case, dict):
            raise DataError(f"{where}: expected an object", file=src)
        md = case.get("metrics_data", case.get("metricsData"))
        if md is None:
            md = []
        if not isinstance(md, list):
            raise DataError(f"{where}: 'metrics_data' must be a list", file=src,
                            column="metrics_data")
        meta = case.get("additional_metadata") or case.get("additionalMetadata") \
            or case.get("metadata") or {}
        cid = meta.get("id") if isinstance(meta, dict) else None
        nm = case.get("name")
        if cid is None and isinstance(nm, str) and nm and not _AUTO_NAME.match(nm):
            cid = nm
        explicit.append(None if cid is None else str(cid))
        scores: dict[str, float | None] = {}
        errs: dict[str, str] = {}
        det: dict[str, Any] = {}
        for j, m in enumerate(md, 1):
            if not isinstance(m, dict) or not isinstance(m.get("name"), str):
                raise DataError(f"{where}, metric {j}: expected an object with a 'name'",
                                file=src, column="metrics_data")
            key = canonical_metric_name(m["name"])
            if key in scores:  # "Faithfulness" and "faithfulness": never merged silently
                raise DataError(f"{where}: metrics {m['name']!r} and an earlier one both map "
                                f"to metric {key!r}; keep one", file=src, column="metrics_data")
            v = m.get("score")
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise DataError(f"{where}, metric {m['name']!r}: score must be a number or "
                                f"null, got {v!r}", file=src, column="score")
            scores[key] = as_score(v)
            if scores[key] is None:
                errs[key] = str(m.get("error") or "no score in the deepeval result")
            d = {k: m[k] for k in ("success", "threshold", "reason", "evaluation_model",
                                   "evaluationModel", "strict_mode", "strictMode") if k in m}
            if d:
                det[key] = d
        sid = str(i)
        rs.scores[sid] = scores
        rs.rows[sid] = i
        if errs:
            rs.errors[sid] = errs
        if det:
            rs.details[sid] = det
        q = case.get("input")
        if isinstance(q, str):
            rs.questions[sid] = q
        h = content_fields(None, case.get("retrieval_context", case.get("retrievalContext")),
                           case.get("actual_output", case.get("actualOutput")))
        if h:
            rs.hashes[sid] = h
    # Explicit ids only when every case has one and they are unique.
    ids = [x for x in explicit if x]
    if explicit and len(ids) == len(explicit) and len(set(ids)) == len(ids):
        remap = dict(zip([str(i) for i in range(1, len(ids) + 1)], ids))
        rs.scores = {remap[k]: v for k, v in rs.scores.items()}
        rs.rows = {remap[k]: v for k, v in rs.rows.items()}
        rs.errors = {remap[k]: v for k, v in rs.errors.items()}
        rs.details = {remap[k]: v for k, v in rs.details.items()}
        rs.questions = {remap[k]: v for k, v in rs.questions.items()}
        rs.hashes = {remap[k]: v for k, v in rs.hashes.items()}
        rs.ids_from = "id"
    return rs
