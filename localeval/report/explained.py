"""The reasons ``localeval explain`` asked afterwards: ``explain.jsonl`` beside a run.

One line per explained sample: ``id``, the explaining run's ``signature_line`` and,
per metric, the full-reason ``score``, the run's own ``run_score`` and the
``details`` (the judge's working, with reasons). Written by ``run.explain``; read
here for the HTML report, which shows it under each metric's working.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from localeval.errors import DataError

__all__ = ["EXPLAIN_FILE", "read_explained", "explained_note"]

#: Written beside results.jsonl by ``localeval explain``.
EXPLAIN_FILE = "explain.jsonl"


def read_explained(run_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Sample id -> metric key -> explained entry; {} when the run has no explain.jsonl.

    A line that is not a JSON object with an id is a DataError naming the file and line.
    """
    path = Path(run_dir) / EXPLAIN_FILE
    if not path.is_file():
        return {}
    out: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            out[str(rec["id"])] = dict(rec["metrics"])
        except (ValueError, KeyError, TypeError):
            raise DataError(f"line {n} is not an explained sample (id, metrics)",
                            file=str(path)) from None
    return out


def explained_note(entry: dict[str, Any]) -> str:
    """The sentence above an explained metric: where the reasons come from, and whether
    the explaining call reached the run's score."""
    head = "reasons asked afterwards (localeval explain), from a second call with full reasons"
    score, was = entry.get("score"), entry.get("run_score")
    if score is None or was is None or abs(float(score) - float(was)) < 1e-9:
        return head
    return (f"{head}: that call scored {float(score):.3f}, the run {float(was):.3f}; "
            "the judge decided differently once it wrote its reasons")
