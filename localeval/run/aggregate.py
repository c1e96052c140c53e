"""The run's summary: per-metric statistics, repeat spread, the signature and judge usage.

This is what ``summary.json`` holds; ``report.summarize_metrics`` does the
statistics of one metric, this adds what only the run knows (corpus-level
values, per-repeat means, the models and prompts that produced the numbers).
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

from localeval.metrics import Judging, Metric
from localeval.report import judge_health, signature, summarize_metrics
from localeval.results import new_summary
from localeval.types import Sample, Score

__all__ = ["build_summary"]


def build_summary(chosen: Sequence[Metric], scores: Sequence[Mapping[str, Score]], ctx: Judging,
                  seed: int, verdicts: str, lang: str, repeats: int, version: str,
                  notes: list[str], samples: Sequence[Sample] = (),
                  judge_check: Mapping[str, Any] | None = None,
                  subset: Mapping[str, Any] | None = None,
                  data: Mapping[str, Any] | None = None,
                  run: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The summary of ``scores`` (one mapping per finished sample) for the metrics ``chosen``.

    ``samples`` are the finished samples in the order of ``scores`` (judge health
    needs them to tell a constant metric on varied data from varied data
    scored alike); ``judge_check`` is the judge check result, if one ran
    (``summary["judge_check"]``, the one place it is written);
    ``subset`` is the run's ``--limit``/``--sample`` (``dataset.Subset.record``);
    ``data`` the dataset's version (``DataVersion.signature_fields()``), in the signature;
    ``run`` the run's ``run`` section (``run.labels.run_section``: when it started, its
    name and tags).
    """
    metrics: dict[str, Any] = {}
    keys = dict.fromkeys(m.key for m in chosen)  # Metric.key is computed per access: once here
    cols = {k: [sc[k] for sc in scores if k in sc] for k in keys}
    # all metrics at once: those scored on the same samples share the bootstrap's draws
    entries = summarize_metrics(cols, seed=seed)
    for m in chosen:
        col, entry = cols[m.key], entries[m.key]
        corpus = getattr(m, "corpus_from_scores", None)
        if corpus is not None and entry["n"]:
            # corpus-level statistic (BLEU sums n-gram counts; not the mean of sentence BLEU)
            entry["corpus"] = corpus(col).value
        if repeats > 1 and m.uses_judge:
            entry.update(_repeat_stats(col, repeats))
        if m.lower_is_better:
            entry["lower_is_better"] = True
        metrics[m.key] = entry
    # The judge this process loaded, else the one the workers reported.
    judge = ctx.judge if ctx.judge is not None else ctx.accounting.judge
    sig = signature(version=version, judge=judge, embedder=ctx.embedder, seed=seed,
                    prompts=ctx.prompt_versions, verdicts=verdicts, lang=lang, repeats=repeats,
                    reasons=ctx.reasons, subset=subset, data=data)
    judged = [m.key for m in chosen if m.uses_judge]
    usage = ctx.usage.to_dict()
    health = (judge_health(judged, samples, scores, usage, judge_check)
              if judged and judge is not None else None)
    return new_summary(metrics=metrics, n_samples=len(scores), signature=sig, run=run,
                       usage=usage, judge_health=health, judge_check=judge_check, notes=notes)


def _repeat_stats(col: Sequence[Score], repeats: int) -> dict[str, Any]:
    """Per-run means from each sample's per-repeat values, their spread, the mean sample std."""
    runs = [[sc.details["repeats"][r] for sc in col
             if sc.details.get("repeats") and sc.details["repeats"][r] is not None]
            for r in range(repeats)]
    means = [sum(v) / len(v) for v in runs if v]
    sds = [float(sc.details["std"]) for sc in col if sc.details.get("std") is not None]
    return {"run_means": means,
            "run_spread": statistics.pstdev(means) if len(means) > 1 else 0.0,
            "mean_sample_std": sum(sds) / len(sds) if sds else None}
