"""Quality gates: fail a CI job when a metric's mean falls below a threshold.

Seed 003's practice, "faithfulness >= 0.85 before merging", as code. Used by
``localeval run --fail-under`` (exit 1) and by ``localeval.testing.assert_scores``
inside a user's own pytest suite.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from localeval.errors import UsageError

__all__ = ["parse_gates", "check_gates"]


def parse_gates(items: Iterable[str]) -> dict[str, float]:
    """``["faithfulness=0.85"]`` -> ``{"faithfulness": 0.85}``; the last ``=`` splits."""
    gates: dict[str, float] = {}
    for it in items:
        key, sep, val = it.rpartition("=")
        try:
            if not sep or not key.strip():
                raise ValueError
            value = float(val)
            if not math.isfinite(value):
                raise ValueError  # nan never fails a comparison, so it would never gate
            gates[key.strip()] = value
        except ValueError:
            raise UsageError(f"bad --fail-under {it!r}: expected METRIC=VALUE with a finite "
                             "VALUE, e.g. faithfulness=0.85") from None
    return gates


def check_gates(summary: Mapping[str, Any], gates: Mapping[str, float]) -> list[str]:
    """One message per failed gate (empty when all pass).

    For metrics where lower is better (noise_sensitivity) the gate is a
    ceiling. An unscored mean fails: a gate must not pass on no evidence.
    """
    failed = []
    for key, threshold in gates.items():
        if not math.isfinite(threshold):
            raise UsageError(f"gate {key}={threshold} is not a finite number: it could never fail")
        entry = summary["metrics"].get(key)
        if entry is None:
            raise UsageError(f"gate names {key!r}, which this run did not compute; computed: "
                             + ", ".join(summary["metrics"]))
        mean = entry["mean"]
        lower = entry.get("lower_is_better", False)
        if mean is None or (mean > threshold if lower else mean < threshold):
            shown = "unscored" if mean is None else f"{mean:.4f}"
            failed.append(f"{key} {shown} is {'above' if lower else 'below'} {threshold}")
    return failed
