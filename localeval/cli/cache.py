"""``localeval cache``: inspect or clear the judge/embedding cache."""

from __future__ import annotations

import argparse
import json

__all__ = ["add_cache_parser", "cmd_cache"]


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval cache stats|clear [--cache FILE]``."""
    c = sub.add_parser("cache", help="inspect or clear the judge/embedding cache")
    c.add_argument("action", choices=["stats", "clear"])
    c.add_argument("--cache", help="cache file (default: $LOCALEVAL_CACHE or "
                                   "~/.cache/localeval/cache.sqlite)")
    c.set_defaults(func=cmd_cache)


def cmd_cache(args: argparse.Namespace) -> int:
    """``stats`` prints the counts as JSON; ``clear`` empties the cache and says what went."""
    from localeval.cache import Cache

    cache = Cache(args.cache)
    if args.action == "clear":
        before = cache.stats()
        cache.clear()
        print(f"cleared {before['judge_calls']} judge calls and {before['embeddings']} "
              f"embeddings from {before['path']}")
    else:
        print(json.dumps(cache.stats(), indent=2))
    return 0
