"""Corrected estimates: a judge's scores on all rows plus a few labels give a mean with a valid interval.

Modules: ``ppi`` (judge-only, labels-only and PPI++ means of a uniform draw, the
``Estimate`` they return), ``active`` (the weighted mean of an active draw),
``difference`` (the paired difference of two versions), ``draw`` (uniform and active draws of
rows to label), ``sheet`` (the labelling CSV, blind by default), ``labels`` (reading labels
back), ``uncertainty`` (the judge's per-row uncertainty), ``analysis``
(``estimate``), ``plan`` (how many labels a target precision needs),
``pages`` (the table, estimate.json and estimate.md), ``cautions`` (the
plain warnings in their notes: too few labels, a small class, a judge that does
not track the labels), ``reliability`` (the
judge's reliability table and Brier score on labelled rows) and ``in_run``
(the ``corrected`` section ``localeval run --labels`` adds to summary.json).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Draw": ".draw",
    "Estimate": ".ppi",
    "REFERENCE_METHOD": ".ppi",
    "EstimateResult": ".analysis",
    "active_mean": ".active",
    "corrected_mean": ".ppi",
    "draw_rows": ".draw",
    "check_labels": ".analysis",
    "check_spread": ".analysis",
    "calibration": ".reliability",
    "run_corrections": ".in_run",
    "estimate": ".analysis",
    "estimate_dict": ".pages",
    "interval_method": ".ppi",
    "judge_correlation": ".cautions",
    "judge_only": ".ppi",
    "labels_only": ".ppi",
    "labels_worth": ".ppi",
    "make_sheet": ".pages",
    "corrected_difference": ".difference",
    "plan_labels": ".plan",
    "plan_lines": ".plan",
    "read_labels": ".labels",
    "render_estimate": ".pages",
    "write_estimate": ".pages",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
