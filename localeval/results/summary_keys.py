"""``summary.json`` keys that were renamed, mapped to today's names in one place.

A summary is read long after it was written (``localeval report DIR`` on an old
run, users' scripts), so a reader must understand the names older versions
wrote; writers write only today's names. ``read_run`` passes every summary it
reads through ``current_summary``.

Renamed keys:

- ``judge_check`` (the judge check's record): older runs wrote it as
  ``judge_health.self_test`` when the process loaded a judge, else as a
  top-level ``judge_self_test``.

Values that were not recorded:

- ``signature.reasons`` (the reason mode): runs before it wrote full reasons,
  so a signature without it is given ``"full"``.

Reshaped values:

- the intervals of the ``corrected`` section (``run --labels``): older runs
  wrote ``{"mean", "low", "high", "se", "n", "student_t_df", "interval"}``;
  today's is ``stats.Interval``'s one shape (``value``, ``low``, ``high``,
  ``level``, ``n``, ``method``, ...), read from either by ``stats.read_interval``.
"""

from __future__ import annotations

from typing import Any, Mapping

from localeval.results.sections import CORRECTED
from localeval.stats import read_interval

__all__ = ["current_summary", "current_interval"]

_INTERVALS = ("judge_only", "labels_only", "corrected", "judge_bias")


def current_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``summary`` with every old key under today's name (today's name wins)."""
    out = dict(summary)
    old = out.pop("judge_self_test", None)
    health = out.get("judge_health")
    if isinstance(health, Mapping) and "self_test" in health:
        health = dict(health)
        old = health.pop("self_test")
        out["judge_health"] = health
    if old is not None:
        out.setdefault("judge_check", old)
    sig = out.get("signature")
    if isinstance(sig, Mapping) and "reasons" not in sig:
        out["signature"] = {**sig, "reasons": "full"}
    sec = out.get(CORRECTED)
    if isinstance(sec, Mapping) and isinstance(sec.get("metrics"), Mapping):
        metrics = {}
        for key, m in sec["metrics"].items():
            if isinstance(m, Mapping):
                m = {**m, **{k: current_interval(m[k]) for k in _INTERVALS
                             if isinstance(m.get(k), Mapping)}}
            metrics[key] = m
        out[CORRECTED] = {**sec, "metrics": metrics}
    return out


def current_interval(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An interval entry in today's shape; keys it does not know (lambda, a cut) are kept."""
    old = {"mean", "diff", "ci95", "interval", "ci_method", "student_t_df"}
    rest = {k: v for k, v in entry.items() if k not in old}
    return {**rest, **read_interval(entry).to_dict()}
