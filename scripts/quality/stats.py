"""Agreement statistics of one task's scores with the labels, with coverage.

The statistics are ``localeval.agreement``'s (``validate``: pairwise accuracy
resampled by pair, stratified AUC, Spearman), so this benchmark and
``localeval validate`` agree; balanced accuracy is scikit-learn's. The same
functions measure localeval's scores and the ragas baseline's, so the two
columns differ only in the scores.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from typing import Any, Mapping, Sequence

from quality.data import ANCHOR_SOURCE, ANCHORS, SetSpec, binary_label

__all__ = ["reason_kind", "pairwise_stats", "balanced_accuracy", "binary_stats",
           "graded_stats", "measure_values", "measure_task"]


def reason_kind(reason: str | None) -> str:
    """An unscored reason with its numbers masked, so that like reasons count together."""
    return re.sub(r"\d+", "N", reason or "unscored")


def _stat(d: Mapping[str, Any], name: str, n: int) -> dict[str, Any]:
    from localeval.stats import read_interval

    iv = read_interval(d)  # localeval's one interval shape (or an earlier one)
    return {"statistic": name, "value": iv.value, "ci95": list(iv.ci) if iv.ci else None,
            "ci_method": iv.method or None, "reason": iv.reason, "n": n}


def _labels(**kw: Any) -> Any:
    from localeval.agreement import Labels

    return Labels("labelled data", **kw)


def _result_set(values: Mapping[str, float | None], metric: str) -> Any:
    from localeval.resultsets import ResultSet

    return ResultSet.from_scores({i: {metric: v} for i, v in values.items()})


def pairwise_stats(values: Mapping[str, float | None], labels: Mapping[str, int],
                   pairs: Mapping[str, str], metric: str, *, n_boot: int = 2000,
                   seed: int = 0) -> dict[str, Any]:
    """Pairwise accuracy (good row strictly higher; ties 1/2) with a CI resampling pairs.

    A pair with an unscored row is left out (and shows in the task's unscored
    count); ``n`` is the number of pairs compared.
    """
    from localeval.agreement import validate

    ids = list(values)
    lab = _labels(human={i: {metric: float(labels[i])} for i in ids},
                  groups={i: pairs[i] for i in ids}, order=ids)
    h = validate(_result_set(values, metric), lab, metrics=[metric], n_boot=n_boot,
                 seed=seed).human[0]
    return _stat(h.pairwise.to_dict(), "pairwise accuracy", h.n_pairs)


def balanced_accuracy(pos: Sequence[float], neg: Sequence[float], *, threshold: float = 0.5,
                      n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Balanced accuracy of "score >= threshold means good", with a stratified percentile CI.

    Balanced accuracy (the mean of the true-positive and true-negative rates)
    is the accuracy that an imbalanced set (ARES: 172 good, 28 bad) cannot
    inflate: a judge that passes everything gets 0.5.
    """
    import numpy as np
    from sklearn.metrics import balanced_accuracy_score

    if not pos or not neg:
        return {"value": None, "ci95": None, "reason": "needs scored rows of both labels "
                f"(good {len(pos)}, bad {len(neg)})"}
    p = (np.asarray(pos, dtype=float) >= threshold).astype(float)
    q = (np.asarray(neg, dtype=float) < threshold).astype(float)  # correct rejections
    y = np.r_[np.ones(len(p)), np.zeros(len(q))]
    pred = np.r_[p, 1.0 - q]
    point = float(balanced_accuracy_score(y, pred))
    if n_boot == 0 or min(len(p), len(q)) < 2:
        return {"value": point, "ci95": None,
                "reason": None if n_boot == 0 else "too few rows of a label for a CI"}
    rng = np.random.default_rng(seed)
    tpr = p[rng.integers(0, len(p), (n_boot, len(p)))].mean(1)
    tnr = q[rng.integers(0, len(q), (n_boot, len(q)))].mean(1)
    lo, hi = np.percentile((tpr + tnr) / 2, [2.5, 97.5])
    return {"value": point, "ci95": [float(lo), float(hi)],
            "ci_method": "percentile bootstrap (numpy, seeded), stratified by label"}


def binary_stats(values: Mapping[str, float | None], labels: Mapping[str, int], metric: str,
                 *, n_boot: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """ROC AUC (stratified bootstrap CI) and balanced accuracy at 0.5 of scored rows."""
    from localeval.agreement import validate

    ids = list(values)
    lab = _labels(binary={i: bool(labels[i]) for i in ids}, order=ids)
    sep = validate(_result_set(values, metric), lab, metrics=[metric], n_boot=n_boot,
                   seed=seed).separation[0]
    pos = [v for i, v in values.items() if v is not None and labels[i]]
    neg = [v for i, v in values.items() if v is not None and not labels[i]]
    n = len(pos) + len(neg)
    return [_stat(sep.auc.to_dict(), "ROC AUC", n),
            _stat(balanced_accuracy(pos, neg, n_boot=n_boot, seed=seed),
                  "balanced accuracy @0.5", n)]


def graded_stats(values: Mapping[str, float | None], graded: Mapping[str, float],
                 binary: Mapping[str, int], metric: str, *, n_boot: int = 2000,
                 seed: int = 0) -> list[dict[str, Any]]:
    """Spearman with the graded label and ROC AUC on the binary one (scored rows)."""
    from localeval.agreement import validate

    ids = list(values)
    lab = _labels(human={i: {metric: float(graded[i])} for i in ids},
                  binary={i: bool(binary[i]) for i in ids}, order=ids)
    v = validate(_result_set(values, metric), lab, metrics=[metric], n_boot=n_boot, seed=seed)
    n = sum(x is not None for x in values.values())
    return [_stat(v.human[0].stats["spearman"].to_dict(), "Spearman ρ (graded)", n),
            _stat(v.separation[0].auc.to_dict(), "ROC AUC (label_binary)", n)]


def measure_values(spec: SetSpec, label_metric: str, metric: str,
                   rows: Sequence[Mapping[str, Any]], values: Mapping[str, float | None],
                   reasons: Mapping[str, str | None], *, n_boot: int, seed: int
                   ) -> list[dict[str, Any]]:
    """The statistics of one task from per-row values (None: unscored, ``reasons[id]`` why).

    ``metric`` is the localeval metric the figures stand beside; it also
    seeds the bootstrap, so localeval's and ragas's CIs resample alike.
    """
    values = {r["id"]: values.get(r["id"]) for r in rows}
    kinds = Counter(reason_kind(reasons.get(i)) for i, v in values.items() if v is None)
    seed = seed + zlib.crc32(f"{spec.name}/{metric}".encode("utf-8")) % 10_000
    if spec.design == "pairwise":
        stats = [pairwise_stats(values, {r["id"]: binary_label(r) for r in rows},
                                {r["id"]: str(r["pair_id"]) for r in rows}, metric,
                                n_boot=n_boot, seed=seed)]
        chosen, unit = len(rows) // 2, "pairs"
    elif spec.design == "binary":
        stats = binary_stats(values, {r["id"]: binary_label(r) for r in rows}, metric,
                             n_boot=n_boot, seed=seed)
        chosen, unit = len(rows), "rows"
    else:
        stats = graded_stats(values, {r["id"]: float(r["label"]) for r in rows},
                             {r["id"]: binary_label(r) for r in rows}, metric, n_boot=n_boot,
                             seed=seed)
        chosen, unit = len(rows), "rows"
    anchor = ANCHORS.get((spec.name, label_metric))
    scored = [v for v in values.values() if v is not None]
    common = {"set": spec.name, "label_metric": label_metric, "metric": metric,
              "unit": unit, "chosen": chosen, "rows": len(rows),
              "rows_unscored": sum(kinds.values()), "unscored_reasons": dict(kinds),
              "distinct_values": len(set(round(v, 6) for v in scored)),
              "anchor": anchor, "anchor_source": ANCHOR_SOURCE if anchor else None}
    return [{**common, **s} for s in stats]


def measure_task(spec: SetSpec, label_metric: str, metric: str,
                 rows: Sequence[Mapping[str, Any]], scores: Mapping[str, Mapping[str, Any]],
                 *, n_boot: int, seed: int) -> list[dict[str, Any]]:
    """The statistics of one (set, labelled metric, localeval metric) from localeval Scores."""
    sc = {r["id"]: scores[r["id"]][metric] for r in rows}
    return measure_values(spec, label_metric, metric, rows,
                          {i: s.value for i, s in sc.items()},
                          {i: s.reason for i, s in sc.items()}, n_boot=n_boot, seed=seed)
