"""``localeval rank V1 V2 V3 ...``: which of several versions is best? Pairwise judging, ranked.

The analysis lives in :mod:`localeval.pairwise` (``rank_versions``); this module
parses the arguments, prints the ranking (or JSON), writes rank.json and says
where. Exit codes: 0 done, 2 bad input or options, 3 a model error.
"""

from __future__ import annotations

import argparse
from typing import Any

from localeval.cli.console import say, say_json

__all__ = ["add_rank_parser", "cmd_rank"]


def add_rank_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval rank V1 V2 V3 ...``."""
    from localeval.cli import options as opt
    from localeval.cli.versions import add_pairwise_judge_options

    p = sub.add_parser(
        "rank", help="which of several versions is best? judge their answers two by two and "
                     "rank them (Bradley-Terry)",
        description="Rank versions of a pipeline on the questions they share: the judge "
                    "(--judge) compares every two versions' answers to each question, in "
                    "both orders; Bradley-Terry strengths with 95% bootstrap intervals over "
                    "questions; a version is ahead of the next only when the interval of "
                    "their difference clears the margin (--margin), else the order between "
                    "them is not shown. Writes rank.json "
                    "and rank.html. "
                    "Exit codes: 0 done, 2 bad input or options, 3 a model error.",
        parents=[opt.judge(verdicts="soft; hard for a judge without probabilities"),
                 opt.cache(title="judge"),
                 opt.resamples(9999, what="of the questions"), opt.seed(0, checked=False),
                 opt.quiet(), opt.json_flag("rank.json"),
                 opt.out("where rank.json goes", default="localeval-rank"),
                 opt.overwrite("a ranking the folder holds")])
    p.add_argument("versions", nargs="+", metavar="VERSION",
                   help="two or more versions: localeval run directories or results.jsonl "
                        "(with --data), RAGAS exports or data sets with answers "
                        "(.csv/.json/.jsonl)")
    p.add_argument("--data", action="append", metavar="FILE",
                   help="the data set a version evaluated ('example' for the bundled one), "
                        "once per version in the same order ('-' for a version that needs "
                        "none): run folders record scores, not answers")
    p.add_argument("--names", metavar="A,B,C",
                   help="comma-separated names of the versions (default: their folder or "
                        "file names)")
    p.add_argument("--margin", metavar="M",
                   help="the indifference margin of a preference (default 0.05): two "
                        "versions' preference within 0.5 +/- M is no practical difference, "
                        "and one version is ahead of another only when the interval of their "
                        "strength difference lies above log((0.5 + M) / (0.5 - M)), 0.20 at "
                        "0.05")
    add_pairwise_judge_options(opt.group_of(p, "judge"))
    p.set_defaults(func=cmd_rank)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The checked options as ``rank_versions`` keywords; a UsageError for bad ones."""
    from localeval.config import check_resamples, check_seed
    from localeval.errors import UsageError

    if len(args.versions) < 2:
        raise UsageError(f"rank needs at least two versions, got {len(args.versions)} "
                         "(three or more give a ranking)")
    if args.judge is None:
        raise UsageError("rank needs --judge (a GGUF file, a model name, 'demo' or an "
                         "http(s):// URL)")
    data = None
    if args.data:
        if len(args.data) != len(args.versions):
            raise UsageError(f"--data given {len(args.data)} times for {len(args.versions)} "
                             "versions: give it once per version, in the same order ('-' "
                             "where a version needs none)")
        data = [None if d == "-" else d for d in args.data]
    names = None
    if args.names is not None:
        names = [n.strip() for n in args.names.split(",")]
    check_seed(args.seed, "--seed")
    check_resamples(args.resamples, "--resamples")
    from localeval.pairwise import DEFAULT_MARGIN, check_margin, resolve_criterion

    margin = (DEFAULT_MARGIN if args.margin is None
              else check_margin(args.margin, "--margin"))
    criterion, source = resolve_criterion(args.criterion, args.criteria_file,
                                          args.criterion_name)
    return {"data": data, "names": names, "criterion": criterion,
            "criterion_source": source, "seed": args.seed, "n_resamples": args.resamples,
            "margin": margin}


def cmd_rank(args: argparse.Namespace) -> int:
    """Judge, rank, print, write rank.json; returns 0."""
    from pathlib import Path

    from localeval.cli.options import judge_options
    from localeval.cli.output_policy import cache_of, check_out
    from localeval.pairwise import rank_lines, rank_versions
    from localeval.results import dumps_strict

    kw = _options(args)
    policy, settings = check_out(args, args.versions, args.data, getattr(args, "criteria_file", None),
                                 cache_of(args), result="rank.json",
                                 path_options=("versions", "data", "criteria_file"))
    out = policy.folder(Path(args.out))  # an unusable -o fails before the judge is asked
    r = rank_versions(args.versions, judge=args.judge, verdicts=args.verdicts,
                      cache=False if args.no_cache else (args.cache or True),
                      judge_check=not args.no_judge_check,
                      judge_options=judge_options(args),
                      progress=False if (args.json or args.quiet) else None, **kw)
    text = dumps_strict(r.to_dict(), indent=2) + "\n"
    path = policy.write_json(out / "rank.json", r.to_dict(), settings)
    from localeval.pairwise import write_rank_page

    page = write_rank_page(r, out)  # rank.html beside rank.json
    if args.json:
        say_json(text, end="")
    else:
        for line in rank_lines(r):
            say(line)
    say(f"wrote {path}", err=True)
    say(f"wrote {page}", err=True)
    return 0
