"""Each verb's inputs and settings handed to the one output policy (``localeval.output``).

A verb builds its ``OutputPolicy`` here, before any work, from every path it reads
(``policy_of``) and ``--overwrite``, and stamps its result with the options that
shaped it (``settings_of``): the same command again replaces the result (a rerun),
other options are refused without ``--overwrite``. The rules:
docs/failure-behaviour.md, "Outputs of every verb".
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Iterable

__all__ = ["policy_of", "settings_of", "cache_of", "check_out"]

#: Options that do not change what a result holds (where it goes, how it is shown, how
#: fast it is made, where the cache is, the gates that decide only the exit code): left out
#: of a result's settings.
NOT_SETTINGS = frozenset({
    "out", "json", "quiet", "overwrite", "debug", "func", "command", "cache", "no_cache",
    "parallel", "threads", "n_gpu_layers", "judge_concurrency", "judge_timeout", "device",
    "workers", "ray", "ray_actors", "max_rows_shown", "fail_if_worse", "fail_if_unfit_judge",
    "fail_if_preferred_base", "allow_unscored", "fail_under", "fail_under_each"})


def _paths(values: Iterable[Any]) -> list[Any]:
    """Flatten: a value may be a path or a list of paths (``--data`` given once per version)."""
    out: list[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out += _paths(v)
        elif v is not None:
            out.append(v)
    return out


def cache_of(args: argparse.Namespace) -> Any:
    """The cache file the command reads and writes (an input: -o may not be it), or None."""
    if getattr(args, "no_cache", False):
        return None
    if getattr(args, "cache", None):
        return args.cache
    from localeval.cache import default_cache_path

    return default_cache_path()


def policy_of(args: argparse.Namespace, *reads: Any) -> Any:
    """The command's ``OutputPolicy``: ``reads`` (paths, lists of paths, None) and
    ``--overwrite``."""
    from localeval.output import OutputPolicy

    return OutputPolicy(_paths(reads), overwrite=bool(getattr(args, "overwrite", False)))


def settings_of(args: argparse.Namespace, *path_options: str) -> dict[str, Any]:
    """The options that shaped the result: every option but ``NOT_SETTINGS``, the ones
    named in ``path_options`` as resolved paths (the same files however they are named)."""
    settings: dict[str, Any] = {}
    for key, value in sorted(vars(args).items()):
        if key in NOT_SETTINGS or not _plain(value):
            continue
        if key in path_options and value is not None:
            value = ([_resolved(v) for v in value] if isinstance(value, (list, tuple))
                     else _resolved(value))
        settings[key] = value
    return settings


def check_out(args: argparse.Namespace, *reads: Any, result: str,
              path_options: Iterable[str] = ()) -> tuple[Any, dict[str, Any]]:
    """Before any work: refuse an ``-o`` folder that is, lies in or holds an input, or that
    holds a ``result`` file made with other settings; returns (policy, settings)."""
    from pathlib import Path

    policy = policy_of(args, *reads)
    settings = settings_of(args, *path_options)
    policy.check(args.out, folder=True)
    policy.check_settings(Path(args.out) / result, settings)
    return policy, settings


def _resolved(value: Any) -> Any:
    if not isinstance(value, (str, os.PathLike)) or os.fspath(value) in ("-", "example"):
        return value
    return os.path.realpath(os.fspath(value))


def _plain(value: Any) -> bool:
    """A value a result can record (JSON's kinds)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v)
                                           for k, v in value.items())
