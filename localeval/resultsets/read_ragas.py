"""RAGAS exports (``EvaluationResult.to_pandas()`` saved as CSV / JSON / JSONL) as a ResultSet.

A RAGAS table holds the input columns (``user_input``, ``retrieved_contexts``,
``response``, ``reference`` and their older names), an optional id column,
then one numeric column per metric. Any other table of that shape reads the
same way.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

from localeval.dataset import text_list
from localeval.errors import DataError
from localeval.results import content_fields
from localeval.resultsets.resultset import KNOWN_METRICS, ResultSet, canonical_metric_name
from localeval.resultsets.tables import ID_COLUMNS, row_id

__all__ = ["from_table"]

# Columns holding the question text, in order of preference.
_QUESTION_COLS = ("user_input", "question", "query")
# ... the contexts and the answer (RAGAS 0.2+ names first, then RAGAS 0.1's).
_CONTEXT_COLS = ("retrieved_contexts", "contexts")
_ANSWER_COLS = ("response", "answer")
# RAGAS / dataset input columns: never metrics.
_INPUT_COLS = frozenset({
    *_QUESTION_COLS, "retrieved_contexts", "contexts", "response", "answer", "reference",
    "ground_truth", "ground_truths", "reference_contexts", "multi_responses", "rubrics",
    "retrieved_ids", "relevant_ids", "retrieved_context_ids", "reference_context_ids",
    "persona_name", "query_style", "query_length", "synthesizer_name", "label",
    "query_id", "doc_id", "docid", "pair", "pair_id", "group",
})
# Columns pandas writes for the index (to_csv without index=False, reset_index()).
_INDEX_COLS = frozenset({"", "Unnamed: 0", "index", "level_0"})


def _cell_number(v: Any) -> tuple[bool, float | None]:
    """(is numeric-or-empty, value). Strings from CSV cells are parsed."""
    if v is None:
        return True, None
    if isinstance(v, bool):
        return False, None
    if isinstance(v, (int, float)):
        f = float(v)
        return True, (None if math.isnan(f) else f)
    if isinstance(v, str):
        s = v.strip()
        if s == "" or s.lower() in ("nan", "none", "null"):
            return True, None
        try:
            f = float(s)
        except ValueError:
            return False, None
        return True, (None if math.isnan(f) else f)
    return False, None


def from_table(rows: Sequence[tuple[int, dict[str, Any]]], src: str, unit: str) -> ResultSet:
    """A RAGAS-style table: input columns, an optional id column, numeric metric columns.

    A column is a metric when it is not an input column and every non-empty
    cell is a number; a column that is mostly numbers with a stray text cell
    is an error naming that cell. Empty cells are unscored samples (RAGAS
    writes NaN there when a judge call failed).
    """
    cols: list[str] = list(dict.fromkeys(c for _, r in rows for c in r))
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    q_col = next((c for c in _QUESTION_COLS if c in cols), None)
    ctx_col = next((c for c in _CONTEXT_COLS if c in cols), None)
    ans_col = next((c for c in _ANSWER_COLS if c in cols), None)
    metric_cols: list[str] = []
    for c in cols:
        if c in _INPUT_COLS or c in _INDEX_COLS or c == id_col or c.startswith("human_"):
            continue
        cells = [(n, r.get(c)) for n, r in rows]
        parsed = [(n, v, *_cell_number(v)) for n, v in cells]
        bad = [(n, v) for n, v, ok, _ in parsed if not ok]
        numeric = [f for _, _, ok, f in parsed if ok and f is not None]
        if bad and numeric and len(numeric) >= len(bad):
            n, v = bad[0]
            raise DataError(f"expected a number (or an empty cell for unscored), got {v!r}",
                            file=src, row=n, column=c, unit=unit)
        if bad:
            continue  # a text column (metadata), not a metric
        if not numeric and canonical_metric_name(c) not in KNOWN_METRICS:
            continue  # all-empty column of unknown meaning
        metric_cols.append(c)
    names = {c: canonical_metric_name(c) for c in metric_cols}
    dup = _first_dup(names.values())
    if dup:
        both = [c for c in metric_cols if names[c] == dup]
        raise DataError(f"columns {both} both map to metric {dup!r}; keep one", file=src)
    rs = ResultSet({}, source=src, format="ragas", ids_from="id" if id_col else "row",
                   unit=unit, columns={m: c for c, m in names.items()})
    for i, (n, r) in enumerate(rows, 1):
        sid = row_id(r.get(id_col), src, n, id_col, unit) if id_col else str(i)
        if sid in rs.scores:
            raise DataError(f"duplicate id {sid!r} (first at {unit} {rs.rows[sid]})", file=src,
                            row=n, column=id_col, unit=unit)
        rs.rows[sid] = n
        rs.scores[sid] = {names[c]: _cell_number(r.get(c))[1] for c in metric_cols}
        errs = {names[c]: "empty in the source (NaN)" for c in metric_cols
                if rs.scores[sid][names[c]] is None}
        if errs:
            rs.errors[sid] = errs
        if q_col and isinstance(r.get(q_col), str):
            rs.questions[sid] = r[q_col]
        h = content_fields(None, text_list(r.get(ctx_col)) if ctx_col else None,
                           r.get(ans_col) if ans_col else None)
        if h:
            rs.hashes[sid] = h
    return rs


def _first_dup(items: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for x in items:
        if x in seen:
            return x
        seen.add(x)
    return None
