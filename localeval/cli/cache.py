"""``localeval cache``: inspect or clear the judge/embedding cache."""

from __future__ import annotations

import argparse
import json

from localeval.cli import options as opt
from localeval.cli.console import say, say_json

__all__ = ["add_cache_parser", "cmd_cache"]


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval cache stats|clear [--cache FILE]``."""
    c = sub.add_parser("cache", help="inspect or clear the judge/embedding cache",
                       parents=[opt.cache(no_cache=False)])
    c.add_argument("action", choices=["stats", "clear"])
    c.set_defaults(func=cmd_cache)


def cmd_cache(args: argparse.Namespace) -> int:
    """``stats`` prints the counts as JSON; ``clear`` empties the cache and says what went."""
    from localeval.cache import Cache

    cache = Cache(args.cache)
    if args.action == "clear":
        before = cache.stats()
        cache.clear()
        say(f"cleared {before['judge_calls']} judge calls and {before['embeddings']} "
            f"embeddings from {before['path']}")
    else:
        say_json(json.dumps(cache.stats(), indent=2))
    return 0
