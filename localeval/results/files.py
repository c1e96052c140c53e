"""The names of a run folder's files and the atomic JSON write they share."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

__all__ = ["RESULTS_FILE", "SUMMARY_FILE", "write_json", "dumps_strict"]

#: One JSON object per sample, appended as each sample finishes.
RESULTS_FILE = "results.jsonl"
#: The run's aggregate: metric means, CIs, signature, usage.
SUMMARY_FILE = "summary.json"


def dumps_strict(obj: Any, **kw: Any) -> str:
    """``json.dumps`` that writes only strict JSON (RFC 8259): no NaN, no Infinity.

    Scores are made finite before they get here (the runner unscores a
    non-finite value); a non-finite float left in a metric's working becomes
    null rather than a token that strict JSON readers reject.
    """
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, **kw)
    except ValueError:
        return json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False, **kw)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented strict JSON through a temporary file, so a reader never sees
    half of it."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(dumps_strict(obj, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
