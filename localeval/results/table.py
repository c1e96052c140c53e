"""``results.csv``: the run's per-sample scores as a table for spreadsheets and pandas.

``results.jsonl`` is the full record (working included); people asked for
something a spreadsheet or ``pd.read_csv`` opens as is. One row per sample:
``id``, ``question``, one column per metric (empty when unscored), then one
``<metric>_reason`` column per metric with why it is unscored (empty when scored).
The file is written with the csv module (quoting of commas, quotes and line
breaks in questions is its job) in UTF-8 with a byte-order mark, so that
Excel shows Japanese and Chinese text correctly; pandas and the csv module
read the mark transparently.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["CSV_FILE", "write_results_csv"]

#: The table's file name in a run folder.
CSV_FILE = "results.csv"


def write_results_csv(path: str | os.PathLike[str],
                      records: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``records`` (results.jsonl lines) as a CSV table at ``path``, atomically.

    ``records`` is read twice (the metrics for the header, then the rows), so an
    iterable that reads the file again on each pass serves without holding them.
    """
    p = Path(path)
    metrics: dict[str, None] = {}
    for r in records:
        for k in r.get("scores") or {}:
            metrics.setdefault(k, None)
    head = ["id", "question", *metrics, *(f"{m}_reason" for m in metrics)]
    tmp = p.with_suffix(p.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8-sig", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        for r in records:
            scores = r.get("scores") or {}
            errors = r.get("errors") or {}
            w.writerow([r.get("id", ""), r.get("question") or "",
                        *("" if scores.get(m) is None else repr(float(scores[m]))
                          for m in metrics),
                        *(errors.get(m) or "" if scores.get(m) is None else ""
                          for m in metrics)])
    os.replace(tmp, p)
    return p
