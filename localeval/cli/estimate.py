"""``localeval estimate`` and ``localeval label-sheet``: corrected estimates from a few labels.

``label-sheet RUN --dataset DATA -n 50 [--active]`` writes the rows to label;
``estimate RUN LABELS`` turns the filled sheet (or any labels, or another
judge's run) into judge-only, labels-only and corrected means;
``estimate RUN LABELS --plan 0.05`` says how many labels reach a half-width;
``run ... --labels FILE`` (its options and steps are here, not in ``run.py``)
adds the corrected means to the run's summary and reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from localeval.cli import options as opt
from localeval.cli.console import note, say, say_json, show
from localeval.cli.label_options import add_label_options

__all__ = ["add_estimate_parser", "add_label_sheet_parser", "cmd_estimate",
           "cmd_label_sheet", "add_run_labels_options", "check_run_labels", "add_run_labels"]


def add_estimate_parser(sub: Any) -> None:
    p = sub.add_parser(
        "estimate", help="corrected means from the judge plus a few labels (PPI++)",
        description="Per metric: the judge-only mean (it estimates the judge, not the truth), "
                    "the labels-only mean and the corrected (PPI++) mean with 95% intervals, "
                    "what the judge scores were worth in labels, and the judge's bias on "
                    "the labelled rows. See docs/calibrated-estimates.md.",
        parents=[opt.out("write estimate.json and estimate.md here", default="estimate-out"),
                 opt.overwrite("an estimate the folder holds"),
                 opt.json_flag("the result (with --plan: the plan)")])
    p.add_argument("run", help="a localeval run directory or results.jsonl")
    p.add_argument("labels", help="a filled sheet from 'localeval label-sheet', a table with id "
                                  "and label_<metric> / human_<metric> columns, or another "
                                  "judge's run or RAGAS / deepeval export")
    p.add_argument("-m", "--metric", help="the one metric to estimate (needed for a bare "
                                          "'label' column; default: every labelled metric)")
    add_label_options(p)
    p.add_argument("--plan", type=float, metavar="HALF_WIDTH",
                   help="treat the labels as a pilot: how many labels reach this interval "
                        "half-width with and without the judge (and with an active draw)")
    p.set_defaults(func=cmd_estimate)


def add_label_sheet_parser(sub: Any) -> None:
    p = sub.add_parser(
        "label-sheet", help="write a CSV of rows to label: a uniform or an active random draw",
        description="Draw rows of a run to label and write them as a CSV for a spreadsheet "
                    "(UTF-8, one empty label_<metric> column per metric) with a sidecar "
                    "SHEET.draw.json recording the seed and inclusion probabilities. The "
                    "sheet is blind: the judge's scores and working are in SHEET.judge.csv, "
                    "not beside the empty label cells, so they cannot anchor the labels.",
        parents=[opt.seed(0, checked=False), opt.json_flag("the draw and the files written"),
                 opt.out("the sheet's file, with SHEET.draw.json beside it. It is never "
                         "written over an input of the command (the run's files, --dataset) "
                         "or over a sheet that already holds a label; an existing sheet with "
                         "every label cell empty is replaced", default="label-sheet.csv",
                         metavar="SHEET")])
    p.add_argument("run", help="a localeval run directory or results.jsonl")
    p.add_argument("-n", type=int, required=True,
                   help="rows to label (expected count for --active), from 1 to the number "
                        "of rows the judge scored; that number labels every row (a census). "
                        "An estimate needs at least 10 labels, and 30 before you trust it")
    p.add_argument("--dataset", metavar="FILE",
                   help="the dataset RUN evaluated: the sheet shows its contexts, answer and "
                        "reference (without it, only the question)")
    p.add_argument("--active", action="store_true",
                   help="label rows the judge was unsure of more often (soft verdicts or "
                        "--repeats spread; uniform where the run has neither)")
    p.add_argument("--show-judge", action="store_true",
                   help="put the judge's score and working beside the label columns (and "
                        "write no SHEET.judge.csv). Off by default: a labeller who sees the "
                        "judge's answer tends to copy it (anchoring), and the labels then "
                        "measure the judge instead of the truth")
    p.add_argument("-m", "--metrics", help="comma-separated metrics to label (default: all)")
    p.set_defaults(func=cmd_label_sheet)


def cmd_label_sheet(args: argparse.Namespace) -> int:
    from localeval.estimate import make_sheet

    metrics = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    notes: list[str] = []
    d, paths = make_sheet(args.run, args.out, args.n, seed=args.seed, active=args.active,
                          metrics=metrics, dataset=args.dataset, notes=notes,
                          show_judge=args.show_judge)
    for text in notes:
        note(text)
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict({"drawn": int(d.chosen.sum()), "rows": len(d.ids),
                               "draw": d.name, "probabilities": d.basis,
                               "blind": not args.show_judge,
                               "files": [str(p) for p in paths]}, indent=2))
        return 0
    census = " (every row: a census)" if d.chosen.all() else ""
    say(f"drew {int(d.chosen.sum())} of {len(d.ids)} rows{census} ({d.name}; "
        f"probabilities: {d.basis})")
    if not args.show_judge:
        say("the sheet is blind: the judge's scores are in the .judge.csv beside it; "
            "open that only once the labels are done")
    for p in paths:
        say(f"wrote {p}")
    return 0


def _labels_for(args: argparse.Namespace) -> tuple[Any, Any, list[str] | None]:
    """(run, labels, metrics): the labels read with the run's metric names (a custom
    metric named ``Politeness Check`` keeps its name); ``estimate`` checks the rest."""
    from localeval.estimate import read_labels
    from localeval.resultsets import label_metric_name, load_result_set

    rs = load_result_set(args.run)
    metrics = [label_metric_name(args.metric, rs.metrics)] if args.metric else None
    lab = read_labels(args.labels, metric=args.metric, scale=args.labels_scale,
                      run_metrics=rs.metrics)
    return rs, lab, metrics


def cmd_estimate(args: argparse.Namespace) -> int:
    from localeval.cli.output_policy import check_out
    from localeval.estimate import estimate, render_estimate, write_estimate

    policy, settings = (None, None) if args.plan is not None else check_out(
        args, args.run, args.labels, result="estimate.json", path_options=("run", "labels"))
    rs, lab, metrics = _labels_for(args)
    r = estimate(rs, lab, metrics=metrics, random_draw=args.labels_random_draw,
                 scale=args.labels_scale, reference=args.labels_reference_interval)
    if args.plan is not None:
        return _plan(args, r)
    paths = write_estimate(r, args.out, policy=policy, settings=settings)
    if args.json:
        from localeval.estimate import estimate_dict
        from localeval.results import dumps_strict

        say_json(dumps_strict(estimate_dict(r), indent=2))
    else:
        show(render_estimate(r), wide=True, crop=True)
    for p in paths:
        say(f"wrote {p}", err=True)
    return 0


def _plan(args: argparse.Namespace, r: Any) -> int:
    from localeval.errors import UsageError
    from localeval.estimate import plan_lines

    if not 0 < args.plan < 1:
        raise UsageError(f"--plan is a half-width between 0 and 1, not {args.plan}")
    if args.json:
        from localeval.estimate import plan_labels
        from localeval.results import dumps_strict

        plans = {m.metric: plan_labels(m.arrays["judge"], m.arrays["labels"],
                                       m.arrays["labelled"], args.plan,
                                       uncertainty=m.arrays["uncertainty"], level=r.level)
                 for m in r.metrics}
        say_json(dumps_strict({"half_width": args.plan, "level": r.level, "metrics": plans},
                              indent=2))
        return 0
    for line in plan_lines(r, args.plan):
        say(line)
    return 0


def add_run_labels_options(r: Any) -> None:
    """``localeval run ... --labels FILE``: corrected estimates beside the judge-only means."""
    g = add_label_options(r, short=False)
    g.add_argument("--labels", metavar="FILE",
                   help="labels of some rows (a filled 'localeval label-sheet', a table with id "
                        "and label_<metric> columns, or another judge's run): adds corrected "
                        "means (PPI++) and the judge's calibration to summary.json, "
                        "summary.md, the table and report.html")


def check_run_labels(args: argparse.Namespace) -> None:
    """Read ``--labels`` before the run: a bad cell fails in a second, not after the run."""
    if getattr(args, "labels", None):
        from localeval.estimate import read_labels

        read_labels(args.labels, scale=args.labels_scale)


def add_run_labels(args: argparse.Namespace) -> Any:
    """The run's ``summary_sections`` hook for ``--labels`` (None without it).

    ``run.evaluate`` calls it once every sample is scored, with the records it
    reads back from results.jsonl one at a time (the run keeps no samples for
    it), and writes the ``corrected`` section it returns into summary.json and
    both reports: one write of each. Bad labels (ids not in the run, too few,
    all equal, a sheet that does not match its draw) raise the same one-line
    errors as ``localeval estimate`` (exit 2); the run's own files are written
    without the section first, and the hook's ``failed`` is that error, so the
    command can say the run is complete.
    """
    if not getattr(args, "labels", None):
        return None
    from localeval.errors import LocalevalError
    from localeval.estimate import run_corrections

    class Corrections:
        failed: LocalevalError | None = None

        def __call__(self, records: Any) -> dict[str, Any]:
            try:
                return {"corrected": run_corrections(
                    records, args.labels, random_draw=args.labels_random_draw,
                    scale=args.labels_scale,
                    reference=getattr(args, "labels_reference_interval", False),
                    source=str(Path(args.out) / "results.jsonl"))}
            except LocalevalError as e:
                self.failed = e
                raise

    return Corrections()
