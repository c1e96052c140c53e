"""``localeval history [DIR...] -o PAGE``: every run kept, on one self-contained page.

The page is built by :mod:`localeval.history` (runs grouped by dataset
version, each metric's trend with its intervals, set-up changes marked);
this module parses the arguments and says what it wrote.
"""

from __future__ import annotations

import argparse

from localeval.cli import options as opt
from localeval.cli.console import say, say_json

__all__ = ["add_history_parser", "cmd_history"]


def add_history_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval history [DIR...] [-o PAGE] [--add NAME=FILE] [--diffs]``."""
    p = sub.add_parser("history", help="one page over every run kept: runs by dataset version, "
                                       "each metric's trend, judge changes marked",
                       description="Write one self-contained HTML page over every localeval "
                                   "run found under DIR (searched recursively): runs grouped "
                                   "by dataset version, each metric's mean and 95% interval "
                                   "across runs, a mark where the judge, prompts, embedder or "
                                   "verdict mode changed, links to each run's report.",
                       parents=[opt.out("the page to write", default="localeval-history.html",
                                        metavar="PAGE"),
                                opt.overwrite("a page made from other folders or exports"),
                                opt.json_flag("the runs, groups and files written")])
    p.add_argument("dirs", nargs="*", metavar="DIR", default=["."],
                   help="folders to search (default: the current folder)")
    p.add_argument("--add", action="append", metavar="NAME=FILE", default=[],
                   help="add another tool's export (a ragas to_pandas() CSV/JSON/JSONL or a "
                        "deepeval JSON, as localeval diff reads) to the history under NAME "
                        "(repeatable)")
    p.add_argument("--diffs", action="store_true",
                   help="also write the diff page of each two consecutive runs on the same "
                        "dataset version, into PAGE's name + '-diffs/' beside the page")
    p.add_argument("--max-rows", type=int, default=None, metavar="N",
                   help="runs listed in each version's table, newest first (default 300; "
                        "the charts show every run)")
    p.set_defaults(func=cmd_history)


def cmd_history(args: argparse.Namespace) -> int:
    """Build and write the page; report the runs, versions and files."""
    from localeval.errors import UsageError
    from localeval.history import MAX_ROWS, build_history, parse_added, write_history

    if args.max_rows is not None and args.max_rows < 1:
        raise UsageError(f"--max-rows {args.max_rows}: a count of at least 1")
    added = parse_added(args.add)  # a bad --add fails before any reading
    from localeval.cli.output_policy import policy_of, settings_of

    policy = policy_of(args, [f for _, f in added])  # the runs' own files join once found
    policy.check(args.out, folder=False)
    h = build_history(args.dirs, args.out, added=added)
    paths = write_history(h, diffs=args.diffs, max_rows=args.max_rows or MAX_ROWS,
                          policy=policy, settings={k: v for k, v in settings_of(
                              args, "dirs").items() if k in ("dirs", "add")})
    runs = h.runs
    unread = sum(1 for r in runs if r.problem)
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict({"runs": len(runs), "groups": len(h.groups),
                               "unreadable": unread, "files": [str(p) for p in paths],
                               "diffs_not_written": dict(h.diff_failures)}, indent=2))
    say(f"{len(runs)} runs in {len(h.groups)} group{'s' if len(h.groups) != 1 else ''}"
        + (f" ({unread} unreadable, listed with the reason)" if unread else ""), err=True)
    for name, why in h.diff_failures.items():
        say(f"localeval: diff {name} not written: {why}", err=True)
    for p in paths:
        say(f"wrote {p}", err=True)
    return 0
