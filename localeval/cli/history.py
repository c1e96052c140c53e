"""``localeval history [DIR...] -o PAGE``: every run kept, on one self-contained page.

The page is built by :mod:`localeval.history` (runs grouped by dataset
version, each metric's trend with its intervals, set-up changes marked);
this module parses the arguments and says what it wrote.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_history_parser", "cmd_history"]


def add_history_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval history [DIR...] [-o PAGE] [--add NAME=FILE] [--diffs]``."""
    p = sub.add_parser("history", help="one page over every run kept: runs by dataset version, "
                                       "each metric's trend, judge changes marked",
                       description="Write one self-contained HTML page over every localeval "
                                   "run found under DIR (searched recursively): runs grouped "
                                   "by dataset version, each metric's mean and 95% interval "
                                   "across runs, a mark where the judge, prompts, embedder or "
                                   "verdict mode changed, links to each run's report.")
    p.add_argument("dirs", nargs="*", metavar="DIR", default=["."],
                   help="folders to search (default: the current folder)")
    p.add_argument("-o", "--out", default="localeval-history.html", metavar="PAGE",
                   help="the page to write (default %(default)s)")
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
    from localeval.errors import UsageError, printable
    from localeval.history import MAX_ROWS, build_history, parse_added, write_history

    if args.max_rows is not None and args.max_rows < 1:
        raise UsageError(f"--max-rows {args.max_rows}: a count of at least 1")
    added = parse_added(args.add)  # a bad --add fails before any reading
    h = build_history(args.dirs, args.out, added=added)
    paths = write_history(h, diffs=args.diffs, max_rows=args.max_rows or MAX_ROWS)
    runs = h.runs
    unread = sum(1 for r in runs if r.problem)
    print(f"{len(runs)} runs in {len(h.groups)} group{'s' if len(h.groups) != 1 else ''}"
          + (f" ({unread} unreadable, listed with the reason)" if unread else ""),
          file=sys.stderr)
    for name, why in h.diff_failures.items():
        print(f"localeval: diff {name} not written: {printable(why)}", file=sys.stderr)
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0
