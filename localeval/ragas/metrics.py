"""ragas-named metric objects: module-level instances and per-metric classes.

Two styles, as in ragas:

    from localeval.ragas.metrics import faithfulness          # for evaluate(...)
    from localeval.ragas.metrics import AnswerCorrectness     # scored alone

    scorer = AnswerCorrectness(judge="models/judge.gguf", weights=[0.75, 0.25])
    result = scorer.score(user_input="...", response="...", reference="...")
    result.value, result.reason, result.details["tp"]

Every class takes ragas's constructor arguments (``RagasMetric`` turns them into
the localeval metric's parameters; unknown ones raise TypeError). ragas 0.1 names
(``ContextPrecision``), 0.2+ names (``LLMContextPrecisionWithReference``,
``ResponseRelevancy``, ``BleuScore``, ``RougeScore``...) and the NVIDIA metrics are
here; the criteria metrics (``AspectCritic``, ``RubricsScore``, ``FactualCorrectness``,
string metrics...) live in ``criteria.py`` and are found through this module too.
"""

from __future__ import annotations

import importlib
from typing import Any

from localeval.ragas.base import MetricResult, RagasMetric

__all__ = [
    "RagasMetric", "MetricResult",
    "Faithfulness", "AnswerRelevancy", "ResponseRelevancy", "ContextPrecision",
    "LLMContextPrecisionWithReference", "ContextUtilization",
    "LLMContextPrecisionWithoutReference", "ContextRecall", "LLMContextRecall",
    "ContextEntityRecall", "NoiseSensitivity", "AnswerSimilarity", "SemanticSimilarity",
    "AnswerCorrectness", "ContextRelevancy", "ContextRelevance", "AnswerAccuracy",
    "ResponseGroundedness", "BleuScore", "RougeScore",
    "faithfulness", "answer_relevancy", "context_precision", "context_utilization",
    "context_recall", "context_entity_recall", "noise_sensitivity",
    "noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "answer_similarity",
    "semantic_similarity", "answer_correctness", "context_relevancy", "context_relevance",
    "answer_accuracy", "response_groundedness",
]


def _make(class_name: str, metric_name: str, ragas_name: str,
          base: type[RagasMetric] = RagasMetric) -> type[RagasMetric]:
    doc = (f"ragas's ``{class_name}`` (ragas key ``{ragas_name}``), scored by localeval's "
           f"``{metric_name}``.")
    return type(class_name, (base,), {"metric_name": metric_name, "ragas_name": ragas_name,
                                      "__doc__": doc, "__module__": __name__})


class _NoiseSensitivityBase(RagasMetric):
    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "focus":  # ragas 0.2.0-0.2.5 called ``mode`` ``focus``
            return {"mode": value}
        return super().translate(key, value)


class _SimilarityBase(RagasMetric):
    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "is_cross_encoder":
            if value:
                raise ValueError(f"{type(self).__name__}(is_cross_encoder=True) is not "
                                 "supported: localeval embeds both texts (bi-encoder)")
            return {}
        return super().translate(key, value)


class _AnswerCorrectnessBase(RagasMetric):
    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "answer_similarity":  # ragas lets a SemanticSimilarity bring the embedder
            if value is not None and self.embedder is None:
                self.embedder = getattr(value, "embedder", None)
            return {}
        return super().translate(key, value)


Faithfulness = _make("Faithfulness", "faithfulness", "faithfulness")
AnswerRelevancy = _make("AnswerRelevancy", "answer_relevancy", "answer_relevancy")
ResponseRelevancy = _make("ResponseRelevancy", "answer_relevancy", "answer_relevancy")
ContextPrecision = _make("ContextPrecision", "context_precision", "context_precision")
LLMContextPrecisionWithReference = _make("LLMContextPrecisionWithReference", "context_precision",
                                         "llm_context_precision_with_reference")
ContextUtilization = _make("ContextUtilization", "context_utilization", "context_utilization")
LLMContextPrecisionWithoutReference = _make("LLMContextPrecisionWithoutReference",
                                            "context_utilization",
                                            "llm_context_precision_without_reference")
ContextRecall = _make("ContextRecall", "context_recall", "context_recall")
LLMContextRecall = _make("LLMContextRecall", "context_recall", "context_recall")
ContextEntityRecall = _make("ContextEntityRecall", "context_entity_recall",
                            "context_entity_recall")
NoiseSensitivity = _make("NoiseSensitivity", "noise_sensitivity", "noise_sensitivity",
                         _NoiseSensitivityBase)
AnswerSimilarity = _make("AnswerSimilarity", "answer_similarity", "answer_similarity",
                         _SimilarityBase)
SemanticSimilarity = _make("SemanticSimilarity", "answer_similarity", "semantic_similarity",
                           _SimilarityBase)
AnswerCorrectness = _make("AnswerCorrectness", "answer_correctness", "answer_correctness",
                          _AnswerCorrectnessBase)
ContextRelevancy = _make("ContextRelevancy", "context_relevancy", "context_relevancy")
ContextRelevance = _make("ContextRelevance", "nv_context_relevance", "nv_context_relevance")
AnswerAccuracy = _make("AnswerAccuracy", "nv_answer_accuracy", "nv_accuracy")
ResponseGroundedness = _make("ResponseGroundedness", "nv_response_groundedness",
                             "nv_response_groundedness")

#: sacrebleu's ``BLEU`` keyword (what ragas's ``BleuScore(kwargs=...)`` passes on) ->
#: localeval's bleu parameter. The rest of sacrebleu's options have no counterpart.
_SACREBLEU = {"lowercase": "lowercase", "tokenize": "tokenize", "smooth_method": "smoothing",
              "smooth_value": "smooth_value", "max_ngram_order": "max_order"}


class BleuScore(RagasMetric):
    """ragas's ``BleuScore(kwargs={...})`` (ragas key ``bleu_score``), scored by localeval's
    ``bleu``: the whole answer against the whole reference, tokenised for its language.

    ``kwargs`` are sacrebleu's (``lowercase``, ``tokenize``, ``smooth_method``,
    ``smooth_value``, ``max_ngram_order``); ``language`` is accepted and unused
    (localeval detects each pair's language).
    """

    metric_name = "bleu"
    ragas_name = "bleu_score"

    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "language":
            return {}
        if key == "kwargs":
            out = {}
            for k, v in dict(value or {}).items():
                if k not in _SACREBLEU:
                    raise TypeError(f"BleuScore(kwargs=...): sacrebleu option '{k}' is not "
                                    f"supported (supported: {', '.join(_SACREBLEU)})")
                out[_SACREBLEU[k]] = v
            return out
        return super().translate(key, value)


class RougeScore(RagasMetric):
    """ragas's ``RougeScore(rouge_type="rougeL", mode="fmeasure")`` (ragas key
    ``rouge_score``), scored by localeval's ``rouge1`` / ``rouge2`` / ``rougeL`` with
    ragas's Porter stemming (``stem=True``, so the key reads ``rougeL:stem=true``).
    ``measure_type`` (ragas 0.2.0-0.2.6) is accepted for ``mode``.
    """

    ragas_name = "rouge_score"
    fixed = {"stem": True}
    _MODES = {"fmeasure": "f", "precision": "p", "recall": "r"}

    def __init__(self, llm: Any = None, embeddings: Any = None, *, rouge_type: str = "rougeL",
                 mode: str = "fmeasure", measure_type: str | None = None, **kwargs: Any) -> None:
        mode = measure_type or mode
        if rouge_type not in ("rouge1", "rouge2", "rougeL"):
            raise ValueError(f"RougeScore(rouge_type={rouge_type!r}): use 'rouge1', 'rouge2' or "
                             "'rougeL'")
        if mode not in self._MODES:
            raise ValueError(f"RougeScore(mode={mode!r}): use 'fmeasure', 'precision' or "
                             "'recall'")
        self.metric_name = rouge_type  # type: ignore[misc]  # this instance's metric
        super().__init__(llm, embeddings, measure=self._MODES[mode], **kwargs)


_INSTANCES: dict[str, tuple[type[RagasMetric], dict[str, Any]]] = {
    "faithfulness": (Faithfulness, {}), "answer_relevancy": (AnswerRelevancy, {}),
    "context_precision": (ContextPrecision, {}), "context_utilization": (ContextUtilization, {}),
    "context_recall": (ContextRecall, {}), "context_entity_recall": (ContextEntityRecall, {}),
    "noise_sensitivity": (NoiseSensitivity, {}),
    "noise_sensitivity_relevant": (NoiseSensitivity, {"mode": "relevant"}),
    "noise_sensitivity_irrelevant": (NoiseSensitivity, {"mode": "irrelevant"}),
    "answer_similarity": (AnswerSimilarity, {}), "semantic_similarity": (SemanticSimilarity, {}),
    "answer_correctness": (AnswerCorrectness, {}), "context_relevancy": (ContextRelevancy, {}),
    "context_relevance": (ContextRelevance, {}), "answer_accuracy": (AnswerAccuracy, {}),
    "response_groundedness": (ResponseGroundedness, {}),
}


def __getattr__(name: str) -> Any:
    # Module-level instances are built on first access, so importing this module does
    # not need every metric family loaded yet. Names not defined here (AspectCritic,
    # FactualCorrectness, ExactMatch...) come from criteria.py, the tool-call metrics
    # (ToolCallAccuracy, ToolCallF1) from tools.py, the agent metrics from agents.py, so
    # ragas scripts import every metric from this one module, as they do from ragas.metrics.
    if name in _INSTANCES:
        cls, params = _INSTANCES[name]
        inst = cls(**params)
        globals()[name] = inst
        return inst
    for module in ("criteria", "tools", "agents") if not name.startswith("_") else ():
        try:
            found = importlib.import_module(f"localeval.ragas.{module}")
        except ModuleNotFoundError as e:
            if e.name != f"localeval.ragas.{module}":
                raise
        else:
            if name in getattr(found, "__all__", ()):
                return getattr(found, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
