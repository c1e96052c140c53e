"""``localeval judge check``: is this judge fit to score? Its check on known-answer pairs.

The judge is named and loaded as ``localeval run`` does it (GGUF path, model
name, URL; its calls cached), then scored on the bundled probe pairs of each
judge metric (``judge_check``). Exit 0 when every checked metric is fit, 1 when
not (like a failed gate), 2 for usage errors and 3 when the judge or embedder
cannot be loaded.
"""

from __future__ import annotations

import argparse
from typing import Any

from localeval.cli import options as opt
from localeval.cli.checker import checker_metrics
from localeval.cli.console import cell, say, say_json, show
from localeval.cli.options import judge_options
from localeval.errors import ModelError, UsageError

__all__ = ["add_judge_parser", "cmd_judge_check"]


def add_judge_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval judge check [--judge X] [-m METRICS] [--json]``."""
    j = sub.add_parser("judge", help="test a judge model",
                       description="Commands about the judge model.")
    jsub = j.add_subparsers(dest="judge_command", metavar="COMMAND", required=True)
    c = jsub.add_parser(
        "check", help="check a judge on known-answer pairs (exit 1 if not fit)",
        description="Score the bundled known-answer pairs (clearly good vs clearly bad, "
                    "en/ja/zh) with each judge metric and say whether the judge orders them "
                    "right: fit (>= 80% of pairs), doubtful (60-80%) or unfit. Exit 0 when "
                    "fit, 1 when not.",
        parents=[opt.judge(checker=True),
                 opt.reasons("check the judge as a run with this --reasons asks it"),
                 opt.embedder("all-MiniLM-L6-v2 if installed, else the metrics that also "
                              "embed (answer_relevancy) are skipped"),
                 opt.cache(), opt.quiet("no table: the one summary line on stderr"),
                 opt.json_flag("the result"),
                 opt.out("also write the result as JSON to this file", metavar="FILE")])
    c.add_argument("-m", "--metrics", help="comma-separated judge metrics to check "
                   "(default: every judge metric)")
    c.add_argument("--device", help="auto, cpu, cuda, mps (default: $LOCALEVAL_DEVICE or auto)")
    c.set_defaults(func=cmd_judge_check)


def _metrics(spec: str | None) -> list[Any]:
    from localeval.metrics import parse_metrics, registry

    if spec:
        return parse_metrics(spec)
    return parse_metrics(",".join(n for n, c in registry().items() if c.uses_judge))


def _embedder(args: argparse.Namespace, store: Any, cfg: Any) -> Any:
    """The named (or configured) embedder; the default one only if it is installed."""
    from localeval.run import build_embedder

    named = cfg.embedder
    try:
        return build_embedder(named, store, cfg.device)
    except ModelError:
        if named is not None:
            raise
        return None


def cmd_judge_check(args: argparse.Namespace) -> int:
    """Run the judge check, print the table (or JSON); 0 when fit, 1 when not."""
    from localeval.config import run_config
    from localeval.judge_check import checkable, run_judge_check
    from localeval.run import RunProgress, build_judge, open_cache

    metrics = _metrics(checker_metrics(args, args.metrics))
    run, skipped = checkable(metrics)
    if not run:
        why = "; ".join(f"{k}: {v}" for k, v in skipped.items()) or "no judge metric named"
        raise UsageError(f"nothing to check ({why})")
    cfg = run_config(judge=opt.judge_spec(args), embedder=args.embedder, device=args.device,
                     verdicts=args.verdicts, reasons=args.reasons,
                     judge_options=judge_options(args),
                     cache=False if args.no_cache else args.cache)
    store = open_cache(cfg.cache)
    judge = build_judge(cfg.judge, store, dict(cfg.judge_options))
    if judge is None:
        raise UsageError("no judge to check: pass --judge (a GGUF file, a model name in "
                         "models/ or an http(s):// URL), or put one GGUF file in models/")
    embedder = (_embedder(args, store, cfg)
                if any(m.uses_embedder for m in run.values()) else None)
    bar: Any = None
    last = 0

    def step(done: int, total: int, usage: Any) -> None:
        nonlocal bar, last
        if bar is None:
            bar = RunProgress(total, enabled=False if (args.quiet or args.json) else None,
                              description="judge check")
        bar.update(usage, advance=done - last)
        last = done

    try:
        result = run_judge_check(judge, metrics, embedder=embedder, verdicts=cfg.verdicts,
                                 cache=store, on_progress=step, reasons=cfg.reasons)
    finally:
        if bar is not None:
            bar.close()
    if args.out or args.json:
        from localeval.results import atomic_file, dumps_strict

        text = dumps_strict(result.to_dict(), indent=2)
        if args.out:
            with atomic_file(args.out) as f:
                f.write(text + "\n")
        if args.json:
            say_json(text)
    if not args.json and not args.quiet:
        _print_table(result)
    elif args.quiet and not args.json:
        say(result.summary_line(), err=True)
    if args.out:
        say(f"wrote {args.out}", err=True)
    return 0 if result.fit else 1


def _print_table(result: Any) -> None:
    from rich.table import Table

    # the title and cells are Text (cell): a judge named "[red]x" is shown, not parsed
    t = Table(title=cell(f"judge check: {result.judge}"))
    for col in ("metric", "pairs ordered right", "pass rate", "unscored", "verdict"):
        # metric keys whole in a narrow log: the name column does not wrap
        t.add_column(col, justify="left" if col in ("metric", "verdict") else "right",
                     no_wrap=col == "metric")
    for key, m in result.metrics.items():
        t.add_row(cell(key), f"{m.passed}/{m.pairs}", f"{m.pass_rate:.0%}", str(m.unscored),
                  cell(m.verdict))
    for key, why in result.skipped.items():
        t.add_row(cell(key), "-", "-", "-", cell(f"skipped: {why}"))
    show(t)
    say(result.summary_line())
    if result.copied_calls:
        say(f"{result.copied_calls} judge calls copied the prompt's example")
