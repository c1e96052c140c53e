"""The arguments of ``localeval models list|verify|add|fetch``, in one place.

``localeval``'s own parser and ``models_main`` (and, for the download options,
``scripts/fetch_models.py``) build the same options from here. The ``models``
command is a real subparser with its own actions, not a REMAINDER handed on:
argparse's REMAINDER drops a leading option, which broke ``models --help`` and
``models --models-dir X list``. Standard library only and imports nothing else
of localeval, so building the top-level parser stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_models_arguments", "add_fetch_arguments", "MODELS_DESCRIPTION"]

MODELS_DESCRIPTION = ("Known judge and embedding models on this machine: list, verify, add your "
                      "own, or fetch one on a machine with internet (the only command that "
                      "downloads; see docs/air-gap.md).")


def add_fetch_arguments(p: argparse.ArgumentParser) -> None:
    """The download options; the caller adds the names and the target folder."""
    p.add_argument("--manifest", type=Path, default=None,
                   help="manifest to read (default: the folder's manifest.toml, else the one "
                        "shipped with localeval)")
    p.add_argument("--url-override", action="append", default=[], metavar="NAME=URL",
                   help="download NAME from URL instead (a mirror; for embedders the folder's "
                        "base URL). Repeatable")
    p.add_argument("--force", action="store_true", help="download again even if present")
    p.add_argument("--retries", type=int, default=5, help="resume attempts per file "
                                                          "(default: %(default)s)")
    p.add_argument("--retry-wait", type=float, default=2.0, help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=float, default=60.0, help="socket timeout in seconds")
    p.add_argument("--progress", choices=["auto", "always", "never"], default="auto",
                   help="progress bar (default: on a terminal)")


def add_models_arguments(p: argparse.ArgumentParser) -> None:
    """Give ``p`` (the ``models`` parser) its description, ``--models-dir`` and the actions."""
    p.description = p.description or MODELS_DESCRIPTION
    p.add_argument("--models-dir", type=Path, default=None,
                   help="models folder (default: $LOCALEVAL_MODELS or ./models)")
    # accepted after the action too (`models verify --models-dir X`)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--models-dir", type=Path, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", parents=[common], help="known models, which are present and "
                                                        "verified")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    v = sub.add_parser("verify", parents=[common],
                       help="hash present model files against the manifest (exit 3 on a "
                            "mismatch or a missing named model)")
    v.add_argument("names", nargs="*", metavar="NAME", help="only these models (default: all "
                                                            "present)")
    v.add_argument("--json", action="store_true", help="machine-readable output")
    v.add_argument("--record", action="store_true",
                   help="for files without a published hash, accept and record their current "
                        "hash even if it differs from the recorded one (a file you replaced "
                        "on purpose)")
    a = sub.add_parser("add", parents=[common], help="register your own GGUF judge, embedder "
                                                     "or checker folder in models/local.toml")
    a.add_argument("path", type=Path, metavar="PATH", help="a .gguf file, an embedder folder or "
                                                           "a checker folder (docs/checkers.md)")
    a.add_argument("--name", help="name to use with --judge/--embedder/--checker (default: "
                                  "file name)")
    a.add_argument("--copy", action="store_true", help="copy it into models/ (default: "
                                                       "record where it is, copy nothing)")
    f = sub.add_parser("fetch", parents=[common],
                       help="download manifest models on a machine WITH internet (HTTPS, "
                            "resumed, sha256-checked, recorded in models.lock.json), to copy "
                            "to an air-gapped one",
                       description="Download manifest models into the models folder, to copy "
                                   "to an air-gapped machine (docs/air-gap.md). Exit 0 all "
                                   "installed, 2 unknown name, 3 a file failed.")
    f.add_argument("names", nargs="+", metavar="NAME",
                   help="model names from `localeval models list` ('default' = the default "
                        "judge and embedder)")
    f.add_argument("--to", dest="models_dir", type=Path, default=argparse.SUPPRESS,
                   help="target folder (same as --models-dir)")
    add_fetch_arguments(f)
