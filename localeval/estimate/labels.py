"""Labels for an estimate: a filled labelling sheet, a table of labels, or another judge's run.

- a sheet from ``localeval label-sheet`` (``label_<metric>`` columns, with the
  draw's name and inclusion probabilities on every row);
- any table (CSV, TSV, JSON, JSONL) with an id and ``label_<metric>``,
  ``human_<metric>`` or (with ``--metric``) ``label`` columns;
- another judge's scores: a localeval run directory or a RAGAS / deepeval
  export, read by ``agreement.load_result_set`` ("what would that judge say").

Values must lie in [0, 1]; graded labels (1-5) are rescaled with ``scale``
(lo, hi) to (v - lo) / (hi - lo). Every bad cell is one DataError naming
file, row and column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.agreement import ID_COLUMNS, ResultSet, canonical_metric_name, load_result_set, read_table, row_id
from localeval.errors import DataError, UsageError
from localeval.estimate.draw import parse_draw
from localeval.estimate.sheet import DRAW_COLUMN, LABEL_PREFIX, PROB_COLUMN
from localeval.results import unquote_cell

__all__ = ["LabelSet", "read_labels"]

_TABLES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson")


@dataclass
class LabelSet:
    """Labels per metric and id (in [0, 1]), where they came from, and the draw they record."""

    source: str
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)  # metric -> column it came from
    draw: tuple[str, int, int] | None = None
    prob: dict[str, float] = field(default_factory=dict)
    result_set: ResultSet | None = None  # ids and content, for the alignment
    kind: str = "table"

    def unit(self) -> str:
        return "row"


def _label_columns(cols: list[str], metric: str | None) -> dict[str, str]:
    out = {}
    for c in cols:
        for prefix in (LABEL_PREFIX, "human_"):
            if c.startswith(prefix) and len(c) > len(prefix):
                out[canonical_metric_name(c[len(prefix):])] = c
    if not out and "label" in cols:
        if not metric:
            raise UsageError("the labels file has one 'label' column: say which metric it "
                             "labels with --metric NAME")
        out[canonical_metric_name(metric)] = "label"
    if metric:
        out = {m: c for m, c in out.items() if m == canonical_metric_name(metric)}
    return out


def _value(v: Any, src: str, n: int, col: str, scale: tuple[float, float] | None) -> float | None:
    v = unquote_cell(v)
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    try:
        if isinstance(v, bool):
            raise ValueError
        f = float(v)
    except (TypeError, ValueError):
        raise DataError(f"label must be a number, got {v!r}", file=src, row=n, column=col,
                        unit="row") from None
    if math.isnan(f):
        return None
    lo, hi = scale or (0.0, 1.0)
    if not lo <= f <= hi:
        hint = ("; graded labels need --scale LO-HI (e.g. --scale 1-5)" if scale is None
                else f" (--scale {lo:g}-{hi:g})")
        raise DataError(f"label {f:g} is outside {lo:g}-{hi:g}{hint}", file=src, row=n,
                        column=col, unit="row")
    return (f - lo) / (hi - lo)


def read_labels(path: str | Path, *, metric: str | None = None,
                scale: tuple[float, float] | None = None) -> LabelSet:
    """Read labels from ``path`` (see the module docstring); ``metric`` picks one column."""
    p = Path(path)
    if p.suffix.lower() in _TABLES and p.is_file():
        rows, src, _ = read_table(p)
        cols = list(dict.fromkeys(c for _, r in rows for c in r))
        wanted = _label_columns(cols, metric)
        if wanted:
            return _from_table(rows, src, cols, wanted, scale)
    rs = load_result_set(p)
    lab = LabelSet(rs.source, kind="results", result_set=rs, rows=dict(rs.rows))
    chosen = [canonical_metric_name(metric)] if metric else rs.metrics
    for m in chosen:
        lab.columns[m] = m
        lab.values[m] = {}
        for sid, v in rs.column(m).items():
            f = _value(v, rs.source, rs.rows.get(sid, 0), m, scale)
            if f is not None:
                lab.values[m][sid] = f
    return lab


def _from_table(rows: list[tuple[int, dict[str, Any]]], src: str, cols: list[str],
                wanted: dict[str, str], scale: tuple[float, float] | None) -> LabelSet:
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    if id_col is None:
        raise DataError(f"a labels file needs an id column ({', '.join(ID_COLUMNS)}) to pair "
                        "its rows with the run", file=src)
    lab = LabelSet(src, columns=dict(wanted), values={m: {} for m in wanted})
    questions: dict[str, str] = {}
    for n, r in rows:
        sid = row_id(unquote_cell(r.get(id_col)), src, n, id_col, "row")
        if sid in lab.rows:
            raise DataError(f"duplicate id {sid!r} (first at row {lab.rows[sid]})", file=src,
                            row=n, column=id_col, unit="row")
        lab.rows[sid] = n
        if isinstance(r.get("question"), str) and r["question"].strip():
            questions[sid] = unquote_cell(r["question"])
        for m, c in wanted.items():
            f = _value(r.get(c), src, n, c, scale)
            if f is not None:
                lab.values[m][sid] = f
        if DRAW_COLUMN in cols:
            d = parse_draw(r.get(DRAW_COLUMN, ""), file=src, row=n, column=DRAW_COLUMN)
            if lab.draw is not None and d != lab.draw:
                raise DataError(f"this row names draw {r[DRAW_COLUMN]!r}, earlier rows another; "
                                "a labels file holds one draw", file=src, row=n,
                                column=DRAW_COLUMN, unit="row")
            lab.draw = d
            lab.kind = "sheet"
            try:
                lab.prob[sid] = float(r.get(PROB_COLUMN) or "")  # an empty cell: ValueError
            except (TypeError, ValueError):
                raise DataError(f"inclusion probability must be a number, got "
                                f"{r.get(PROB_COLUMN)!r}", file=src, row=n, column=PROB_COLUMN,
                                unit="row") from None
    lab.result_set = ResultSet({sid: {} for sid in lab.rows}, source=src, format="labels",
                               questions=questions, rows=dict(lab.rows))
    return lab
