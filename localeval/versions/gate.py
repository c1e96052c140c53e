"""The CI gates of a version diff: fail when a metric got worse, or require it shown not worse.

``--fail-if-worse faithfulness=0.02`` fails (exit 1) when the new version is
shown worse by more than the margin: a **one-sided** test at the 5% it states
(``gate_tests``: the exact McNemar test for paired 0/1 scores, the sign-flip
test below ``estimate.SMALL_SAMPLE`` pairs, the bootstrap test above). Several
metrics gated at once are a family: any one failing fails the build, so the
p-values are Holm-adjusted over the gated metrics (one gate: no correction),
and the line says which. A metric with no pair scored in both fails: nothing
shows it is not worse.

A gate that **could not have failed** at this size (even with every changed
pair worse its p would not reach 5%, after Holm where there is a family) says
so in its line and in diff.json (``gates[].could_fail``); ``--fail-if-underpowered``
turns that into a failure.

``--require-not-worse faithfulness=0.02`` is the non-inferiority gate: it
passes only when the one-sided test shows the loss is smaller than the margin
(pass means evidence of no regression). No correction: the build passes only
when every such metric is shown, so the chance of passing a metric truly worse
by its margin stays at most 5% (an intersection-union test, Berger 1982).

Margins are finite numbers >= 0 (``metrics.ValueRule``): an infinite or NaN
margin could never fail, so it is refused (exit 2). The difference is taken
over the pairs scored in both versions, so a pair unscored on either side could
hide the worst answer: the gate fails when a gated metric has unscored pairs,
unless ``--allow-unscored`` allows that many (the run's option, parsed by
``report.parse_allow_unscored``: ``2``, ``10%``, ``faithfulness=2``, ``all``).
``--fail-if-unfit-judge`` (``fitness.unfit_judge_failure``) fails when either
side's judge did not pass its judge check and a judged metric is compared.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from localeval.errors import UsageError
from localeval.versions.diff import VersionDiff
from localeval.versions.gate_lines import ALPHA, GateResult, gate_result

__all__ = ["parse_worse_gates", "worse_failures", "check_margins", "margin_rule", "ALL",
           "unscored_allowance", "unfit_judge_failures", "gate_results", "GateResult",
           "not_worse_failures", "ALPHA"]

#: ``--fail-if-worse all=0.02``: the same margin for every compared metric.
ALL = "all"


def margin_rule(option: str = "--fail-if-worse") -> Any:
    """The margins' rule (``metrics.ValueRule``): a finite number >= 0, 0 when not given."""
    from localeval.metrics import ValueRule

    return ValueRule(option, what="margin", form="METRIC or METRIC=MARGIN with a margin >= 0",
                     example="faithfulness=0.02", minimum=0.0, bare="metric", default=0.0)


def parse_worse_gates(specs: Sequence[str] | None, option: str = "--fail-if-worse"
                      ) -> dict[str, float]:
    """``["faithfulness=0.02", "rougeL"]`` -> {metric: margin} (margin 0 when not given).

    Each item may list several, comma-separated; a metric key keeps its
    parameters (``answer_correctness:weights=0.5,0.5=0.02``, ``rougeL:threshold=0.5``).
    """
    from localeval.metrics import parse_metric_values

    pairs = parse_metric_values(specs, margin_rule(option), commas=True, names=(ALL,))
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


def gate_results(diff: VersionDiff, margins: Mapping[str, float], *, kind: str = "worse",
                 option: str = "--fail-if-worse", allow_unscored: Any = None,
                 n_resamples: int | None = None, seed: int | None = None) -> list[GateResult]:
    """Every gate of ``margins`` (``kind`` "worse": ``--fail-if-worse``; "not_worse":
    ``--require-not-worse``), tested one-sided, Holm-adjusted over the family for
    "worse", with whether each failed and whether it could have failed at this size.

    ``allow_unscored``: see :func:`unscored_allowance` (default none). The draws of
    the randomization and bootstrap tests are the diff's own (its seed and count).
    """
    from localeval.versions.estimate import holm

    by_name = {m.metric: m for m in diff.metrics}
    policy = unscored_allowance(allow_unscored, list(by_name),
                                "allow_unscored" if option.startswith("assert")
                                else "--allow-unscored")
    todo = check_margins(margins, option)
    if ALL in todo:
        every = todo.pop(ALL)
        todo = {**{k: every for k in by_name}, **todo}
    unknown = [k for k in todo if k not in by_name]
    if unknown:
        raise UsageError(f"{option} names {', '.join(map(repr, unknown))}, not compared "
                         f"in this diff (compared: {', '.join(by_name) or 'none'})")
    draws = {"n_resamples": diff.n_resamples if n_resamples is None else n_resamples,
             "seed": diff.seed if seed is None else seed}
    from localeval.versions.gate_tests import one_sided

    tests = {k: one_sided(by_name[k], v, kind == "worse", **draws) for k, v in todo.items()}
    family = sum(1 for t in tests.values() if t is not None) if kind == "worse" else 1
    keys = [k for k, t in tests.items() if t is not None]
    adj = dict(zip(keys, holm([tests[k].p for k in keys]))) if family > 1 else {}  # type: ignore[union-attr]  # keys: not None
    adj_min = dict(zip(keys, holm([tests[k].p_min for k in keys]))) if family > 1 else {}  # type: ignore[union-attr]
    return [gate_result(by_name[k], v, kind, option, tests[k], family, adj.get(k),
                        adj_min.get(k), policy.of(k)) for k, v in todo.items()]


def worse_failures(diff: VersionDiff, margins: Mapping[str, float],
                   option: str = "--fail-if-worse", allow_unscored: Any = None,
                   fail_if_underpowered: bool = False) -> list[str]:
    """One line per metric of ``margins`` shown worse beyond its margin (one-sided, Holm
    over the gated metrics), that cannot be shown not worse (no pair scored in both), or
    has more pairs unscored on either side than ``allow_unscored`` allows (see
    :func:`unscored_allowance`; default none); with ``fail_if_underpowered`` also each
    gate that could not have failed at this size. Empty: passed."""
    return [r.line for r in gate_results(diff, margins, option=option,
                                         allow_unscored=allow_unscored)
            if r.failed or (fail_if_underpowered and not r.could_fail)]


def not_worse_failures(diff: VersionDiff, margins: Mapping[str, float],
                       option: str = "--require-not-worse", allow_unscored: Any = None
                       ) -> list[str]:
    """``--require-not-worse``: one line per metric not shown to lose less than its margin
    (one-sided, no correction: see the module). Empty: every one shown."""
    return [r.line for r in gate_results(diff, margins, kind="not_worse", option=option,
                                         allow_unscored=allow_unscored) if r.failed]
