"""``localeval explain RUN_DIR``: the judge's reasons for a few samples of a run, asked afterwards."""

from __future__ import annotations

import argparse

from localeval.cli import options as opt
from localeval.cli.console import note, say, say_json
from localeval.cli.example import EXAMPLE, example_path
from localeval.cli.options import judge_options, positive_int

__all__ = ["add_explain_parser", "cmd_explain"]


def add_explain_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval explain RUN_DIR --data DATASET [--ids A,B | --worst N] --judge J``."""
    p = sub.add_parser(
        "explain", help="ask the judge's reasons for a few samples of a run (--reasons none)",
        description="Score the chosen samples of a run again with full reasons (the run's "
                    "verdict mode, language and seed), write them to RUN_DIR/explain.jsonl "
                    "and show them in RUN_DIR/report.html under each metric's working.",
        parents=[opt.in_place("explain.jsonl and report.html"),
                 opt.embedder("as localeval run"), opt.cache(), opt.judge(), opt.quiet(),
                 opt.json_flag("the files written")])
    p.add_argument("run_dir", help="directory with results.jsonl and summary.json")
    p.add_argument("--data", required=True, help="the dataset the run scored "
                   f"(results.jsonl keeps no sample text); '{EXAMPLE}' for the bundled example")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--ids", help="comma-separated sample ids")
    which.add_argument("--worst", type=positive_int, default=5, metavar="N",
                       help="the N samples that score worst on the run's metrics that give "
                            "reasons (default: %(default)s)")
    p.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from localeval.run import explain

    opt.check_in_place(args, args.run_dir)
    data = example_path() if args.data == EXAMPLE else args.data
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    quiet = args.quiet or args.json
    out = explain(args.run_dir, data, ids=ids, worst=args.worst, judge=args.judge,
                  judge_options=judge_options(args), embedder=args.embedder,
                  cache=False if args.no_cache else (args.cache or True),
                  verdicts=args.verdicts, progress=False if quiet else None,
                  # what is skipped or asked: sample ids, metric keys, judge names (shown)
                  on_info=lambda text: note(text, kind="") if args.json else say(text))
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict({"explain": str(out),
                               "report": str(out.parent / "report.html")}, indent=2))
        return 0
    say(f"wrote {out}; the report shows the reasons under each metric's working")
    return 0
