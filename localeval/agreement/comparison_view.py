"""What comparison.html shows, as plain data: :func:`comparison_view`.

Like the run report (``report.view`` then ``report.html``), the page is built in
two steps: this module turns a :class:`Comparison` into a small view model
(numbers formatted, matrices counted, disagreements chosen, the judges'
working as ``report.to_node`` trees) and ``pages`` renders it with the
template. Nothing here builds or escapes HTML.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localeval.agreement.comparison import Comparison, MetricAgreement
from localeval.agreement.scatter import name_slug
from localeval.agreement.statistics import STAT_LABELS, UNRELIABLE

__all__ = ["comparison_view", "MAX_DISAGREEMENTS", "FAR_APART"]

#: Disagreeing samples listed per metric (the largest differences first).
MAX_DISAGREEMENTS = 25
#: Two scores this far apart disagree even when their verdicts agree.
FAR_APART = 0.5
# A rating scale with more levels than this is shown as a pass/fail matrix.
_MAX_LEVELS = 11


def _f(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _g(v: float) -> str:
    return f"{v:.3g}"


def _anchor(label: str) -> str:
    return "m-" + name_slug(label)


def _stat_cells(m: MetricAgreement) -> list[dict[str, str]]:
    out = []
    for k in STAT_LABELS:
        s = m.stats.get(k)
        if s is None:
            out.append({"value": "—", "ci": "", "why": "not computed for this metric"})
            continue
        ci = f"[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]" if s.ci95 else ""
        if ci and s.caveat:
            ci += UNRELIABLE
        out.append({"value": _f(s.value), "ci": ci, "why": s.reason or s.caveat or ""})
    return out


def _matrix(m: MetricAgreement, threshold: float) -> dict[str, Any] | None:
    """Counts of (A, B) values: per rating level on a rating scale, else pass/fail."""
    if not m.n:
        return None
    a, b = np.asarray(m.a_values), np.asarray(m.b_values)
    if m.levels and 2 < m.levels <= _MAX_LEVELS:
        steps = m.levels - 1
        ia, ib = np.rint(a * steps).astype(int), np.rint(b * steps).astype(int)
        names = [_g(i / steps) for i in range(m.levels)]
        counts = np.zeros((m.levels, m.levels), dtype=int)
        np.add.at(counts, (ia, ib), 1)
        kind = "rating levels"
    elif m.confusion:
        names = [f"fail (< {threshold:g})", f"pass (≥ {threshold:g})"]
        counts = np.asarray(m.confusion, dtype=int)
        kind = f"verdicts at {threshold:g}"
    else:
        return None
    top = int(counts.max()) or 1
    rows = [{"name": names[i], "cells": [
        {"count": int(c), "diag": i == j, "heat": 0 if not c else 1 + int(3 * c / top)}
        for j, c in enumerate(r)]} for i, r in enumerate(counts.tolist())]
    agree = int(np.trace(counts))
    return {"kind": kind, "columns": names, "rows": rows, "agree": agree, "n": int(counts.sum())}


def _disagreements(cmp: Comparison, m: MetricAgreement) -> tuple[list[dict[str, Any]], int]:
    """Pairs whose verdicts differ at the threshold, or whose scores are FAR_APART; worst first."""
    from localeval.report import to_node

    t = cmp.threshold
    picked = [(abs(y - x), ia, ib, x, y)
              for ia, ib, x, y in zip(m.ids, m.b_ids, m.a_values, m.b_values)
              if (x >= t) != (y >= t) or abs(y - x) >= FAR_APART]
    picked.sort(key=lambda r: -r[0])
    out = []
    for _diff, ia, ib, x, y in picked[:MAX_DISAGREEMENTS]:
        row: dict[str, Any] = {"id": ia if ia == ib else f"{ia} / {ib}", "a": _g(x), "b": _g(y),
                               "diff": f"{y - x:+.2f}", "question": ""}
        for side, rs, sid, metric in (("a", cmp.a_set, ia, m.metric),
                                      ("b", cmp.b_set, ib, m.metric_b)):
            det = rs.details.get(sid, {}).get(metric) if rs is not None else None
            row[f"work_{side}"] = to_node(det) if det else None
            if rs is not None and not row["question"]:
                row["question"] = rs.questions.get(sid, "")
        out.append(row)
    return out, len(picked)


def comparison_view(cmp: Comparison) -> dict[str, Any]:
    """Everything comparison.html.j2 needs, as plain strings, numbers, lists and dicts."""
    al = cmp.alignment
    metrics = []
    for m in cmp.metrics:
        rows, total = _disagreements(cmp, m)
        metrics.append({
            "label": m.label, "anchor": _anchor(m.label), "n": m.n,
            "mean_a": _f(m.mean_a), "mean_b": _f(m.mean_b),
            "unscored": f"{m.unscored_a} / {m.unscored_b}" if m.unscored_a or m.unscored_b
            else "",
            "stats": _stat_cells(m), "matrix": _matrix(m, cmp.threshold),
            "disagree": rows, "disagree_total": total,
            "disagree_more": max(0, total - len(rows)),
            "judge_caveat": m.judge_caveat,
        })
    return {
        "a": cmp.a_name, "b": cmp.b_name, "a_source": cmp.a_source, "b_source": cmp.b_source,
        "a_judge": str(cmp.a_signature.get("judge") or ""),
        "b_judge": str(cmp.b_signature.get("judge") or ""),
        "pairs": len(al.pairs), "rule": al.rule, "threshold": f"{cmp.threshold:g}",
        "stat_names": [lab + (f" @{cmp.threshold:g}" if k in ("kappa", "agreement") else "")
                       for k, lab in STAT_LABELS.items()],
        "metrics": metrics,
        "notes": cmp.notes(), "far_apart": f"{FAR_APART:g}",
        "judged": cmp.judged, "fitness_notes": cmp.fitness_notes(),
        "judge_caveat": next((m.judge_caveat for m in cmp.metrics if m.judge_caveat), ""),
    }
