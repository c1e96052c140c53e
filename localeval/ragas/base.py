"""The base of every ragas-named metric: ragas's constructor, ``score`` / ``ascore``.

A ``RagasMetric`` wraps one localeval metric. Its constructor takes ragas's
keyword arguments and turns them into the localeval metric's parameters:
a parameter both share passes as is, a ragas-only name is translated by the
subclass (``translate``), a ragas argument with no meaning offline
(``max_retries``: the grammar makes unparseable output impossible) is accepted
and dropped, and anything else raises TypeError, as ragas's dataclass
constructors and ``ascore`` signatures do.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from localeval.errors import ModelError
from localeval.metrics import Judging, Metric, Thresholded, get_metric
from localeval.ragas.dataset import check_fields

__all__ = ["RagasMetric", "MetricResult", "NO_MEANING_OFFLINE", "no_judge_error"]

#: ragas constructor arguments accepted and ignored: retries of an unparseable reply
#: (impossible under the grammar) and the output type (always a float here).
NO_MEANING_OFFLINE = frozenset({"max_retries", "output_type"})


def no_judge_error(judge_options: Any = None) -> ModelError:
    """The one error of a ragas-style call that found no judge (exit 3 on the command line).

    Found the way ``localeval run`` finds one: ``llm=``/``judge=``, ``configure(judge=...)``,
    ``LOCALEVAL_JUDGE``, else the single ``*.gguf`` in the models folder
    (``$LOCALEVAL_MODELS``, else ./models).
    """
    from localeval.catalog import models_dir_default

    opts = dict(judge_options or {})
    mdir = Path(opts["models_dir"]) if opts.get("models_dir") else models_dir_default()
    found = sorted(mdir.glob("*.gguf")) if mdir.is_dir() else []
    where = (f"{mdir}/ holds {len(found)} GGUF files, so none is picked: name one"
             if len(found) > 1 else f"{mdir}/ holds no GGUF file" if mdir.is_dir()
             else f"there is no {mdir}/ folder")
    return ModelError("no judge model for the ragas metrics: pass llm= to evaluate() or to the "
                      "metric (\"demo\", a GGUF path, a name in models/ or a server URL), set "
                      "localeval.configure(judge=...) or LOCALEVAL_JUDGE, or put one GGUF file "
                      f"in the models folder ({where})")


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
    """A localeval metric with ragas's constructor and ``score`` / ``ascore`` methods.

    Subclasses set ``metric_name`` (the localeval registry name), ``ragas_name``
    (what ragas calls the metric, for messages and docs) and may override
    ``translate`` for ragas-only arguments; ``fixed`` are localeval parameters the
    ragas class implies (ragas's ROUGE stems words, say).
    """

    metric_name: ClassVar[str] = ""
    ragas_name: ClassVar[str] = ""
    fixed: ClassVar[dict[str, Any]] = {}
    #: sample fields ``score`` accepts beyond ragas's and localeval's own (rubrics...)
    score_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, llm: Any = None, embeddings: Any = None, *, judge: Any = None,
                 embedder: Any = None, threshold: float | None = None, **kwargs: Any) -> None:
        self.judge = judge if judge is not None else llm
        self.embedder = embedder if embedder is not None else embeddings
        cls = get_metric(self.metric_name)
        params = {**self.fixed, **self._params(cls, kwargs)}
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        metric: Metric = cls(**params)
        self.metric: Metric = Thresholded(metric, threshold) if threshold is not None else metric
        self._ctx: Judging | None = None

    def _params(self, cls: type[Metric], kwargs: dict[str, Any]) -> dict[str, Any]:
        own = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
        out: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in own:
                out[key] = value
            elif key in NO_MEANING_OFFLINE:
                continue
            else:
                translated = self.translate(key, value)
                if translated is None:
                    known = sorted(own | NO_MEANING_OFFLINE | {"llm", "embeddings", "threshold"})
                    raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                                    f"'{key}' (accepted: {', '.join(known)})")
                out.update(translated)
        return out

    def translate(self, key: str, value: Any) -> dict[str, Any] | None:
        """localeval parameters for the ragas-only argument ``key``; None if unknown.

        ``name=`` is refused with its own message: results are keyed by the
        localeval metric key, which is also part of every summary's signature.
        """
        if key == "name":
            raise TypeError(f"{type(self).__name__}(name=...) is not supported: localeval keys "
                            f"results by the metric's own key ('{self.metric_name}'), which is "
                            "part of every summary's signature")
        return None

    @property
    def name(self) -> str:
        return self.metric.key

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.metric!r})"

    def _context(self) -> Judging:
        if self._ctx is None:
            from localeval.config import get_config
            from localeval.run import build_embedder, build_judge, open_cache

            cfg = get_config()
            store = open_cache(cfg.cache)
            judge = self.judge if self.judge is not None else cfg.judge
            embedder = self.embedder if self.embedder is not None else cfg.embedder
            built = (build_judge(judge, store, dict(cfg.judge_options))
                     if self.metric.uses_judge else None)
            if self.metric.uses_judge and built is None and judge is not False:
                raise no_judge_error(cfg.judge_options)
            self._ctx = Judging(
                judge=built,
                embedder=build_embedder(embedder, store, cfg.device)
                if self.metric.uses_embedder else None,
                lang=cfg.lang, seed=cfg.seed, verdicts=cfg.verdicts, reasons=cfg.reasons,
                temperature=cfg.temperature or 0.0)
        return self._ctx

    def score(self, **fields: Any) -> MetricResult:
        """Score one sample given as keyword fields (ragas v1 or v2 names).

        A keyword that is no sample field (``respnse=``) raises TypeError, as
        ragas's ``ascore`` does, instead of scoring a sample with no answer.
        """
        from localeval.dataset import load_dataset
        from localeval.metrics import missing_reason, score_one

        check_fields(f"{type(self).__name__}.score()", fields, self.score_fields)
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

    # ragas 0.2 names
    def single_turn_score(self, sample: Any) -> float:
        return float(self.score(**dict(sample)))

    async def single_turn_ascore(self, sample: Any) -> float:
        return float(await self.ascore(**dict(sample)))
