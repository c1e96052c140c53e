"""``localeval report``: (re)build report.html and summary.md from a run directory."""

from __future__ import annotations

import argparse
from typing import Any

from localeval.cli import options as opt
from localeval.cli.console import say, say_json
from localeval.cli.example import EXAMPLE, example_path

__all__ = ["add_report_parser", "cmd_report"]


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval report RUN_DIR [--data DATASET]``."""
    rp = sub.add_parser("report", help="(re)build report.html and summary.md from a run directory",
                        parents=[opt.in_place("report.html and summary.md"),
                                 opt.json_flag("the files written")])
    rp.add_argument("run_dir", help="directory with results.jsonl and summary.json")
    rp.add_argument("--data", help="the dataset that was evaluated (to show its text); "
                    f"'{EXAMPLE}' for the bundled example")
    rp.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """Render the run's report from its files; with ``--data``, show the samples' text too."""
    from localeval.dataset import load_dataset
    from localeval.report import write_html_report, write_markdown_report
    from localeval.results import read_run

    opt.check_in_place(args, args.run_dir)
    from pathlib import Path

    from localeval.cli.output_policy import policy_of
    from localeval.results import RESULTS_FILE, SUMMARY_FILE

    run = Path(args.run_dir)  # writes into the run folder by design, never over what it reads
    policy = policy_of(args, run / RESULTS_FILE, run / SUMMARY_FILE, args.data)
    for name in ("report.html", "summary.md"):
        policy.check(run / name, folder=False)
    summary, records = read_run(args.run_dir)
    samples: list[Any] = []
    if args.data:
        ds = load_dataset(example_path() if args.data == EXAMPLE else args.data)
        # Sample objects: the report converts only the samples it shows.
        by_id = {s.id: s for s in ds}
        samples = [by_id.get(r["id"], {"id": r["id"]}) for r in records]
    else:
        samples = [{"id": r["id"]} for r in records]
    html = write_html_report(args.run_dir, summary, records, samples)
    md = write_markdown_report(args.run_dir, summary)
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict({"report": str(html), "summary_md": str(md)}, indent=2))
        return 0
    say(f"wrote {html} and {md}")
    return 0
