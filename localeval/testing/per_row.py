"""One pytest test per dataset row (deepeval's parametrize-over-goldens pattern).

    import pytest
    from localeval.testing import assert_row, rows

    @pytest.mark.parametrize("row", rows("eval/golden.jsonl"))
    def test_answer(row):
        assert_row(row, {"faithfulness": 0.7}, judge="models/judge.gguf")

Each row is its own test, named by its id and question (``test_answer[q3: Where
is the cafeteria...]``), so ``pytest -k q3`` re-runs one, and a failure shows the
row's id, question, score and the judge's working. The judge and embedder a
string names are loaded once per process, not once per row.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping

from localeval.testing.assertions import check_result, gate_evaluate

__all__ = ["rows", "assert_row", "ID_QUESTION_CHARS"]

#: Characters of the question in a test id.
ID_QUESTION_CHARS = 40
# Models loaded by assert_row, by what named them: a 30-row parametrized test loads
# its judge once, not 30 times. Keyed by the spec and its options.
_LOADED: dict[tuple[Any, ...], Any] = {}


def rows(data: Any, *, columns: Iterable[str] | Mapping[str, str] | None = None) -> list[Any]:
    """The rows of ``data`` (any input ``evaluate`` reads) as ``pytest.param``s with readable ids.

    The data is read and checked here, at collection time: a bad row stops the
    collection with its file, line and column, as ``localeval run`` would.
    """
    import pytest

    from localeval.dataset import load_dataset
    from localeval.report import excerpt

    def test_id(s: Any) -> str:
        # pytest escapes non-ASCII in ids ("\u2026"): cut with an ASCII "..."
        q = excerpt(s.question, ID_QUESTION_CHARS).replace("…", "...")
        return f"{s.id}: {q}" if q else str(s.id)

    return [pytest.param(s, id=test_id(s)) for s in load_dataset(data, columns=columns)]


def assert_row(row: Any, thresholds: Mapping[str, float], *, allow_unscored: Any = 0,
               fail_if_unfit_judge: bool = False, **evaluate_kwargs: Any) -> Any:
    """Score one row (a ``Sample`` from :func:`rows`, or a dict); fail when it misses a threshold.

    The per-sample gate on one sample: the failure names the row's id and
    question, its score and the judge's working. An unscored row fails unless
    ``allow_unscored`` (True, "all" or 1) allows it. ``fail_if_unfit_judge`` as in
    ``assert_scores``. Returns the ``EvaluationResult``.
    """
    __tracebackhide__ = True
    from localeval.config import get_config
    from localeval.metrics import parse_metrics

    kw = dict(evaluate_kwargs)
    chosen = parse_metrics(list(thresholds))
    cfg = get_config()
    if any(m.uses_judge for m in chosen):
        options = {**cfg.judge_options, **(kw.get("judge_options") or {})}
        kw["judge"] = _shared("judge", kw.get("judge", cfg.judge), options)
    if any(m.uses_embedder for m in chosen):
        kw["embedder"] = _shared("embedder", kw.get("embedder", cfg.embedder),
                                 {"device": kw.get("device", "auto")})
    result = gate_evaluate([row], thresholds, fail_if_unfit_judge, kw)
    check_result(result, {}, thresholds, allow_unscored=allow_unscored,
                 fail_if_unfit_judge=fail_if_unfit_judge)
    return result


def _shared(kind: str, spec: Any, options: Mapping[str, Any]) -> Any:
    """The model ``spec`` names, loaded once per process; objects and False as given.

    None is the configured default (the single GGUF in ``models/`` for a judge);
    a judge that cannot be found is False, as ``evaluate`` would make it.
    """
    if spec is False or not (spec is None or isinstance(spec, (str, os.PathLike))):
        return spec
    key = (kind, None if spec is None else os.fspath(spec), tuple(sorted(options.items())))
    if key not in _LOADED:
        if kind == "judge":
            from localeval.judge import load_judge

            model = load_judge(key[1], **options)
            _LOADED[key] = False if model is None else model
        else:
            from localeval.embed import load_embedder

            _LOADED[key] = load_embedder(key[1], **options)
    return _LOADED[key]
