"""``localeval runs [DIR...]``: the runs kept under some folders, one row each, oldest first.

The reading is ``resultsets.find_runs`` (one entry per run folder, a damaged or
older summary listed with its reason); this module only lays the entries out,
as a table or, with ``--json``, as the entries' JSON. A run whose judge failed
its judge check (or could not run it) says so in the judge column and beside
each judged mean ("faithfulness 0.900 (judge unfit)"), where a reader of the
number sees it; ROUGE, BLEU and retrieval means carry nothing.
"""

from __future__ import annotations

import argparse
from typing import Any

from localeval.cli import options as opt
from localeval.cli.console import say, say_json, show

__all__ = ["add_runs_parser", "cmd_runs"]


def add_runs_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval runs [DIR...] [--json]``."""
    p = sub.add_parser("runs", help="list the runs kept under folders: date, name and tags, "
                                    "dataset version, judge, metrics, gates",
                       description="List every localeval run folder found under DIR "
                                   "(searched recursively), oldest first.",
                       parents=[opt.json_flag("the runs"),
                                opt.out("also write the runs as JSON to this file",
                                        metavar="FILE")])
    p.add_argument("dirs", nargs="*", metavar="DIR", default=["."],
                   help="folders to search (default: the current folder)")
    p.set_defaults(func=cmd_runs)


def cmd_runs(args: argparse.Namespace) -> int:
    """Print the runs found; none found is said, not an error."""
    from localeval.resultsets import find_runs

    entries = find_runs(args.dirs)
    if args.json or args.out:
        from localeval.results import atomic_file, dumps_strict

        text = dumps_strict({"runs": [e.to_dict() for e in entries]}, indent=2)
        if args.out:
            with atomic_file(args.out) as f:
                f.write(text + "\n")
            say(f"wrote {args.out}", err=True)
        if args.json:
            say_json(text)
            return 0
    if not entries:
        say(f"no localeval runs under {', '.join(args.dirs)}")
        return 0
    show(runs_table(entries))
    return 0


def runs_table(entries: list[Any]) -> Any:
    """A rich Table of ``RunEntry`` rows; every cell is a ``Text`` (no markup is read from
    the data) of printable characters (``errors.printable``)."""
    from rich.table import Table
    from rich.text import Text

    from localeval.errors import printable

    def cell(*lines: str, style: str = "") -> Text:
        return Text("\n".join(printable(x) for x in lines if x), style=style)

    t = Table(show_lines=True)
    for name in ("date", "run", "dataset", "judge", "metrics", "gates"):
        t.add_column(name, overflow="fold")
    for e in entries:
        date = (e.started or "–").replace("T", " ").removesuffix("Z")
        when = cell(date, "(file time)" if e.dated_by == "file time" else "")
        run = cell(e.folder, _label(e))
        if e.problem:
            run.append("\n" + printable(e.problem), style="red")
        for note in e.notes:
            run.append("\n" + printable(note), style="dim")
        data = cell(e.dataset_hash[:12] if e.dataset_hash else "–",
                    f"{e.rows} rows" if e.rows is not None else "")
        t.add_row(when, run, data, _judge(e), cell(*_metric_lines(e) or ["–"]), _gates(e))
    return t


def _label(e: Any) -> str:
    return " · ".join(([e.name] if e.name else []) + [f"{k}={v}" for k, v in e.tags.items()])


def _metric_lines(e: Any) -> list[str]:
    out = []
    for key, m in e.metrics.items():
        mean = "–" if m.get("mean") is None else f"{m['mean']:.3f}"
        un = m.get("unscored")
        caveat = e.caveat(key)
        out.append(f"{key} {mean}" + (f" ({caveat})" if caveat else "")
                   + (f" ({un} unscored)" if un else ""))
    return out


def _judge(e: Any) -> Any:
    """The judge, and its judge check's verdict (red when it failed or could not run)."""
    from rich.text import Text

    from localeval.errors import printable

    out = Text(printable(e.judge or "–"))
    if e.check:
        bad = e.fitness is not None and e.fitness.marker is not None
        out.append("\n" + printable(e.check), style="red" if bad else "dim")
    return out


def _gates(e: Any) -> Any:
    from rich.text import Text

    if e.gates is None:
        return Text("–")
    if e.gates["passed"]:
        return Text("passed", style="green")
    return Text(f"failed ({len(e.gates['failed'])})", style="red")
