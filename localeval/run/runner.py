"""``evaluate()``: validate -> batch the cheap work -> judge sample by sample -> aggregate.

Order matters for speed on a local judge: non-model metrics run vectorised
over the whole dataset first; every text the embedding metrics need is
embedded in one batched pass; then each sample's judge calls run back to
back so llama.cpp reuses the sample's KV prefix across metrics. Each sample's
line is written to ``results.jsonl`` as soon as it is finished, so an
interrupted run leaves valid files, and the judge cache makes a restart
repeat no finished call. Before the first judge call the judge takes its
judge check (``judge_check``, cached) on the run's judge metrics; its verdict goes
into the summary beside the scores, never into them.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any, Callable, Iterable, Mapping, Sequence

from localeval.config import RunConfig
from localeval.dataset import Dataset, DataVersion, Subset, check_required, data_version, load_dataset, select_samples
from localeval.errors import UsageError
from localeval.judge import Judge
from localeval.metrics import Judging, Metric, NoJudge, empty_input_note, missing_reason, parse_metrics
from localeval.results import RunWriter, sample_record
from localeval.run.aggregate import build_summary
from localeval.run.folder_rule import FolderRule
from localeval.run.judge_check_step import check_pairs, run_judge_check_step
from localeval.run.lean import ScoreColumns
from localeval.run.naming import check_name, check_tags, run_section
from localeval.run.progress import loading_stage, model_label
from localeval.run.result import EvaluationResult, SummaryHook, add_sections, write_reports
from localeval.run.run_folders import RunFolders, RunOutput
from localeval.run.sample_scoring import MetricObserver
from localeval.run.strategies import score_stream
from localeval.run.wiring import build_embedder, build_judge, choose_embedder, open_cache
from localeval.types import Score

__all__ = ["evaluate", "DEFAULT_METRICS"]

#: Samples whose cheap metrics are scored together in a run that keeps no samples.
LEAN_CHUNK = 8192

#: What ``evaluate`` runs when no metrics are named: every one the data supports.
DEFAULT_METRICS = (
    "faithfulness", "answer_relevancy", "context_precision", "context_recall",
    "answer_correctness", "answer_similarity",
    "hit_rate@5", "mrr", "ndcg@10", "rougeL",
    # conversations (MultiTurnSample): only data with messages has the fields they need
    "tool_call_accuracy", "tool_call_f1", "agent_goal_accuracy", "topic_adherence",
    "tool_call_ast", "tool_call_validity",  # only rows with possible_answers / tools
)


def evaluate(
    data: Any,
    metrics: str | Sequence[str | Metric] | None = None,
    *,
    judge: Judge | str | os.PathLike[str] | None | bool = None,
    embedder: Any = None,
    columns: Iterable[str] | Mapping[str, str] | None = None,
    lang: str | None = None,
    seed: int | None = None,
    temperature: float | None = None,
    verdicts: str | None = None,
    reasons: str | None = None,
    repeats: int | None = None,
    cache: Any = None,
    device: str | None = None,
    judge_options: Mapping[str, Any] | None = None,
    workers: int | None = None,
    ray: str | bool | None = None,
    ray_actors: int | None = None,
    out_dir: str | os.PathLike[str] | RunFolders | None = None,
    progress: bool | None = None,
    on_warning: Callable[[str], None] | None = None,
    observer: MetricObserver | None = None,
    judge_check: bool | int | None = None,
    on_info: Callable[[str], None] | None = None,
    expect_metrics: Mapping[str, str] | Iterable[str] = (),
    limit: int | None = None,
    sample: int | None = None,
    options_as: str = "python",
    keep_samples: bool = True,
    summary_sections: SummaryHook | None = None,
    name: str | None = None,
    tags: Mapping[str, str] | None = None,
    overwrite: bool = False,
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
    docs/scale-out.md). A judge that serves several calls at once (a ``JudgePool``,
    or a ``LlamaJudge`` with ``parallel`` > 1) gets each sample's independent
    calls together and a few samples at once, in threads
    (``run.strategies.threaded_stream``). ``observer`` (a
    ``MetricObserver``) is told when each model metric of each sample starts
    and finishes, with its wall time: for benchmarks and judge-call
    attribution; it needs the samples scored in this process (not with
    ``workers`` or ``ray``). ``judge_check``: run the judge check on the
    known-answer probes before the first judge call (default: on, unless
    ``configure(judge_check=False)`` or ``LOCALEVAL_JUDGE_CHECK=0``); its result
    is ``summary["judge_check"]`` (a number N: N pairs per metric instead of
    ``judge_check.QUICK_PAIRS``) and its one-line verdict goes to
    ``on_warning`` when the judge is not fit, else to ``on_info``.
    ``expect_metrics``: metric keys or names the caller will read from the
    result (gates), or a mapping name -> the option that named it; one the run
    does not compute is a ``UsageError`` before any model loads, not after the judging.
    ``limit``: score only the first N samples; ``sample``: N samples drawn with
    ``seed``, stratified by language (``dataset.select_samples``); either is
    recorded in the signature. ``options_as``: how warnings name options,
    "python" (``judge=``) or "cli" (``--judge``; what ``localeval run`` passes).
    ``keep_samples=False`` (with ``out_dir``; the command line): the result holds
    no samples or per-sample scores, only the summary; each sample's record is
    in ``results.jsonl``, and the run keeps only what the summary needs
    (``run.lean``), so a million-row run fits in far less memory.
    ``summary_sections``: called once every sample is scored (not after an
    interruption) with the run's records, the ``results.jsonl`` lines (read back
    from the file one at a time with ``out_dir``, else built from the scores
    kept); the sections it returns are added to the summary before summary.json
    and the reports are written, once (``localeval run --labels`` adds
    ``corrected`` so). If it raises, the run's files are written without them and
    its error is raised after.
    ``name`` and ``tags`` (``{"branch": "main"}``) label the run in summary.json's
    ``run`` section, beside when it started (``localeval runs`` lists them); the
    dataset's content hash and rows go into the signature (``dataset.data_version``).
    An ``out_dir`` that holds a run of other data or settings is refused before
    anything is written, unless ``overwrite`` (``run.folder_rule``); the same run
    again resumes. ``out_dir=RunFolders(root)`` chooses a folder of its own under
    ``root`` and points ``root/latest`` at it when done (``run.run_folders``).

    Settings left at None come from ``configure()``, then the environment, then
    the defaults (``localeval.config.run_config``).
    """
    from localeval.config import run_config

    cfg = run_config(judge=judge, embedder=embedder, lang=lang, seed=seed,
                     temperature=temperature, verdicts=verdicts, reasons=reasons,
                     repeats=repeats, cache=cache,
                     device=device, judge_options=judge_options, workers=workers, ray=ray,
                     ray_actors=ray_actors, judge_check=judge_check)
    if observer is not None and (cfg.workers > 1 or cfg.ray):
        raise UsageError("an observer sees only samples scored in this process: "
                         "it cannot be combined with workers or ray")
    from localeval.version import __version__

    cli = options_as == "cli"
    name = check_name(name, "--name" if cli else "name")
    tags = check_tags(tags, "--tag" if cli else "tags")
    subset = Subset(limit, sample, cfg.seed)
    ds = load_dataset(data, columns=columns)
    run = run_section(name, tags, ds.source)
    dv = data_version(ds)  # of the whole dataset, before --limit/--sample
    total = len(ds)
    whole = subset.note(total, options_as)
    if whole is not None and on_info is not None:
        on_info(whole)
    ds = select_samples(ds, subset)
    chosen = _choose_metrics(metrics, ds)
    check_required(ds, {m.key: m.requires for m in chosen})
    _check_expected(expect_metrics, chosen)
    # stacklevel 4: the user's call of evaluate (the lambda, _evaluate, evaluate above it)
    warn = on_warning or (lambda msg: warnings.warn(msg, stacklevel=4))
    # Rows whose answer (reference, contexts) is empty are scored without the judge:
    # said now, before any model loads, and kept in the summary's notes.
    notes: list[str] = empty_input_note(ds.samples, chosen)
    for n in notes:
        on_warning(n) if on_warning else warnings.warn(n, stacklevel=2)
    # The output folder is chosen, checked and locked before any model loads.
    out = RunOutput.open(out_dir, cfg, ds, dv, chosen, name=name, overwrite=overwrite,
                         options_as=options_as, version=__version__, warn=warn)
    try:
        result = _evaluate(ds, chosen, out.writer, notes, warn, cfg, progress=progress,
                           observer=observer, on_info=on_info, version=__version__,
                           subset=subset.record(total, len(ds)), options_as=options_as,
                           lean=not keep_samples and out.writer is not None,
                           summary_sections=summary_sections, rule=out.rule, data=dv, run=run)
        out.finished()
        return result
    finally:
        out.release()


def _evaluate(ds: Dataset, chosen: list[Metric], writer: RunWriter | None, notes: list[str],
              warn: Callable[[str], None], cfg: RunConfig, *, progress: bool | None,
              observer: MetricObserver | None, on_info: Callable[[str], None] | None,
              version: str, subset: dict[str, Any] | None = None,
              options_as: str = "python", lean: bool = False,
              summary_sections: SummaryHook | None = None, rule: FolderRule | None = None,
              data: DataVersion | None = None, run: dict[str, Any] | None = None
              ) -> EvaluationResult:
    """``evaluate`` after the data, metrics and output folder are checked (and ``notes``,
    the ones so far, told); ``rule`` checks the models against the folder's run once
    they are loaded, before anything is written."""
    judge, embedder, judge_options = cfg.judge, cfg.embedder, dict(cfg.judge_options)
    lang, seed, verdicts, repeats = cfg.lang, cfg.seed, cfg.verdicts, cfg.repeats
    cache, device, workers, ray = cfg.cache, cfg.device, cfg.workers, cfg.ray
    temperature = cfg.temperature
    if device is not None:  # a checker runs where the embedder does: --device, $LOCALEVAL_DEVICE
        judge_options.setdefault("checker_device", device)  # (other backends drop it)
    told = len(notes)
    store = open_cache(cache)
    need_judge = any(m.uses_judge for m in chosen)
    need_embed = any(m.uses_embedder for m in chosen)
    pooled = workers > 1 or bool(ray)
    # With a pool, each worker loads its own judge; the parent loads none.
    the_judge = None
    if need_judge and not pooled:
        with loading_stage(f"loading judge {model_label(judge, 'from models/')}",
                           progress if judge is not False else False):
            the_judge = build_judge(judge, store, judge_options)
    if need_judge and the_judge is None and not pooled:
        notes.append(str(NoJudge(options_as)))
    the_embedder = None
    texts = [t for s in ds for t in (s.question, s.answer, s.reference) if t]
    if need_embed:  # the one choice (``wiring.choose_embedder``): multilingual for ja/zh data

        asked: list[Any] = []

        def load(chosen: Any) -> Any:
            asked.append(chosen)  # the spec chosen: the workers load the same one
            with loading_stage(f"loading embedder {model_label(chosen, 'all-MiniLM-L6-v2')}",
                               progress if chosen is not False else False):
                return build_embedder(chosen, store, device)

        the_embedder, said = choose_embedder(embedder, texts, load)
        embedder = asked[-1] if asked else embedder
        notes.extend(said)
    if rule is not None:
        rule.check_models(the_judge, the_embedder, pooled=pooled)
    for n in notes[told:]:
        warn(n)

    if temperature is None:
        # Repeats with greedy decoding would be identical: sample instead.
        temperature = 0.7 if repeats > 1 else 0.0
    elif repeats > 1 and temperature == 0.0:
        warn("--repeats with temperature 0 gives identical runs; set --temperature > 0")
    ctx = Judging(judge=the_judge, embedder=the_embedder, lang=lang, seed=seed,
                  temperature=temperature, verdicts=verdicts, reasons=cfg.reasons)
    checked = run_judge_check_step(chosen, the_judge, the_embedder, verdicts, store,
                                   enabled=cfg.judge_check is not False, pooled=pooled,
                                   pairs=check_pairs(cfg.judge_check), progress=progress,
                                   reasons=cfg.reasons)
    if checked is not None:
        tell = warn if checked["verdict"] not in ("fit", "skipped") else (on_info or _quiet)
        tell(checked["line"])

    samples = ds.samples
    batch_metrics = [m for m in chosen if not (m.uses_judge or m.uses_embedder)]
    model_metrics = [m for m in chosen if m.uses_judge or m.uses_embedder]

    def batch_scores(lo: int, hi: int) -> list[dict[str, Score]]:
        """The cheap metrics' scores of samples[lo:hi], vectorised."""
        rows: list[dict[str, Score]] = [{} for _ in range(lo, hi)]
        for m in batch_metrics:
            idx = [i for i in range(lo, hi) if not m.missing_fields(samples[i])]
            for i, sc in zip(idx, m.score_batch([samples[i] for i in idx], ctx)):
                rows[i - lo][m.key] = sc
        return rows

    # 1. cheap metrics, vectorised over the dataset (lean: a chunk at a time, in step 3,
    # so the working of a chunk at most is held before it is written)
    scores: Any = ScoreColumns(chosen) if lean else batch_scores(0, len(samples))
    chunk: list[dict[str, Score]] = []

    # 2. every text the embedding metrics need, embedded once in large batches
    if the_embedder is not None:
        wanted = {t for s in samples for m in model_metrics if m.uses_embedder
                  for t in m.texts_to_embed(s)}
        if wanted and hasattr(the_embedder, "prefetch"):
            the_embedder.prefetch(sorted(wanted))

    # 3. judge work, sample by sample so calls sharing a prefix run back to back
    if writer is not None:
        writer.start()
    bar = None
    stream = None
    finished = 0
    scored = False  # every sample scored, nothing raised: the sections hook may run
    failed: BaseException | None = None
    try:
        from localeval.run.progress import RunProgress

        bar = RunProgress(len(samples), enabled=progress, usage=ctx.usage,
                          work=[sum(not m.missing_fields(s) for m in model_metrics)
                                for s in samples])
        stream = score_stream(samples, model_metrics, ctx, repeats, judge=judge,
                              judge_options=judge_options, embedder=embedder, store=store,
                              device=device, workers=workers, ray=ray, ray_actors=cfg.ray_actors,
                              observer=observer)
        for i, (s, model_scores) in enumerate(zip(samples, stream)):
            if lean and i % LEAN_CHUNK == 0:
                chunk = batch_scores(i, min(i + LEAN_CHUNK, len(samples)))
            row = chunk[i % LEAN_CHUNK] if lean else scores[i]
            row.update(model_scores)
            row = {m.key: _finite(row.get(m.key) or Score.unscored(missing_reason(m, s)))
                   for m in chosen}
            if writer:
                writer.write(sample_record(s, row))
            if lean:
                scores.append(row)
            else:
                scores[i] = row
            finished = i + 1
            bar.update(ctx.usage)
        scored = True
    finally:
        if bar:
            bar.close()
        # A strategy with samples in flight stops them now, not at the interpreter's exit.
        getattr(stream, "close", lambda: None)()
        interrupted = finished < len(samples)
        done = samples[:finished] if interrupted else samples
        kept = scores if lean else scores[: len(done)]  # lean: only finished rows are kept
        summary = build_summary(chosen, kept, ctx, seed, verdicts, lang,
                                repeats, version, notes, samples=done, judge_check=checked,
                                subset=subset, run=run,
                                data=data.signature_fields() if data is not None else None)
        if interrupted:
            summary["interrupted"] = {"finished": finished, "total": len(samples)}
        elif scored and summary_sections is not None:
            failed = add_sections(summary, summary_sections, writer, done, kept)
        if writer:
            writer.close(summary)
            write_reports(writer.dir, summary, done, kept, warn, from_file=lean)
    if failed is not None:
        raise failed
    if lean:
        return EvaluationResult([], chosen, [], summary, notes)
    return EvaluationResult(list(done), chosen, kept, summary, notes)


def _check_expected(expect: Mapping[str, str] | Iterable[str], chosen: list[Metric]) -> None:
    """Every metric a gate names is one the run computes (``report.resolve_gate_keys``)."""
    from localeval.report import resolve_gate_keys

    named = expect if isinstance(expect, Mapping) else dict.fromkeys(expect, "a gate")
    for name, option in named.items():
        resolve_gate_keys([name], chosen, option)


def _finite(score: Score) -> Score:
    """A score whose value is +-inf is unscored: no Infinity in results or means."""
    if score.value is not None and not math.isfinite(score.value):
        return Score(None, f"metric returned a non-finite value ({score.value})",
                     dict(score.details))
    return score


def _choose_metrics(metrics: Any, ds: Dataset) -> list[Metric]:
    if metrics:
        chosen = parse_metrics(metrics)
        if not chosen:
            raise UsageError(f"no metric named in {metrics!r}; see 'localeval metrics'")
        for m in chosen:
            _check_finite_parameters(m)
        return chosen
    chosen = parse_metrics(",".join(DEFAULT_METRICS))
    return [m for m in chosen if all(f in ds.columns for f in m.requires)]


def _check_finite_parameters(m: Metric) -> None:
    """A NaN or infinite number among a metric's parameters is a usage error.

    ``float("nan")`` parses, and then every comparison with it is False: a
    ``threshold=nan`` would score every sample 0.0.
    """
    params = dict(vars(m)) if hasattr(m, "__dict__") else {}
    for name, v in params.items():
        values = v if isinstance(v, (list, tuple)) else [v]
        if isinstance(v, Metric):
            _check_finite_parameters(v)
            continue
        for x in values:
            if isinstance(x, float) and not math.isfinite(x):
                raise UsageError(f"metric {m.name!r}: {name}={x} is not a finite number")


def _quiet(msg: str) -> None:
    """Where news goes when the caller did not ask for it."""
