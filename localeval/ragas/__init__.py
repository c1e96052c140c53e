"""RAGAS compatibility: switch an existing RAGAS script by changing its imports.

    from localeval.ragas import evaluate
    from localeval.ragas.metrics import faithfulness, answer_relevancy

    result = evaluate(dataset, [faithfulness, answer_relevancy])
    print(result)              # {'faithfulness': 0.8333, 'answer_relevancy': 0.91}
    result.to_pandas()

The judge and embedder come from ``localeval.configure(judge=..., embedder=...)``
or the ``LOCALEVAL_JUDGE`` / ``LOCALEVAL_EMBEDDER`` environment variables; no
API key is read and nothing leaves the machine. The deliberate differences
from RAGAS are listed in docs/migrating-from-ragas.md.
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.config import configure, get_config
from localeval.ragas.metrics import RagasMetric

__all__ = ["evaluate", "configure", "EvaluationDataset", "SingleTurnSample"]


def evaluate(dataset: Any, metrics: Sequence[Any] | None = None, llm: Any = None,
             embeddings: Any = None, *, show_progress: bool = True, **kwargs: Any) -> Any:
    """RAGAS's ``evaluate(dataset, metrics, llm=None, embeddings=None)`` on a local judge.

    ``dataset``: a Hugging Face ``Dataset``, an ``EvaluationDataset``, a list
    of dicts or samples, with RAGAS v1 or v2 column names. ``metrics``: the
    module-level instances from ``localeval.ragas.metrics`` (or their
    classes' instances); ``llm``/``embeddings``: a judge or embedder (path,
    URL, or object) overriding the configured ones. Other keyword arguments
    that RAGAS accepts and that have no meaning here (``raise_exceptions``,
    ``run_config``, ``callbacks``...) are ignored; the rest go to
    ``localeval.evaluate``.
    """
    from localeval.run import evaluate as _evaluate

    for ignored in ("raise_exceptions", "run_config", "callbacks", "in_ci", "token_usage_parser",
                    "batch_size", "column_map", "experiment_name", "return_executor",
                    "allow_nest_asyncio", "llm_run_config"):
        kwargs.pop(ignored, None)
    cfg = get_config()
    specs = []
    judge, embedder = llm, embeddings
    for m in metrics or []:
        if isinstance(m, RagasMetric):
            specs.append(m.metric)
            judge = judge if judge is not None else m.judge
            embedder = embedder if embedder is not None else m.embedder
        else:
            specs.append(m)
    data = dataset.to_list() if isinstance(dataset, EvaluationDataset) else dataset
    opts = {**cfg.extra, **kwargs}
    opts.setdefault("progress", None if show_progress else False)
    return _evaluate(data, specs or None, judge=judge, embedder=embedder, **opts)


class SingleTurnSample(dict):
    """RAGAS's ``SingleTurnSample(user_input=..., response=..., ...)`` as a plain mapping."""

    def __init__(self, **fields: Any) -> None:
        super().__init__({k: v for k, v in fields.items() if v is not None})


class EvaluationDataset:
    """RAGAS's ``EvaluationDataset(samples=[...])`` / ``from_list``: a list of samples."""

    def __init__(self, samples: Sequence[Any]) -> None:
        self.samples = [dict(s) for s in samples]

    @classmethod
    def from_list(cls, rows: Sequence[dict[str, Any]]) -> "EvaluationDataset":
        return cls(rows)

    def to_list(self) -> list[dict[str, Any]]:
        return list(self.samples)

    def __len__(self) -> int:
        return len(self.samples)
