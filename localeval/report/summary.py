"""Aggregate per-sample scores into the run summary, with CIs and a signature.

The signature is sacrebleu's idea applied to judged metrics: two numbers are
comparable only when judge file, prompt versions, seed, embedder and
localeval version agree, so every summary carries them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from localeval.types import Score

__all__ = ["summarize_metric", "bootstrap_ci", "signature", "signature_line"]


def bootstrap_ci(values: Sequence[float], *, n_resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap CI of the mean (scipy.stats.bootstrap).

    None for fewer than two values; a constant sample gives a zero-width
    interval (scipy refuses degenerate data, so that case is handled here).
    """
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    if np.all(x == x[0]):
        return [float(x[0]), float(x[0])]
    from scipy.stats import bootstrap

    res = bootstrap((x,), np.mean, n_resamples=n_resamples, confidence_level=level,
                    method="percentile", random_state=np.random.default_rng(seed),
                    vectorized=True)
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def summarize_metric(scores: Sequence[Score], *, seed: int = 0) -> dict[str, Any]:
    """Mean over scored samples, 95% CI, counts, and why the rest were unscored."""
    vals = [s.value for s in scores if s.value is not None]
    reasons = Counter(s.reason or "unscored" for s in scores if s.value is None)
    out: dict[str, Any] = {
        "mean": float(np.mean(vals)) if vals else None,
        "ci95": bootstrap_ci(vals, seed=seed),
        "n": len(vals),
        "unscored": len(scores) - len(vals),
    }
    if reasons:
        out["unscored_reasons"] = dict(reasons.most_common())
    return out


def _short(h: str | None, n: int = 12) -> str:
    return h[:n] if h else "none"


def signature(*, version: str, judge: Any = None, embedder: Any = None, seed: int = 0,
              prompts: Mapping[str, str] | None = None, verdicts: str = "hard",
              lang: str = "auto", repeats: int = 1) -> dict[str, Any]:
    """Everything a reader needs to tell whether two results are comparable."""
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
        "lang": lang,
        "repeats": repeats,
    }


def signature_line(sig: Mapping[str, Any]) -> str:
    """``judge:NAME@HASH|prompts:HASH|seed:0|embed:NAME@HASH|verdicts:hard|v:X`` (sacrebleu style)."""
    parts = [
        f"judge:{sig.get('judge') or 'none'}@{_short(sig.get('judge_fingerprint'))}",
        f"prompts:{sig.get('prompts_hash') or 'none'}",
        f"seed:{sig.get('seed')}",
        f"embed:{sig.get('embedder') or 'none'}@{_short(sig.get('embedder_fingerprint'))}",
        f"verdicts:{sig.get('verdicts')}",
        f"lang:{sig.get('lang')}",
    ]
    if sig.get("repeats", 1) != 1:
        parts.append(f"repeats:{sig['repeats']}")
    parts.append(f"v:{sig.get('localeval')}")
    return "|".join(parts)

