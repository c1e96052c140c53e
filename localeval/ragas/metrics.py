"""RAGAS-named metric objects: module-level instances and per-metric classes.

Two styles, as in RAGAS:

    from localeval.ragas.metrics import faithfulness          # for evaluate(...)
    from localeval.ragas.metrics import AnswerCorrectness     # scored alone (seed 004)

    scorer = AnswerCorrectness(judge="models/judge.gguf", weights=[0.75, 0.25])
    result = scorer.score(user_input="...", response="...", reference="...")
    result.value, result.reason, result.details["tp"]
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, ClassVar

from localeval.metrics import Context, Metric, Thresholded, get_metric

__all__ = [
    "RagasMetric", "MetricResult",
    "Faithfulness", "AnswerRelevancy", "ResponseRelevancy", "ContextPrecision",
    "ContextUtilization", "ContextRecall", "ContextEntityRecall", "NoiseSensitivity",
    "AnswerSimilarity", "SemanticSimilarity", "AnswerCorrectness", "ContextRelevancy",
    "ContextRelevance", "AnswerAccuracy", "ResponseGroundedness",
    "faithfulness", "answer_relevancy", "context_precision", "context_utilization",
    "context_recall", "context_entity_recall", "noise_sensitivity", "answer_similarity",
    "semantic_similarity", "answer_correctness", "context_relevancy", "context_relevance",
    "answer_accuracy", "response_groundedness",
]


@dataclass
class MetricResult:
    """What ``.score()`` returns: ``value`` (None when unscored), ``reason`` and the working."""

    value: float | None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        return float("nan") if self.value is None else float(self.value)

    def __repr__(self) -> str:
        return f"MetricResult(value={self.value}, reason={self.reason!r})"


class RagasMetric:
    """A localeval metric with RAGAS's constructor and ``score`` / ``ascore`` methods."""

    metric_name: ClassVar[str] = ""

    def __init__(self, llm: Any = None, embeddings: Any = None, *, judge: Any = None,
                 embedder: Any = None, threshold: float | None = None, **params: Any) -> None:
        self.judge = judge if judge is not None else llm
        self.embedder = embedder if embedder is not None else embeddings
        cls = get_metric(self.metric_name)
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        metric: Metric = cls(**params)
        self.metric: Metric = Thresholded(metric, threshold) if threshold is not None else metric
        self._ctx: Context | None = None

    @property
    def name(self) -> str:
        return self.metric.key

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.metric!r})"

    def _context(self) -> Context:
        if self._ctx is None:
            from localeval.config import get_config
            from localeval.run import open_cache, resolve_embedder, resolve_judge

            cfg = get_config()
            store = open_cache(cfg.extra.get("cache", True))
            judge = self.judge if self.judge is not None else cfg.judge
            embedder = self.embedder if self.embedder is not None else cfg.embedder
            self._ctx = Context(
                judge=resolve_judge(judge, store, cfg.judge_options)
                if self.metric.uses_judge else None,
                embedder=resolve_embedder(embedder, store, cfg.extra.get("device", "auto"))
                if self.metric.uses_embedder else None,
                lang=cfg.extra.get("lang", "auto"), seed=cfg.extra.get("seed", 0),
                verdicts=cfg.extra.get("verdicts", "hard"))
        return self._ctx

    def score(self, **fields: Any) -> MetricResult:
        """Score one sample given as keyword fields (RAGAS v1 or v2 names)."""
        from localeval.dataset import load_dataset
        from localeval.metrics import missing_reason, score_one

        sample = load_dataset([fields]).samples[0]
        if self.metric.missing_fields(sample):
            return MetricResult(None, missing_reason(self.metric, sample))
        ctx = self._context()
        ctx.begin_sample()
        sc = score_one(self.metric, sample, ctx)
        return MetricResult(sc.value, sc.reason, sc.details)

    async def ascore(self, **fields: Any) -> MetricResult:
        """``score`` in a worker thread, so an event loop is not blocked by the judge."""
        return await asyncio.to_thread(self.score, **fields)

    # RAGAS 0.2 names
    def single_turn_score(self, sample: Any) -> float:
        return float(self.score(**dict(sample)))

    async def single_turn_ascore(self, sample: Any) -> float:
        return float(await self.ascore(**dict(sample)))


def _make(class_name: str, metric_name: str) -> type[RagasMetric]:
    return type(class_name, (RagasMetric,), {"metric_name": metric_name,
                                              "__doc__": f"RAGAS-style ``{metric_name}``."})


Faithfulness = _make("Faithfulness", "faithfulness")
AnswerRelevancy = _make("AnswerRelevancy", "answer_relevancy")
ResponseRelevancy = AnswerRelevancy
ContextPrecision = _make("ContextPrecision", "context_precision")
ContextUtilization = _make("ContextUtilization", "context_utilization")
ContextRecall = _make("ContextRecall", "context_recall")
ContextEntityRecall = _make("ContextEntityRecall", "context_entity_recall")
NoiseSensitivity = _make("NoiseSensitivity", "noise_sensitivity")
AnswerSimilarity = _make("AnswerSimilarity", "answer_similarity")
SemanticSimilarity = AnswerSimilarity
AnswerCorrectness = _make("AnswerCorrectness", "answer_correctness")
ContextRelevancy = _make("ContextRelevancy", "context_relevancy")
ContextRelevance = _make("ContextRelevance", "nv_context_relevance")
AnswerAccuracy = _make("AnswerAccuracy", "nv_answer_accuracy")
ResponseGroundedness = _make("ResponseGroundedness", "nv_response_groundedness")


def __getattr__(name: str) -> Any:
    # Module-level instances are built on first access, so importing this
    # module does not need every metric family loaded yet.
    classes = {
        "faithfulness": Faithfulness, "answer_relevancy": AnswerRelevancy,
        "context_precision": ContextPrecision, "context_utilization": ContextUtilization,
        "context_recall": ContextRecall, "context_entity_recall": ContextEntityRecall,
        "noise_sensitivity": NoiseSensitivity, "answer_similarity": AnswerSimilarity,
        "semantic_similarity": SemanticSimilarity, "answer_correctness": AnswerCorrectness,
        "context_relevancy": ContextRelevancy, "context_relevance": ContextRelevance,
        "answer_accuracy": AnswerAccuracy, "response_groundedness": ResponseGroundedness,
    }
    if name in classes:
        inst = classes[name]()
        globals()[name] = inst
        return inst
    raise AttributeError(name)
