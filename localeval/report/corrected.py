"""The corrected estimates of a run with ``--labels``, as the reports show them.

``summary.json``'s ``corrected`` section (written by the command through
``estimate``, a higher layer; here it is plain data) holds, per labelled
metric, the judge-only, labels-only and corrected means and the judge's
calibration on the labelled rows. This module turns it into table rows (the
terminal table and summary.md put a "corrected by labels" row under each
judge-only mean), the report's view, and the reliability diagram's SVG
geometry (numbers only; ``report.html.j2`` draws it, as for the histograms).
"""

from __future__ import annotations

from typing import Any, Mapping

from localeval.report.judged import judge_unfit
from localeval.report.numbers import fmt
from localeval.report.pages import Scale, finite
from localeval.results import CORRECTED, CorrectedMetric, CorrectedSection, IntervalEntry

__all__ = ["corrected_rows", "corrected_note", "corrected_view", "reliability"]


def _ci(e: IntervalEntry) -> str:
    return f"[{fmt(e.get('low'), 3)}, {fmt(e.get('high'), 3)}]"


def _value(e: IntervalEntry) -> float | None:
    return e.get("value")


def _signed(e: IntervalEntry) -> str:
    v = _value(e)
    return "—" if v is None else f"{v:+.3f}"


def _worth(m: CorrectedMetric, unit: bool = True) -> str:
    """What the judge's scores were worth in labels, or that the judge does not track them
    (its scores do not correlate positively with the labels: they are worth nothing)."""
    if m.get("judge_tracks_labels") is False:
        return "none (the judge does not track the labels)"
    return f"~{m['judge_worth_labels']:.0f}" + (" labels" if unit else "")


def _section(summary: Mapping[str, Any]) -> CorrectedSection | None:
    """The summary's corrected section (``results.current_summary`` has brought one written
    by an earlier version to today's shape), or None."""
    sec: CorrectedSection | None = summary.get(CORRECTED) or None
    return sec


def _metrics(summary: Mapping[str, Any]) -> Mapping[str, CorrectedMetric]:
    sec = _section(summary)
    return sec["metrics"] if sec else {}


def corrected_rows(summary: Mapping[str, Any], key: str) -> list[tuple[str, str, str, str, str]]:
    """The row under metric ``key``: (name, corrected mean, its CI, labelled / rows, note)."""
    m = _metrics(summary).get(key)
    if not m:
        return []
    c, lab = m["corrected"], m["labels_only"]
    note = (f"labels only {fmt(_value(lab), 3)} {_ci(lab)}; judge bias "
            f"{_signed(m['judge_bias'])}; judge worth {_worth(m)}")
    return [(f"{key} (corrected by labels)", fmt(_value(c)), _ci(c),
             f"{m['labelled']} / {m['rows']}", note)]


def unfit_judge_note(summary: Mapping[str, Any]) -> str:
    """With labels, on a run whose judge failed its judge check: the corrected means stay
    valid, the judge-only means are not evidence ("" otherwise, or when the section's notes
    already say so: ``localeval estimate`` writes that note itself)."""
    sec = _section(summary)
    marker = judge_unfit(summary)
    if not sec or marker is None or any("judge check" in n for n in sec.get("notes", [])):
        return ""
    what = ("the judge check could not run" if marker == "judge check error"
            else f"the judge failed its judge check ({marker})")
    return (f"{what}: its judge-only means are not evidence of quality; the labels correct "
            "the judge's bias, so the corrected means and their intervals stay valid")


def corrected_note(summary: Mapping[str, Any]) -> str:
    """One line under the table: where the labels came from, and what the judge-only mean is."""
    sec = _section(summary)
    if not sec:
        return ""
    unfit = unfit_judge_note(summary)
    notes = "".join(f" Note: {n}." for n in ([unfit] if unfit else []) + list(
        sec.get("notes", [])))
    return (f"Corrected by labels: {sec['labels']} (draw: {sec['draw']}), 95% intervals: "
            f"{sec.get('interval') or 'PPI++'}; "
            f"{sec['judge_only_warning']}.{notes}")


def reliability(cal: Mapping[str, Any], *, size: int = 220, pad: int = 30) -> dict[str, Any]:
    """SVG geometry of a reliability diagram: the diagonal, and one dot per non-empty bin at
    (mean judge score, mean label), its area growing with the bin's count."""
    # the one scale of every page's SVG: a bin whose mean is NaN, infinite or missing is
    # left out, never drawn at a "nan" coordinate
    sx, sy = Scale(0.0, 1.0, pad, size - pad), Scale(0.0, 1.0, size - pad, pad)

    def x(v: float) -> float:
        return round(sx(v) or 0.0, 1)

    def y(v: float) -> float:
        return round(sy(v) or 0.0, 1)

    placed = [b for b in cal["bins"] if (finite(b.get("n")) or 0) > 0
              and sx(b.get("mean_score")) is not None and sy(b.get("mean_label")) is not None]
    most = max((b["n"] for b in placed), default=0) or 1
    dots = [{"cx": x(b["mean_score"]), "cy": y(b["mean_label"]),
             "r": round(3 + 7 * (b["n"] / most) ** 0.5, 1),
             "label": (f"judge {b['low']:.1f}-{b['high']:.1f}: {b['n']} rows, mean judge "
                       f"{b['mean_score']:.2f}, mean label {b['mean_label']:.2f}")}
            for b in placed]
    ticks = [{"v": f"{t:g}", "x": x(t), "y": y(t)} for t in (0, 0.5, 1)]
    return {"size": size, "lo": x(0), "hi": x(1), "base": y(0), "top": y(1), "dots": dots,
            "ticks": ticks, "path": " ".join(f"{d['cx']},{d['cy']}" for d in dots)}


def corrected_view(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """What report.html's "Corrected by labels" section shows (None without labels)."""
    sec = _section(summary)
    if not sec:
        return None
    rows = []
    for key, m in _metrics(summary).items():
        cal = m.get("calibration") or {}
        rows.append({
            "key": key, "labelled": m["labelled"], "rows": m["rows"],
            "judge": fmt(_value(m["judge_only"]), 3),
            "labels": f"{fmt(_value(m['labels_only']), 3)} {_ci(m['labels_only'])}",
            "corrected": f"{fmt(_value(m['corrected']), 3)} {_ci(m['corrected'])}",
            "bias": f"{_signed(m['judge_bias'])} {_ci(m['judge_bias'])}",
            "worth": _worth(m, unit=False),
            "brier": None if cal.get("brier") is None else f"{cal['brier']:.3f}",
            "plot": reliability(cal) if cal.get("bins") else None})
    unfit = unfit_judge_note(summary)
    return {"labels": str(sec["labels"]), "draw": str(sec["draw"]),
            "warning": str(sec["judge_only_warning"]) + (f"; {unfit}" if unfit else ""),
            "metrics": rows}
