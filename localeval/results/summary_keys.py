"""``summary.json`` keys that were renamed, mapped to today's names in one place.

A summary is read long after it was written (``localeval report DIR`` on an old
run, users' scripts), so a reader must understand the names older versions
wrote; writers write only today's names. ``read_run`` passes every summary it
reads through ``current_summary``.

Renamed keys:

- ``judge_check`` (the judge check's record): older runs wrote it as
  ``judge_health.self_test`` when the process loaded a judge, else as a
  top-level ``judge_self_test``.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["current_summary"]


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
    return out
