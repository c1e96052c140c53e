"""The common shape every reader produces: :class:`ResultSet`, and localeval's metric names.

"Judging the judges" compares scores from different tools (localeval, RAGAS,
deepeval). Each reader turns its format into a ResultSet (sample id ->
{metric: value or None}) with metric names mapped to localeval's keys, so
that alignment, comparison and validation never see a tool's own format.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

__all__ = [
    "ResultSet",
    "canonical_metric_name",
    "as_score",
    "METRIC_ALIASES",
    "KNOWN_METRICS",
]

#: Metric names used by RAGAS / deepeval exports -> localeval's metric keys.
#: Names not listed are kept as they are (lower-cased, spaces -> "_").
METRIC_ALIASES: dict[str, str] = {
    # RAGAS (0.2 - 0.4) class names that differ from localeval's keys
    "semantic_similarity": "answer_similarity",
    "nv_accuracy": "nv_answer_accuracy",
    "context_relevance": "nv_context_relevance",  # ragas.metrics.collections name
    "llm_context_precision_with_reference": "context_precision",
    "llm_context_precision_without_reference": "context_utilization",
    "response_relevancy": "answer_relevancy",
    "noise_sensitivity(mode=relevant)": "noise_sensitivity",
    "noise_sensitivity_relevant": "noise_sensitivity",
    # deepeval display names (after slugging)
    "contextual_precision": "context_precision",
    "contextual_recall": "context_recall",
    "contextual_relevancy": "context_relevancy",
    "answer_relevance": "answer_relevancy",
}

#: Metric keys known to localeval (DESIGN.md): a table column with one of these
#: names is a metric even when every cell is empty (every sample unscored).
KNOWN_METRICS = frozenset({
    "faithfulness", "answer_relevancy", "context_precision", "context_utilization",
    "context_recall", "context_entity_recall", "noise_sensitivity", "answer_similarity",
    "answer_correctness", "context_relevancy", "nv_context_relevance", "nv_answer_accuracy",
    "nv_response_groundedness", "hit_rate", "mrr", "precision", "recall", "map", "ndcg",
    "bleu", "rouge1", "rouge2", "rougeL", "factual_correctness",
})


def canonical_metric_name(name: str) -> str:
    """Map a tool's metric name to localeval's key: ``"Contextual Recall"`` -> ``context_recall``.

    localeval keys (``ndcg@10``, ``answer_correctness:weights=0.5,0.5``) pass through.
    """
    raw = name.strip()
    low = raw.lower()
    if low in METRIC_ALIASES:
        return METRIC_ALIASES[low]
    if raw in KNOWN_METRICS or "@" in raw or ":" in raw:
        return raw
    slug = re.sub(r"[^0-9a-z@:=.,()]+", "_", low).strip("_")
    slug = re.sub(r"_?\[?geval\]?$", "", slug).strip("_")  # "Correctness [GEval]"
    return METRIC_ALIASES.get(slug, slug)


def as_score(v: Any) -> float | None:
    """A score as float; None for a missing value or NaN (how pandas marks "unscored")."""
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


@dataclass
class ResultSet(Mapping[str, dict[str, "float | None"]]):
    """Scores of one judge (or one tool run): sample id -> {metric: value or None}.

    ``errors`` holds the reason a value is None where the source gave one;
    ``details`` the per-metric working localeval stores (statements, verdicts);
    ``questions`` the question text and ``hashes`` the contexts and answer
    hashes (``{"contexts_hash": ..., "answer_hash": ...}``, see
    ``results.content_hash``) when the source has them: what samples are
    aligned on when ids cannot be trusted; ``rows`` the 1-based line/row of each
    sample in the source, for messages. ``ids_from`` is ``"id"`` when the
    source carried ids, ``"row"`` when they are row numbers.
    """

    scores: dict[str, dict[str, float | None]]
    source: str = "<memory>"
    format: str = "table"
    errors: dict[str, dict[str, str]] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    questions: dict[str, str] = field(default_factory=dict)
    hashes: dict[str, dict[str, str]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    ids_from: str = "id"
    name: str = ""
    #: localeval's run signature (judge, prompts, seed...) from summary.json, when known.
    signature: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = _short_name(self.source)

    # Mapping protocol: id -> scores
    def __getitem__(self, sid: str) -> dict[str, float | None]:
        return self.scores[sid]

    def __iter__(self) -> Iterator[str]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def metrics(self) -> list[str]:
        """Metric keys in order of first appearance."""
        seen: dict[str, None] = {}
        for sc in self.scores.values():
            for k in sc:
                seen.setdefault(k, None)
        return list(seen)

    def column(self, metric: str) -> dict[str, float | None]:
        """id -> value for one metric (samples without the metric are left out)."""
        return {sid: sc[metric] for sid, sc in self.scores.items() if metric in sc}

    def reason(self, sid: str, metric: str) -> str | None:
        return self.errors.get(sid, {}).get(metric)

    @classmethod
    def from_scores(cls, scores: Mapping[Any, Mapping[str, float | None]], *,
                    source: str = "<memory>", name: str = "",
                    questions: Mapping[Any, str] | None = None) -> "ResultSet":
        """Build a set in memory (tests, notebooks): ``{id: {metric: value}}``."""
        out: dict[str, dict[str, float | None]] = {}
        for sid, sc in scores.items():
            out[str(sid)] = {m: as_score(v) for m, v in sc.items()}
        return cls(out, source=source, format="memory", name=name,
                   questions={str(k): v for k, v in (questions or {}).items()})


def _short_name(source: str) -> str:
    p = Path(source)
    if p.name in ("results.jsonl",) and p.parent.name:
        return p.parent.name
    return p.name or source
