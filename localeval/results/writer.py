"""Writing a run folder: one ``results.jsonl`` line per finished sample, then ``summary.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from localeval.results.files import RESULTS_FILE, SUMMARY_FILE, write_json
from localeval.types import Sample, Score

__all__ = ["RunWriter", "sample_record"]


def sample_record(sample: Sample, scores: Mapping[str, Score]) -> dict[str, Any]:
    """One ``results.jsonl`` line: the sample's id, its values, why any is unscored, the working."""
    return {
        "id": sample.id,
        "scores": {k: v.value for k, v in scores.items()},
        "errors": {k: v.reason for k, v in scores.items() if v.value is None},
        "details": {k: v.details for k, v in scores.items() if v.details},
    }


class RunWriter:
    """Appends one results line per finished sample; writes the summary at the end.

    Each line is flushed as it is written, so an interrupted run leaves every
    finished sample on disk.
    """

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._f = open(self.dir / RESULTS_FILE, "w", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        self._f.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._f.flush()

    def close(self, summary: Mapping[str, Any]) -> None:
        self._f.close()
        write_json(self.dir / SUMMARY_FILE, summary)
