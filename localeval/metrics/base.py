"""One way to write a metric: a small, pure, frozen dataclass.

A metric's parameters are its fields; it declares the sample fields it
needs and whether it asks a judge or an embedder, and returns a ``Score`` per
sample. It stores no results on itself. Model access goes through the
``Judging`` it is handed (``model_access``), so metrics never see llama_cpp
or torch. Names and specs (``ndcg@10``) are resolved in ``specs``.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

from localeval.types import Sample, Score

if TYPE_CHECKING:
    from localeval.metrics.model_access import Judging

__all__ = ["Metric", "Thresholded"]


@dataclass(frozen=True)
class Metric:
    """Base class. Subclasses set the class variables and implement ``score``.

    ``score_batch`` exists for metrics that vectorise over a dataset
    (retrieval, text); the default loops over ``score``.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    #: Sample fields that must be present (not None) for the metric to run.
    requires: ClassVar[tuple[str, ...]] = ()
    uses_judge: ClassVar[bool] = False
    uses_embedder: ClassVar[bool] = False
    #: True when the judge writes a reason before each of the metric's binary verdicts:
    #: the metric follows the run's ``reasons`` setting, and ``localeval explain`` asks
    #: for its reasons afterwards.
    gives_reasons: ClassVar[bool] = False
    #: Name of the field set by ``@k`` in a spec such as ``ndcg@10``.
    at_field: ClassVar[str | None] = None
    #: True when higher is worse (noise_sensitivity); reports sort accordingly.
    lower_is_better: ClassVar[bool] = False
    #: False for steps whose prompt omits the sample block; the runner runs them first.
    shares_sample_prefix: ClassVar[bool] = True
    #: Inputs read whose emptiness decides the score without a model call, in order:
    #: (field, value), value None for unscored (``degenerate.decide_empty``; the table
    #: in docs/metrics.md, "Empty inputs").
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = ()
    description: ClassVar[str] = ""

    @functools.cached_property
    def key(self) -> str:
        """Column name in results: the name plus any non-default parameters.

        Cached (the metric is frozen): a 100k-row run reads it about a million times.
        """
        key = self.name
        params = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            if v == default:
                continue
            if f.name == self.at_field:
                key += f"@{v}"
            else:
                params.append(f"{f.name}={_format_param(v)}")
        return key + (":" + ";".join(params) if params else "")

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def missing_fields(self, sample: Sample) -> list[str]:
        return [f for f in self.requires if not sample.has(f)]

    def texts_to_embed(self, sample: Sample) -> list[str]:
        """Texts this metric will embed for ``sample``, so the runner can batch them first."""
        return []

    def score(self, sample: Sample, ctx: "Judging") -> Score:
        raise NotImplementedError

    def score_batch(self, samples: Sequence[Sample], ctx: "Judging") -> list[Score]:
        return [self.score(s, ctx) for s in samples]


def _format_param(v: Any) -> str:
    """A parameter value as it appears in a metric key (lists joined by commas)."""
    if isinstance(v, (list, tuple)):
        return ",".join(_format_param(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(v)
    return str(v)


class Thresholded(Metric):
    """Any score-valued metric mapped to 1.0 / 0.0 at a threshold (a pass/fail use of a score).

    ``faithfulness:threshold=0.8`` scores 1.0 when faithfulness >= 0.8. The
    raw score stays in the details, and the threshold is part of the key
    (and so of the signature).
    """

    inner: Metric  # set through object.__setattr__: Metric is frozen
    threshold: float

    def __init__(self, inner: Metric, threshold: float) -> None:
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "threshold", float(threshold))
        for attr in ("name", "requires", "uses_judge", "uses_embedder", "lower_is_better",
                     "description", "aliases", "at_field", "shares_sample_prefix", "on_empty"):
            object.__setattr__(self, attr, getattr(inner, attr))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Thresholded, (self.inner, self.threshold))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thresholded) and (self.inner, self.threshold) == (
            other.inner, other.threshold)

    def __hash__(self) -> int:
        return hash((self.inner, self.threshold))

    def __repr__(self) -> str:
        return f"Thresholded({self.inner!r}, threshold={self.threshold})"

    @property
    def key(self) -> str:
        k = self.inner.key
        return k + (";" if ":" in k else ":") + f"threshold={_format_param(self.threshold)}"

    def params(self) -> dict[str, Any]:
        return {**self.inner.params(), "threshold": self.threshold}

    def texts_to_embed(self, sample: Sample) -> list[str]:
        return self.inner.texts_to_embed(sample)

    def _map(self, sc: Score) -> Score:
        if sc.value is None:
            return sc
        hit = sc.value <= self.threshold if self.lower_is_better else sc.value >= self.threshold
        return Score(1.0 if hit else 0.0, None, {**sc.details, "raw_score": sc.value,
                                                  "threshold": self.threshold})

    def score(self, sample: Sample, ctx: "Judging") -> Score:
        return self._map(self.inner.score(sample, ctx))

    def score_batch(self, samples: Sequence[Sample], ctx: "Judging") -> list[Score]:
        return [self._map(sc) for sc in self.inner.score_batch(samples, ctx)]
