"""The CI gate of a version diff: fail when a metric got worse beyond a margin.

``--fail-if-worse faithfulness=0.02`` fails (exit 1) when the 95% interval of
the difference lies entirely on the worse side of -0.02: the new version is
worse by more than the margin with 95% confidence. An interval that merely
includes a loss does not fail it (no difference shown is not a regression
shown). A metric the diff could not estimate (unscored everywhere on one
side, no paired sample, fewer than 6 pairs: no 95% interval exists) fails,
since nothing shows it is not worse. The interval is the diff's own: the
randomization interval below ``estimate.SMALL_SAMPLE`` pairs, the bootstrap
above. Margins are finite numbers >= 0 (``metrics.ValueRule``): an infinite or
NaN margin could never fail, so it is refused (exit 2).

The difference is taken over the pairs scored in both versions, so a pair
unscored on either side could hide the worst answer: as the run's gates do
with unscored samples, the gate fails when a gated metric has unscored pairs,
unless ``--allow-unscored`` allows that many (the run's option, parsed by
``report.parse_allow_unscored``: ``2``, ``10%``, ``faithfulness=2``, ``all``).
``--fail-if-unfit-judge`` (``fitness.unfit_judge_failure``) fails when either
side's judge did not pass its judge check and a judged metric is compared.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from localeval.errors import UsageError
from localeval.versions.diff import MetricDiff, VersionDiff

__all__ = ["parse_worse_gates", "worse_failures", "check_margins", "margin_rule", "ALL",
           "unscored_allowance", "unfit_judge_failures"]

#: ``--fail-if-worse all=0.02``: the same margin for every compared metric.
ALL = "all"


def margin_rule(option: str = "--fail-if-worse") -> Any:
    """The margins' rule (``metrics.ValueRule``): a finite number >= 0, 0 when not given."""
    from localeval.metrics import ValueRule

    return ValueRule(option, what="margin", form="METRIC or METRIC=MARGIN with a margin >= 0",
                     example="faithfulness=0.02", minimum=0.0, bare="metric", default=0.0)


def parse_worse_gates(specs: Sequence[str] | None) -> dict[str, float]:
    """``["faithfulness=0.02", "rougeL"]`` -> {metric: margin} (margin 0 when not given).

    Each item may list several, comma-separated; a metric key keeps its
    parameters (``answer_correctness:weights=0.5,0.5=0.02``, ``rougeL:threshold=0.5``).
    """
    from localeval.metrics import parse_metric_values

    pairs = parse_metric_values(specs, margin_rule(), commas=True, names=(ALL,))
    return {name: margin for name, margin in pairs if name is not None}


def check_margins(margins: Mapping[str, Any], option: str = "--fail-if-worse"
                  ) -> dict[str, float]:
    """``margins`` from Python checked as the command line checks them: {metric: float}."""
    from localeval.metrics import check_metric_value

    if not isinstance(margins, Mapping):
        raise UsageError(f"{option}: margins must be a mapping {{metric: allowed loss}}, got "
                         f"{type(margins).__name__}")
    rule = margin_rule(option)
    out = {}
    for name, value in margins.items():
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"{option}: a metric name must be a non-empty text, got {name!r}")
        if isinstance(value, str):  # a number written as text: say so, do not guess
            raise rule.refuse(f"{name}={value!r}", f"the margin is the text {value!r}, not a "
                                                    "number: pass a number such as 0.02")
        out[name] = check_metric_value(value, rule, f"{name}={value!r}")
    return out


def _failure(m: MetricDiff, margin: float, allowance: Any) -> str | None:
    e = m.judge
    c = m.counts()
    gaps = f"; {m.unscored_text()}" if c["unscored"] else ""
    judge = f"; {m.judge_caveat}" if m.judge_caveat else ""
    if e.ci is None or e.diff is None:
        return f"{m.metric}: cannot show it is not worse: {e.reason}{gaps}{judge}"
    lo, hi = e.ci
    worse_by = (-hi, -lo) if not m.lower_is_better else (lo, hi)  # loss interval, > 0 is worse
    if worse_by[0] > margin:
        return (f"{m.metric}: new is worse by {-e.diff if not m.lower_is_better else e.diff:.3f} "
                f"[{worse_by[0]:.3f}, {worse_by[1]:.3f}], beyond the allowed margin "
                f"{margin:g}" + (f" ({e.caveat})" if e.caveat else "") + gaps + judge)
    if c["unscored"] and not allowance.allows(c["unscored"], c["pairs"]):
        return (f"{m.metric}: not shown worse beyond the margin {margin:g} on the {e.n} pairs "
                f"scored in both, but {m.unscored_text()}; allowed: {allowance}{judge}")
    return None


def unscored_allowance(value: Any, metrics: Sequence[str], option: str = "--allow-unscored"
                       ) -> Any:
    """The unscored pairs each gated metric tolerates (``report.UnscoredPolicy``).

    ``value``: ``--allow-unscored``'s list of texts (``["2", "faithfulness=10%"]``) or the
    Python form of ``report.unscored_policy`` (a count, a share, ``"all"``, ``True``, a
    mapping metric -> one of these). A metric it names must be one the diff compared.
    """
    from localeval.report import parse_allow_unscored, unscored_policy

    if isinstance(value, (list, tuple)):
        policy = parse_allow_unscored(value)
    else:
        policy = unscored_policy(value)
    unknown = [k for k in policy.per_metric if k not in metrics]
    if unknown:
        raise UsageError(f"{option} names {', '.join(map(repr, unknown))}, not compared in "
                         f"this diff (compared: {', '.join(metrics) or 'none'})")
    return policy


def unfit_judge_failures(diff: VersionDiff) -> list[str]:
    """``--fail-if-unfit-judge``: one line when either side's judge did not pass its judge
    check and a judged metric is compared (empty: passed)."""
    from localeval.resultsets import unfit_judge_failure

    line = unfit_judge_failure(*diff.fitness, diff.judged)
    return [line] if line else []


def worse_failures(diff: VersionDiff, margins: Mapping[str, float],
                   option: str = "--fail-if-worse", allow_unscored: Any = None) -> list[str]:
    """One line per metric of ``margins`` that got worse beyond its margin, cannot be shown
    not worse, or has more pairs unscored on either side than ``allow_unscored`` allows
    (see :func:`unscored_allowance`; default none). Empty: passed."""
    by_name = {m.metric: m for m in diff.metrics}
    policy = unscored_allowance(allow_unscored, list(by_name),
                                "allow_unscored" if option != "--fail-if-worse"
                                else "--allow-unscored")
    todo = check_margins(margins, option)
    if ALL in todo:
        every = todo.pop(ALL)
        todo = {**{k: every for k in by_name}, **todo}
    unknown = [k for k in todo if k not in by_name]
    if unknown:
        raise UsageError(f"{option} names {', '.join(map(repr, unknown))}, not compared "
                         f"in this diff (compared: {', '.join(by_name) or 'none'})")
    return [f for k, v in todo.items() if (f := _failure(by_name[k], v, policy.of(k)))]
