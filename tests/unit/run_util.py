"""Small data for the tests of a run's output folder (test_run_folder_safety.py,
test_run_default_folders.py)."""

from __future__ import annotations

import json
from pathlib import Path

ROWS = [{"id": f"r{i}", "question": f"Q{i}?", "answer": f"the answer is {i}",
         "contexts": [f"context {i}"], "reference": f"the answer is {i} indeed"}
        for i in range(5)]


def write_rows(path: Path, rows: list[dict] = ROWS) -> Path:
    """``rows`` as a JSONL file at ``path``."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
