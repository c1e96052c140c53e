"""Typed sections of ``summary.json`` that a higher layer writes and ``report`` reads.

``localeval run --labels`` adds a ``corrected`` section, computed by
``estimate`` (a layer above ``report``). Rather than each side spelling the
keys, both import these types: the writer builds a :class:`CorrectedSection`
(mypy checks its keys) and the reader reads the same names. Every interval in
it is a ``stats.Interval`` written in its one JSON shape (:class:`IntervalEntry`).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = ["CORRECTED", "IntervalEntry", "MetricEstimates", "CorrectedMetric", "CorrectedSection"]

#: The summary key of the corrected estimates.
CORRECTED = "corrected"


#: ``stats.Interval.to_dict()``: value, low, high, level, n, method, then the optional se,
#: df, p, reason, and what an estimate adds (PPI++'s ``lambda``, a cut to the range the
#: truth lies in). The functional form, since ``lambda`` is a Python keyword.
IntervalEntry = TypedDict("IntervalEntry", {
    "value": float | None, "low": float | None, "high": float | None, "level": float,
    "n": int, "method": str, "se": float, "df": float, "p": float, "reason": str,
    "lambda": float, "cut_to": list[float], "value_before_cut": float}, total=False)


class MetricEstimates(TypedDict):
    """One labelled metric as ``localeval estimate`` writes it (estimate.json's ``metrics``):
    the three means, the judge's bias and what its scores were worth in labels."""

    metric: str
    rows: int
    labelled: int
    judge_only: IntervalEntry
    labels_only: IntervalEntry
    corrected: IntervalEntry
    judge_bias: IntervalEntry
    judge_worth_labels: float
    unscored_rows_left_out: int
    #: the judge's scores correlate positively with the labels on the labelled rows (when
    #: not, ``judge_worth_labels`` is 0 and the outputs say the judge does not track them)
    judge_tracks_labels: NotRequired[bool]
    judge_label_correlation: NotRequired[float | None]


class CorrectedMetric(MetricEstimates):
    """The same in a run's summary, with the judge's calibration on the labelled rows."""

    calibration: dict[str, Any]


class CorrectedSection(TypedDict):
    """``summary.json``'s ``corrected``: where the labels came from and every metric's
    estimates (``metrics``: metric key -> :class:`CorrectedMetric`)."""

    labels: str
    draw: str
    level: float
    interval: str
    judge_only_warning: str
    metrics: dict[str, CorrectedMetric]
    #: plain warnings (too few labels for a reliable interval, a census); absent in runs
    #: written before they were recorded
    notes: NotRequired[list[str]]
