"""How ``run`` and ``retrieval`` keep a run: ``--name``, ``--tag`` (and ``--overwrite``), and the
gates' outcome added to summary.json (docs/history.md)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from localeval.errors import LocalevalError

__all__ = ["add_record_options", "record_options", "record_gates"]


def add_record_options(p: argparse.ArgumentParser) -> None:
    """``--name`` and ``--tag`` (``--overwrite`` is ``cli.options.overwrite``, a parent)."""
    p.add_argument("--name", help="a name for this run, recorded in summary.json and "
                   "listed by 'localeval runs'")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                   help="a tag recorded with the run, e.g. --tag branch=main (repeatable)")


def record_options(args: argparse.Namespace) -> dict[str, Any]:
    """``evaluate``'s ``name``, ``tags`` and ``overwrite``; a bad ``--tag`` (not KEY=VALUE,
    a key given twice) or ``--name`` is a UsageError (exit 2)."""
    from localeval.run import check_name, parse_tags

    return {"name": check_name(args.name, "--name"), "tags": parse_tags(args.tag),
            "overwrite": bool(args.overwrite)}


def record_gates(out: str, summary: dict[str, Any], given: list[str], failed: list[str],
                 warn: Callable[[str], None]) -> None:
    """The gates' outcome in ``summary`` and summary.json (``localeval runs`` shows it).

    Written once the run is complete: the gates read what ``evaluate`` returns
    (per-sample gates every sample's scores), so they cannot be in the summary the
    run writes. A failure to add it is a warning: the run's files are complete.
    """
    from localeval.results import add_to_summary

    summary["gates"] = {"passed": not failed, "gates": given, "failed": failed}
    try:
        add_to_summary(out, {"gates": summary["gates"]})
    except LocalevalError as e:
        warn(f"the gates' outcome is not in summary.json: {e}")
