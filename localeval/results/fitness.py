"""Was a run's judge fit to judge? Read once from the run's record, shown by every view.

A run records its judge check (``judge_check``: the judge's result on
known-answer pairs) and its judge health (``judge_health``) in summary.json.
A judged number from a judge that failed its check is not evidence, and
every view of a run (``runs``, ``history``, ``report``, ``diff``, ``rank``,
``estimate``, the Python result and the ragas drop-in's) must say so where
it shows the number. They all read it here: :class:`JudgeFitness` is the
verdict and its words, :func:`judged_keys` says which metrics a judge scored
(text, retrieval, embedding and tool-call metrics never carry a caveat).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["JudgeFitness", "FAILED", "judged_keys", "metric_head"]

#: Judge check verdicts of a judge that failed its check.
FAILED = ("unfit", "doubtful")
#: Judge check verdicts that say nothing against the judge.
_PASSED = (None, "fit", "unchecked", "skipped")


@dataclass(frozen=True)
class JudgeFitness:
    """A run's judge fitness, as its run recorded it."""

    #: the judge check's verdict ("fit", "doubtful", "unfit", "error", "skipped",
    #: "unchecked"), None when the run records no judge check
    verdict: str | None = None
    #: the judge check's own line ("judge check: UNFIT: ..."), "" when none
    line: str = ""
    #: the run's judge health warnings
    warnings: tuple[str, ...] = ()

    @classmethod
    def of_sections(cls, judge_check: Any, judge_health: Any) -> JudgeFitness:
        """From summary.json's ``judge_check`` and ``judge_health`` as found (either may be
        absent or, in a damaged file, anything)."""
        check = judge_check if isinstance(judge_check, Mapping) else {}
        health = judge_health if isinstance(judge_health, Mapping) else {}
        verdict = check.get("verdict")
        verdict = str(verdict) if verdict is not None else None
        line = str(check.get("line") or (f"judge check: {verdict}" if verdict else ""))
        raw = health.get("warnings")
        warnings = tuple(str(w) for w in raw) if isinstance(raw, (list, tuple)) else ()
        return cls(verdict, line, warnings)

    @property
    def failed(self) -> bool:
        """The judge failed its check: its scores are not evidence."""
        return self.verdict in FAILED

    @property
    def could_not_run(self) -> bool:
        return self.verdict == "error"

    @property
    def marker(self) -> str | None:
        """The words beside a judged number ("judge unfit", "judge doubtful", "judge check
        error"), None when the judge passed its check or took none."""
        if self.verdict in _PASSED:
            return None
        return "judge check error" if self.verdict == "error" else f"judge {self.verdict}"

    @property
    def caveat(self) -> str:
        """The sentence for a view that shows judged numbers ("" when nothing to say)."""
        if self.marker is None:
            return ""
        return (f"{self.line or self.marker}: the judge did not pass its judge check, so its "
                "judged numbers are not evidence")

    def to_dict(self) -> dict[str, Any]:
        """As ``--json`` outputs print it."""
        return {"judge_check": self.verdict, "line": self.line, "failed": self.failed,
                "marker": self.marker, "health_warnings": list(self.warnings)}


def metric_head(key: str) -> str:
    """The metric name in a key: ``answer_correctness:weights=...`` -> ``answer_correctness``."""
    return key.split(":", 1)[0].split("@", 1)[0].strip()


def judged_keys(metrics: Mapping[str, Any], *, had_judge: bool) -> set[str]:
    """The keys of a summary's ``metrics`` whose scores come from a judge.

    An entry may say ``"judged": true/false`` itself; otherwise the key is looked up
    in the metric registry, and a key the registry does not know (a metrics-file
    criterion) is judged when the run had a judge (``had_judge``).
    """
    if not metrics:
        return set()
    from localeval.metrics import registry

    known = registry()
    out = set()
    for key, entry in metrics.items():
        flag = entry.get("judged") if isinstance(entry, Mapping) else getattr(
            entry, "judged", None)
        if isinstance(flag, bool):
            judged = flag
        else:
            cls = known.get(metric_head(str(key)))
            judged = bool(cls.uses_judge) if cls is not None else had_judge
        if judged:
            out.add(key)
    return out
