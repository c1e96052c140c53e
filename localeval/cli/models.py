"""``localeval models``: list, verify, add or fetch models (the catalog defines the actions)."""

from __future__ import annotations

import argparse

__all__ = ["add_models_parser", "cmd_models"]


def add_models_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval models ACTION ...``: a real subparser whose actions the catalog adds.

    Not a REMAINDER handed on: argparse drops a leading option from a REMAINDER, which
    made ``models --help`` and ``models --models-dir X list`` fail.
    """
    from localeval.catalog import add_models_arguments

    mp = sub.add_parser("models", help="list, verify, add or fetch judge and embedding models "
                        "(localeval models --help)")
    add_models_arguments(mp)
    mp.set_defaults(func=cmd_models)


def cmd_models(args: argparse.Namespace) -> int:
    """Run the parsed action with :func:`localeval.catalog.run_models`."""
    from localeval.catalog import run_models

    return run_models(args)
