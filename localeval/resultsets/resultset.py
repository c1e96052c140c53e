"""The common shape every reader produces: :class:`ResultSet`, and localeval's metric names.

"Judging the judges" compares scores from different tools (localeval, RAGAS,
deepeval). Each reader turns its format into a ResultSet (sample id ->
{metric: value or None}) with metric names mapped to localeval's keys, so
that alignment, comparison and validation never see a tool's own format.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from localeval.errors import DataError
from localeval.results import JudgeFitness

if TYPE_CHECKING:
    from localeval.results import RunRecord

__all__ = [
    "ResultSet",
    "canonical_metric_name",
    "as_score",
    "METRIC_ALIASES",
    "KNOWN_METRICS",
    "score_range",
    "SANE_LIMIT",
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
    "noise_sensitivity(mode=irrelevant)": "noise_sensitivity:mode=irrelevant",
    "noise_sensitivity_irrelevant": "noise_sensitivity:mode=irrelevant",
    "factual_correctness(mode=f1)": "factual_correctness",
    "factual_correctness(mode=precision)": "factual_correctness:mode=precision",
    "factual_correctness(mode=recall)": "factual_correctness:mode=recall",
    "rouge_score": "rougeL",  # RougeScore's default: rougeL, F-measure
    "rouge_score(mode=fmeasure)": "rougeL",
    "bleu_score": "bleu",
    "string_present": "string_presence",
    "answer_accuracy": "nv_answer_accuracy",  # ragas.metrics.collections names of the
    "response_groundedness": "nv_response_groundedness",  # NVIDIA metrics
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


#: Metrics whose documented range is not [0, 1] (docs/metrics.md): cosines can be
#: negative, and dcg is not normalised.
_RANGES: dict[str, tuple[float, float]] = {
    "answer_relevancy": (-1.0, 1.0), "answer_similarity": (-1.0, 1.0),
    "answer_correctness": (-1.0, 1.0), "dcg": (0.0, math.inf),
}
#: Bound on a score of a metric localeval does not know (a custom criterion, another
#: tool's rubric on 1-5): wide enough for any scale, small enough that squares and sums
#: of a few million such scores stay far from float overflow.
SANE_LIMIT = 1e6
# A tolerance for float rounding at a range's edge (1.0000000000000002).
_EDGE = 1e-9


def score_range(metric: str) -> tuple[float, float]:
    """The range a score of ``metric`` (a localeval key) can take.

    localeval's metrics are 0-1 except those in ``_RANGES``; a thresholded key
    (``...:threshold=0.8``) is 0 or 1; an unknown metric gets +-SANE_LIMIT.
    """
    from localeval.metrics import registry

    base = re.split(r"[@:]", metric, maxsplit=1)[0]
    if re.search(r"[:;]threshold=", metric):
        return (0.0, 1.0)
    if base in _RANGES:
        return _RANGES[base]
    if base in KNOWN_METRICS or base in registry():
        return (0.0, 1.0)
    return (-SANE_LIMIT, SANE_LIMIT)


def check_score(v: float, metric: str) -> str | None:
    """Why ``v`` cannot be a score of ``metric`` (None when it can): not finite, or
    outside the metric's range. Such a value would turn means into nulls, CIs into
    [0, 0] and correlations into overflow, so readers refuse it."""
    if not math.isfinite(v):
        return f"score {v!r} is not a finite number"
    lo, hi = score_range(metric)
    if not lo - _EDGE <= v <= hi + _EDGE:
        what = f"{lo:g} to {hi:g}" if math.isfinite(hi) else f"at least {lo:g}"
        return f"score {v:g} is outside the range of {metric!r} ({what})"
    return None


def canonical_metric_name(name: str) -> str:
    """Map a tool's metric name to localeval's key: ``"Contextual Recall"`` -> ``context_recall``.

    localeval keys (``ndcg@10``, ``answer_correctness:weights=0.5,0.5``) pass through.
    Letters of any script are kept (NFC-normalised, so a name typed on macOS
    matches the same name typed elsewhere).
    """
    raw = unicodedata.normalize("NFC", name).strip()
    low = raw.lower()
    if low in METRIC_ALIASES:
        return METRIC_ALIASES[low]
    if raw in KNOWN_METRICS or "@" in raw or ":" in raw:
        return raw
    # \w, not [a-z]: a metric named in Japanese (丁寧さ) keeps its letters, not ""
    slug = re.sub(r"[^\w@:=.,()]+", "_", low).strip("_")
    slug = re.sub(r"_?\[?geval\]?$", "", slug).strip("_")  # "Correctness [GEval]"
    return METRIC_ALIASES.get(slug, slug) if slug else raw


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
    #: metric -> lower is better, as a localeval run's summary.json recorded it ({}: unknown)
    directions: dict[str, bool] = field(default_factory=dict)
    #: a localeval run's judge fitness (its judge check and judge health, as its record
    #: reads them: ``results.JudgeFitness``); a verdict of None when none is recorded
    fitness: JudgeFitness = field(default_factory=JudgeFitness)
    #: a localeval run's record (``results.RunRecord``: its summary.json read and
    #: checked), None for an export, a set built in memory, or a run whose summary is
    #: missing or could not be read
    record: RunRecord | None = None
    #: what a view should know of how the set was read (a summary.json beside it that
    #: could not be read), one sentence each
    notes: list[str] = field(default_factory=list)
    #: "row" or "line": what ``rows`` counts, for messages
    unit: str = "row"
    #: metric -> the column it was read from, where that differs (messages name the file's own)
    columns: dict[str, str] = field(default_factory=dict)

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

    def check_scores(self) -> None:
        """Refuse (DataError naming file, row and column) the first score that is not
        finite or lies outside its metric's range (:func:`check_score`)."""
        for sid, sc in self.scores.items():
            for m, v in sc.items():
                why = None if v is None else check_score(v, m)
                if why:
                    raise DataError(f"{why} (sample {sid!r})", file=self.source, row=self.rows.get(sid),
                                    column=self.columns.get(m, m), unit=self.unit)

    @classmethod
    def from_scores(cls, scores: Mapping[Any, Mapping[str, float | None]], *,
                    source: str = "<memory>", name: str = "",
                    questions: Mapping[Any, str] | None = None) -> "ResultSet":
        """Build a set in memory (tests, notebooks): ``{id: {metric: value}}``."""
        out: dict[str, dict[str, float | None]] = {}
        for sid, sc in scores.items():
            out[str(sid)] = {m: as_score(v) for m, v in sc.items()}
        rs = cls(out, source=source, format="memory", name=name,
                 questions={str(k): v for k, v in (questions or {}).items()})
        rs.check_scores()
        return rs


def _short_name(source: str) -> str:
    p = Path(source)
    if p.name in ("results.jsonl",) and p.parent.name:
        return p.parent.name
    return p.name or source
