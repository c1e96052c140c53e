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
import sys
from pathlib import Path
from typing import Any

__all__ = ["label_scale", "add_estimate_parser", "add_label_sheet_parser", "cmd_estimate",
           "cmd_label_sheet", "add_run_labels_options", "check_run_labels", "add_run_labels"]


def label_scale(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in text.split("-", 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO-HI such as 1-5, not {text!r}") from None
    if hi <= lo:
        raise argparse.ArgumentTypeError(f"expected LO < HI, not {text!r}")
    return lo, hi


def add_estimate_parser(sub: Any) -> None:
    p = sub.add_parser(
        "estimate", help="corrected means from the judge plus a few labels (PPI++)",
        description="Per metric: the judge-only mean (it estimates the judge, not the truth), "
                    "the labels-only mean and the corrected (PPI++) mean with 95%% intervals, "
                    "what the judge scores were worth in labels, and the judge's bias on "
                    "the labelled rows. See docs/calibrated-estimates.md.")
    p.add_argument("run", help="a localeval run directory or results.jsonl")
    p.add_argument("labels", help="a filled sheet from 'localeval label-sheet', a table with id "
                                  "and label_<metric> / human_<metric> columns, or another "
                                  "judge's run or RAGAS / deepeval export")
    p.add_argument("-m", "--metric", help="the one metric to estimate (needed for a bare "
                                          "'label' column; default: every labelled metric)")
    p.add_argument("--scale", type=label_scale, metavar="LO-HI",
                   help="graded labels, rescaled to 0-1 as (v - LO) / (HI - LO), e.g. 1-5")
    p.add_argument("--random-draw", action="store_true",
                   help="the labels name no draw but ARE a uniform random draw of the run's "
                        "rows (a hand-picked subset gives a biased estimate)")
    p.add_argument("--plan", type=float, metavar="HALF_WIDTH",
                   help="treat the labels as a pilot: how many labels reach this interval "
                        "half-width with and without the judge (and with an active draw)")
    p.add_argument("--reference-interval", action="store_true",
                   help="plain PPI++ intervals as ppi-python computes them (normal, no "
                        "pseudo-rows): they under-cover when the judge rarely disagrees "
                        "with the labels (docs/calibrated-estimates.md)")
    p.add_argument("-o", "--out", default="estimate-out",
                   help="write estimate.json and estimate.md here (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_estimate)


def add_label_sheet_parser(sub: Any) -> None:
    p = sub.add_parser(
        "label-sheet", help="write a CSV of rows to label: a uniform or an active random draw",
        description="Draw rows of a run to label and write them as a CSV for a spreadsheet "
                    "(UTF-8, one empty label_<metric> column per metric) with a sidecar "
                    "SHEET.draw.json recording the seed and inclusion probabilities.")
    p.add_argument("run", help="a localeval run directory or results.jsonl")
    p.add_argument("-n", type=int, required=True, help="rows to label (expected count for "
                                                       "--active)")
    p.add_argument("--dataset", metavar="FILE",
                   help="the dataset RUN evaluated: the sheet shows its contexts, answer and "
                        "reference (without it, only the question)")
    p.add_argument("--active", action="store_true",
                   help="label rows the judge was unsure of more often (soft verdicts or "
                        "--repeats spread; uniform where the run has neither)")
    p.add_argument("-m", "--metrics", help="comma-separated metrics to label (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--out", default="label-sheet.csv", help="default: %(default)s")
    p.set_defaults(func=cmd_label_sheet)


def cmd_label_sheet(args: argparse.Namespace) -> int:
    from localeval.estimate import make_sheet

    metrics = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    d, paths = make_sheet(args.run, args.out, args.n, seed=args.seed, active=args.active,
                          metrics=metrics, dataset=args.dataset)
    print(f"drew {int(d.chosen.sum())} of {len(d.ids)} rows ({d.name}; probabilities: "
          f"{d.basis})")
    for p in paths:
        print(f"wrote {p}")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    from localeval.estimate import estimate, render_estimate, write_estimate

    metrics = [args.metric] if args.metric else None
    r = estimate(args.run, args.labels, metrics=metrics, random_draw=args.random_draw,
                 scale=args.scale, reference=args.reference_interval)
    if args.plan is not None:
        return _plan(args, r)
    paths = write_estimate(r, args.out)
    if args.json:
        from localeval.estimate import estimate_dict
        from localeval.results import dumps_strict

        print(dumps_strict(estimate_dict(r), indent=2))
    else:
        from rich.console import Console

        Console(width=160 if not sys.stdout.isatty() else None).print(render_estimate(r))
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0


def _plan(args: argparse.Namespace, r: Any) -> int:
    from localeval.errors import UsageError
    from localeval.estimate import plan_lines

    if not 0 < args.plan < 1:
        raise UsageError(f"--plan is a half-width between 0 and 1, not {args.plan}")
    for line in plan_lines(r, args.plan):
        print(line)
    return 0


def add_run_labels_options(r: Any) -> None:
    """``localeval run ... --labels FILE``: corrected estimates beside the judge-only means."""
    g = r.add_argument_group("labels (corrected estimates, docs/calibrated-estimates.md)")
    g.add_argument("--labels", metavar="FILE",
                   help="labels of some rows (a filled 'localeval label-sheet', a table with id "
                        "and label_<metric> columns, or another judge's run): adds corrected "
                        "means (PPI++) and the judge's calibration to summary.json, "
                        "summary.md, the table and report.html")
    g.add_argument("--labels-scale", type=label_scale, metavar="LO-HI",
                   help="graded labels, rescaled to 0-1 as (v - LO) / (HI - LO), e.g. 1-5")
    g.add_argument("--labels-random-draw", action="store_true",
                   help="labels that name no draw ARE a uniform random draw of the rows")
    g.add_argument("--labels-reference-interval", action="store_true",
                   help="plain PPI++ intervals (ppi-python's, no pseudo-rows)")


def check_run_labels(args: argparse.Namespace) -> None:
    """Read ``--labels`` before the run: a bad cell fails in a second, not after the run."""
    if getattr(args, "labels", None):
        from localeval.estimate import read_labels

        read_labels(args.labels, scale=args.labels_scale)


def add_run_labels(args: argparse.Namespace, result: Any) -> None:
    """After the run: the corrected estimates into summary.json, and the reports re-rendered.

    Bad labels (ids not in the run, too few, all equal, a sheet that does not
    match its draw) raise the same one-line errors as ``localeval estimate``
    (exit 2); the run's own files are complete by then and stay as written.
    """
    if not getattr(args, "labels", None):
        return
    from localeval.errors import LocalevalError
    from localeval.estimate import run_corrections
    from localeval.report import write_html_report, write_markdown_report
    from localeval.results import atomic_file, dumps_strict

    try:
        section = run_corrections(args.out, args.labels, random_draw=args.labels_random_draw,
                                  scale=args.labels_scale,
                                  reference=getattr(args, "labels_reference_interval", False))
    except LocalevalError:
        print(f"localeval: the run is complete in {args.out} (judge-only means); the labels "
              "were not used:", file=sys.stderr)
        raise
    result.summary["corrected"] = section
    with atomic_file(Path(args.out) / "summary.json") as f:
        f.write(dumps_strict(result.summary, indent=2) + "\n")
    write_html_report(args.out, result.summary, result.records(), result.samples)
    write_markdown_report(args.out, result.summary)
