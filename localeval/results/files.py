"""The names of a run folder's files and the atomic JSON write they share."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["RESULTS_FILE", "SUMMARY_FILE", "write_json"]

#: One JSON object per sample, appended as each sample finishes.
RESULTS_FILE = "results.jsonl"
#: The run's aggregate: metric means, CIs, signature, usage.
SUMMARY_FILE = "summary.json"


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON through a temporary file, so a reader never sees half of it."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
