"""``evaluate()``: validate -> batch the cheap work -> judge sample by sample -> aggregate.

Order matters for speed on a local judge: non-model metrics run vectorised
over the whole dataset first; every text the embedding metrics need is
embedded in one batched pass; then each sample's judge calls run back to
back so llama.cpp reuses the sample's KV prefix across metrics. Each sample's
line is written to ``results.jsonl`` as soon as it is finished, so an
interrupted run leaves valid files, and the judge cache makes a restart
repeat no finished call.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from localeval.dataset import Dataset, check_required, load_dataset
from localeval.errors import JudgeCallError, ModelError, UsageError
from localeval.judge.base import Judge, Usage
from localeval.metrics.base import Context, Metric, NoEmbedder, NoJudge, parse_metrics
from localeval.summary import signature, signature_line, summarize_metric
from localeval.types import Sample, Score

__all__ = ["evaluate", "EvaluationResult", "DEFAULT_METRICS"]

#: What ``evaluate`` runs when no metrics are named: every one the data supports.
DEFAULT_METRICS = (
    "faithfulness", "answer_relevancy", "context_precision", "context_recall",
    "answer_correctness", "answer_similarity",
    "hit_rate@5", "mrr", "ndcg@10", "rougeL",
)


@dataclass
class EvaluationResult:
    """Per-sample scores, the summary, and conversions RAGAS users expect."""

    samples: list[Sample]
    metrics: list[Metric]
    scores: list[dict[str, Score]]
    summary: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> float | None:
        return self.summary["metrics"][key]["mean"]

    def means(self) -> dict[str, float | None]:
        return {k: v["mean"] for k, v in self.summary["metrics"].items()}

    def __repr__(self) -> str:
        inner = ", ".join(f"'{k}': {'nan' if v is None else round(v, 4)}"
                          for k, v in self.means().items())
        return "{" + inner + "}"

    def records(self) -> list[dict[str, Any]]:
        return [_record(s, sc) for s, sc in zip(self.samples, self.scores)]

    def to_pandas(self) -> Any:
        """One row per sample: the inputs, then one column per metric (NaN when unscored)."""
        import pandas as pd

        rows = []
        for s, sc in zip(self.samples, self.scores):
            row: dict[str, Any] = {"id": s.id, "user_input": s.question,
                                   "retrieved_contexts": s.contexts, "response": s.answer,
                                   "reference": s.reference}
            for m in self.metrics:
                v = sc[m.key].value if m.key in sc else None
                row[m.key] = math.nan if v is None else v
            rows.append(row)
        return pd.DataFrame(rows)

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "results.jsonl", "w", encoding="utf-8") as f:
            for r in self.records():
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        _write_json(out / "summary.json", self.summary)
        return out


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _record(s: Sample, sc: Mapping[str, Score]) -> dict[str, Any]:
    return {
        "id": s.id,
        "scores": {k: v.value for k, v in sc.items()},
        "errors": {k: v.reason for k, v in sc.items() if v.value is None},
        "details": {k: v.details for k, v in sc.items() if v.details},
    }


def _resolve_judge(judge: Any, cache: Any, options: dict[str, Any] | None = None) -> Judge | None:
    if judge is False:
        return None
    if judge is None or isinstance(judge, (str, os.PathLike)):
        from localeval.judge.load import load_judge

        judge = load_judge(str(judge) if judge is not None else None, **(options or {}))
        if judge is None:
            return None
    if cache is not None:
        from localeval.judge.cached import CachedJudge

        if not isinstance(judge, CachedJudge):
            judge = CachedJudge(judge, cache)
    return judge


def _resolve_embedder(embedder: Any, cache: Any, device: str) -> Any:
    if embedder is False:
        return None
    from localeval.embed import CachedEmbedder, load_embedder

    if embedder is None or isinstance(embedder, (str, os.PathLike)):
        return load_embedder(str(embedder) if embedder is not None else None, device=device,
                             cache=cache)
    if not isinstance(embedder, CachedEmbedder):
        embedder = CachedEmbedder(embedder, cache)
    return embedder


def _open_cache(cache: Any) -> Any:
    if cache is False:
        return None
    from localeval.cache import Cache

    if isinstance(cache, Cache):
        return cache
    return Cache(cache if cache not in (None, True) else None)


def evaluate(
    data: Any,
    metrics: str | Sequence[str | Metric] | None = None,
    *,
    judge: Judge | str | os.PathLike[str] | None | bool = None,
    embedder: Any = None,
    columns: Iterable[str] | Mapping[str, str] | None = None,
    lang: str = "auto",
    seed: int = 0,
    temperature: float | None = None,
    verdicts: str = "hard",
    repeats: int = 1,
    cache: Any = True,
    device: str = "auto",
    judge_options: Mapping[str, Any] | None = None,
    workers: int = 1,
    ray: str | bool | None = None,
    ray_actors: int | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> EvaluationResult:
    """Evaluate ``data`` with ``metrics`` and return per-sample scores and a summary.

    ``judge``: a Judge, a GGUF path, an ``http(s)://`` URL, None (the single
    GGUF in ``models/`` if there is one) or False (judge metrics unscored).
    ``embedder``: an Embedder, a directory or model name, None (the default
    all-MiniLM-L6-v2) or False. ``cache``: True (``$LOCALEVAL_CACHE`` or
    ~/.cache/localeval), a path, a ``Cache`` or False. With ``out_dir`` the
    results are written while the run progresses. ``judge_options`` go to
    the llama.cpp judge (n_ctx, n_gpu_layers, n_threads, chat_format,
    judge_model). ``workers`` > 1 scores samples in that many processes, each
    loading its own judge (give the judge as a path, name or URL).
    ``ray``: a Ray address ("auto" or True: the running cluster, else a local
    one) to score samples on ``ray_actors`` Ray actors instead (see
    docs/scale-out.md). A judge that is a ``JudgePool`` (several URLs) scores
    ``pool.capacity`` samples at once in threads.
    """
    from localeval.config import get_config

    cfg = get_config()
    judge = cfg.judge if judge is None else judge
    embedder = cfg.embedder if embedder is None else embedder
    judge_options = {**cfg.judge_options, **(judge_options or {})}
    if verdicts not in ("hard", "soft"):
        raise UsageError(f"verdicts must be 'hard' or 'soft', not {verdicts!r}")
    if repeats < 1:
        raise UsageError("repeats must be at least 1")
    from localeval import __version__

    ds = load_dataset(data, columns=columns)
    chosen = _choose_metrics(metrics, ds)
    check_required(ds, {m.key: m.requires for m in chosen})
    notes: list[str] = []
    warn = on_warning or (lambda msg: warnings.warn(msg, stacklevel=3))

    store = _open_cache(cache)
    need_judge = any(m.uses_judge for m in chosen)
    need_embed = any(m.uses_embedder for m in chosen)
    if workers < 1:
        raise UsageError("workers must be at least 1")
    pooled = workers > 1 or bool(ray)
    # With a pool, each worker loads its own judge; the parent loads none.
    the_judge = _resolve_judge(judge, store, judge_options) if need_judge and not pooled else None
    if need_judge and the_judge is None and not pooled:
        notes.append(str(NoJudge()))
    the_embedder = _resolve_embedder(embedder, store, device) if need_embed else None
    if the_embedder is not None:
        from localeval.embed import warn_if_language_mismatch

        texts = [t for s in ds for t in (s.question, s.answer, s.reference) if t]
        msg = warn_if_language_mismatch(the_embedder, texts)
        if msg:
            notes.append(msg)
    for n in notes:
        warn(n)

    if temperature is None:
        # Repeats with greedy decoding would be identical: sample instead.
        temperature = 0.7 if repeats > 1 else 0.0
    elif repeats > 1 and temperature == 0.0:
        warn("--repeats with temperature 0 gives identical runs; set --temperature > 0")
    ctx = Context(judge=the_judge, embedder=the_embedder, lang=lang, seed=seed,
                  temperature=temperature, verdicts=verdicts)

    samples = ds.samples
    scores: list[dict[str, Score]] = [{} for _ in samples]
    batch_metrics = [m for m in chosen if not (m.uses_judge or m.uses_embedder)]
    model_metrics = [m for m in chosen if m.uses_judge or m.uses_embedder]

    # 1. cheap metrics, vectorised over the dataset
    for m in batch_metrics:
        idx = [i for i, s in enumerate(samples) if not m.missing_fields(s)]
        for i, sc in zip(idx, m.score_batch([samples[i] for i in idx], ctx)):
            scores[i][m.key] = sc

    # 2. every text the embedding metrics need, embedded once in large batches
    if the_embedder is not None:
        texts = {t for s in samples for m in model_metrics if m.uses_embedder
                 for t in m.texts_to_embed(s)}
        if texts and hasattr(the_embedder, "prefetch"):
            the_embedder.prefetch(sorted(texts))

    # 3. judge work, sample by sample so calls sharing a prefix run back to back
    writer = _Writer(out_dir) if out_dir is not None else None
    bar = None
    finished = 0
    try:
        from localeval.progress import RunProgress

        bar = RunProgress(len(samples), enabled=progress)
        if ray and model_metrics:
            from localeval.scale import ray_stream

            stream = ray_stream(samples, model_metrics, ctx, judge, judge_options, embedder,
                                str(store.path) if store is not None else None, device,
                                repeats, address=ray, num_actors=ray_actors)
        elif workers > 1 and model_metrics:
            stream = _pool_stream(samples, model_metrics, ctx, judge, judge_options, embedder,
                                  store, device, repeats, workers)
        elif model_metrics and _pool_capacity(the_judge) > 1:
            stream = _threaded_stream(samples, model_metrics, ctx, repeats,
                                      _pool_capacity(the_judge))
        else:
            stream = (_judge_one(s, model_metrics, ctx, repeats) for s in samples)
        for i, (s, model_scores) in enumerate(zip(samples, stream)):
            scores[i].update(model_scores)
            scores[i] = {m.key: scores[i].get(m.key) or Score.unscored(_missing_reason(m, s))
                         for m in chosen}
            if writer:
                writer.write(_record(s, scores[i]))
            finished = i + 1
            bar.update(ctx.usage)
    finally:
        if bar:
            bar.close()
        interrupted = finished < len(samples)
        done = samples[:finished] if interrupted else samples
        summary = _summary(chosen, scores[: len(done)], ctx, seed, verdicts, lang, repeats,
                           __version__, notes)
        if interrupted:
            summary["interrupted"] = {"finished": finished, "total": len(samples)}
        if writer:
            writer.close(summary)
            _write_reports(writer.dir, summary, done, scores[: len(done)])
    return EvaluationResult(list(done), chosen, scores[: len(done)], summary, notes)


def _write_reports(out: Path, summary: Mapping[str, Any], samples: Sequence[Sample],
                   scores: Sequence[Mapping[str, Score]]) -> None:
    """report.html (self-contained) and summary.md next to the results."""
    from localeval.html_report import write_html_report
    from localeval.report import write_markdown_report

    write_html_report(out, dict(summary), [_record(s, sc) for s, sc in zip(samples, scores)],
                      [s.to_dict() for s in samples])
    write_markdown_report(out, dict(summary))


def _judge_one(s: Sample, model_metrics: Sequence[Metric], ctx: Context,
               repeats: int) -> dict[str, Score]:
    """All model metrics of one sample, back to back (they share the KV prefix).

    Steps whose prompt does not start with the sample block (answer_relevancy
    must not see the question it is to regenerate) go first: the change of
    sample breaks the prefix then anyway, so they cost no reuse.
    """
    ctx.begin_sample()
    ordered = sorted(model_metrics, key=lambda m: getattr(m, "shares_sample_prefix", True))
    return {m.key: _score_model_metric(m, s, ctx, repeats) for m in ordered}


def _score_model_metric(m: Metric, s: Sample, ctx: Context, repeats: int) -> Score:
    if m.missing_fields(s):
        return Score.unscored(_missing_reason(m, s))
    if not m.uses_judge or repeats == 1:
        return _safe_score(m, s, ctx)
    seed = ctx.seed
    results = []
    for r in range(repeats):
        ctx.seed = seed + r
        ctx.begin_sample()
        results.append(_safe_score(m, s, ctx))
    ctx.seed = seed
    vals = [r.value for r in results if r.value is not None]
    if not vals:
        return results[0]
    details = dict(results[0].details)
    details["repeats"] = [r.value for r in results]
    details["std"] = statistics.pstdev(vals) if len(vals) > 1 else 0.0
    return Score(sum(vals) / len(vals), None, details)


# -- several judge processes ------------------------------------------------------------
@dataclass
class _JudgeInfo:
    """Name and fingerprint of the judge the workers loaded (for the signature)."""

    name: str | None
    fingerprint: str | None


_WORKER: dict[str, Any] = {}


def _worker_init(judge: Any, judge_options: dict[str, Any] | None, embedder: Any,
                 cache_path: str | None, device: str, ctx_kwargs: dict[str, Any],
                 metrics: list[Metric], repeats: int) -> None:
    store = _open_cache(cache_path if cache_path else False)
    the_judge = (_resolve_judge(judge, store, judge_options)
                 if any(m.uses_judge for m in metrics) else None)
    the_embedder = (_resolve_embedder(embedder, store, device)
                    if any(m.uses_embedder for m in metrics) else None)
    _WORKER.update(ctx=Context(judge=the_judge, embedder=the_embedder, **ctx_kwargs),
                   metrics=metrics, repeats=repeats)


def _worker_task(s: Sample) -> tuple[dict[str, Score], Usage, dict[str, str], _JudgeInfo]:
    ctx: Context = _WORKER["ctx"]
    ctx.usage = Usage()
    scores = _judge_one(s, _WORKER["metrics"], ctx, _WORKER["repeats"])
    info = _JudgeInfo(getattr(ctx.judge, "name", None), getattr(ctx.judge, "fingerprint", None))
    return scores, ctx.usage, dict(ctx.prompt_versions), info


def _pool_stream(samples: Sequence[Sample], metrics: Sequence[Metric], ctx: Context, judge: Any,
                 judge_options: dict[str, Any] | None, embedder: Any, store: Any, device: str,
                 repeats: int, workers: int) -> Iterator[dict[str, Score]]:
    """Score samples in ``workers`` processes, each with its own model; yield in order.

    Judge and embedder must be given as paths or names (each process loads
    its own copy); the cache file is shared safely (SQLite WAL).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    for spec, what in ((judge, "judge"), (embedder, "embedder")):
        if spec not in (None, False) and not isinstance(spec, (str, os.PathLike)):
            raise UsageError(f"--workers needs the {what} as a path or name, not an object")
    ctx_kwargs = {"lang": ctx.lang, "seed": ctx.seed, "temperature": ctx.temperature,
                  "verdicts": ctx.verdicts}
    init = (judge if judge in (None, False) else str(judge), judge_options,
            embedder if embedder in (None, False) else str(embedder),
            str(store.path) if store is not None else None, device, ctx_kwargs,
            list(metrics), repeats)
    with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=init,
                             mp_context=multiprocessing.get_context("spawn")) as ex:
        for scores, usage, versions, info in ex.map(_worker_task, samples):
            ctx.usage.add(usage)
            ctx.prompt_versions.update(versions)
            if ctx.judge is None and info.name is not None:
                ctx.judge = info  # type: ignore[assignment]
            yield scores


# -- judge pools: several samples at once (scale-out, issue 11) ------------------------
def _pool_capacity(judge: Any) -> int:
    """Calls the judge can serve at once: ``JudgePool.capacity`` (also behind CachedJudge)."""
    from localeval.judge.pool import JudgePool

    inner = getattr(judge, "judge", judge) if judge is not None else None
    return inner.capacity if isinstance(inner, JudgePool) else 1


def _threaded_stream(samples: Sequence[Sample], metrics: Sequence[Metric], ctx: Context,
                     repeats: int, threads: int) -> Iterator[dict[str, Score]]:
    """Score up to ``threads`` samples at once, each with its own Context; yield in order.

    The runner is sequential per sample, so one sample keeps one server busy;
    a pool of servers needs samples in flight. Usage and prompt versions are
    merged into ``ctx`` in input order, so the summary equals a sequential run's.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    def one(s: Sample) -> tuple[dict[str, Score], Context]:
        c = Context(judge=ctx.judge, embedder=ctx.embedder, lang=ctx.lang, seed=ctx.seed,
                    temperature=ctx.temperature, verdicts=ctx.verdicts)
        return _judge_one(s, metrics, c, repeats), c

    window = 2 * threads
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="localeval-judge") as ex:
        pending: list[Future[tuple[dict[str, Score], Context]]] = []
        it = iter(samples)
        try:
            for s in it:
                pending.append(ex.submit(one, s))
                if len(pending) >= window:
                    break
            while pending:
                scores, c = pending.pop(0).result()
                ctx.usage.add(c.usage)
                ctx.prompt_versions.update(c.prompt_versions)
                nxt = next(it, None)
                if nxt is not None:
                    pending.append(ex.submit(one, nxt))
                yield scores
        finally:
            for f in pending:
                f.cancel()


def _missing_reason(m: Metric, s: Sample) -> str:
    missing = m.missing_fields(s)
    return "missing " + ", ".join(missing) if missing else "not computed"


def _safe_score(m: Metric, s: Sample, ctx: Context) -> Score:
    try:
        return m.score(s, ctx)
    except (JudgeCallError, NoJudge, NoEmbedder) as e:
        return Score.unscored(str(e))


def _summary(chosen: Sequence[Metric], scores: Sequence[Mapping[str, Score]], ctx: Context,
             seed: int, verdicts: str, lang: str, repeats: int, version: str,
             notes: list[str]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for m in chosen:
        col = [sc[m.key] for sc in scores if m.key in sc]
        entry = summarize_metric(col, seed=seed)
        corpus = getattr(m, "corpus_from_scores", None)
        if corpus is not None and entry["n"]:
            # corpus-level statistic (BLEU sums n-gram counts; not the mean of sentence BLEU)
            entry["corpus"] = corpus(col).value
        if repeats > 1 and m.uses_judge:
            # per-run means, from each sample's per-repeat values
            runs = [[sc.details["repeats"][r] for sc in col
                     if sc.details.get("repeats") and sc.details["repeats"][r] is not None]
                    for r in range(repeats)]
            means = [sum(v) / len(v) for v in runs if v]
            entry["run_means"] = means
            entry["run_spread"] = statistics.pstdev(means) if len(means) > 1 else 0.0
            sds = [sc.details.get("std") for sc in col]
            sds = [x for x in sds if x is not None]
            entry["mean_sample_std"] = sum(sds) / len(sds) if sds else None
        if m.lower_is_better:
            entry["lower_is_better"] = True
        metrics[m.key] = entry
    sig = signature(version=version, judge=ctx.judge, embedder=ctx.embedder, seed=seed,
                    prompts=ctx.prompt_versions, verdicts=verdicts, lang=lang, repeats=repeats)
    out = {"metrics": metrics, "n_samples": len(scores), "signature": sig,
           "signature_line": signature_line(sig), "usage": ctx.usage.to_dict()}
    if notes:
        out["notes"] = notes
    return out


def _choose_metrics(metrics: Any, ds: Dataset) -> list[Metric]:
    if metrics:
        return parse_metrics(metrics)
    chosen = parse_metrics(",".join(DEFAULT_METRICS))
    return [m for m in chosen if all(f in ds.columns for f in m.requires)]


class _Writer:
    """Appends one results line per finished sample; writes the summary at the end."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._f = open(self.dir / "results.jsonl", "w", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        self._f.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._f.flush()

    def close(self, summary: Mapping[str, Any]) -> None:
        self._f.close()
        _write_json(self.dir / "summary.json", summary)
