"""``localeval explain RUN_DIR``: the judge's reasons for a few samples of a run, asked afterwards."""

from __future__ import annotations

import argparse

from localeval.cli.example import EXAMPLE, example_path
from localeval.cli.run import add_judge_options, judge_options, positive_int

__all__ = ["add_explain_parser", "cmd_explain"]


def add_explain_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval explain RUN_DIR --data DATASET [--ids A,B | --worst N] --judge J``."""
    p = sub.add_parser(
        "explain", help="ask the judge's reasons for a few samples of a run (--reasons none)",
        description="Score the chosen samples of a run again with full reasons (the run's "
                    "verdict mode, language and seed), write them to RUN_DIR/explain.jsonl "
                    "and show them in RUN_DIR/report.html under each metric's working.")
    p.add_argument("run_dir", help="directory with results.jsonl and summary.json")
    p.add_argument("--data", required=True, help="the dataset the run scored "
                   f"(results.jsonl keeps no sample text); '{EXAMPLE}' for the bundled example")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--ids", help="comma-separated sample ids")
    which.add_argument("--worst", type=positive_int, default=5, metavar="N",
                       help="the N samples that score worst on the run's metrics that give "
                            "reasons (default: %(default)s)")
    p.add_argument("--embedder", help="embedder of answer_correctness's similarity "
                   "(default: as localeval run)")
    p.add_argument("--no-cache", action="store_true", help="do not use the judge cache")
    add_judge_options(p)
    p.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from localeval.run import explain

    data = example_path() if args.data == EXAMPLE else args.data
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    out = explain(args.run_dir, data, ids=ids, worst=args.worst, judge=args.judge,
                  judge_options=judge_options(args), embedder=args.embedder,
                  cache=not args.no_cache, verdicts=args.verdicts, on_info=print)
    print(f"wrote {out}; the report shows the reasons under each metric's working")
    return 0
