"""``localeval diff BASE NEW``: did my change help? Two versions compared sample by sample.

The analysis lives in :mod:`localeval.versions`; this module parses the
arguments, prints the table (or JSON), writes diff.json, diff.md and
diff.html, says which files it wrote, answers ``--plan``, and applies
``--fail-if-worse`` and ``--require-not-worse`` (with ``--allow-unscored`` and
``--fail-if-underpowered``; a line for every gate, passed or failed),
``--fail-if-unfit-judge`` (with ``--pairwise``, the pairwise judge check too) and
``--fail-if-preferred-base`` (``--pairwise``).
Exit codes: 0 done (gates passed), 1 a gate failed, 2 bad input or options.
"""

from __future__ import annotations

import argparse
from typing import Any

from localeval.cli.console import note, say, say_json, show

__all__ = ["add_diff_parser", "cmd_diff", "add_pairwise_judge_options"]


def add_diff_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval diff BASE NEW``."""
    from localeval.cli import options as opt
    from localeval.cli.label_options import add_label_options

    p = sub.add_parser(
        "diff", help="did my change help? compare two versions of a pipeline, sample by sample",
        description="Compare version NEW with version BASE on the same questions: per metric "
                    "the paired mean difference with a 95% interval (randomization test "
                    "below 100 pairs, bootstrap above), samples that "
                    "got better or worse, newly failing or unscored. Exit codes: 0 done, "
                    "1 a gate failed, 2 bad input or options. With --labels-base and "
                    "--labels-new, also the difference corrected by labels (PPI++).",
        parents=[opt.judge(verdicts="soft with --pairwise; hard for a judge without "
                           "probabilities"), opt.cache(title="judge"),
                 opt.resamples(None, what="and random sign vectors of the randomization "
                               "test from 21 to 99 pairs"), opt.seed(0, checked=False),
                 opt.quiet("with --pairwise: no progress bar or progress line"),
                 opt.json_flag("diff.json"),
                 opt.out("where diff.json, diff.md and diff.html go",
                         default="localeval-diff"), opt.overwrite("a diff the folder holds")])
    p.add_argument("base", help="the base version: a localeval run directory or results.jsonl, "
                                "a RAGAS to_pandas() export (.csv/.json/.jsonl) or a deepeval JSON")
    p.add_argument("new", help="the new version (same formats; the two may differ)")
    p.add_argument("-m", "--metrics", help="comma-separated metrics, as the results name them "
                                           "(default: every metric both runs have)")
    p.add_argument("--threshold", action="append", metavar="[METRIC=]VALUE",
                   help="pass mark for the newly-failing / newly-passing counts: a number for "
                        "every metric (default 0.5), METRIC=VALUE for one (repeatable)")
    p.add_argument("--fail-if-worse", action="append", metavar="METRIC[=MARGIN]",
                   help="exit 1 when the metric is shown worse by more than MARGIN: a "
                        "one-sided test at 5%% (exact McNemar for 0/1 scores), Holm over the "
                        "gated metrics when several; or when nothing is scored in both, or "
                        "pairs unscored in base or new beyond --allow-unscored (a gate that "
                        "could not have failed at this size says so); 'all=MARGIN' "
                        "for every metric (repeatable or comma-separated; MARGIN a finite "
                        "number >= 0, default 0; the last '=' splits: "
                        "rougeL:threshold=0.5=0.02)")
    p.add_argument("--require-not-worse", action="append", metavar="METRIC=MARGIN",
                   help="non-inferiority: exit 1 unless the metric is shown to lose less than "
                        "MARGIN (one-sided test at 5%%, no correction: every one must be "
                        "shown); pass means evidence of no regression (same form as "
                        "--fail-if-worse)")
    p.add_argument("--fail-if-underpowered", action="store_true",
                   help="exit 1 when a --fail-if-worse gate (with --pairwise, also "
                        "--fail-if-preferred-base) could not have failed at this size (too "
                        "few changed pairs for its test to reach 5%%)")
    p.add_argument("--plan", metavar="DELTA",
                   help="read BASE and NEW as a pilot: for each metric, how many questions "
                        "would show a change of DELTA (in the metric's units) with 80%% power")
    p.add_argument("--allow-unscored", action="append", metavar="[METRIC=]N", default=[],
                   help="pairs unscored in base or new a --fail-if-worse gate tolerates: a "
                        "count (2), a share (0.1 or 10%%) or 'all'; METRIC=N for one metric "
                        "(repeatable; default: 0), as for localeval run")
    p.add_argument("--fail-if-unfit-judge", action="store_true",
                   help="exit 1 when a judged metric is compared and the judge of either run "
                        "did not pass its judge check (doubtful, unfit, or not tested); with "
                        "--pairwise, also when the pairwise judge check did not say fit")
    p.add_argument("--base-data", metavar="FILE", help="the data set BASE evaluated ('example' "
                   "for the bundled one): shows answers and contexts on the page")
    p.add_argument("--new-data", metavar="FILE", help="the data set NEW evaluated")
    g = add_label_options(p)
    g.add_argument("--labels-base", metavar="FILE",
                   help="labels of BASE's rows (a filled 'localeval label-sheet' of BASE, a "
                        "table with id and label_<metric> columns, or another judge's run): "
                        "with --labels-new, adds the difference corrected by labels (PPI++)")
    g.add_argument("--labels-new", metavar="FILE",
                   help="labels of NEW's rows, on the same rows as --labels-base")
    pw = opt.group_of(p, "judge")
    pw.add_argument("--pairwise", action="store_true",
                    help="also ask the judge (--judge) which answer is better, pair by pair, "
                         "in both orders: wins, losses, ties, inconsistent pairs, the "
                         "preference for NEW over the judged pairs with a 95%% interval "
                         "and its verdict against --pairwise-margin, and the judge's "
                         "position and length bias (needs both versions' answers: "
                         "--base-data / --new-data for run folders; default soft verdicts)")
    add_pairwise_judge_options(pw, when="with --pairwise: ")
    pw.add_argument("--fail-if-preferred-base", action="store_true",
                    help="with --pairwise: exit 1 when the judge prefers BASE beyond the "
                         "interval (the preference for NEW's 95%% interval lies entirely "
                         "below 0.5 - the margin of --pairwise-margin), or when nothing could "
                         "be judged; too few judged pairs for an interval: it says it could "
                         "not have failed")
    pw.add_argument("--pairwise-margin", metavar="M",
                    help="with --pairwise: the indifference margin of the preference (default "
                         "0.05): NEW or BASE is preferred only when the interval lies outside "
                         "0.5 +/- M, and no practical difference when it lies within")
    p.set_defaults(func=cmd_diff)


def add_pairwise_judge_options(g: Any, *, when: str = "") -> None:
    """What ``diff --pairwise`` and ``rank`` share: the criterion (text, or a table of a
    metrics TOML file) and the pairwise judge check (the judge cache is
    ``options.cache``, a parent of both parsers). ``when``: the
    condition the help names first (``with --pairwise: ``)."""
    g.add_argument("--criterion", metavar="TEXT",
                   help=f"{when}what 'better' means (default: answers the question better "
                        "while staying faithful to the contexts)")
    g.add_argument("--criteria-file", metavar="FILE",
                   help=f"{when}take the criterion from a metrics TOML file (as 'localeval "
                        "run --metrics-file' reads): an aspect_critic table's definition or "
                        "a geval table's criteria")
    g.add_argument("--criterion-name", metavar="NAME",
                   help="the table of --criteria-file to use (needed when it has several)")
    g.add_argument("--no-judge-check", action="store_true",
                   help=f"{when}skip the known-answer pairwise judge check (a right answer "
                        "against a hallucinated one, both orders, 20 calls)")


def _thresholds(specs: list[str] | None) -> tuple[float, dict[str, float]]:
    """``--threshold 0.7`` (every metric) and ``--threshold METRIC=0.7`` (one), finite."""
    from localeval.metrics import ValueRule, parse_metric_values

    rule = ValueRule("--threshold", what="threshold", form="a number or METRIC=NUMBER",
                     example="0.7 or faithfulness=0.7", bare="value")
    default, per = 0.5, {}
    for name, value in parse_metric_values(specs, rule):
        if name is None:
            default = value
        else:
            per[name] = value
    return default, per


def _metrics(text: str | None) -> list[str] | None:
    """``-m``: comma-separated metric keys (parameters kept together), each once, in order."""
    from localeval.metrics import split_metric_list

    return list(dict.fromkeys(split_metric_list(text))) if text else None


def _pairwise_options(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The pairwise options checked before any work: (criterion, where it came from)."""
    from localeval.errors import UsageError

    if not args.pairwise:
        given = [o for o, v in (("--fail-if-preferred-base", args.fail_if_preferred_base),
                                ("--pairwise-margin", args.pairwise_margin is not None),
                                ("--criterion", args.criterion),
                                ("--criteria-file", args.criteria_file),
                                ("--criterion-name", args.criterion_name)) if v]
        if given:
            raise UsageError(f"{', '.join(given)} compares answers side by side: add "
                             "--pairwise (and --judge)")
        return None, None
    if args.judge is None:
        raise UsageError("--pairwise needs --judge (a GGUF file, a model name, 'demo' or an "
                         "http(s):// URL)")
    from localeval.pairwise import check_margin, resolve_criterion

    if args.pairwise_margin is not None:
        args.pairwise_margin = check_margin(args.pairwise_margin, "--pairwise-margin")

    return resolve_criterion(args.criterion, args.criteria_file, args.criterion_name)


def _pairwise(args: argparse.Namespace, d: Any, criterion: str | None,
              source: str | None) -> tuple[list[str], list[str]]:
    """``--pairwise``: judge the pairs in both orders; the result goes into ``d`` (diff.json).
    Returns the lines for the terminal and the pairwise gates' failures."""
    from localeval.cli.options import judge_options
    from localeval.pairwise import (
        compare_pairwise,
        preferred_base_gate,
        terminal_lines,
        unfit_pairwise_failure,
    )

    kw: dict[str, Any] = {} if args.resamples is None else {"n_resamples": args.resamples}
    if args.pairwise_margin is not None:
        kw["margin"] = args.pairwise_margin
    r = compare_pairwise(d.base, d.new, judge=args.judge, criterion=criterion,
                         criterion_source=source, verdicts=args.verdicts, seed=args.seed,
                         cache=False if args.no_cache else (args.cache or True),
                         judge_check=not args.no_judge_check,
                         judge_options=judge_options(args),
                         progress=False if (args.json or args.quiet) else None, **kw)
    d.pairwise, d.pairwise_check = r.to_dict(), r.judge_check
    lines, gates = terminal_lines(r), []
    if args.fail_if_preferred_base:  # its outcome in diff.json; a pass it could not fail, said
        gate = preferred_base_gate(r, fail_if_underpowered=bool(
            getattr(args, "fail_if_underpowered", False)))
        d.pairwise["gate"] = gate
        if gate["status"] == "failed":
            gates.append(gate["line"])
        elif gate["line"]:
            lines.append(f"gate {gate['status']}: {gate['line']}")
    gates.append(unfit_pairwise_failure(r) if args.fail_if_unfit_judge else None)
    return lines, [g for g in gates if g]


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare, print, write, gate; returns 0, or 1 when a gate failed."""
    from localeval.config import check_resamples, check_seed
    from localeval.errors import UsageError
    from localeval.report import parse_allow_unscored
    from localeval.versions import (
        add_corrected,
        check_delta,
        diff_runs,
        gate_results,
        parse_worse_gates,
        plan_lines,
        plan_table,
        terminal_table,
        unfit_judge_failures,
        write_diff,
    )

    gates = parse_worse_gates(args.fail_if_worse)  # bad options fail before any work
    required = parse_worse_gates(args.require_not_worse, "--require-not-worse")
    delta = None if args.plan is None else check_delta(args.plan)
    parse_allow_unscored(args.allow_unscored)
    default, per = _thresholds(args.threshold)
    criterion, source = _pairwise_options(args)
    check_seed(args.seed, "--seed")
    if args.resamples is not None:
        check_resamples(args.resamples, "--resamples")
    kw: dict[str, Any] = {} if args.resamples is None else {"n_resamples": args.resamples}
    from localeval.cli.output_policy import cache_of, check_out

    inputs = ("base", "new", "base_data", "new_data", "labels_base", "labels_new",
              "criteria_file")
    policy, settings = check_out(args, *(getattr(args, k, None) for k in inputs),
                                 cache_of(args) if args.pairwise else None,
                                 result="diff.json", path_options=inputs)
    d = diff_runs(args.base, args.new, metrics=_metrics(args.metrics), threshold=default,
                  thresholds=per, base_data=args.base_data, new_data=args.new_data,
                  seed=args.seed, **kw)
    add_corrected(d, args.labels_base, args.labels_new, random_draw=args.labels_random_draw,
                  scale=args.labels_scale, reference=args.labels_reference_interval)
    unknown = [k for k in per if k not in {m.metric for m in d.metrics}]
    if unknown:
        raise UsageError(f"--threshold names {', '.join(map(repr, unknown))}, not compared here")
    results = gate_results(d, gates, allow_unscored=args.allow_unscored) + gate_results(
        d, required, kind="not_worse", option="--require-not-worse",
        allow_unscored=args.allow_unscored)
    d.gates = [r.to_dict() for r in results]
    failures = [r.line for r in results if r.failed or (
        args.fail_if_underpowered and not r.could_fail)]
    passed = [r.line for r in results if r.line not in failures]
    if delta is not None:
        d.plan = plan_table(d, delta)
    if args.fail_if_unfit_judge:
        failures += unfit_judge_failures(d)
    pairwise = None
    if args.pairwise:
        pairwise, pairwise_failures = _pairwise(args, d, criterion, source)
        failures += pairwise_failures
    paths = write_diff(d, args.out, policy=policy, settings=settings)
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict(d.to_dict(), indent=2))
    else:
        show(terminal_table(d), wide=True)
        for line in pairwise or []:
            say(line)
        for line in plan_lines(d.plan) if d.plan else []:
            say(line)
    for p in paths:
        say(f"wrote {p}", err=True)
    for line in passed:
        note(line, kind="gate passed")
    for f in failures:
        note(f, kind="gate failed")
    return 1 if failures else 0
