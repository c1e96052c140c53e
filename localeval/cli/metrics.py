"""``localeval metrics``: every registered metric with its required columns and models."""

from __future__ import annotations

import argparse
import json

from localeval.cli.console import say, say_json, show, terminal

__all__ = ["add_metrics_parser", "cmd_metrics"]


def add_metrics_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval metrics [--json]``."""
    from localeval.cli import options as opt

    m = sub.add_parser("metrics", help="list every metric with its required columns",
                       parents=[opt.json_flag("the metrics")])
    m.set_defaults(func=cmd_metrics)


def cmd_metrics(args: argparse.Namespace) -> int:
    """A rich table (or ``--json``) of the registry: name, aliases, columns, model, description."""
    from localeval.metrics import registry

    rows = []
    for name, cls in sorted(registry().items()):
        needs = "judge" if cls.uses_judge else ""
        if cls.uses_embedder is True or isinstance(cls.uses_embedder, property):
            needs = (needs + "+" if needs else "") + "embedder"
        rows.append({"name": name, "requires": list(cls.requires), "needs": needs or "-",
                     "aliases": list(cls.aliases), "param": f"@{cls.at_field}" if cls.at_field
                     else "", "description": cls.description})
    if args.json:
        say_json(json.dumps(rows, indent=2))
        return 0
    console = terminal()
    cells = [_name_cell(r) for r in rows]
    widest = max(len(line) for c in cells for line in c.splitlines())
    # metric + the narrowest other columns (9, "judge+embedder", 12) + borders and padding
    if console.width < widest + 9 + 14 + 12 + 13:
        _print_list(rows, cells, console.width)
        return 0
    from rich.table import Table

    # Names are what users copy into -m: never cut or folded. The other columns wrap
    # (descriptions fold at word boundaries) to fit the terminal, 80 columns when piped.
    table = Table(title="localeval metrics")
    table.add_column("metric", no_wrap=True)
    table.add_column("required columns", ratio=1, min_width=9, overflow="fold")
    table.add_column("model", no_wrap=True)
    table.add_column("description", ratio=2, min_width=12, overflow="fold")
    for r, cell in zip(rows, cells):
        table.add_row(cell, ", ".join(r["requires"]), r["needs"], r["description"])
    show(table, console=console)  # crop=False: a narrow terminal wraps lines; nothing is cut
    return 0


def _name_cell(r: dict) -> str:
    name = r["name"] + (f" ({r['param']})" if r["param"] else "")
    return name + ("\nalias: " + ", ".join(r["aliases"]) if r["aliases"] else "")


def _print_list(rows: list[dict], cells: list[str], width: int) -> None:
    """A terminal too narrow for the table (the longest names need about 90 columns):
    one block a metric, its name first and whole, the rest wrapped under it."""
    import textwrap

    say("localeval metrics")
    for r, cell in zip(rows, cells):
        name, _, alias = cell.partition("\n")
        say(f"\n{name}  [{r['needs']}]")
        for text in (alias, "needs: " + (", ".join(r["requires"]) or "-"), r["description"]):
            if text:
                say(textwrap.fill(text, width=max(width, 20), initial_indent="  ",
                                    subsequent_indent="  ", break_long_words=False,
                                    break_on_hyphens=False))
