"""``localeval models``: list, verify or add models in models/ (the catalog parses the rest)."""

from __future__ import annotations

import argparse

__all__ = ["add_models_parser", "cmd_models"]


def add_models_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval models ...``: everything after the word goes to the catalog's own parser."""
    mp = sub.add_parser("models", add_help=False, help="list, verify or add judge and embedding "
                        "models in models/ (localeval models --help)")
    mp.add_argument("rest", nargs=argparse.REMAINDER)
    mp.set_defaults(func=cmd_models)


def cmd_models(args: argparse.Namespace) -> int:
    """Hand the remaining arguments to :func:`localeval.catalog.models_main`."""
    from localeval.catalog import models_main

    return models_main(args.rest)
