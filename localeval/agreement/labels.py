"""Ground truth for judge validation: labels and human scores per sample, read from a table.

A labels file (CSV, TSV, JSON or JSONL) has an id column (or rows are
numbered, as in result sets) and a binary ``label`` column (positive /
negative, or a boolean such as ``contains_answer``), and/or
``human_<metric>`` columns of human scores, optionally with a ``pair`` /
``group`` column that groups answers to the same question.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.agreement.resultset import ResultSet, canonical_metric_name, check_score
from localeval.agreement.tables import ID_COLUMNS, read_table, row_id
from localeval.errors import DataError

__all__ = ["Labels", "load_labels"]

_LABEL_COLS = ("label", "contains_answer", "has_positive", "has_answer", "is_positive",
               "relevant")
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


def _parse_label(v: Any, src: str, n: int, col: str, unit: str) -> bool | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
        if v in (0, 1):
            return bool(v)
    elif isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
    elif isinstance(v, float):
        return None
    raise DataError(f"label must be positive/negative (or true/false, 1/0), got {v!r}",
                    file=src, row=n, column=col, unit=unit)


def load_labels(path: str | Path) -> Labels:
    """Read a labels file (CSV, TSV, JSON or JSONL) with an id and label / human_<metric> columns.

    Without an id column, rows are numbered "1", "2", ... (row order), as in
    result sets. A localeval dataset with a ``label`` field (as written by
    scripts/build_validation_set.py) is a valid labels file.
    """
    if Path(path).is_dir():
        raise DataError(f"{path} is a folder, not a labels file")
    rows, src, unit = read_table(path)
    if not rows:
        raise DataError(f"labels file {src} has no rows")
    cols = list(dict.fromkeys(c for _, r in rows for c in r))
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    q_col = next((c for c in _Q_COLS if c in cols), None)
    label_col = next((c for c in _LABEL_COLS if c in cols), None)
    group_col = next((c for c in _GROUP_COLS if c in cols), None)
    human_cols = {c: canonical_metric_name(c[len("human_"):]) for c in cols
                  if c.startswith("human_") and len(c) > len("human_")}
    if label_col is None and not human_cols:
        raise DataError("a labels file needs a 'label' column (positive/negative), a boolean "
                        "'contains_answer' column, or human_<metric> columns "
                        f"(found: {', '.join(cols)})", file=src)
    lab = Labels(src, ids_from="id" if id_col else "row", label_column=label_col)
    seen: dict[str, int] = {}
    for i, (n, r) in enumerate(rows, 1):
        sid = row_id(r.get(id_col), src, n, id_col, unit) if id_col else str(i)
        if sid in seen:
            raise DataError(f"duplicate id {sid!r} (first at {unit} {seen[sid]})", file=src,
                            row=n, column=id_col, unit=unit)
        seen[sid] = n
        lab.order.append(sid)
        if label_col:
            b = _parse_label(r.get(label_col), src, n, label_col, unit)
            if b is not None:
                lab.binary[sid] = b
        if human_cols:
            h: dict[str, float | None] = {}
            for c, m in human_cols.items():
                v = r.get(c)
                if v is None or (isinstance(v, str) and not v.strip()):
                    h[m] = None
                    continue
                try:
                    if isinstance(v, bool):
                        raise ValueError
                    f = float(v)
                except (TypeError, ValueError):
                    raise DataError(f"human score must be a number, got {v!r}", file=src,
                                    row=n, column=c, unit=unit) from None
                why = None if math.isnan(f) else check_score(f, c)
                if why:
                    raise DataError(why, file=src, row=n, column=c, unit=unit)
                h[m] = None if math.isnan(f) else f
            lab.human[sid] = h
        if group_col and r.get(group_col) not in (None, ""):
            lab.groups[sid] = str(r[group_col])
        if q_col and isinstance(r.get(q_col), str):
            lab.questions[sid] = r[q_col]
    if not lab.binary and not any(v is not None for h in lab.human.values()
                                  for v in h.values()):
        cols_ = [label_col] if label_col else list(human_cols)
        raise DataError(f"every cell of {', '.join(repr(c) for c in cols_)} is empty: no "
                        "label to validate against", file=src,
                        column=cols_[0] if len(cols_) == 1 else None, unit=unit)
    return lab


