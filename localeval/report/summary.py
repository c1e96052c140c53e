"""Aggregate per-sample scores into the run summary, with CIs and a signature.

The signature is sacrebleu's idea applied to judged metrics: two numbers are
comparable only when judge file, prompt versions, seed, embedder and
localeval version agree, so every summary carries them, and the version of the
data they were computed on (``dataset.DataVersion``: its content hash, its
test-set hash and its rows).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from localeval.stats import bootstrap_ci, bootstrap_cis
from localeval.types import Score

__all__ = ["summarize_metric", "summarize_metrics", "signature", "signature_line", "run_label"]


def summarize_metrics(columns: Mapping[str, Sequence[Score]], *,
                      seed: int = 0) -> dict[str, dict[str, Any]]:
    """``summarize_metric`` for every column at once: their CIs share resample draws."""
    values = {k: [s.value for s in col if s.value is not None] for k, col in columns.items()}
    cis = dict(zip(values, bootstrap_cis(list(values.values()), seed=seed)))
    return {k: _entry(col, values[k], cis[k]) for k, col in columns.items()}


def summarize_metric(scores: Sequence[Score], *, seed: int = 0) -> dict[str, Any]:
    """Mean over scored samples, 95% CI, counts, and why the rest were unscored."""
    vals = [s.value for s in scores if s.value is not None]
    return _entry(scores, vals, bootstrap_ci(vals, seed=seed))


def _entry(scores: Sequence[Score], vals: Sequence[float],
           ci: list[float] | None) -> dict[str, Any]:
    reasons = Counter(s.reason or "unscored" for s in scores if s.value is None)
    out: dict[str, Any] = {
        "mean": float(np.mean(vals)) if vals else None,
        "ci95": ci,
        "n": len(vals),
        "unscored": len(scores) - len(vals),
    }
    if reasons:
        out["unscored_reasons"] = dict(reasons.most_common())
    return out


def signature(*, version: str, judge: Any = None, embedder: Any = None, seed: int = 0,
              prompts: Mapping[str, str] | None = None, verdicts: str = "hard",
              lang: str = "auto", repeats: int = 1, reasons: str = "full",
              subset: Mapping[str, Any] | None = None,
              data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything a reader needs to tell whether two results are comparable.

    ``data``: the dataset's version, ``DataVersion.signature_fields()``
    (``dataset_hash``, ``testset_hash``, ``dataset_rows``: the whole dataset's,
    before any ``subset``).

    ``subset``: the run scored only some samples (``--limit``/``--sample``), so its
    means are not those of the whole dataset: ``{"limit": N | "sample": N, "seed": S,
    "kept": K, "of": TOTAL}``.

    ``reasons``: the reason mode (``config.REASON_MODES``); a summary without
    the key is from before it and had full reasons.
    """
    prompts = dict(sorted((prompts or {}).items()))
    pv = hashlib.sha256("|".join(f"{k}={v}" for k, v in prompts.items()).encode()).hexdigest()
    return {
        "localeval": version,
        "judge": getattr(judge, "name", None),
        "judge_fingerprint": getattr(judge, "fingerprint", None),
        "embedder": getattr(embedder, "name", None),
        "embedder_fingerprint": getattr(embedder, "fingerprint", None),
        "prompts": prompts,
        "prompts_hash": pv[:12] if prompts else None,
        "seed": seed,
        "verdicts": verdicts,
        "reasons": reasons,
        "lang": lang,
        "repeats": repeats,
        **dict(data or {}),
        **({"subset": dict(subset)} if subset else {}),
    }


def signature_line(sig: Mapping[str, Any]) -> str:
    """``judge:NAME@HASH|prompts:HASH|seed:0|embed:NAME@HASH|verdicts:hard|lang:auto|data:HASH|rows:N|v:X``
    (sacrebleu style): ``results.Identity.line``, the one place that writes it; "" for a
    signature that records nothing or cannot be read."""
    from localeval.results import Identity

    ident = Identity.of_signature(sig)
    return ident.line() if ident.recorded else ""


def run_label(run: Any) -> str:
    """A run's name and tags in one line (``v2 · branch=main · pr=12``); "" when it has
    neither. ``run`` is summary.json's ``run`` section, read as found (an older or
    damaged summary may hold anything there)."""
    if not isinstance(run, Mapping):
        return ""
    name = run.get("name")
    tags = run.get("tags")
    parts = [str(name)] if isinstance(name, str) and name else []
    if isinstance(tags, Mapping):
        parts += [f"{k}={v}" for k, v in tags.items()]
    return " · ".join(parts)
