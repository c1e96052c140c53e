"""Was each version scored by a judge that passed its judge check? Said beside every judged verdict.

A localeval run records its judge check (``judge_check``: the judge's result
on known-answer probe pairs) and its judge health in summary.json; the reader
keeps both, read once by the run's record, in ``ResultSet.fitness``
(``results.JudgeFitness``). A difference of judged scores is
only as good as the judges behind them: when either side's judge failed its
check (verdict doubtful or unfit), or its check could not run, each judged
metric's verdict carries a plain caveat ("the judge failed its check on
base: this difference is not evidence"), on the terminal, in diff.md,
diff.html and diff.json. Metrics that use no judge (text, retrieval and
embedding metrics: the metric registry says which) never carry one.

``--fail-if-unfit-judge`` (``unfit_judge_failure``) fails the diff as it
fails a run (``report.judge_fit_failure``): only a "fit" verdict passes, on
both sides, when a judged metric is compared; a side that records no judge
check (judge check off, an export from another tool) shows nothing and fails
it too.

The other analyses of finished runs say the same with their own words:
``compare`` (``agreement_caveat``: agreeing with a judge that did not pass its
check is not evidence of quality), ``validate`` (``validation_caveat``: the
judge also failed its check on known-answer pairs) and ``estimate``
(``estimate_note``: the labels correct the judge's bias, so the corrected mean
stays valid, but the judge-only mean is not evidence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from localeval.results import FAILED, JudgeFitness

__all__ = ["SideFitness", "side_fitness", "metric_models", "judge_caveat",
           "unfit_judge_failure", "fitness_notes", "FAILED", "failure_text",
           "agreement_caveat", "validation_caveat", "estimate_note", "side_notes"]


@dataclass(frozen=True)
class SideFitness:
    """One side's judge fitness (``results.JudgeFitness``, the one reading of a run's judge
    check and health) under the name the analysis gives that side."""

    side: str
    fitness: JudgeFitness = field(default_factory=JudgeFitness)

    @property
    def verdict(self) -> str | None:
        """The judge check's verdict ("fit", "doubtful", "unfit", "error", "skipped",
        "unchecked"), None when the run records no judge check."""
        return self.fitness.verdict

    @property
    def line(self) -> str:
        """The judge check's own line ("judge check: UNFIT: ..."), "" when none."""
        return self.fitness.line

    @property
    def warnings(self) -> tuple[str, ...]:
        """The run's judge health warnings."""
        return self.fitness.warnings

    @property
    def failed(self) -> bool:
        """The judge failed its check: its scores are not evidence."""
        return self.fitness.failed

    @property
    def could_not_run(self) -> bool:
        return self.fitness.could_not_run

    def to_dict(self) -> dict[str, Any]:
        return self.fitness.to_dict()


def side_fitness(side: str, fitness: JudgeFitness) -> SideFitness:
    """One side's :class:`SideFitness`: its set's ``ResultSet.fitness`` under the side's name."""
    return SideFitness(side, fitness)


def metric_models(metric: str) -> tuple[bool, bool]:
    """(uses a judge, uses an embedder) for a metric key, from the metric registry.

    A key the registry cannot build (a metrics-file criterion, another tool's
    metric) is taken to use both: its caveats and set-up notes are kept.
    """
    from localeval.errors import LocalevalError
    from localeval.metrics import parse_metrics, registry

    cls = registry().get(metric.split("@")[0].split(":")[0])
    if cls is None:
        return True, True
    try:
        m: Any = parse_metrics([metric])[0]  # with its parameters (weights=1,0: no embedder)
    except (LocalevalError, ValueError, TypeError):
        m = cls
    return bool(getattr(m, "uses_judge", False)), bool(getattr(m, "uses_embedder", False))


def _sides(names: Sequence[str]) -> str:
    return " and ".join(names)


def failure_text(sides: Sequence[SideFitness]) -> str:
    """Which sides' judges failed their check or could not run it ("" when none)."""
    failed = [f"{s.side} ({s.verdict})" for s in sides if s.failed]
    broken = [s.side for s in sides if s.could_not_run]
    parts = []
    if failed:
        parts.append(f"the judge failed its judge check on {_sides(failed)}")
    if broken:
        parts.append(f"the judge check could not run on {_sides(broken)}")
    return "; ".join(parts)


def judge_caveat(base: SideFitness, new: SideFitness) -> str:
    """The caveat of a judged metric's verdict ("" when both judges passed or were not checked)."""
    text = failure_text((base, new))
    return text + ": this difference is not evidence" if text else ""


def agreement_caveat(a: SideFitness, b: SideFitness) -> str:
    """``compare``'s caveat beside a judged metric's agreement ("" when neither judge failed).

    Two judges agreeing says something only when the one agreed with is itself
    good: agreeing with a judge that failed its check shows neither is.
    """
    text = failure_text((a, b))
    return (text + ": agreement with a judge that did not pass its check is not evidence "
                   "of quality") if text else ""


def validation_caveat(s: SideFitness) -> str:
    """``validate``'s caveat beside a judged metric when the run's judge failed its check."""
    if s.failed:
        return (f"the judge also failed its judge check on known-answer pairs ({s.verdict}): "
                "do not take its scores as evidence of quality unless it agrees well with "
                "your labels here")
    if s.could_not_run:
        return ("the judge check could not run on this run: only these labels show whether "
                "the judge can do the task")
    return ""


def estimate_note(s: SideFitness) -> str:
    """``estimate``'s note on a run whose judge failed its check (or could not run it): the
    labels correct the judge's bias, so the corrected means stay valid; the judge-only
    means are not evidence. "" when the judge passed or the run records no check."""
    if not (s.failed or s.could_not_run):
        return ""
    what = (f"the judge failed its judge check ({s.verdict})" if s.failed
            else "the judge check could not run")
    return (f"{s.line or 'judge check: ' + str(s.verdict)}. Because {what}, its judge-only "
            "means are not evidence of quality; the labels correct the judge's bias, so the "
            "corrected means and their intervals stay valid (a judge that tracks the labels "
            "poorly is only worth fewer labels)")


def _restates_check(warning: str) -> bool:
    """A health warning that only repeats the judge check's verdict (``report.judge_health``
    adds one for a failed or broken check), which the check's own line already says."""
    return warning.startswith(("judge check:", "the judge check could not run"))


def side_notes(sides: Sequence[SideFitness]) -> list[str]:
    """Each side's judge check line (or that none is recorded) and its other health
    warnings: each side's check is said once."""
    out = []
    for s in sides:
        out.append(f"{s.side}: {s.line}" if s.line else
                   f"{s.side}: no judge check recorded (nothing shows its judge can do the task)")
        out += [f"{s.side}: judge health: {w}" for w in s.warnings
                if not (s.line and _restates_check(w))]
    return out


def fitness_notes(base: SideFitness, new: SideFitness, judged: Sequence[str]) -> list[str]:
    """Each side's judge check line and health warnings, when a judged metric is compared."""
    if not judged:
        return []
    return side_notes((base, new))


def unfit_judge_failure(base: SideFitness, new: SideFitness, judged: Sequence[str]
                        ) -> str | None:
    """Why ``--fail-if-unfit-judge`` fails this diff (one line), or None.

    The run's rule on each side (``report.judge_fit_failure``): only "fit"
    passes; it applies only when a judged metric is compared.
    """
    if not judged:
        return None
    from localeval.report import judge_fit_failure

    why = []
    for s in (base, new):
        if s.verdict is None:
            why.append(f"{s.side} records no judge check: nothing shows its judge can do the "
                       "task; --fail-if-unfit-judge needs a judge that passed the judge check")
            continue
        # the run's own gate, asked of the check as the record read it
        failure = judge_fit_failure({"judge_check": {"verdict": s.verdict, "line": s.line}})
        if failure:
            why.append(f"{s.side}: {failure}")
    if not why:
        return None
    return "; ".join(why) + f" (judged metrics compared: {', '.join(judged)})"
