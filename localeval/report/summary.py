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

__all__ = ["summarize_metric", "summarize_metrics", "bootstrap_ci", "bootstrap_cis",
           "bootstrap_means", "signature", "signature_line"]

#: Resample indices are drawn in blocks of about this many (8 MB as int64), so memory
#: stays flat however many rows a run has (100k rows x 2000 resamples is 200M indices).
BLOCK = 1 << 20


def bootstrap_means(columns: np.ndarray, *, n_resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """The mean of each of ``n_resamples`` bootstrap resamples of each row of ``columns``.

    ``columns`` is (m, n); the result is (m, n_resamples). The draws are exactly
    those of ``scipy.stats.bootstrap(..., vectorized=True, rng=default_rng(seed))``:
    one (n_resamples, n) array of ``integers(0, n)``, here drawn in blocks (a
    Generator's stream does not depend on how the draws are split). Every row
    gets the same indices, as it would with its own generator of that seed, so
    metrics scored on the same samples share one draw. Hand-written because
    scipy draws all indices at once (1.6 GB at 100k rows) and resamples one
    metric at a time.
    """
    x = np.asarray(columns, dtype=float)
    m, n = x.shape
    rng = np.random.default_rng(seed)
    out = np.empty((m, n_resamples))
    rows = max(1, BLOCK // max(1, n))
    for k in range(0, n_resamples, rows):
        b = min(rows, n_resamples - k)
        idx = rng.integers(0, n, (b, n))
        for r in range(m):
            # one row at a time: x[:, idx] is a slow strided gather, and its mean
            # would sum in another order than scipy's (last bits differ)
            out[r, k:k + b] = x[r][idx].mean(axis=-1)
    return out


def _quantile(sorted_row: np.ndarray, p: float) -> float:
    """Hyndman-Fan type 7 ("linear", numpy's and scipy.stats.quantile's default),
    written as scipy 1.15+ writes it, (1 - g) * y[j] + g * y[j + 1], so the CI
    matches scipy's to the last bit rather than to the last ulp."""
    n = sorted_row.size
    jg = p * n + (1 - p)
    j = int(jg // 1) - 1
    g = jg % 1
    if j < 0:
        j, g = 0, 0.0
    lo, hi = min(max(j, 0), n - 1), min(max(j + 1, 0), n - 1)
    return float((1 - g) * sorted_row[lo] + g * sorted_row[hi])


def bootstrap_cis(columns: Sequence[Sequence[float]], *, n_resamples: int = 2000, seed: int = 0,
                  level: float = 0.95) -> list[list[float] | None]:
    """Percentile bootstrap CIs of the mean of several columns, vectorised with numpy.

    Same estimator and seed semantics as ``scipy.stats.bootstrap(method="percentile")``
    with ``default_rng(seed)`` per column (the bootstrap distribution is identical;
    tests/unit/test_report_scale.py checks it). Columns of equal length are
    resampled together with one draw. None for fewer than two values; a
    constant column gives a zero-width interval (no resampling needed).
    """
    out: list[list[float] | None] = [None] * len(columns)
    by_n: dict[int, list[int]] = {}
    arrays = [np.asarray(c, dtype=float) for c in columns]
    for i, x in enumerate(arrays):
        if x.size < 2:
            continue
        if np.all(x == x[0]):
            out[i] = [float(x[0]), float(x[0])]
        else:
            by_n.setdefault(x.size, []).append(i)
    alpha = (1 - level) / 2
    for group in by_n.values():
        means = bootstrap_means(np.stack([arrays[i] for i in group]),
                                n_resamples=n_resamples, seed=seed)
        means.sort(axis=-1)
        for i, row in zip(group, means):
            out[i] = [_quantile(row, alpha), _quantile(row, 1 - alpha)]
    return out


def bootstrap_ci(values: Sequence[float], *, n_resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap CI of the mean of one column (see ``bootstrap_cis``)."""
    return bootstrap_cis([values], n_resamples=n_resamples, seed=seed, level=level)[0]


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


def _short(h: str | None, n: int = 12) -> str:
    return h[:n] if h else "none"


def signature(*, version: str, judge: Any = None, embedder: Any = None, seed: int = 0,
              prompts: Mapping[str, str] | None = None, verdicts: str = "hard",
              lang: str = "auto", repeats: int = 1,
              subset: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything a reader needs to tell whether two results are comparable.

    ``subset``: the run scored only some samples (``--limit``/``--sample``), so its
    means are not those of the whole dataset: ``{"limit": N | "sample": N, "seed": S,
    "kept": K, "of": TOTAL}``.
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
        "lang": lang,
        "repeats": repeats,
        **({"subset": dict(subset)} if subset else {}),
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
    sub = sig.get("subset")
    if sub:
        parts.append(f"limit:{sub['limit']}of{sub['of']}" if "limit" in sub else
                     f"sample:{sub['sample']}of{sub['of']}@seed{sub['seed']}")
    parts.append(f"v:{sig.get('localeval')}")
    return "|".join(parts)

