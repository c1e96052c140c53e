"""What a run that returns no per-sample records keeps of each sample's scores.

``evaluate(..., keep_samples=False)`` (the command line) writes each sample's
record to ``results.jsonl`` and keeps only what the summary reads: per metric,
one reference per sample to a ``Score`` without its working (``details``), the
scores of equal value and reason shared. Metrics whose summary reads the
working (judge metrics: health and repeat spread; corpus-level ones such as
BLEU) keep their scores whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from localeval.metrics import Metric
from localeval.types import Score

__all__ = ["ScoreColumns"]


class ScoreColumns(Sequence[Mapping[str, Score]]):
    """Per-sample score mappings stored as one column of shared ``Score`` objects per metric.

    Reads as the ``list[dict[str, Score]]`` ``build_summary`` takes; each row's
    mapping is built when read.
    """

    def __init__(self, metrics: Sequence[Metric]) -> None:
        self.cols: dict[str, list[Score | None]] = {m.key: [] for m in metrics}
        self.whole = {m.key for m in metrics
                      if m.uses_judge or getattr(m, "corpus_from_scores", None) is not None}
        self._shared: dict[tuple[float | None, str | None], Score] = {}
        self._n = 0

    def append(self, row: Mapping[str, Score]) -> None:
        for k, col in self.cols.items():
            sc = row.get(k)
            if sc is not None and k not in self.whole:
                key = (sc.value, sc.reason)
                sc = self._shared.get(key) or self._shared.setdefault(key, Score(*key))
            col.append(sc)
        self._n += 1

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        return {k: col[i] for k, col in self.cols.items() if col[i] is not None}
