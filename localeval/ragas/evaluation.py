"""ragas's ``evaluate(dataset, metrics, llm=None, embeddings=None)`` on a local judge."""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from localeval.errors import NoJudge
from localeval.ragas.base import RagasMetric, no_judge_error
from localeval.ragas.dataset import EvaluationDataset

__all__ = ["evaluate"]

#: ragas ``evaluate`` arguments with no meaning offline, accepted and ignored.
IGNORED = ("raise_exceptions", "run_config", "callbacks", "in_ci", "token_usage_parser",
           "batch_size", "experiment_name", "return_executor", "allow_nest_asyncio",
           "llm_run_config")
#: ragas's field names (v1 and v2) -> localeval's, for ``column_map``.
_FIELDS = {"user_input": "question", "response": "answer", "retrieved_contexts": "contexts",
           "ground_truth": "reference", "ground_truths": "reference"}


def evaluate(dataset: Any, metrics: Sequence[Any] | None = None, llm: Any = None,
             embeddings: Any = None, *, show_progress: bool = True, **kwargs: Any) -> Any:
    """ragas's ``evaluate`` on a local judge; returns a ``localeval.EvaluationResult``.

    ``dataset``: a Hugging Face ``Dataset``, an ``EvaluationDataset``, a DataFrame, a
    list of dicts or samples, with ragas v1 or v2 column names. ``metrics``: the
    module-level instances or class instances from ``localeval.ragas.metrics`` (or
    localeval metric specs); ``llm``/``embeddings``: a judge or embedder (path, URL,
    or object) overriding the configured ones. ragas arguments with no meaning
    offline (``raise_exceptions``, ``run_config``, ``callbacks``...) are ignored;
    ``column_map`` ({ragas field: your column}) is honoured; the rest go to
    ``localeval.evaluate``.

    When the judge fails its judge check, the result's ``print``, ``to_pandas()``
    and ``scores`` mark its judged numbers ("judge unfit") besides the warning.
    """
    from localeval.run import evaluate as _evaluate

    for ignored in IGNORED:
        kwargs.pop(ignored, None)
    column_map = kwargs.pop("column_map", None)
    if column_map:  # ragas: {expected name: the dataset's column}, v1 or v2 names
        kwargs["columns"] = {_FIELDS.get(k, k): v for k, v in dict(column_map).items()}
    specs: Any = []  # a list of metrics, or whatever the caller passed for the parser to refuse
    judge, embedder = llm, embeddings
    if not isinstance(metrics, (list, tuple)):  # None: the defaults; else the parser says why
        specs = metrics
    for m in metrics if isinstance(metrics, (list, tuple)) else ():
        if isinstance(m, RagasMetric):
            specs.append(m.metric)
            judge = judge if judge is not None else m.judge
            embedder = embedder if embedder is not None else m.embedder
        else:
            specs.append(m)
    data = dataset.to_list() if isinstance(dataset, EvaluationDataset) else dataset
    opts = dict(kwargs)  # configure()'s settings: evaluate reads them itself
    opts.setdefault("progress", None if show_progress else False)
    # ragas fails without an LLM; so does this: no judge found (argument, configure(),
    # LOCALEVAL_JUDGE, the single GGUF in models/) while a judge metric runs is an error,
    # raised before any sample is scored, not a result of NaN judge scores
    told = opts.get("on_warning")
    no_judge = str(NoJudge(opts.get("options_as", "python")))

    def on_warning(msg: str) -> None:
        if msg == no_judge:
            from localeval.config import run_config

            raise no_judge_error(run_config(judge_options=opts.get("judge_options")).judge_options)
        if told is not None:
            told(msg)
        else:  # evaluate's own default, one frame further from the caller
            warnings.warn(msg, stacklevel=5)

    opts["on_warning"] = on_warning
    return _evaluate(data, specs or None, judge=judge, embedder=embedder, **opts)
