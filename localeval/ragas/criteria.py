"""ragas's criteria and string metrics under ragas's class names, on a local judge.

    from localeval.ragas import AspectCritic, RubricsScore, FactualCorrectness

    polite = AspectCritic(name="polite", definition="Is the answer polite?", strictness=3)
    polite.score(user_input="...", response="...").value          # 1.0 or 0.0
    RubricsScore(rubrics={"score1_description": "...", "score5_description": "..."})
    FactualCorrectness(mode="precision", atomicity="high", coverage="high")

AspectCritic, RubricsScore and InstanceRubrics are named by the user, as in
ragas (``name=`` is their key in results); the others are localeval's
registered metrics with ragas's constructor arguments translated
(``distance_measure=DistanceMeasure.JARO_WINKLER``, ``ChrfScore(kwargs={...})``).
Deliberate differences: rubric levels are scaled to 0-1 (the raw level is
``details["rating"]``), and AspectCritic's votes are sampled at temperature
0.7 when the judge's is 0 (votes at temperature 0 would all agree).
"""

from __future__ import annotations

from enum import Enum
from typing import Any, ClassVar

import localeval.metrics as native  # the localeval classes these names wrap
from localeval.errors import InvalidArgument
from localeval.metrics import Metric, Thresholded
from localeval.ragas.base import NO_MEANING_OFFLINE, RagasMetric

__all__ = ["AspectCritic", "RubricsScore", "InstanceRubrics", "FactualCorrectness",
           "ExactMatch", "StringPresence", "NonLLMStringSimilarity", "ChrfScore",
           "DistanceMeasure"]


class DistanceMeasure(Enum):
    """ragas's distance measures of NonLLMStringSimilarity."""

    LEVENSHTEIN = "levenshtein"
    HAMMING = "hamming"
    JARO = "jaro"
    JARO_WINKLER = "jaro_winkler"


class UserNamed(RagasMetric):
    """A ragas metric whose name the user gives (not a registered localeval metric)."""

    metric_class: ClassVar[type[Metric]] = Metric
    #: ragas argument -> localeval parameter, where the names differ.
    renamed: ClassVar[dict[str, str]] = {}

    def __init__(self, llm: Any = None, embeddings: Any = None, *, judge: Any = None,
                 embedder: Any = None, threshold: float | None = None, **kwargs: Any) -> None:
        self.judge = judge if judge is not None else llm
        self.embedder = embedder if embedder is not None else embeddings
        params = {self.renamed.get(k, k): v for k, v in kwargs.items()
                  if k not in NO_MEANING_OFFLINE}
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        try:
            metric: Metric = self.metric_class(**params)
        except InvalidArgument:  # already says which parameter and what to pass
            raise
        except TypeError as e:
            raise TypeError(f"{type(self).__name__}(): {e}") from None
        self.metric = Thresholded(metric, threshold) if threshold is not None else metric
        self._ctx = None


class AspectCritic(UserNamed):
    """ragas's ``AspectCritic(name=..., definition=..., strictness=...)``."""

    ragas_name: ClassVar[str] = "AspectCritic"
    metric_class: ClassVar[type[Metric]] = native.AspectCritic


class RubricsScore(UserNamed):
    """ragas's ``RubricsScore(name=..., rubrics={...})`` (levels scaled to 0-1)."""

    ragas_name: ClassVar[str] = "RubricsScore"
    metric_class: ClassVar[type[Metric]] = native.RubricsScore

    def __init__(self, llm: Any = None, embeddings: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("name", "domain_specific_rubrics")  # ragas's default name
        super().__init__(llm, embeddings, **kwargs)


class InstanceRubrics(UserNamed):
    """ragas's ``InstanceRubrics()``: each sample's ``rubrics`` field is its rubric."""

    ragas_name: ClassVar[str] = "InstanceRubrics"
    metric_class: ClassVar[type[Metric]] = native.InstanceRubrics
    score_fields: ClassVar[tuple[str, ...]] = ("rubrics",)


class FactualCorrectness(RagasMetric):
    """ragas's ``FactualCorrectness(mode=..., beta=..., atomicity=..., coverage=...)``."""

    metric_name: ClassVar[str] = "factual_correctness"
    ragas_name: ClassVar[str] = "FactualCorrectness"

    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "language":  # the prompt language follows the sample (or --lang)
            return {}
        return super().translate(key, value)


class ExactMatch(RagasMetric):
    """ragas's ``ExactMatch()``."""

    metric_name: ClassVar[str] = "exact_match"
    ragas_name: ClassVar[str] = "ExactMatch"


class StringPresence(RagasMetric):
    """ragas's ``StringPresence()``."""

    metric_name: ClassVar[str] = "string_presence"
    ragas_name: ClassVar[str] = "StringPresence"


class NonLLMStringSimilarity(RagasMetric):
    """ragas's ``NonLLMStringSimilarity(distance_measure=DistanceMeasure.LEVENSHTEIN)``."""

    metric_name: ClassVar[str] = "non_llm_string_similarity"
    ragas_name: ClassVar[str] = "NonLLMStringSimilarity"

    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "distance_measure":
            return {"distance": value.value if isinstance(value, Enum) else str(value)}
        return super().translate(key, value)


class ChrfScore(RagasMetric):
    """ragas's ``ChrfScore(kwargs={...})``: the kwargs are sacrebleu's CHRF arguments."""

    metric_name: ClassVar[str] = "chrf"
    ragas_name: ClassVar[str] = "ChrfScore"

    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        if key == "kwargs":
            return dict(value or {})
        return super().translate(key, value)
