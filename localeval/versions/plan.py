"""``localeval diff --plan DELTA BASE NEW``: how many questions a comparison needs.

Two runs on a small pilot set (the same questions, two versions) say how the
per-question scores move: for a 0/1 metric the share of questions whose score
changed (the discordance rate), for a graded one the spread of the per-question
changes. From those, and the change worth detecting (DELTA, in the metric's own
units), the plan says how many questions would show it with 80% power at the
diff's 5% (two-sided) level: ``stats.binary_questions`` (the exact McNemar
test's power) and ``stats.graded_questions`` (the paired t-test's normal
approximation). A pilot is a guess of the spread: with few pilot questions the
plan is rough, and the output says how many it rests on.
"""

from __future__ import annotations

import math
from typing import Any

from localeval.errors import UsageError
from localeval.versions.diff import VersionDiff
from localeval.versions.verdicts import ALPHA

__all__ = ["plan_table", "plan_lines", "check_delta"]


def check_delta(value: Any, option: str = "--plan") -> float:
    """DELTA: a finite number above 0 (a change of 0 needs infinitely many questions)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{option}: DELTA must be a number above 0 (the change worth "
                         f"detecting, in the metric's units, e.g. 0.05), got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise UsageError(f"{option}: DELTA must be a finite number above 0, got {value!r}")
    return x


def _one(m: Any, delta: float) -> dict[str, Any]:
    from localeval.stats import POWER, binary_questions, graded_questions

    e = m.judge
    row: dict[str, Any] = {"metric": m.metric, "pilot_pairs": e.n, "questions": None,
                           "note": ""}
    if e.n == 0 or e.diff is None:
        return {**row, "kind": "none", "note": "no pair scored in both runs"}
    if e.binary:
        q = (e.changed or 0) / e.n
        row.update(kind="0/1", discordance=q)
        if delta > 1:
            return {**row, "note": "a 0/1 metric cannot change by more than 1"}
        row["questions"] = binary_questions(q, delta, alpha=ALPHA, power=POWER)
        if q < delta:
            row["note"] = (f"the pilot changed {q:.1%} of its pairs, fewer than a change of "
                           f"{delta:g} needs: planned as if {delta:.1%} changed, all one way "
                           "(the fewest possible; more questions if more change)")
        return row
    sd = e.spread
    row.update(kind="graded", spread=sd)
    if sd is None or sd == 0:
        return {**row, "note": "the pilot's per-question changes have no spread (fewer than "
                               "2 pairs, or all equal): run a pilot where some scores move"}
    row["questions"] = graded_questions(sd, delta, alpha=ALPHA, power=POWER)
    return row


def plan_table(d: VersionDiff, delta: float) -> dict[str, Any]:
    """The plan of every compared metric, as diff.json's ``plan``."""
    from localeval.stats import POWER

    return {"delta": delta, "power": POWER, "level": 1 - ALPHA, "sided": "two-sided",
            "method": "0/1 metrics: exact power of the exact McNemar test at the pilot's "
                      "share of changed pairs; graded: paired t-test normal approximation "
                      "at the pilot's spread of the per-question changes",
            "metrics": [_one(m, delta) for m in d.metrics]}


def plan_lines(p: dict[str, Any]) -> list[str]:
    """One line per metric: "hit_rate@3: about 120 questions to show a change of 0.05 ..."."""
    out = [f"plan: questions that would show a change of {p['delta']:g} with "
           f"{p['power']:.0%} power (two-sided {1 - p['level']:.0%} level), from this pilot:"]
    for r in p["metrics"]:
        basis = (f"pilot: {r['pilot_pairs']} pairs, {r['discordance']:.1%} changed"
                 if r.get("kind") == "0/1" else
                 f"pilot: {r['pilot_pairs']} pairs, spread of the changes {r['spread']:.3f}"
                 if r.get("spread") else f"pilot: {r['pilot_pairs']} pairs")
        n = (f"about {r['questions']:,} questions" if r["questions"] is not None
             else "no plan")
        out.append(f"  {r['metric']}: {n} ({basis})" + (f"; {r['note']}" if r["note"] else ""))
    return out
