"""``localeval compare`` and ``localeval validate``: judging the judges from the command line.

The analyses live in :mod:`localeval.agreement`; this module parses their
arguments, prints the table (or JSON) and asks ``agreement`` to write files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from localeval.cli import options as opt
from localeval.cli.console import say, say_json, show, warn

__all__ = [
    "add_compare_parser",
    "add_validate_parser",
    "add_compare_arguments",
    "add_validate_arguments",
    "cmd_compare",
    "cmd_validate",
    "split_metrics",
    "terminal_console",
]


def add_compare_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval compare A B``."""
    cp = sub.add_parser("compare", help="agreement between two result sets of the same samples "
                        "(localeval, RAGAS or deepeval exports)")
    add_compare_arguments(cp)
    cp.set_defaults(func=cmd_compare)


def add_validate_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval validate RESULTS LABELS``."""
    vp = sub.add_parser("validate", help="validate a judge against labels or human scores")
    add_validate_arguments(vp)
    vp.set_defaults(func=cmd_validate)


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``localeval compare A B`` (handled by :func:`cmd_compare`)."""
    p.add_argument("a", help="result set A: a localeval run directory or results.jsonl, a RAGAS "
                             "to_pandas() export (.csv/.json/.jsonl) or a deepeval JSON")
    p.add_argument("b", help="result set B (same formats)")
    p.add_argument("-m", "--metrics", help="comma-separated metrics to compare "
                                           "(default: every metric both sets have)")
    p.add_argument("--pair", nargs=2, action="append", metavar=("A_METRIC", "B_METRIC"),
                   help="also compare A_METRIC of A with B_METRIC of B, differently named "
                        "(repeatable; added to the metrics compared)")
    p.add_argument("--name-a", metavar="NAME", help="label of A in tables and pages "
                                                    "(default: its file or folder name)")
    p.add_argument("--name-b", metavar="NAME", help="label of B (default: its file name)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="pass/fail cut for kappa and the confusion matrix (default %(default)s)")
    _add_align_arguments(p, "A")
    opt.attach(p, opt.resamples(2000, n_boot=True), opt.seed(0, checked=False),
               opt.json_flag("the comparison"),
               opt.out("write comparison.json, comparison.md, comparison.html and one SVG "
                       "scatter per metric into this directory"),
               opt.overwrite("a comparison the folder holds"))


def _add_align_arguments(p: argparse.ArgumentParser, first: str) -> None:
    """``--align`` and ``--dataset``: how the samples of the two sets are paired."""
    p.add_argument("--align", choices=["auto", "id", "content", "position"], default="auto",
                   help="how samples are paired: auto = by id, then by content (question, "
                        "contexts and answer hashes), refusing (exit 2) when a sample cannot "
                        "be placed; position = row i with row i, unchecked "
                        "(default: %(default)s)")
    p.add_argument("--dataset", metavar="FILE",
                   help=f"the dataset {first} was evaluated on: gives a localeval run written "
                        "before results.jsonl recorded questions and hashes its content")


def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``localeval validate RESULTS LABELS`` (handled by :func:`cmd_validate`)."""
    p.add_argument("results", help="a localeval run directory / results.jsonl, or a RAGAS / "
                                   "deepeval export")
    p.add_argument("labels", help="CSV/JSON/JSONL with id and label (positive/negative) or "
                                  "human_<metric> columns")
    p.add_argument("-m", "--metrics", help="comma-separated metrics (default: all)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="pass/fail cut for the verdict counts and matrices "
                        "(default %(default)s)")
    _add_align_arguments(p, "RESULTS")
    opt.attach(p, opt.resamples(2000, n_boot=True), opt.seed(0, checked=False),
               opt.json_flag("the report"),
               opt.out("write validation.json, validation.md and validation.html here"),
               opt.overwrite("a validation the folder holds"))


def cmd_compare(args: argparse.Namespace) -> int:
    """``localeval compare``: print the table (or JSON), optionally write files; returns 0."""
    from localeval.agreement import compare, write_comparison
    from localeval.cli.output_policy import check_out
    from localeval.resultsets import load_result_set

    names = ("a", "b", "dataset")  # -o checked before any work: never in or over these
    policy, settings = (check_out(args, args.a, args.b, args.dataset, result="comparison.json",
                                  path_options=names) if args.out else (None, None))
    a = load_result_set(args.a, dataset=args.dataset, name=args.name_a)
    b = load_result_set(args.b, name=args.name_b)
    if a.name == b.name:
        a.name, b.name = f"A:{a.name}", f"B:{b.name}"
    cmp = compare(a, b, metrics=split_metrics(args.metrics), threshold=args.threshold,
                  n_boot=args.resamples, seed=args.seed, align_by=args.align,
                  pairs=[tuple(p) for p in args.pair or ()])
    _warn_left_out(cmp.alignment, a.name, b.name)
    written = (write_comparison(cmp, args.out, policy=policy, settings=settings)
               if args.out else [])
    if args.json:
        from localeval.results import dumps_strict
        say_json(dumps_strict(cmp.to_dict(), indent=2))
    else:
        show(cmp.render_table(), wide=True)
    _print_written(written)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """``localeval validate``: print the report (or JSON), optionally write files; returns 0."""
    from localeval.agreement import validate, write_validation
    from localeval.cli.output_policy import check_out
    from localeval.resultsets import load_result_set

    names = ("results", "labels", "dataset")  # -o checked before any work
    policy, settings = (check_out(args, args.results, args.labels, args.dataset,
                                  result="validation.json", path_options=names)
                        if args.out else (None, None))
    v = validate(load_result_set(args.results, dataset=args.dataset), args.labels,
                 metrics=split_metrics(args.metrics), n_boot=args.resamples, seed=args.seed,
                 align_by=args.align, threshold=args.threshold)
    written = (write_validation(v, args.out, policy=policy, settings=settings)
               if args.out else [])
    if args.json:
        from localeval.results import dumps_strict
        say_json(dumps_strict(v.to_dict(), indent=2))
    else:
        show(v.render_table(), wide=True)
    _print_written(written)
    return 0


def _print_written(paths: list[Path]) -> None:
    """``wrote PATH`` for every file a command wrote (stderr: stdout may be the JSON)."""
    sys.stdout.flush()  # after the table, not inside it, where both go to one terminal
    for p in paths:
        say(f"wrote {p}", err=True)


def _warn_left_out(al: Any, a_name: str, b_name: str) -> None:
    """Samples of either set without a partner are counted in the notes; say so on
    stderr too, naming a few, so that a pairing that lost samples is never silent."""
    for side, left in ((a_name, al.only_a), (b_name, al.only_b)):
        if left:
            shown = ", ".join(repr(i) for i in left[:5]) + (", ..." if len(left) > 5 else "")
            warn(f"{len(left)} sample{'s' if len(left) != 1 else ''} of {side} have no "
                 f"partner in the other set and are left out ({shown})")


def split_metrics(s: str | None) -> list[str] | None:
    """Comma list; a piece starting with a digit continues the previous one
    (``answer_correctness:weights=0.5,0.5``)."""
    if not s:
        return None
    out: list[str] = []
    for piece in (p.strip() for p in s.split(",")):
        if not piece:
            continue
        if out and (piece[0].isdigit() or piece[0] == "."):
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out


def terminal_console() -> Any:
    """A rich Console; 160 columns when output is not a terminal (pipes, logs), not 80
    (``console.terminal(wide=True)``, kept under this name for its callers)."""
    from localeval.cli.console import terminal

    return terminal(wide=True)
