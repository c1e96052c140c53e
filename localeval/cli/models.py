"""``localeval models``: list, verify, add or fetch models (the catalog defines the actions)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
    mp.set_defaults(func=cmd_models, inspect_checker=_inspect_checker)


def _inspect_checker(folder: Path) -> dict[str, Any]:
    """``models add``'s check of a checker folder (the catalog is below ``checker``'s layer):
    its architecture, family and label map read as a run will read them, weights unread;
    a bad folder is a ``ModelError`` naming it (exit 3)."""
    from localeval.checker import read_layout

    layout = read_layout(folder)
    remote = (f"; its config names remote code ({', '.join(layout.remote_code)}), never run "
              "unless trusted" if layout.remote_code else "")
    return {"architecture": layout.architecture,
            "context_length": layout.max_tokens,
            "note": f"{layout.family} checker, {layout.format} format, label {layout.label}, "
                    f"window {layout.window_tokens} tokens{remote}"}


def cmd_models(args: argparse.Namespace) -> int:
    """Run the parsed action with :func:`localeval.catalog.run_models`."""
    from localeval.catalog import run_models

    return run_models(args)
