"""``localeval --help``: the verbs listed by task, not as one flat list of eighteen.

argparse has one subparsers action per parser and lists its choices in one
block, in the order they were added; it has no way to put sub-commands under
headings (an argument group holds arguments, not sub-parsers). So the top
parser hides that block (``help=SUPPRESS``) and its epilog lists the verbs
under their tasks, each with the one-line help it was added with, recorded
by ``Verbs`` as the ``add_*_parser`` functions add them: the help line is
still written once, beside the verb's parser.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import Any

__all__ = ["TASKS", "Verbs", "grouped_help"]

#: The tasks of ``localeval --help`` and their verbs, in this order; every verb is in one.
TASKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("make data", ("generate", "answer", "simulate")),
    ("score", ("run", "retrieval", "metrics")),
    ("compare versions", ("diff", "rank")),
    ("keep runs", ("runs", "history", "report", "explain")),
    ("trust the judge", ("judge", "compare", "validate")),
    ("labels", ("label-sheet", "estimate")),
    ("set-up", ("models", "cache")),
)


class Verbs:
    """The top parser's subparsers action as the ``add_*_parser`` functions see it: it
    adds each verb's parser and keeps the verb's one-line help for ``grouped_help``."""

    def __init__(self, action: argparse._SubParsersAction) -> None:
        self.action = action
        #: verb -> its one-line help, in the order added
        self.helps: dict[str, str] = {}

    def add_parser(self, name: str, **kw: Any) -> argparse.ArgumentParser:
        self.helps[name] = kw.get("help") or ""
        return self.action.add_parser(name, **kw)


def grouped_help(helps: dict[str, str], width: int | None = None) -> str:
    """The verbs under their tasks (``TASKS``), each help wrapped to ``width`` (default:
    the terminal's, as argparse wraps). A verb no task names is listed under "other",
    so a new verb is never hidden (the tests require each verb in a task)."""
    width = max(40, (width or shutil.get_terminal_size().columns) - 2)
    pad = max(len(v) for v in helps) + 4 if helps else 4
    out = ["commands, by task (localeval COMMAND --help for one):"]
    placed: set[str] = set()
    tasks = list(TASKS)
    rest = tuple(v for v in helps if all(v not in verbs for _, verbs in TASKS))
    if rest:
        tasks.append(("other", rest))
    for task, verbs in tasks:
        present = [v for v in verbs if v in helps]
        if not present:
            continue
        out.append(f"\n  {task}:")
        for verb in present:
            placed.add(verb)
            lines = textwrap.wrap(helps[verb], width=max(20, width - pad)) or [""]
            out.append(f"    {verb:<{pad - 4}}  {lines[0]}".rstrip())
            out += [" " * (pad + 2) + line for line in lines[1:]]
    return "\n".join(out)
