"""Labels for an estimate: a filled labelling sheet, a table of labels, or another judge's run.

- a sheet from ``localeval label-sheet`` (``label_<metric>`` columns, with the
  draw's name and inclusion probabilities on every row);
- any table (CSV, TSV, JSON, JSONL) with an id and ``label_<metric>``,
  ``human_<metric>`` or (with ``--metric``) ``label`` columns;
- another judge's scores: a localeval run directory or a RAGAS / deepeval
  export, read by ``resultsets.load_result_set`` ("what would that judge say").

Tables are read by ``resultsets.read_label_table``, the one labels reader
(``validate`` reads through it too): a CSV saved with ``;`` as its separator,
a sheet's quoted cells and strict number cells read the same everywhere.
Values must be finite numbers in [0, 1]; graded labels (1-5) are rescaled with
``scale`` (lo, hi) to (v - lo) / (hi - lo). Every bad cell is one DataError
naming file, row and column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from localeval.errors import DataError, UsageError
from localeval.estimate.draw import DrawName, parse_draw
from localeval.estimate.sheet import DRAW_COLUMN, LABEL_PREFIX, PROB_COLUMN
from localeval.resultsets import (
    LabelTable,
    ResultSet,
    label_metric_name,
    label_number,
    load_result_set,
    read_label_table,
)

__all__ = ["LabelSet", "read_labels"]

_TABLES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson")
_PREFIXES = (LABEL_PREFIX, "human_")


@dataclass
class LabelSet:
    """Labels per metric and id (in [0, 1]), where they came from, and the draw they record."""

    source: str
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)  # metric -> column it came from
    draw: DrawName | None = None
    prob: dict[str, float] = field(default_factory=dict)
    result_set: ResultSet | None = None  # ids and content, for the alignment
    kind: str = "table"
    #: every metric the file has a label column for (``columns`` keeps only those asked for)
    sheet_metrics: list[str] = field(default_factory=list)

    def unit(self) -> str:
        return "row"


def _label_columns(cols: list[str], metric: str | None,
                   run_metrics: Sequence[str] | None) -> tuple[dict[str, str], list[str]]:
    """(metric -> column asked for, every labelled metric of the file)."""
    out: dict[str, str] = {}
    for c in cols:
        for prefix in _PREFIXES:
            if c.startswith(prefix) and len(c) > len(prefix):
                out.setdefault(label_metric_name(c[len(prefix):], run_metrics), c)
    if not out and "label" in cols:
        if not metric:
            raise UsageError("the labels file has one 'label' column: say which metric it "
                             "labels with --metric NAME")
        out[label_metric_name(metric, run_metrics)] = "label"
    every = list(out)
    if metric:
        want = label_metric_name(metric, run_metrics)
        out = {m: c for m, c in out.items() if m == want}
    return out, every


def _value(v: Any, src: str, n: int, col: str, scale: tuple[float, float] | None,
           t: LabelTable | None = None) -> float | None:
    f = (t.number(v, n, col) if t is not None
         else label_number(v, file=src, row=n, column=col, unit="row"))
    if f is None:
        return None
    lo, hi = scale or (0.0, 1.0)
    if not lo <= f <= hi:
        hint = ("; graded labels need --scale LO-HI (e.g. --scale 1-5)" if scale is None
                else f" (--scale {lo:g}-{hi:g})")
        raise DataError(f"label {f:g} is outside {lo:g}-{hi:g}{hint}", file=src, row=n,
                        column=col, unit="row")
    return (f - lo) / (hi - lo)


def read_labels(path: str | Path, *, metric: str | None = None,
                scale: tuple[float, float] | None = None,
                run_metrics: Sequence[str] | None = None) -> LabelSet:
    """Read labels from ``path`` (see the module docstring); ``metric`` picks one column.

    ``run_metrics``: the run's metrics, which ``label_<metric>`` columns are
    matched to (``resultsets.label_metric_name``); without them a column names a
    built-in metric in any spelling, or a custom metric exactly as written.
    """
    p = Path(path)
    if p.suffix.lower() in _TABLES and p.is_file():
        t = read_label_table(p)
        wanted, every = _label_columns(t.columns, metric, run_metrics)
        if wanted:
            return _from_table(t, wanted, every, scale)
        if t.sheet and len(t.columns) == 1:
            raise DataError(f"its header reads as one column ({t.columns[0][:60]!r}): save it "
                            "with ',' (or ';') as the separator, with an id column (id, "
                            "sample_id or qid) and label_<metric> columns", file=t.source)
    rs = load_result_set(p)
    lab = LabelSet(rs.source, kind="results", result_set=rs, rows=dict(rs.rows))
    chosen = [label_metric_name(metric, rs.metrics)] if metric else rs.metrics
    lab.sheet_metrics = list(chosen)
    for m in chosen:
        lab.columns[m] = m
        lab.values[m] = {}
        for sid, v in rs.column(m).items():
            f = _value(v, rs.source, rs.rows.get(sid, 0), m, scale)
            if f is not None:
                lab.values[m][sid] = f
    return lab


def _from_table(t: LabelTable, wanted: dict[str, str], every: list[str],
                scale: tuple[float, float] | None) -> LabelSet:
    src = t.source
    lab = LabelSet(src, columns=dict(wanted), values={m: {} for m in wanted},
                   sheet_metrics=every)
    questions: dict[str, str] = {}
    has_draw = DRAW_COLUMN in t.columns
    for n, sid, r in t.ids(need_id=True):
        lab.rows[sid] = n
        q = t.text(r.get("question"))
        if isinstance(q, str) and q.strip():
            questions[sid] = q
        for m, c in wanted.items():
            f = _value(r.get(c), src, n, c, scale, t)
            if f is not None:
                lab.values[m][sid] = f
        if has_draw:
            d = parse_draw(r.get(DRAW_COLUMN, ""), file=src, row=n, column=DRAW_COLUMN)
            if lab.draw is not None and d != lab.draw:
                raise DataError(f"this row names draw {r[DRAW_COLUMN]!r}, earlier rows another; "
                                "a labels file holds one draw", file=src, row=n,
                                column=DRAW_COLUMN, unit="row")
            lab.draw = d
            lab.kind = "sheet"
            prob = t.number(r.get(PROB_COLUMN), n, PROB_COLUMN, what="inclusion probability")
            if prob is None or not 0 < prob <= 1:
                raise DataError("inclusion probability must be a number in (0, 1], got "
                                f"{r.get(PROB_COLUMN)!r}", file=src, row=n,
                                column=PROB_COLUMN, unit="row")
            lab.prob[sid] = prob
    lab.result_set = ResultSet({sid: {} for sid in lab.rows}, source=src, format="labels",
                               questions=questions, rows=dict(lab.rows))
    return lab

