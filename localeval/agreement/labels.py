"""Ground truth for judge validation: labels and human scores per sample, read from a table.

A labels file (CSV, TSV, JSON or JSONL) has an id column (or rows are
numbered, as in result sets) and a binary ``label`` column (positive /
negative, or a boolean such as ``contains_answer``), and/or
``human_<metric>`` columns of human scores, optionally with a ``pair`` /
``group`` column that groups answers to the same question. The file is read
by ``label_table`` (the one labels reader, which ``localeval estimate`` uses
too): a ``;`` CSV, a sheet's quoted cells and strict numbers read the same in both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from localeval.errors import DataError
from localeval.resultsets import (
    BINARY_COLUMNS,
    HUMAN_PREFIX,
    LabelTable,
    ResultSet,
    check_score,
    label_metric_name,
    read_label_table,
)

__all__ = ["Labels", "load_labels"]

_GROUP_COLS = ("pair", "pair_id", "group")
_Q_COLS = ("question", "user_input", "query")
_TRUE = {"positive", "pos", "true", "t", "yes", "y", "1", "relevant", "contains", "has_answer"}
_FALSE = {"negative", "neg", "false", "f", "no", "n", "0", "irrelevant", "not_relevant"}


@dataclass
class Labels:
    """Ground truth per sample id: a binary label and/or human scores per metric."""

    source: str
    binary: dict[str, bool] = field(default_factory=dict)
    human: dict[str, dict[str, float | None]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    questions: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    ids_from: str = "id"
    label_column: str | None = None

    @property
    def human_metrics(self) -> list[str]:
        return list(dict.fromkeys(m for h in self.human.values() for m in h))

    def as_result_set(self) -> ResultSet:
        """The labels in ResultSet shape, so that :func:`align` can pair them."""
        return ResultSet({i: dict(self.human.get(i, {})) for i in self.order},
                         source=self.source, format="labels", questions=dict(self.questions),
                         ids_from=self.ids_from)


def _parse_label(v: Any, t: LabelTable, n: int, col: str) -> bool | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
    if isinstance(v, (int, float, str)):
        try:
            f = t.number(v, n, col)
        except DataError:
            f = None
        if f in (0.0, 1.0):
            return bool(f)
    raise DataError(f"label must be positive/negative (or true/false, 1/0), got {v!r}",
                    file=t.source, row=n, column=col, unit=t.unit)


def load_labels(path: str | Path, *, run_metrics: Sequence[str] | None = None) -> Labels:
    """Read a labels file (CSV, TSV, JSON or JSONL) with an id and label / human_<metric> columns.

    Without an id column, rows are numbered "1", "2", ... (row order), as in
    result sets. A localeval dataset with a ``label`` field (as written by
    scripts/build_validation_set.py) is a valid labels file. ``run_metrics``:
    the judged set's metrics, which ``human_<metric>`` columns are matched to
    (``label_table.label_metric_name``). Read by ``label_table.read_label_table``,
    the reader ``localeval estimate`` uses too.
    """
    t = read_label_table(path)
    cols, src, unit = t.columns, t.source, t.unit
    q_col = next((c for c in _Q_COLS if c in cols), None)
    label_col = next((c for c in BINARY_COLUMNS if c in cols), None)
    group_col = next((c for c in _GROUP_COLS if c in cols), None)
    human_cols = {c: label_metric_name(c[len(HUMAN_PREFIX):], run_metrics) for c in cols
                  if c.startswith(HUMAN_PREFIX) and len(c) > len(HUMAN_PREFIX)}
    if label_col is None and not human_cols:
        raise DataError("a labels file needs a 'label' column (positive/negative), a boolean "
                        "'contains_answer' column, or human_<metric> columns "
                        f"(found: {', '.join(cols)})", file=src)
    lab = Labels(src, ids_from="id" if t.id_column else "row", label_column=label_col)
    for n, sid, r in t.ids():
        lab.order.append(sid)
        if label_col:
            b = _parse_label(r.get(label_col), t, n, label_col)
            if b is not None:
                lab.binary[sid] = b
        if human_cols:
            h: dict[str, float | None] = {}
            for c, m in human_cols.items():
                f = t.number(r.get(c), n, c, what="human score")
                why = None if f is None else check_score(f, c)
                if why:
                    raise DataError(why, file=src, row=n, column=c, unit=unit)
                h[m] = f
            lab.human[sid] = h
        if group_col and r.get(group_col) not in (None, ""):
            lab.groups[sid] = str(t.text(r[group_col]))
        if q_col and isinstance(r.get(q_col), str):
            lab.questions[sid] = t.text(r[q_col])
    if not lab.binary and not any(v is not None for h in lab.human.values()
                                  for v in h.values()):
        cols_ = [label_col] if label_col else list(human_cols)
        raise DataError(f"every cell of {', '.join(repr(c) for c in cols_)} is empty: no "
                        "label to validate against", file=src,
                        column=cols_[0] if len(cols_) == 1 else None, unit=unit)
    return lab
